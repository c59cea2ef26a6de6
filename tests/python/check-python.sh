#!/usr/bin/env bash
# check-python.sh — the Python target's CPU suite (tests/python/python.mk says
# what it builds): pytest over the generated module `kernels` and the fake
# driver, then mypy over kernels.pyi with a right and a wrong caller. Run from
# the repository root by `make check-python` with PYTHON, DIR (the module's
# folder), FAKE (libcuda_fake.so), KSTUB, CC, LIB (libkstub.a), CUDA_PATH and
# CORPUS (the kernel files every module is built from) set.
set -u
pass=0
fail=0
check() {   # check WHAT COMMAND...: COMMAND must succeed
    local what=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "  FAIL  $what"; fi
}
export PYTHONPATH="$DIR" KSTUB_LIBCUDA="$FAKE" KSPY_MANIFEST="$DIR/kernels.json" PYTHONDONTWRITEBYTECODE=1
# pytest: its own count joins ours (every case a check). test_direct.py runs in a process of its
# own, with the test double array_double (built into $DIR/double) on its path: the module keeps
# the first torch.Tensor and cupy.ndarray it finds, and test_kernels.py's are Python classes.
run_pytest() {   # run_pytest LOG PYTHONPATH FILE...
    local log=$1 path=$2; shift 2
    PYTHONPATH="$path" "$PYTHON" -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$log"
    local line p f
    line=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$log" | tail -1)
    p=$(printf '%s' "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
    f=$(printf '%s' "$line" | grep -oE '[0-9]+ (failed|error)' | grep -oE '[0-9]+' | paste -sd+ | bc 2>/dev/null || echo 0)
    pass=$((pass + ${p:-0}))
    fail=$((fail + ${f:-0}))
    [ -n "$line" ] || { fail=$((fail + 1)); echo "  FAIL  pytest gave no count ($*)"; }
}
run_pytest "$DIR/pytest.log" "$DIR" tests/python/test_kernels.py tests/python/test_dlpack.py
run_pytest "$DIR/pytest_direct.log" "$DIR:$DIR/double" tests/python/test_direct.py
run_pytest "$DIR/pytest_exchange.log" "$DIR:$DIR/double" tests/python/test_exchange.py
KSPY_EXCHANGE=int run_pytest "$DIR/pytest_exchange_int.log" "$DIR:$DIR/double" tests/python/test_exchange.py
# mypy: the stub types every call; a wrong one is an error at its line.
if "$PYTHON" -m mypy --version >/dev/null 2>&1; then
    mypy=("$PYTHON" -m mypy --no-error-summary --no-incremental --cache-dir=/dev/null --strict)
    check "mypy accepts a right caller" env MYPYPATH="$DIR" "${mypy[@]}" tests/python/typing_ok.py
    env MYPYPATH="$DIR" "${mypy[@]}" tests/python/typing_bad.py > "$DIR/mypy_bad.txt" 2>&1
    cat "$DIR/mypy_bad.txt"
    for l in 4 5 6 7 8 9 10 11; do
        check "mypy reports typing_bad.py:$l" grep -q "^tests/python/typing_bad.py:$l: error:" "$DIR/mypy_bad.txt"
    done
    check "mypy names the wrong argument" grep -q 'Argument 4 to "saxpy" has incompatible type "str"; expected "int"' \
        "$DIR/mypy_bad.txt"
    check "docs/python.md quotes mypy's words as they are" bash -c "tr '\n' ' ' < docs/python.md |
        grep -qF '\`Argument 4 to \"saxpy\" has incompatible type \"str\"; expected \"int\"\`'"
else
    echo "check-python: mypy is not installed (bash scripts/deps.sh installs python3-mypy): skipped its cases"
fi
# The class, not the example: every kernel file of CORPUS through this target; each module
# compiles without a warning, imports (its classes, enums and variables made), and its .pyi
# passes mypy --strict (a parameter named like a launch keyword or a Python keyword, a field
# named like a builtin type).
inc=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
ext=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
mkdir -p "$DIR/corpus"
stubs=()
for cu in $CORPUS; do
    b=$(basename "$cu" .cu)
    check "$cu: generated" "$KSTUB" -T templates/python "$cu" -o "$DIR/corpus/$b"
    check "$cu: its module builds" "$CC" -std=c11 -O0 -Wall -Wextra -Werror -fPIC -shared -I"$inc" -Iinclude/kstub \
        -I"$CUDA_PATH/include" -I"$(dirname "$cu")" "$DIR/corpus/${b}_module.c" "$DIR/corpus/$b.c" "$LIB" -ldl -lpthread \
        -o "$DIR/corpus/$b$ext"
    check "$cu: and imports" env PYTHONPATH="$DIR/corpus" "$PYTHON" -c "import $b"
    stubs+=("$DIR/corpus/$b.pyi")
done
if "$PYTHON" -m mypy --version >/dev/null 2>&1 && [ ${#stubs[@]} -gt 0 ]; then
    check "mypy --strict takes every .pyi" "${mypy[@]}" "${stubs[@]}"
fi
echo "check-python: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
