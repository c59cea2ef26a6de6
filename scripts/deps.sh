#!/usr/bin/env bash
# Installs the Debian packages kstub needs to build and test, when missing.
# Does nothing (and needs no network or root) when everything is present;
# otherwise says which packages it is about to install and why, then
# installs them with apt-get (through sudo when not root).
#
#   bash scripts/deps.sh           install what is missing (make deps, demo, check)
#   bash scripts/deps.sh --list    print every package and what it is for; install nothing
set -euo pipefail

# package|why: one line each, the reason as the message prints it.
pkgs=(
    "libclang-22-dev|the generator parses .cu files with libclang 22"
    "clang-22|compile tests of the generated code, sanitizer builds"
    "libclang-rt-22-dev|clang's sanitizer runtimes (make check-asan)"
    "check|the unit test suites (Check)"
    "libjansson-dev|manifests and --format=json"
    "pkg-config|finding check, and the installed kstub.pc in check-install"
    "cmake|check-install builds the CMake examples"
    "ninja-build|CMake's Ninja generator and Meson in check-install"
    "meson|check-install builds the Meson example"
    "valgrind|make valgrind-gen and check-front's short-typedef case"
    "python3-dev|the Python target's module is built against Python's headers (check-python)"
    "python3-pytest|check-python runs the Python target's tests with pytest"
    "python3-numpy|check-python's structured dtypes and arrays"
    "python3-mypy|check-python runs mypy over a generated .pyi"
    "python3-setuptools|examples/python builds with setuptools (check-python-example)"
    "python3-venv|check-python-example installs examples/python into a fresh virtual environment"
    "python3-setuptools-whl|check-python-example: the same for setuptools (what python3-venv installs with it)"
    "python3-wheel-whl|check-python-example: pip's isolated build takes setuptools and wheel from /usr/share/python-wheels"
)

if [ "${1:-}" = --list ]; then
    for e in "${pkgs[@]}"; do printf '  %-20s %s\n' "${e%%|*}" "${e#*|}"; done
    exit 0
fi

missing=()
why=()
for e in "${pkgs[@]}"; do
    p=${e%%|*}
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
    missing+=("$p")
    why+=("$(printf '  %-20s %s' "$p" "${e#*|}")")
done
[ ${#missing[@]} -eq 0 ] && exit 0

{
    echo "deps: about to install ${#missing[@]} Debian package(s) with apt-get:"
    printf '%s\n' "${why[@]}"
} >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed ${missing[*]}" >&2
