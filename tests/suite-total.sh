#!/usr/bin/env bash
# suite-total.sh RESULTS SUITE... — the closing line of make check, from the
# "NAME PASSED FAILED" lines tests/suite.sh appended to RESULTS: the last
# line of each named suite counts. A named suite without a line failed (it
# did not run to its end). Exit 1 when any failed.
set -u
results=$1; shift
awk -v names="$*" '
    BEGIN { n = split(names, want, " ") }
    { p[$1] = $2; f[$1] = $3; seen[$1] = 1 }
    END {
        for (i = 1; i <= n; i++) {
            s = want[i]
            if (!(s in seen)) { missing = missing " " s; fail++; continue }
            pass += p[s]; fail += f[s]
            if (f[s] > 0) bad = bad " " s
        }
        printf "make check: %d passed, %d failed", pass, fail
        if (bad != "" || missing != "") printf " (failed:%s%s)", bad, missing
        printf "\n"
        exit fail > 0
    }' "$results" 2>/dev/null || { [ -f "$results" ] || echo "make check: no suite ran"; exit 1; }
