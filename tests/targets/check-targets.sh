#!/usr/bin/env bash
# check-targets.sh — the cxx output target (tests/targets/targets.mk says what).
# Run from the repository root by `make check-targets`, with KSTUB, CC,
# CXX, LIB (libkstub.a), DIR (a scratch folder) and SAN_FLAGS set.
set -u
pass=0
fail=0
check() {   # check WHAT COMMAND...: COMMAND must succeed
    local what=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "  FAIL  $what"; fi
}
rm -rf "$DIR" && mkdir -p "$DIR/bad" || exit 1
check "the C target generates" "$KSTUB" kernels/vector_ops.cu -o "$DIR/vector_ops"
check "the cxx target generates" "$KSTUB" -T tests/targets/cxx kernels/vector_ops.cu -o "$DIR/vector_ops" -MD
check "the cxx target writes no .cpp" test ! -e "$DIR/vector_ops.cpp"
check "the depfile lists the target's template" grep -q '^ *tests/targets/cxx/header.hpp.in \\$' "$DIR/vector_ops.d"
check "the depfile lists target.json" grep -q '^ *tests/targets/cxx/target.json$' "$DIR/vector_ops.d"
check "the depfile lists the C target's spelling template" grep -q '^ *[^ ]*/templates/spelling.in \\$' "$DIR/vector_ops.d"
check "the header's guard" grep -q '^#ifndef VECTOR_OPS_HPP_INCLUDED$' "$DIR/vector_ops.hpp"
check "the namespace" grep -q '^namespace vector_ops {$' "$DIR/vector_ops.hpp"
check "--list -T spells the target's names" bash -c "'$KSTUB' --list -T tests/targets/cxx kernels/vector_ops.cu |
    grep -q '^ks_status vector_ops::saxpy(ks_launch launch, float a, const float \*KS_RESTRICT x'"
check "the C stubs compile as C11" $CC -std=c11 -Wall -Wextra -Werror -Iinclude/kstub -c "$DIR/vector_ops.c" -o "$DIR/vector_ops.o"
check "a C++17 caller compiles" $CXX -std=c++17 -Wall -Wextra -Werror -Iinclude/kstub -I"$DIR" -c tests/targets/cxx/use.cpp \
    -o "$DIR/use.o"
check "and links with libkstub" $CXX $SAN_FLAGS "$DIR/use.o" "$DIR/vector_ops.o" "$LIB" -ldl -lpthread -o "$DIR/use"
printf '{"outputs": [{"template": "../x.in", "suffix": ".hpp"}]}\n' > "$DIR/bad/target.json"
check "a bad target.json is refused" bash -c "! '$KSTUB' -T '$DIR/bad' kernels/vector_ops.cu -o '$DIR/bad/out' 2> '$DIR/bad/err'"
check "at target.json, naming the field" \
    grep -q 'target.json: error: output 1: "template" and "suffix" must be file names' "$DIR/bad/err"
check "with nothing written" test ! -e "$DIR/bad/out.hpp"
echo "check-targets: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
