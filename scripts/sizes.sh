#!/bin/sh
# scripts/sizes.sh FILE... — fails when a source file is over 900 lines
# (issue 27: a file that long holds more than one job; split it at a seam
# between layers, never by line count alone, and keep arrows one way).
# Its last line is a count in the form tests/suite.sh reads.
set -eu
[ $# -gt 0 ] || { echo "usage: scripts/sizes.sh FILE..." >&2; exit 2; }
limit=900
over=$(wc -l "$@" | awk -v l="$limit" '$2 != "total" && $1 > l { print "  " $2 " (" $1 " lines)" }')
longest=$(wc -l "$@" | awk '$2 != "total"' | sort -n | tail -n 1 | awk '{ print $2 ", " $1 " lines" }')
if [ -n "$over" ]; then
    echo "sizes: these files are over $limit lines:" >&2
    echo "$over" >&2
    echo "sizes: 0 passed, 1 failed ($# files)"
    exit 1
fi
echo "sizes: 1 passed, 0 failed ($# files, none over $limit lines; the longest $longest)"
