#!/usr/bin/env bash
# check-man.sh — man/kstub.1 against the generator: every option that
# `kstub --help` and `kstub diff --help` print, every subcommand, and every
# environment variable the generator and libkstub read (KSTUB_*, CUDA_PATH)
# appears in the man page, and the page formats without warnings. A new
# option without a man page entry fails here, naming it.
#
# Run from the repository root by `make check-install`, with KSTUB set.
set -u
KSTUB=${KSTUB:-build/bin/kstub}
MAN=${MAN:-man/kstub.1}
pass=0
fail=0

# The page's text with roff escapes undone: \- is -, \fB etc. go.
text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/-/g' -e 's/\\&//g' "$MAN")

has() {   # has WHAT KIND: WHAT as a whole word in the page
    if grep -qE -- "(^|[^A-Za-z0-9_-])$(printf '%s' "$1" | sed 's/[.+]/\\&/g')([^A-Za-z0-9_-]|$)" <<<"$text"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "  FAIL  $2 $1 is not in $MAN"
    fi
}

# Options: every -x / --xyz token that --help prints (the part before '=').
help=$("$KSTUB" --help; "$KSTUB" check --help; "$KSTUB" diff --help) || { echo "check-man: $KSTUB --help failed"; exit 1; }
opts=$(grep -oE -- '(^|[][ ,|(])--?[A-Za-z][A-Za-z0-9+-]*' <<<"$help" | sed -E 's/^[][ ,|(]//' | sort -u)
[ -n "$opts" ] || { echo "check-man: no options found in --help"; exit 1; }
for o in $opts; do has "$o" option; done

# Subcommands: the words after "kstub " on the usage lines.
for s in $(grep -oE '^ *(usage: )?kstub [a-z]+' <<<"$help" | awk '{print $NF}' | sort -u); do
    has "$s" subcommand
done

# SYNOPSIS lists every form of the usage lines: "kstub WORD" for each
# (kstub --list, kstub check, kstub diff, kstub cache), in the SYNOPSIS
# section's formatted text.
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$MAN" | sed -e 's/\\-/-/g' -e 's/\\c$//' |
           grep -v '^\.\(SH\|br\)' | sed -E 's/^\.[A-Z]+ //' | tr -d '"' | tr '\n' ' ')
for f in $(grep -oE '^ *(usage: )?kstub [a-z-]+' <<<"$help" | awk '{print $NF}' | sort -u); do
    if grep -qE -- "kstub $f( |$)" <<<"$synopsis"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "  FAIL  SYNOPSIS has no 'kstub $f' (kstub --help shows it)"; fi
done

# Environment variables read by the generator or libkstub.
envs=$(grep -rhoE 'getenv\("[A-Z_]+"\)|#define KS__[A-Z_]*_ENV "[A-Z_]+"' generator runtime |
       grep -oE '"(KSTUB_[A-Z_]+|CUDA_PATH)"' | tr -d '"' | sort -u)
for e in $envs; do has "$e" "environment variable"; done

# The sections a man page of a command has.
for sec in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES "MANIFEST FORMAT"; do
    if grep -qx "\.SH \"*$sec\"*" "$MAN"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "  FAIL  section $sec is missing"; fi
done

# Formats cleanly (groff's warnings on: bad requests, missing fonts, ...).
if command -v groff >/dev/null; then
    w=$(LC_ALL=C groff -man -ww -z "$MAN" 2>&1)
    if [ -z "$w" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "  FAIL  groff: $w"; fi
else
    echo "  skipped: groff is not installed (formatting not checked)"
fi

echo "check-man: $pass passed, $fail failed ($(wc -w <<<"$opts") options, $(wc -w <<<"$envs") variables)"
[ "$fail" -eq 0 ]
