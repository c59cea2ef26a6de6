#!/usr/bin/env bash
# gpu-check-python.sh — the Python target on a GPU (make gpu-check-python):
# builds the module `kernels` from the generated sources carried in
# build/tests/python (made by `make python-gpu-module` where libclang is;
# kernels.ptx is embedded) with this machine's Python, then runs
# tests/python/test_gpu.py. PYTHON (default python3) is the Python with
# CuPy (and torch, cuda.core where installed); CC the C compiler.
set -eu
PY=${PYTHON:-python3}
CC=${CC:-cc}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
DIR=build/tests/python
for f in kernels_module.c kernels.c kernels.h; do
    [ -f "$DIR/$f" ] || { echo "gpu-check-python: $DIR/$f is missing: run 'make python-gpu-module' where" \
        "libclang is installed and carry $DIR here" >&2; exit 1; }
done
OUT=$DIR/gpu
mkdir -p "$OUT"
inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
ext=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
"$CC" -std=c11 -O2 -Wall -Wextra -fPIC -shared -I"$inc" -Iinclude/kstub -I"$CUDA_PATH/include" -I"$DIR" "$DIR/kernels_module.c" "$DIR/kernels.c" \
    build/lib/libkstub.a -ldl -lpthread -o "$OUT/kernels$ext"
cp "$DIR/kernels.pyi" "$OUT/" 2>/dev/null || true
rc=0
PYTHONPATH="$OUT" PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -p no:cacheprovider -rs tests/python/test_gpu.py || rc=$?
if [ "$rc" -eq 5 ]; then     # pytest: nothing collected, the module skipped itself (no CuPy)
    echo "gpu-check-python: skipped ($PY has no CuPy)"
    exit 0
fi
exit "$rc"
