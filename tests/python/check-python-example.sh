#!/usr/bin/env bash
# check-python-example.sh — `pip install examples/python` into a fresh
# virtual environment works, offline (make check-python-example): pip's
# isolated build takes setuptools and wheel from WHEELS (Debian's
# /usr/share/python-wheels), setup.py runs this tree's kstub (--target
# python: no KSTUB_TEMPLATES); then the
# package imports, its module links no libkstub.so, its .pyi is installed,
# and a launch without a driver is a KstubError. NVCC=/nonexistent: the CUDA
# source is embedded (NVRTC at run time), so no nvcc is needed here.
# Run from the repository root with PYTHON, KSTUB, LIB, DIR and WHEELS set.
set -u
pass=0
fail=0
check() {   # check WHAT COMMAND...: COMMAND must succeed
    local what=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "  FAIL  $what"; fi
}
root=$(pwd)
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1
cp -r examples/python "$DIR/src"               # pip builds in the tree it is given: keep ours clean
rm -rf "$DIR/src/build" "$DIR/src/src/"*.egg-info
check "a fresh venv" "$PYTHON" -m venv "$DIR/venv"
check "pip install examples/python" env -u KSTUB_TEMPLATES KSTUB="$root/$KSTUB" \
    KSTUB_INCLUDE="$root/include/kstub" KSTUB_LIB="$root/$LIB" NVCC=/nonexistent \
    "$DIR/venv/bin/pip" install --no-index --find-links "$WHEELS" "$DIR/src"
site=$("$DIR/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
so=$(ls "$site"/kstub_example/_kernels*.so 2>/dev/null | head -1)
check "the module is installed" test -n "$so"
check "it links no libkstub.so (libkstub.a is in it)" bash -c "! ldd '$so' | grep -q libkstub"
check "the .pyi is beside it" test -f "$site/kstub_example/_kernels.pyi"
check "py.typed is installed" test -f "$site/kstub_example/py.typed"
cd "$DIR" || exit 1
check "saxpy's signature" "$DIR/venv/bin/python" -c '
import inspect, kstub_example as k
assert str(inspect.signature(k.saxpy)).startswith("(a, x, y, n, *, grid, block, shared=0, stream=None")'
check "the struct class" "$DIR/venv/bin/python" -c '
import kstub_example as k
t = k.Affine(scale=2.0, shift=1.0, n=3)
assert bytes(t) == b"\x00\x00\x00\x40\x00\x00\x80\x3f\x03\x00\x00\x00", bytes(t)'
check "no driver: a KstubError" env KSTUB_LIBCUDA=/nonexistent/libcuda.so.1 "$DIR/venv/bin/python" -c '
import kstub_example as k
try:
    k.affine(k.Affine(n=1), 0, 0, grid=1, block=1)
except k.KstubError as e:
    assert e.status_name == "KS_ERR_NO_DRIVER", e.status_name
else:
    raise SystemExit("no error")'
echo "check-python-example: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
