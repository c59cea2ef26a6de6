#!/usr/bin/env bash
# gen_whole.sh — the whole generator on mutated .cu seeds: each mutant (lines
# dropped, doubled or spliced from another seed, tokens replaced from a
# dictionary of what kstub has trouble with) is run through $KSTUB; a signal,
# a sanitizer report or an exit status other than 0/1/2 is a finding, and
# when kstub exits 0 the generated .c must compile as C11 ($CC) and as C++17
# ($CXX), -Wall -Wextra -Wpedantic -Werror, and a second run with --no-cache
# must give the same exit status, messages and outputs (the prelude cache
# never changes an answer). make fuzz-gen runs it with an
# ASan+UBSan build of kstub (leaks on), so a sanitizer report counts.
# Findings are kept under OUTDIR/findings/ with the reason; commit them under
# tests/fuzz/corpus/gen_whole/ once fixed, and `replay` runs them again.
#
#   gen_whole.sh SECONDS OUTDIR   mutate the seeds for SECONDS
#   gen_whole.sh replay OUTDIR    every file under tests/fuzz/corpus/gen_whole/ once,
#                                 and kernels/*.cu (copies are not committed)
#
# HANG_SECONDS (default 300) is a hang guard, not a speed test: a run that
# has not exited by then is a finding ("no exit"), since kstub must never
# block (issue 19 #7, #8); it is generous so that a sanitized build on a
# loaded machine never trips it.
set -uo pipefail
mode=${1:?SECONDS or replay}
out=${2:?OUTDIR}
KSTUB=${KSTUB:-build/bin/kstub}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
CC=${CC:-cc}
CXX=${CXX:-c++}
WERROR="-Wall -Wextra -Wpedantic -Werror"
HANG_SECONDS=${HANG_SECONDS:-300}
mkdir -p "$out/work" "$out/findings"
work=$out/work

finding() {     # FILE REASON
    local n; n=$(find "$out/findings" -name '*.cu' | wc -l)
    cp "$1" "$out/findings/finding-$n.cu"
    printf '%s\n' "$2" > "$out/findings/finding-$n.why"
    echo "gen_whole: finding-$n: $2"
}

# Runs one input; returns 1 on a finding.
one() {
    local f=$1 rc
    rm -f "$work"/g.* "$work"/g++.o
    KSTUB_CACHE_DIR="$out/cache" timeout "$HANG_SECONDS" "$KSTUB" "$f" -o "$work/g" > "$work/log" 2>&1; rc=$?
    if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
        echo "gen_whole: cannot run $KSTUB (exit $rc)"; exit 2
    fi
    if [ "$rc" -eq 124 ]; then
        finding "$f" "kstub did not exit within $HANG_SECONDS s (a hang?)"
        return 1
    fi
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$work/log" ||
       { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; }; then
        finding "$f" "kstub exit $rc: $(grep -m1 -E 'ERROR|runtime error|error' "$work/log")"
        return 1
    fi
    # The prelude cache never changes an answer (issue 41 #1): the same run
    # with --no-cache gives the same status, outputs and messages.
    if [ "$rc" -le 2 ]; then
        local nrc
        mkdir -p "$work/n"
        rm -f "$work"/n/g.*
        timeout "$HANG_SECONDS" "$KSTUB" "$f" --no-cache -o "$work/n/g" > "$work/nlog" 2>&1; nrc=$?
        if [ "$nrc" -ne "$rc" ] || ! cmp -s <(sed "s|$work/g|OUT|g" "$work/log") \
                <(sed "s|$work/n/g|OUT|g" "$work/nlog") ||
           { [ "$rc" -eq 0 ] && { ! cmp -s "$work/g.h" "$work/n/g.h" || ! cmp -s "$work/g.c" "$work/n/g.c"; }; }; then
            finding "$f" "the cached run (exit $rc) differs from --no-cache (exit $nrc)"
            return 1
        fi
    fi
    if [ "$rc" -eq 0 ]; then
        # shellcheck disable=SC2086
        if ! "$CC" -std=c11 $WERROR -Iinclude/kstub -I"$CUDA_PATH/include" -I"$work" \
                -c "$work/g.c" -o "$work/g.o" > "$work/cc.log" 2>&1; then
            finding "$f" "generated C does not compile as C11: $(grep -m1 error "$work/cc.log")"
            return 1
        fi
        # shellcheck disable=SC2086
        if ! "$CXX" -std=c++17 -x c++ $WERROR -Iinclude/kstub -I"$CUDA_PATH/include" -I"$work" \
                -c "$work/g.c" -o "$work/g++.o" > "$work/cc.log" 2>&1; then
            rm -f "$work/g.o"
            finding "$f" "generated C does not compile as C++17: $(grep -m1 error "$work/cc.log")"
            return 1
        fi
    fi
    return 0
}

if [ "$mode" = replay ]; then
    failed=0; n=0
    for f in tests/fuzz/corpus/gen_whole/*.cu kernels/*.cu; do
        one "$f" || failed=1
        n=$((n + 1))
    done
    echo "gen_whole: $n inputs replayed"
    exit $failed
fi

seeds=(tests/corpus/*.cu kernels/*.cu tests/fuzz/corpus/gen_whole/*.cu)
end=$((SECONDS + mode))
runs=0; found=0; compiled=0
while [ $SECONDS -lt $end ]; do
    python3 - "$work/m.cu" $RANDOM "${seeds[@]}" <<'PY'
import random, re, sys
out, seed, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rnd = random.Random(seed)
lines = open(rnd.choice(seeds), errors='replace').read().split('\n')
other = open(rnd.choice(seeds), errors='replace').read().split('\n')
words = ['__global__', 'template', 'typename', 'struct', 'union', 'enum', 'const', 'volatile',
         '*', '&', '&&', '[]', '[4]', '<', '>', '<<', '>>', ',', '::', '...', '(', ')', '{', '}',
         ';', '/*c*/', '//', '"', "'", '\\', 'int', 'float', 'double', 'char', 'unsigned',
         'long long', 'float4', 'int2', '__half', 'bool', 'size_t', 'void', '__restrict__',
         '__launch_bounds__(256)', 'extern "C"', 'namespace n {', '}', 'ks__args', 'ks_status',
         'ks_kernel_launch', 'KS_RESTRICT', 'args', 'x', 'S', 'T', '0', '-1', '4294967296',
         'alignas(16)', '[[maybe_unused]]', 'typedef', 'using', '= 0', 'static', 'inline',
         '#define', '#if 0', '#endif', 'constexpr', 'decltype(x)', 'sizeof(int)',
         # issue 19: the stub's own parameter names and their fallbacks, the
         # runtime headers' macros, directives where a scanner may not look
         'launch', 'ks_launch_', 'ks_launch__', 'stream', 'ks_stream_', 'n_items',
         'ks_n_items_', 'KSTUB_H', 'KSTUB_TYPES_H', 'KSTUB_VERSION', 'KSTUB_VERSION_MAJOR',
         'KSTUB_VERSION_MINOR', 'KSTUB_VERSION_PATCH', 'KS_VERSION_MAJOR', 'KS_ALIGNED',
         '/* c */ #include <cstdint>', '\f#include <cstdint>', '\v#include <cstdint>',
         '// kstub:name k = KSTUB_VERSION', '// kstub:skip',
         # issue 41 #1: where clang ends a comment or a line before the leading includes
         '// c\r#pragma pack(push, 1)', '/* c *\\\n/', '// c \\', '??/', '\r', '#inc\\\nlude <cstdint>',
         '#pragma pack(push, 1)', '#include <tuple>']
for _ in range(rnd.randint(1, 4)):
    op = rnd.randrange(5)
    i = rnd.randrange(len(lines))
    if op == 0 and len(lines) > 1:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[rnd.randrange(len(lines))])
    elif op == 2:
        lines.insert(i, rnd.choice(other))
    else:
        toks = re.split(r'(\W)', lines[i])
        if toks:
            j = rnd.randrange(len(toks))
            toks[j] = rnd.choice(words) if op == 3 else ''
            lines[i] = ''.join(toks)
open(out, 'w').write('\n'.join(lines))
PY
    one "$work/m.cu" || found=$((found + 1))
    [ -f "$work/g.o" ] && compiled=$((compiled + 1))
    runs=$((runs + 1))
done
echo "gen_whole: $runs runs, $compiled generated and compiled as C11 and C++17, $found findings (in $out/findings)"
[ "$found" -eq 0 ]
