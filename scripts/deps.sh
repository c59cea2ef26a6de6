#!/usr/bin/env bash
# Installs the Debian packages kstub needs to build and test, when missing.
# Does nothing (and needs no network or root) when everything is present.
# cmake and ninja-build: the install test builds the CMake example with both
# of CMake's generators (Unix Makefiles, Ninja). valgrind: make valgrind-gen
# and check-hostile's short-typedef case.
set -euo pipefail

pkgs=(libclang-22-dev clang-22 libclang-rt-22-dev check libjansson-dev pkg-config cmake ninja-build valgrind)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
