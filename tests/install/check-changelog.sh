#!/usr/bin/env bash
# check-changelog.sh — CHANGELOG.md's newest version is the version the
# build has (VERSION, from the Makefile), and LICENSE is there.
# Run from the repository root by `make check-install`.
set -u
top=$(sed -nE 's/^## \[([0-9]+\.[0-9]+\.[0-9]+)\].*/\1/p' CHANGELOG.md | head -n1)
if [ "$top" != "$VERSION" ]; then
    echo "  FAIL  CHANGELOG.md's newest version is '$top', the build's is $VERSION"
    echo "check-changelog: 0 passed, 1 failed"; exit 1
fi
grep -q '^MIT License$' LICENSE || { echo "  FAIL  LICENSE is not the MIT license"; echo "check-changelog: 1 passed, 1 failed"; exit 1; }
echo "check-changelog: 2 passed, 0 failed (version $VERSION)"
