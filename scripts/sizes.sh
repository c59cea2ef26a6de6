#!/bin/sh
# scripts/sizes.sh [-x EXCEPTIONS] FILE... — fails when a source file is over
# 900 lines (issue 27: a file that long holds more than one job; split it at
# a seam between layers, never by line count alone, and keep arrows one way).
# The rule covers the tests' .c files too (issue 37 #7). EXCEPTIONS lists the
# files still over the limit, one "PATH  why" a line (# comments): each is
# reported as a waiver, and one that has come under the limit fails until its
# line goes, so the list only shrinks.
# Its last line is a count in the form tests/suite.sh reads.
set -eu
except=/dev/null
if [ "${1:-}" = -x ]; then except=$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: scripts/sizes.sh [-x EXCEPTIONS] FILE..." >&2; exit 2; }
limit=900
waived=$(awk '!/^[ \t]*(#|$)/ { print $1 }' "$except")
counts=$(wc -l "$@" | awk '$2 != "total"')
over=$(echo "$counts" | awk -v l="$limit" -v w="$waived" '
    BEGIN { n = split(w, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    $1 > l && !($2 in ok) { print "  " $2 " (" $1 " lines)" }')
stale=$(echo "$counts" | awk -v l="$limit" -v w="$waived" '
    BEGIN { n = split(w, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    $1 <= l && ($2 in ok) { print "  " $2 " (" $1 " lines)" }')
nwaived=$(echo "$counts" | awk -v l="$limit" -v w="$waived" '
    BEGIN { n = split(w, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    $1 > l && ($2 in ok) { c++ } END { print c + 0 }')
longest=$(echo "$counts" | awk -v w="$waived" '
    BEGIN { n = split(w, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    !($2 in ok)' | sort -n | tail -n 1 | awk '{ print $2 ", " $1 " lines" }')
fail=0
if [ -n "$over" ]; then
    echo "sizes: these files are over $limit lines:" >&2
    echo "$over" >&2
    fail=1
fi
if [ -n "$stale" ]; then
    echo "sizes: these files are listed in $except but no longer over $limit lines (remove their lines):" >&2
    echo "$stale" >&2
    fail=1
fi
if [ $fail = 1 ]; then
    echo "sizes: 0 passed, 1 failed ($# files)"
    exit 1
fi
echo "sizes: 1 passed, 0 failed ($# files, none over $limit lines but $nwaived listed in $except; the longest other $longest)"
