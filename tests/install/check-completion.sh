#!/usr/bin/env bash
# check-completion.sh — completion/kstub.bash driven as bash drives it
# (COMP_WORDS, COMP_CWORD, then the function `complete` registered): the
# subcommands, options from --help, .cu files for the input, directories
# for -T and -p, manifests for diff, values for --format= and --target.
#
# Run from the repository root by `make check-install`, with KSTUB set.
set -u
KSTUB=${KSTUB:-build/bin/kstub}
SRC=$(pwd)
pass=0
fail=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kstub-completion.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

bash -n completion/kstub.bash || { echo "check-completion: syntax error"; exit 1; }
# shellcheck source=/dev/null
source completion/kstub.bash
fn=$(complete -p kstub | sed -E 's/.*-F ([^ ]+).*/\1/')

# A scratch directory to complete file names in.
cd "$TMP" || exit 1
mkdir -p kernels templates build
touch kernels/a.cu kernels/b.cuh notes.txt a.json a.fatbin

# complete LINE: the candidates for the last word of LINE (split on blanks
# and '=' as bash does), one per line, sorted.
complete_line() {
    local line=$1
    COMP_LINE=$line
    read -ra COMP_WORDS <<<"${line//=/ = }"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    "$fn" kstub "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]:-}" 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
# expect LINE WORD...: every WORD is a candidate. reject LINE WORD...: none is.
expect() {
    local line=$1 got w; shift
    got=$(complete_line "$line")
    for w in "$@"; do
        if grep -qxF -- "$w" <<<"$got"; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "  FAIL  '$line' does not offer '$w' (offers: $(echo $got))"; fi
    done
}
reject() {
    local line=$1 got w; shift
    got=$(complete_line "$line")
    for w in "$@"; do
        if grep -qxF -- "$w" <<<"$got"; then
            fail=$((fail + 1)); echo "  FAIL  '$line' offers '$w'"; else pass=$((pass + 1)); fi
    done
}

expect "kstub " check diff kernels
expect "kstub ch" check
expect "kstub kernels/" kernels/a.cu kernels/b.cuh
reject "kstub kernels/" kernels/a.json
reject "kstub " notes.txt
expect "kstub -T " build kernels templates
reject "kstub -T " notes.txt a.json
expect "kstub -p b" build
expect "kstub --embed a" a.fatbin
expect "kstub --manifest a" a.json
expect "kstub diff " a.json
reject "kstub diff " notes.txt
expect "kstub diff --" --format= --source
expect "kstub check --format=" text json github
expect "kstub --arch " sm_90
expect "kstub -std=" c++17 c++20
# --target offers the targets kstub names when it refuses an unknown one, no more.
targets=$("$SRC/$KSTUB" --target '?' 2>&1 | sed -n "s/.*; the targets: \([^(]*\) (.*/\1/p" | tr -d ,)
[ -n "$targets" ] || { fail=$((fail + 1)); echo "  FAIL  kstub --target '?' names no targets"; }
# shellcheck disable=SC2086
expect "kstub --target " $targets
# shellcheck disable=SC2086
expect "kstub --target=" $targets
[ "$(complete_line "kstub --target " | tr '\n' ' ')" = "$(printf '%s\n' $targets | sort -u | tr '\n' ' ')" ] &&
    pass=$((pass + 1)) || { fail=$((fail + 1)); echo "  FAIL  --target offers other names than kstub's: $targets"; }
# Every option --help prints is offered after a dash (diff's after diff).
opts=$("$SRC/$KSTUB" --help | sed -n '/^options:/,/^kstub check/p' |
       grep -oE '^  (-[A-Za-z]+=?|--[a-z][a-z-]*=?)' | tr -d ' ' | sort -u)
[ -n "$opts" ] || { fail=$((fail + 1)); echo "  FAIL  no options read from kstub --help"; }
# shellcheck disable=SC2086
expect "kstub -" $opts -MD -MMD -MF -MT -MQ -MP
expect "kstub check -" --format= --fix-command
# Each command's options are its help's (both printed from the one option
# table, generator/cli/optable.c): kstub check offers what kstub check
# --help lists and nothing only --list takes; kstub -- offers --format=
# (for --list) too (issue 39 #14).
copts=$("$SRC/$KSTUB" check --help | sed -n '/^options:/,/^exit status/p' |
        grep -oE '^  (-[A-Za-z]+=?|--[a-z][a-z-]*=?)' | tr -d ' ' | sort -u)
[ -n "$copts" ] || { fail=$((fail + 1)); echo "  FAIL  no options read from kstub check --help"; }
# shellcheck disable=SC2086
expect "kstub check -" $copts
for o in $("$SRC/$KSTUB" --help | sed -n '/^options:/,/^kstub check/p' |
           grep -oE '^  (-[A-Za-z]+=?|--[a-z][a-z-]*=?)' | tr -d ' ' | sort -u); do
    grep -qxF -- "$o" <<<"$copts" || reject "kstub check -" "$o"
done
reject "kstub check --" --list --all
expect "kstub --" --format= --list --all
expect "kstub " version

echo "check-completion: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
