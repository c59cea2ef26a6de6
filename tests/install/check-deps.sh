#!/usr/bin/env bash
# check-deps.sh — scripts/deps.sh says which packages it is about to install
# and why, before installing; installs only what is missing; does nothing
# when everything is present. dpkg-query, apt-get and sudo are fakes on PATH
# (nothing is installed), and the fake apt-get records when it ran.
#
# Run from the repository root by `make check-install`.
set -u
SRC=$(pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kstub-deps.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$1"; }
bad() { fail=$((fail + 1)); printf '  FAIL  %s\n' "$1"; sed 's/^/        | /' "$TMP/out"; }

mkdir -p "$TMP/bin"
# Every package is installed but those named in $MISSING.
cat >"$TMP/bin/dpkg-query" <<'SH'
#!/bin/sh
for p; do :; done
case " $MISSING " in *" $p "*) exit 1 ;; esac
printf 'install ok installed'
SH
cat >"$TMP/bin/apt-get" <<'SH'
#!/bin/sh
echo "apt-get $*" >&2
SH
printf '#!/bin/sh\nexec "$@"\n' >"$TMP/bin/sudo"
chmod +x "$TMP/bin/"*

deps() { MISSING=$1 PATH="$TMP/bin:$PATH" bash "$SRC/scripts/deps.sh" >"$TMP/out" 2>&1; }

deps "" && [ ! -s "$TMP/out" ] && ok "nothing missing: silent, no apt-get" || bad "nothing missing: silent, no apt-get"
if deps "meson cmake" &&
    awk '/about to install 2/ {a=NR} /^  cmake .*CMake/ {c=NR} /^  meson .*Meson/ {m=NR}
         /^apt-get install/ {i=NR} END {exit !(a && c && m && i && a < c && c < i && m < i)}' "$TMP/out" &&
    grep -q '^apt-get install.* cmake meson$' "$TMP/out"; then
    ok "two missing: names each with its reason before apt-get, installs those two"
else
    bad "two missing: names each with its reason before apt-get, installs those two"
fi
if bash "$SRC/scripts/deps.sh" --list >"$TMP/out" 2>&1 && grep -q '^  meson ' "$TMP/out"; then
    ok "--list prints every package and installs nothing"
else
    bad "--list prints every package and installs nothing"
fi
echo "check-deps: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
