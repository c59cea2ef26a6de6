# tests/docs/depfile.sh — docs/build-systems.md's depfile example, as a
# transcript: each command after "$ ", then what it prints (stderr too), run
# where the repository's tests/ is, kstub on PATH (check-docs runs it).
set -e
root=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin"
ln -s "$(realpath "${KSTUB:-build/bin/kstub}")" "$t/bin/kstub"
ln -s "$root/tests" "$t/tests"
cd "$t"
PATH="$t/bin:$PATH"
show() { printf '$ %s\n' "$*"; "$@" 2>&1; }
show kstub tests/corpus/real/train_step.cu -o build/train_step.kstub --manifest build/train_step.kstub.json -MMD
show cat build/train_step.kstub.d
