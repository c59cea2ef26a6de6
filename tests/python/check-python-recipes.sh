#!/usr/bin/env bash
# check-python-recipes.sh — the scikit-build-core and meson-python recipes
# of docs/python.md, taken from the page as they are (its ```cmake and
# ```meson blocks after "**scikit-build-core**" and "**meson-python**"),
# each in a copy of examples/python: configured, built and installed with
# plain cmake and meson (the part of each recipe that is kstub's: the
# backends only run these) against a scratch prefix of this tree's kstub
# (bin/kstub, include/, lib/libkstub.a), then the installed package
# imported: saxpy's signature, the struct class's bytes, its .pyi and
# py.typed beside it, no libkstub.so linked. Offline; no nvcc (the recipes
# embed the source). Run from the repository root by `make
# check-python-recipes` with PYTHON, KSTUB, LIB and DIR set.
set -u
pass=0
fail=0
check() {   # check WHAT COMMAND...: COMMAND must succeed (its output in $DIR/log)
    local what=$1; shift
    if "$@" > "$DIR/log" 2>&1; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "  FAIL  $what"; sed 's/^/        | /' "$DIR/log" | tail -n 25; fi
}
root=$(pwd)
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1

# The page's block of LANG after the paragraph starting with MARK.
block() {   # block MARK LANG
    awk -v mark="$1" -v fence="\`\`\`$2" 'index($0, mark) == 1 { seen = 1 }
        seen && $0 == fence { on = 1; next } on && $0 == "```" { exit } on { print }' docs/python.md
}

# A prefix as an install lays it out, of this tree's files.
prefix=$DIR/prefix
mkdir -p "$prefix/bin" "$prefix/include" "$prefix/lib"
ln -s "$root/$KSTUB" "$prefix/bin/kstub"
for h in include/kstub/*.h; do ln -s "$root/$h" "$prefix/include/"; done
ln -s "$root/$LIB" "$prefix/lib/libkstub.a"
export PATH="$prefix/bin:$PATH"

# installed SITE: the package installed under SITE imports and is whole.
installed() {
    local site=$1 so
    so=$(ls "$site"/kstub_example/_kernels*.so 2>/dev/null | head -1)
    [ -n "$so" ] || { echo "no _kernels module under $site"; return 1; }
    ! ldd "$so" | grep libkstub || return 1
    test -f "$site/kstub_example/_kernels.pyi" && test -f "$site/kstub_example/py.typed" || return 1
    (cd "$DIR" && PYTHONPATH="$site" "$PYTHON" -c '
import inspect, kstub_example as k
assert str(inspect.signature(k.saxpy)).startswith("(a, x, y, n, *, grid, block, shared=0, stream=None")
t = k.Affine(scale=2.0, shift=1.0, n=3)
assert bytes(t) == b"\x00\x00\x00\x40\x00\x00\x80\x3f\x03\x00\x00\x00", bytes(t)')
}

project() {   # project NAME: a copy of examples/python without its setuptools files
    local p=$DIR/$1
    mkdir -p "$p" && cp -r examples/python/kernels examples/python/src "$p/" && echo "$p"
}

# ---- scikit-build-core: the CMakeLists.txt ----------------------------------------------------
p=$(project cmake)
block '**scikit-build-core**' cmake > "$p/CMakeLists.txt"
check "docs/python.md has the CMake recipe" grep -q 'python_add_library' "$p/CMakeLists.txt"
if command -v cmake >/dev/null; then
    check "CMake recipe: configures" cmake -S "$p" -B "$p/build" -DPython_EXECUTABLE="$PYTHON" \
        -DCMAKE_INSTALL_PREFIX="$p/site"
    check "CMake recipe: builds" cmake --build "$p/build"
    check "CMake recipe: installs" cmake --install "$p/build"
    check "CMake recipe: the installed package imports, links no libkstub.so" installed "$p/site"
else
    echo "check-python-recipes: no cmake: skipped the CMake recipe"
fi

# ---- meson-python: the meson.build ------------------------------------------------------------
p=$(project meson)
block '**meson-python**' meson > "$p/meson.build"
check "docs/python.md has the Meson recipe" grep -q 'extension_module' "$p/meson.build"
if command -v meson >/dev/null && command -v ninja >/dev/null; then
    check "Meson recipe: configures" meson setup "$p/build" "$p" --prefix="$p/inst" \
        -Dpython.purelibdir=site -Dpython.platlibdir=site
    check "Meson recipe: builds" meson compile -C "$p/build"
    check "Meson recipe: installs" meson install -C "$p/build"
    check "Meson recipe: the installed package imports, links no libkstub.so" installed "$p/inst/site"
else
    echo "check-python-recipes: no meson or ninja: skipped the Meson recipe"
fi

echo "check-python-recipes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
