#!/bin/sh
# scripts/same_output.sh OLD_KSTUB NEW_KSTUB [OUTDIR]
#
# Generates every file of kernels/, tests/corpus/, tests/corpus/real/ and
# tests/golden/ with two kstub binaries into OUTDIR/old and OUTDIR/new and
# diffs the two trees: header, source, manifest, depfile (-MD), the --list
# text and JSON, and the --embed-source variant. A refactoring of the
# generator must leave the diff empty. Exit status: 0 identical, 1 not.
set -u
old=$1 new=$2 out=${3:-build/same_output}
rm -rf "$out" && mkdir -p "$out/old" "$out/new"
export KSTUB_CACHE_DIR="${KSTUB_CACHE_DIR:-$out/cache}"
gen() {  # gen KSTUB DIR FILE
    k=$1 d=$2 f=$3
    n=$(echo "$f" | tr / _)
    n=${n%.cu}
    flags=$(sed -n 's|^// abi-kstub: ||p' "$f")
    # shellcheck disable=SC2086
    "$k" $flags "$f" -o "$d/$n.kstub" --manifest "$d/$n.kstub.json" -MD > "$d/$n.out" 2>&1
    echo "rc=$?" >> "$d/$n.out"
    # shellcheck disable=SC2086
    "$k" $flags --embed-source "$f" -o "$d/$n.src.kstub" > "$d/$n.src.out" 2>&1
    echo "rc=$?" >> "$d/$n.src.out"
    # shellcheck disable=SC2086
    "$k" $flags --list "$f" > "$d/$n.list" 2>&1
    echo "rc=$?" >> "$d/$n.list"
    # shellcheck disable=SC2086
    "$k" $flags --list --format=json "$f" > "$d/$n.list.json" 2>&1
    echo "rc=$?" >> "$d/$n.list.json"
}
for f in kernels/*.cu tests/corpus/*.cu tests/corpus/real/*.cu tests/golden/*.cu; do
    gen "$old" "$out/old" "$f"
    gen "$new" "$out/new" "$f"
done
# --list spells KS_RESTRICT as the header does since issue 20 #3 (it
# printed 'restrict'): that one intended change is not a difference here
sed -i 's/KS_RESTRICT/restrict/g' "$out"/old/*.list "$out"/old/*.list.json "$out"/new/*.list "$out"/new/*.list.json
# the depfiles name the outputs, which live in different folders
sed -i "s|$out/old/|OUT/|g" "$out"/old/*.d
sed -i "s|$out/new/|OUT/|g" "$out"/new/*.d
if diff -r "$out/old" "$out/new"; then
    echo "same_output: $(ls "$out/new" | wc -l) files identical"
    exit 0
fi
echo "same_output: outputs differ"
exit 1
