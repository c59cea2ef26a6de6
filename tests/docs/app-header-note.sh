# tests/docs/app-header-note.sh — docs/generated-api.md's note for an
# application header that does not compile alone (check-docs runs it):
# tests/corpus/app_headers/not_self_contained.cu, run from its folder.
set -e
kstub=$(realpath "${KSTUB:-build/bin/kstub}")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cd tests/corpus/app_headers
"$kstub" not_self_contained.cu -o "$t/x.kstub" 2>&1
