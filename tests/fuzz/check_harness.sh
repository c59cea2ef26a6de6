#!/usr/bin/env bash
# check_harness.sh — the fuzz loops of scripts/sanitize.sh, in seconds, with
# stand-in targets (issue 41 #20): a target that leaves an oom artifact and
# one that does not finish fail, and are named, while the target after them
# still runs its time; the loop exits 1 at the end. The replay loop the same.
# Then the macro-growth bound of the targets that parse (macro_bound.h):
# the committed seed macro_growth.cu is parsed, its one-byte mutation
# (D5 to D6: 2^32 copies in libclang) is skipped, every .cu of the tree is
# parsed. Usage: check_harness.sh BUILD_DIR CC
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:?build dir}; cc=${2:-cc}
out=$(mktemp -d "$b/fuzz-harness.XXXXXX")
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/bin"
# fuzz_oom: libFuzzer's oom (an artifact, exit 1); fuzz_ok: finishes;
# fuzz_stuck: never says Done
cat > "$out/bin/fuzz_oom" <<'T'
#!/bin/sh
for a; do case $a in -artifact_prefix=*) : > "${a#-artifact_prefix=}oom-1" ;; esac; done
echo "==1== ERROR: libFuzzer: out-of-memory (used: 2049Mb; exceeds: 2048Mb)"; exit 1
T
printf '#!/bin/sh\necho "ran $*"; echo "Done 9 runs in 1 second(s)"\n' > "$out/bin/fuzz_ok"
printf '#!/bin/sh\nexit 1\n' > "$out/bin/fuzz_stuck"
chmod +x "$out/bin"/*
fail() { echo "check_harness: $*"; exit 1; }

rc=0; bash scripts/sanitize.sh fuzz 1 "$out" fuzz_oom fuzz_ok fuzz_stuck > "$out/fuzz.txt" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "fuzz loop: exit $rc, want 1: $(cat "$out/fuzz.txt")"
grep -q 'max_total_time=1 .*-rss_limit_mb=2048' "$out/fuzz_ok/log" || fail "fuzz_ok did not run its time after fuzz_oom failed"
grep -q '^fuzz_oom: FAILED: findings' "$out/fuzz.txt" || fail "fuzz_oom not named: $(cat "$out/fuzz.txt")"
grep -q '^fuzz_stuck: FAILED: did not finish' "$out/fuzz.txt" || fail "fuzz_stuck not named"
grep -q '^fuzz: 2 of 3 targets failed: fuzz_oom fuzz_stuck$' "$out/fuzz.txt" || fail "no summary: $(cat "$out/fuzz.txt")"
rc=0; bash scripts/sanitize.sh fuzz 1 "$out" fuzz_ok > "$out/ok.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "a clean fuzz run: exit $rc"

rc=0; bash scripts/sanitize.sh replay "$out" fuzz_stuck fuzz_ok > "$out/replay.txt" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "replay loop: exit $rc, want 1"
grep -q '^fuzz_ok: 0 inputs passed' "$out/replay.txt" || fail "fuzz_ok not replayed after fuzz_stuck failed: $(cat "$out/replay.txt")"
grep -q '^replay: 1 of 2 targets failed: fuzz_stuck$' "$out/replay.txt" || fail "no replay summary"

# the bound
cat > "$out/bound.c" <<'T'
#include <stdio.h>
#include "macro_bound.h"
int main(int argc, char **argv)
{
    static char buf[1 << 20];
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f)
            fclose(f);
        printf("%s %s\n", macro_bound(buf, n) > (double)(1 << 20) ? "skipped" : "parsed", argv[i]);
    }
    return 0;
}
T
"$cc" -std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Itests/fuzz "$out/bound.c" -o "$out/bound" 2>&1 ||
    "$cc" -std=c11 -g -O1 -Itests/fuzz "$out/bound.c" -o "$out/bound"
c=tests/fuzz/corpus/fuzz_gen_source
"$out/bound" $c/*.cu kernels/*.cu tests/corpus/*.cu tests/corpus/real/*.cu > "$out/bound.txt"
grep -qx "skipped $c/macro_growth_d6.cu" "$out/bound.txt" || fail "the D6 mutation is parsed"
[ "$(grep -c '^skipped' "$out/bound.txt")" -eq 1 ] || fail "more skipped: $(grep '^skipped' "$out/bound.txt")"
echo "check_harness: loops go on past a failing target; macro bound: $(grep -c '^parsed' "$out/bound.txt") parsed, 1 skipped"
echo "check_harness: 4 passed, 0 failed"
