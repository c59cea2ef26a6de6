#!/usr/bin/env bash
# suite.sh — runs one test suite for make: one line when it starts, its
# output (the expected errors of negative tests among it) into a log file,
# one line with its count when it ends.
#
#   bash tests/suite.sh NAME LOGDIR COMMAND
#
# COMMAND is one shell command line (run with bash -c). The count is read
# from the output: Check's "Checks: N, Failures: F, Errors: E" lines and
# the shell suites' "NAME: P passed, F failed" lines, summed. A suite that
# fails, or that exits 0 without a count, prints its log, then its line.
# The line "NAME PASSED FAILED" is appended to LOGDIR/results, which
# `make check` adds up; LOGDIR/NAME.cpu holds the CPU time it took. V=1
# shows the output as it runs instead.
# With KS_SUITE_CONTINUE=1 (make check) a failed suite is recorded and
# returns 0, so every suite runs and the closing line counts them all.
set -u
name=$1 logdir=$2 cmd=$3
mkdir -p "$logdir" || exit 1
log=$logdir/$name.log
# The kstub runs of every suite share one prelude cache of this build's own
# (unless the caller names one), never the user's ~/.cache/kstub, which
# other kstub builds and runs write while the suites run.
KSTUB_CACHE_DIR=${KSTUB_CACHE_DIR:-$(cd "$logdir/.." && pwd)/kstub-cache}
export KSTUB_CACHE_DIR
echo "$name: started"
if [ "${V:-0}" = 1 ]; then
    bash -c "$cmd" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
else
    bash -c "$cmd" >"$log" 2>&1
    rc=$?
fi

# The CPU time the suite took, beside its log for whoever measures the
# suites (never judged): bash's `times`, whose second line is the user and
# system time of the suite's processes.
times >"$logdir/$name.cpu"          # (a builtin; in a pipeline it would see a subshell's)

# Check: "100%: Checks: 20, Failures: 0, Errors: 0"; shell suites:
# "check-man: 12 passed, 0 failed (...)".
read -r passed failed found < <(awk '
    /^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
        gsub(/[,:%]/, " "); n = $3; f = $5 + $7; p += n - f; x += f; k++; next }
    /^[A-Za-z0-9_-]+: [0-9]+ passed, [0-9]+ failed/ { p += $2; x += $4; k++ }
    END { print p + 0, x + 0, k + 0 }' "$log")

if [ "$rc" -eq 0 ] && [ "$found" -eq 0 ]; then
    echo "$name: exited 0 without a count of its tests" >>"$log"
    failed=1
elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1                                   # a crash or a build failure: counted as one
fi
echo "$name $passed $failed" >>"$logdir/results"
if [ "$failed" -eq 0 ]; then
    echo "$name: $passed passed, 0 failed"
    exit 0
fi
[ "${V:-0}" = 1 ] || { echo "---- $log (exit status $rc):"; cat "$log"; echo "----"; }
echo "$name: $passed passed, $failed failed (log: $log)"
[ "${KS_SUITE_CONTINUE:-0}" = 1 ] && exit 0
exit 1
