#!/bin/sh
# scripts/layers.sh OBJ... — fails when the objects call each other in a
# circle: one file takes a symbol from a second that (directly or through
# others) takes one from the first. Each edge is "A needs a symbol B
# defines", read with nm; tsort finds the loops. docs/design.md says why
# arrows run one way (two files that call each other were cut at the wrong
# seam). Prints each loop and exits 1; exits 0 when there is none. Its
# last line is a count in the form tests/suite.sh reads.
set -eu
[ $# -gt 0 ] || { echo "usage: scripts/layers.sh OBJ..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$@"; do
    nm --defined-only "$o" | awk -v o="$o" 'NF == 3 && $2 ~ /^[TDBRC]$/ { print $3, o }'
done | sort -u > "$tmp/defs"
for o in "$@"; do
    nm -u "$o" | awk -v o="$o" '{ print $NF, o }'
done | sort -u > "$tmp/uses"
# "user provider" pairs, each file also paired with itself so tsort lists it.
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u > "$tmp/edges"
for o in "$@"; do echo "$o $o"; done >> "$tmp/edges"
if ! tsort < "$tmp/edges" > /dev/null 2> "$tmp/loops"; then
    echo "layers: these objects call each other in a circle:" >&2
    grep -v '^tsort: -: input contains a loop:' "$tmp/loops" | sed 's/^tsort: /  /' >&2
    echo "layers: 0 passed, 1 failed ($# objects)"
    exit 1
fi
echo "layers: 1 passed, 0 failed ($# objects, $(wc -l < "$tmp/edges" | tr -d ' ') arrows with each file's own, no circle)"
