#!/bin/sh
# tests/layers-check.sh B — scripts/layers.sh against what it must refuse:
# in a copy of the tree and of the objects under B/obj, it plants one
# breach at a time (a call up a floor in either tree, every private header
# of the generator's folders included from another folder, a private
# header of runtime/ included from common/, a header of a higher floor, a
# circle, an object with no floor, a missing depfile), rebuilds just that
# object with the Makefile's own rule, and expects the check to fail with
# the line that names it; the copy unchanged passes. Run by make
# check-layers (tests/layers.mk) after the objects are built.
set -u
B=${1:?usage: tests/layers-check.sh B}
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# The copy: sources as they are (git's ignored build outputs left out), the
# objects and depfiles with their times, so make rebuilds only what a case
# plants.
tar -cf - --exclude=./build --exclude=./.git --exclude="./$B" . | tar -xf - -C "$tmp"
mkdir -p "$tmp/build/obj"
cp -pR "$B/obj/generator" "$B/obj/runtime" "$B/obj/common" "$tmp/build/obj/"
cd "$tmp" || exit 1
gen_objs() { for c in $(find generator -name '*.c' | sort) common/*.c; do o=build/obj/${c%.c}.o; echo "$o"; done; }
rt_objs() { for c in runtime/*.c common/*.c; do o=build/obj/${c%.c}.o; echo "$o"; done; }

ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAILED: $1"; sed 's/^/    /' out; }

# Saves FILE (and, for a .c, its object and depfile) for restore.
save() {
    mkdir -p "saved/$(dirname "$1")"
    cp -p "$1" "saved/$1"
    case $1 in *.c)
        o=build/obj/${1%.c}.o
        mkdir -p "saved/$(dirname "$o")"
        cp -p "$o" "${o%.o}.d" "saved/$(dirname "$o")/" ;;
    esac
}
restore() {
    (cd saved && find . -type f) | while read -r f; do cp -p "saved/$f" "$f"; done
    rm -rf saved
}
# Appends TEXT to FILE (saved first) and rebuilds its object; fails (and
# says so) when the planted file does not build.
plant() {
    save "$1"
    printf '%s\n' "$2" >> "$1"
    make -s --no-print-directory "build/obj/${1%.c}.o" > build.log 2>&1 && return 0
    fail=$((fail + 1))
    echo "FAILED: the planted $1 does not build:"
    sed 's/^/    /' build.log
    return 1
}
# expect NAME TREE OBJS-COMMAND LINE...: the check fails and prints each
# LINE (after "layers: ").
expect() {
    name=$1 tree=$2 objs=$3
    shift 3
    if sh scripts/layers.sh "$tree" $($objs) > out 2>&1; then
        bad "$name: the check passed"
        return
    fi
    for line in "$@"; do
        grep -qF -- "layers: $line" out || { bad "$name: no line \"layers: $line\""; return; }
    done
    ok "$name"
}

# The copy as it is passes, both trees.
if sh scripts/layers.sh generator $(gen_objs) > out 2>&1 && sh scripts/layers.sh runtime $(rt_objs) >> out 2>&1; then
    ok "the tree as it is"
else
    bad "the tree as it is"
fi

# A call up: base/ takes a function of model/ (issue 37's example).
plant generator/base/inputs.c 'struct ks_model;
void ks_model_free(struct ks_model *m);
void ks__planted(struct ks_model *m);
void ks__planted(struct ks_model *m) { ks_model_free(m); }'
expect "a call up in the generator" generator gen_objs \
    "build/obj/generator/base/inputs.o (floor base) calls ks_model_free, defined in build/obj/generator/model/model.o (floor model, above it)"
restore

# A call up in the runtime: the ground floor takes a function of load.c.
plant runtime/status.c 'ks_status ks__planted(ks_kernel *k);
ks_status ks__planted(ks_kernel *k) { return ks__kernel_function(k, 0, 0); }'
expect "a call up in the runtime" runtime rt_objs \
    "build/obj/runtime/status.o (floor ground) calls ks__kernel_function, defined in build/obj/runtime/load.o (floor load, above it)"
restore

# Every private header of the generator's folders (those not on their
# folder's public line), included from a file of another folder: cli/main.c,
# or drift/drift.c for cli/'s own.
privs=$(for h in $(find generator -name '*.h' | sort); do
    d=$(dirname "$h")/
    awk -v d="$d" -v h="$(basename "$h")" '$1 == "public" && $2 == d { for (i = 3; i <= NF; i++) if ($i == h) f = 1 } END { exit !f }' scripts/floors.txt ||
        echo "$h"
done)
[ -n "$privs" ] || bad "no private header found in generator/"
# plant_private FILE HEADER...: FILE includes each HEADER; the check names
# each at its line.
plant_private() {
    into=$1
    shift
    n=$(wc -l < "$into")
    text= lines=
    for h in "$@"; do
        n=$((n + 1))
        text="$text#include \"${h#generator/}\"
"
        lines="$lines$into:$n: includes $h, private to $(dirname "$h")/
"
    done
    plant "$into" "$text" || return
    IFS='
'
    set -- $lines
    unset IFS
    expect "$# private headers of other folders included in $into" generator gen_objs "$@"
    restore
}
plant_private generator/cli/main.c $(printf '%s\n' $privs | grep -v '^generator/cli/')
plant_private generator/drift/drift.c $(printf '%s\n' $privs | grep '^generator/cli/')

# A header of runtime/ that is on no public line is private to runtime/:
# common/ may not include it (common/ takes nothing of either tree).
printf '/* planted: private to runtime/ */\n' > runtime/planted.h
plant common/sha256.c '#include "../runtime/planted.h"'
n=$(wc -l < common/sha256.c)
expect "a private header of runtime/ included from common/" runtime rt_objs \
    "common/sha256.c:$n: includes runtime/planted.h, private to runtime/ (it has no public header)"
restore
rm -f runtime/planted.h

# A public header of a higher floor: base/ includes model/model.h; common/
# includes the runtime's public kstub.h.
plant generator/base/util.c '#include "model/model.h"'
n=$(wc -l < generator/base/util.c)
expect "a header of a higher floor" generator gen_objs \
    "generator/base/util.c:$n: includes generator/model/model.h of floor model, above generator/base/util.c's floor base"
restore
plant common/sha256.c '#include "../include/kstub/kstub.h"'
n=$(wc -l < common/sha256.c)
expect "the runtime's header in common/" runtime rt_objs \
    "common/sha256.c:$n: includes include/kstub/kstub.h of floor ground, above common/sha256.c's floor common"
restore

# A circle on one floor: includes.c calls back into nvrtc.c, which calls it.
if plant runtime/includes.c 'ks_status ks__planted(void);
ks_status ks__planted(void) { return ks__nvrtc_compile(0, 0, 0, 0, 0, 0, 0, 0, 0); }'; then
    expect "a circle" runtime rt_objs "these objects call each other in a circle:"
fi
restore

# An object whose source has no floor, and one without its depfile.
save runtime/status.c
printf 'int ks__planted(void);\nint ks__planted(void) { return 0; }\n' > runtime/planted.c
make -s --no-print-directory build/obj/runtime/planted.o > build.log 2>&1 || cat build.log
expect "an object with no floor" runtime rt_objs \
    "build/obj/runtime/planted.o (runtime/planted.c) has no floor of the runtime in scripts/floors.txt"
rm -f runtime/planted.c build/obj/runtime/planted.o build/obj/runtime/planted.d
rm build/obj/runtime/status.d
expect "an object without its depfile" runtime rt_objs \
    "no depfile build/obj/runtime/status.d beside build/obj/runtime/status.o"
restore

# The 900-line rule over the tests' .c files too (issue 37 #7): a test file
# over it and not listed fails; a listed one that came under it fails too
# (the list of waivers only shrinks); the tree as it is passes.
sizes_expect() {
    name=$1 want=$2
    shift 2
    if sh scripts/sizes.sh -x scripts/sizes-waived.txt "$@" > out 2>&1; then
        bad "$name: the check passed"
    elif grep -qF -- "$want" out; then
        ok "$name"
    else
        bad "$name: no line \"$want\""
    fi
}
all_c() { find generator runtime common tests -name '*.c' -not -path 'tests/fuzz/corpus/*' -not -path 'tests/golden/*' | sort; }
if sh scripts/sizes.sh -x scripts/sizes-waived.txt $(all_c) > out 2>&1; then ok "sizes: the tree as it is"; else bad "sizes: the tree as it is"; fi
awk 'BEGIN { for (i = 0; i < 901; i++) print "/* planted */" }' > tests/planted_long.c
sizes_expect "sizes: a test file over 900 lines" "tests/planted_long.c (901 lines)" $(all_c)
rm -f tests/planted_long.c
w=$(awk '!/^[ \t]*(#|$)/ { print $1; exit }' scripts/sizes-waived.txt)
cp -p "$w" "$tmp/waived.c"
head -n 10 "$tmp/waived.c" > "$w"
sizes_expect "sizes: a waived file now short" "$w (10 lines)" $(all_c)
cp -p "$tmp/waived.c" "$w"

cd "$root" || exit 1
echo "layers-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
