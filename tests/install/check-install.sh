#!/usr/bin/env bash
# check-install.sh — `make install` into a scratch prefix, then three projects
# built against that installed copy only, each in a scratch directory with a
# bare environment (env -i: PATH, and PKG_CONFIG_PATH for the first):
#
#   1. pkgconfig/Makefile   pkg-config --cflags --libs kstub
#   2. kstubmk/Makefile     the installed kstub.mk, only PATH set
#   3. examples/cmake       find_package(kstub CONFIG) + kstub_add_kernels,
#                           with the Unix Makefiles and the Ninja generators,
#                           in a directory whose path holds a space
#   4. cmake-lib/           a STATIC library owning the kernels, two programs
#                           linking it (usage requirements PUBLIC), one .cu in
#                           two targets (one rule per file), make -j4
#   5. cmake-cuda/          enable_language(CUDA): architectures, nvcc, the
#                           target's include directories and definitions
#   6. examples/meson       dependency('kstub') + custom_target with @DEPFILE@,
#                           meson setup + ninja
#
# Each builds, links and runs (no driver: the app says so and exits 0), a
# second build does nothing, a changed kernel signature regenerates the stubs
# and rebuilds the app, and a build after that does nothing again. No build
# file may name the source tree. Last, `make uninstall` leaves no file
# behind, under PREFIX and under DESTDIR, and spares what was there before.
#
# Run from the repository root by `make check-install` (tests/install/install.mk),
# with B (the build directory), CUDA_PATH and MAKE_CMD (make) in the environment.
set -u

SRC=$(pwd)
B=${B:-build}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
# This tree's make, run afresh: none of the calling make's flags or jobserver
# (the test passes what install needs: B, PREFIX, DESTDIR, CUDA_PATH), nor
# its OPT, which make exports (under check-asan: the sanitizer flags).
MAKE="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u OPT ${MAKE_CMD:-make}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kstub-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
LOG=$TMP/log

pass=0
fail=0
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$1"; }
bad() {
    fail=$((fail + 1)); printf '  FAIL  %s\n' "$1"
    [ -s "$LOG" ] && sed 's/^/        | /' "$LOG" | tail -n 25
}
# check NAME COMMAND...: one test case; COMMAND's output goes to $LOG.
check() { local name=$1; shift; if "$@" >"$LOG" 2>&1; then ok "$name"; else bad "$name"; fi; }

# The consumers' environment: nothing from this shell but PATH (and what each
# route needs on top); HOME a scratch one, so no user package registry counts.
mkdir -p "$TMP/home"
USER_PATH=$PREFIX/bin:$(dirname "$(command -v cc)"):/usr/bin:/bin
bare() {
    local extra=()
    [ "$CUDA_PATH" != /usr/local/cuda ] && extra+=("CUDA_PATH=$CUDA_PATH")
    env -i HOME="$TMP/home" PATH="$USER_PATH" LANG=C "${extra[@]}" "$@"
}

no_source_tree() { ! grep -rlI --exclude=CMakeCache.txt -e "$SRC/" "$1"; }

# Steps of a route, each run in the project directory $1 with the build
# command "${@:2}".
build() { (cd "$1" && "${@:2}"); }
the_app() { find "$1" -type f \( -name app -o -name scale_app \) -perm -u+x | head -n1; }
runs() { local app; app=$(the_app "$1") && [ -n "$app" ] && LD_LIBRARY_PATH="$PREFIX/lib" "$app"; }
# Builds, and fails if any file but CMake's own bookkeeping changed.
rebuilds_nothing() {
    touch "$TMP/marker"
    build "$@" || return 1
    local f
    f=$(find "$1" -type f -newer "$TMP/marker" ! -path '*/CMakeFiles/*' ! -name '.ninja_*' \
        ! -name CMakeCache.txt ! -name '*.cmake' ! -name Makefile)
    [ -z "$f" ] || { echo "rebuilt: $f"; return 1; }
}
# Changes scale()'s first parameter from float to double and builds: the
# header must say double and the app must be relinked.
regenerates() {
    sed -i 's/float a,/double a,/' "$1/scale.cu"
    touch "$TMP/marker"
    build "$@" || return 1
    local h n=0
    while IFS= read -r h; do
        n=$((n + 1))
        grep -q 'double  *a,' "$h" || { echo "$h does not take a double"; return 1; }
    done < <(find "$1" -name scale.kstub.h)
    [ "$n" -gt 0 ] || { echo "no scale.kstub.h"; return 1; }
    [ -n "$(find "$1" -type f \( -name app -o -name scale_app \) -newer "$TMP/marker")" ] ||
        { echo "the app was not relinked"; return 1; }
}

# consumer NAME DIR BUILD-COMMAND...: every route's checks.
consumer() {
    local name=$1; shift
    check "$name: builds and links against the install" build "$@"
    check "$name: app runs (no driver: says so, exits 0)" runs "$1"
    check "$name: second build does nothing" rebuilds_nothing "$@"
    check "$name: a kernel signature change regenerates and relinks" regenerates "$@"
    check "$name: and then a build does nothing again" rebuilds_nothing "$@"
    check "$name: no build file names the source tree" no_source_tree "$1"
}

# A scratch project: the route's build files plus the CMake example's kernel and main.c.
project() {
    mkdir -p "$TMP/$1"
    cp "$SRC/examples/cmake/scale.cu" "$SRC/examples/cmake/main.c" "$TMP/$1/"
    [ -n "${2:-}" ] && cp -rL "$2"/* "$TMP/$1/"
    echo "$TMP/$1"
}

echo "check-install: make install PREFIX=$PREFIX"
check "make install" $MAKE --no-print-directory install B="$B" PREFIX="$PREFIX" CUDA_PATH="$CUDA_PATH"
[ "$fail" -eq 0 ] || { echo "check-install: $pass passed, $fail failed"; exit 1; }

expect_files() {
    local f
    for f in bin/kstub include/kstub.h include/kstub_types.h lib/libkstub.a lib/libkstub.so \
        lib/pkgconfig/kstub.pc lib/pkgconfig/kstub-static.pc lib/cmake/kstub/kstubConfig.cmake \
        lib/cmake/kstub/kstubConfigVersion.cmake share/kstub/kstub.mk \
        share/kstub/templates/header.h.in share/kstub/templates/source.c.in \
        share/kstub/templates/python/target.json share/kstub/templates/python/module.c.in include/kstub_python.h \
        share/man/man1/kstub.1 share/bash-completion/completions/kstub \
        share/man/man3/ks_launch_1d.3 share/man/man3/KS_CHECK.3 share/man/man3/ks_graph_launch.3 \
        share/doc/kstub/LICENSE share/doc/kstub/CHANGELOG.md; do
        [ -e "$1/$f" ] || { echo "missing: $f"; return 1; }
    done
}
check "every file in place" expect_files "$PREFIX"
# The installed headers are the source tree's include/kstub/, each in
# PREFIX/include as <kstub.h> reaches it; none of runtime/'s private ones.
public_headers() {
    local h got want
    got=$(cd "$PREFIX/include" && ls | sort)
    want=$(cd "$SRC/include/kstub" && ls | sort)
    [ "$got" = "$want" ] || { echo "PREFIX/include holds: $got; include/kstub/ holds: $want"; return 1; }
    for h in "$SRC"/runtime/*.h; do
        [ ! -e "$PREFIX/include/$(basename "$h")" ] || { echo "private header installed: $h"; return 1; }
    done
}
check "the public headers only, as <kstub.h>" public_headers
# libkstub.so -> libkstub.so.MAJOR -> libkstub.so.MAJOR.MINOR.PATCH, whose
# SONAME is the middle name.
versioned_lib() {
    local lib=$PREFIX/lib soname real
    soname=$(readlink "$lib/libkstub.so") && [ -L "$lib/libkstub.so" ] || { echo "libkstub.so is no symlink"; return 1; }
    real=$(readlink "$lib/$soname") && [ -L "$lib/$soname" ] || { echo "$soname is no symlink"; return 1; }
    [ -f "$lib/$real" ] && [ ! -L "$lib/$real" ] || { echo "$real is not a file"; return 1; }
    case $soname in libkstub.so.[0-9]*) ;; *) echo "odd soname $soname"; return 1 ;; esac
    readelf -d "$lib/$real" | grep -q "Library soname: \[$soname\]" || { echo "$real: no SONAME $soname"; return 1; }
}
check "libkstub.so -> SONAME -> the real file" versioned_lib
# man 3 finds a function's page through its family's .so link, installed.
check "man 3 ks_graph_launch from the installed pages" bash -c '
    command -v man >/dev/null || { echo "skipped: man is not installed"; exit 0; }
    MANWIDTH=80 man -M "$1/share/man" 3 ks_graph_launch | grep -q "ks_graph_instantiate"' _ "$PREFIX"
check "pkg-config --cflags --libs kstub" bash -c '
    out=$(PKG_CONFIG_PATH="$1/lib/pkgconfig" pkg-config --cflags --libs kstub) && echo "$out" &&
    for w in "-I$1/include" "-I$2/include" "-L$1/lib" -lkstub -ldl -lpthread -lm; do
        case " $out " in *" $w "*) ;; *) echo "missing $w"; exit 1 ;; esac; done' _ "$PREFIX" "$CUDA_PATH"
check "installed kstub finds its own templates" bash -c \
    'grep -q "{{" "$1/share/kstub/templates/header.h.in" && "$1/bin/kstub" --version' _ "$PREFIX"
# --target python takes the installed templates/python (the depfile names them), never the source tree's.
installed_target() {
    local d=$TMP/target f
    mkdir -p "$d" && cp "$SRC/examples/cmake/scale.cu" "$d/" || return 1
    (cd "$d" && "$PREFIX/bin/kstub" --no-cache --cuda-path "$CUDA_PATH" --target python scale.cu -MD -o py/scale) ||
        return 1
    for f in scale.h scale.c scale_module.c scale.pyi; do [ -f "$d/py/$f" ] || { echo "no py/$f"; return 1; }; done
    grep -F "share/kstub/templates/python/module.c.in" "$d/py/scale.d" | grep -qvF "$SRC/templates" ||
        { echo "the depfile names no installed python template:"; cat "$d/py/scale.d"; return 1; }
    "$PREFIX/bin/kstub" --target nosuch scale.cu -o x 2>&1 | grep -q "the targets: c, python "
}
check "installed kstub --target python uses its installed templates" installed_target

echo "check-install: 1. a Makefile with pkg-config"
d=$(project pkgconfig "$SRC/tests/install/pkgconfig")
consumer "pkg-config" "$d" env -i HOME="$TMP/home" PATH="$USER_PATH" LANG=C \
    PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" make --no-print-directory

# From a fresh shell: no LD_LIBRARY_PATH, the program finds libkstub itself
# (kstub.pc's rpath), or needs none (kstub-static.pc).
runs_bare() { local app; app=$(the_app "$1") && [ -n "$app" ] && bare "$app"; }
check "pkg-config: app runs with no LD_LIBRARY_PATH (kstub.pc's rpath)" runs_bare "$d"
d=$(project pkgconfig-static "$SRC/tests/install/pkgconfig")
check "pkg-config kstub-static: builds" build "$d" env -i HOME="$TMP/home" PATH="$USER_PATH" LANG=C \
    PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" make --no-print-directory KSTUB_PC=kstub-static
check "pkg-config kstub-static: app runs with no LD_LIBRARY_PATH" runs_bare "$d"
static_app() { ! readelf -d "$(the_app "$1")" | grep -q 'NEEDED.*libkstub'; }
check "pkg-config kstub-static: app needs no libkstub.so" static_app "$d"

echo "check-install: 2. a Makefile with the installed kstub.mk, only PATH set"
d=$(project kstubmk "$SRC/tests/install/kstubmk")
consumer "kstub.mk" "$d" bare make --no-print-directory -j2

have_cmake() {   # have_cmake GENERATOR WHAT: whether the tools are here (else says skipped)
    if ! command -v cmake >/dev/null; then
        echo "  skipped: $2 ($1): cmake is not installed (scripts/deps.sh installs it)"
        return 1
    fi
    if [ "$1" = Ninja ] && ! command -v ninja >/dev/null; then
        echo "  skipped: $2 (Ninja): ninja is not installed (package ninja-build)"
        return 1
    fi
}
# Every program of a project runs.
all_run() {
    local p
    for p in "${@:2}"; do
        LD_LIBRARY_PATH="$PREFIX/lib" "$1/build/$p" || { echo "$p failed"; return 1; }
    done
}
# Under the Makefile generators, each generated file has one rule (two would
# run at once under -j): FILE: appears in one target's build.make only.
one_rule_each() {
    local f n
    for f in "${@:2}"; do
        n=$(grep -lF "$f:" "$1"/build/CMakeFiles/*/build.make | wc -l)
        [ "$n" -eq 1 ] || { echo "$f: $n rules"; return 1; }
    done
}
# The build files pass nvcc exactly the architectures CMake was given.
archs_from_cmake() {
    local files
    files=$(find "$1/build" -name build.make -o -name build.ninja)
    grep -q 'arch=compute_90,code=sm_90' $files && grep -q 'arch=compute_90,code=compute_90' $files ||
        { echo "no sm_90 + compute_90"; return 1; }
    ! grep -q 'compute_80' $files || { echo "compute_80 from kstub's own default"; return 1; }
}

echo "check-install: 3. the CMake example (find_package(kstub CONFIG)), in a path with a space"
for gen in "Unix Makefiles" Ninja; do
    tag=${gen%% *}
    have_cmake "$gen" "CMake example" || continue
    d=$(project "cmake example-$tag" "$SRC/examples/cmake")
    check "cmake ($gen): configures with CMAKE_PREFIX_PATH" bare cmake -S "$d" -B "$d/build" \
        -G "$gen" -DCMAKE_PREFIX_PATH="$PREFIX" -DEXAMPLE_ARCHS=90
    consumer "cmake ($gen)" "$d" bare cmake --build build
done

echo "check-install: 4. kernels in a STATIC library, two programs; one .cu in two targets"
for gen in "Unix Makefiles" Ninja; do
    tag=${gen%% *}
    have_cmake "$gen" "CMake library project" || continue
    d=$(project "cmake lib-$tag" "$SRC/tests/install/cmake-lib")
    check "cmake lib ($gen): configures" bare cmake -S "$d" -B "$d/build" \
        -G "$gen" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_CUDA_ARCHITECTURES=90-real
    consumer "cmake lib ($gen)" "$d" bare cmake --build build -j4
    check "cmake lib ($gen): every program runs" all_run "$d" app app2 twice_a twice_b
    [ "$gen" = Ninja ] ||
        check "cmake lib ($gen): one rule per generated file" one_rule_each "$d" \
            kstub/scale.fatbin kstub/scale.kstub.stamp shared/scale.fatbin shared/scale.kstub.stamp
done

echo "check-install: 5. a project with enable_language(CUDA) adds kstub with one call"
for gen in "Unix Makefiles" Ninja; do
    tag=${gen%% *}
    have_cmake "$gen" "CMake CUDA project" || continue
    d=$(project "cmake-cuda-$tag" "$SRC/tests/install/cmake-cuda")
    check "cmake cuda ($gen): configures" bare cmake -S "$d" -B "$d/build" \
        -G "$gen" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_CUDA_COMPILER="$CUDA_PATH/bin/nvcc"
    consumer "cmake cuda ($gen)" "$d" bare cmake --build build
    check "cmake cuda ($gen): nvcc gets CMAKE_CUDA_ARCHITECTURES, nothing else" archs_from_cmake "$d"
done

echo "check-install: 6. the Meson example (dependency('kstub'), custom_target with @DEPFILE@)"
if ! command -v meson >/dev/null || ! command -v ninja >/dev/null; then
    echo "  skipped: Meson example: meson or ninja is not installed (scripts/deps.sh installs them)"
else
    d=$(project meson "$SRC/examples/meson")
    check "meson: setup with PKG_CONFIG_PATH" bare env PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" \
        meson setup "$d/build" "$d" -Dgpu_archs=90
    consumer "meson" "$d" bare ninja -C build
fi

# The package's version rules and targets, each in a throwaway project.
package_project() {   # package_project DIR VERSION: a project asking for kstub VERSION
    mkdir -p "$1"
    cat >"$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(probe LANGUAGES C)
find_package(kstub $2 CONFIG REQUIRED)
foreach(t kstub::kstub kstub::kstub_static kstub::generator)
    if(NOT TARGET \${t})
        message(FATAL_ERROR "no target \${t}")
    endif()
endforeach()
if(NOT COMMAND kstub_add_kernels)
    message(FATAL_ERROR "no kstub_add_kernels")
endif()
CMAKE
    bare cmake -S "$1" -B "$1/build" -DCMAKE_PREFIX_PATH="$PREFIX"
}
refused() { ! "$@"; }
if command -v cmake >/dev/null; then
    ver=$(sed -n 's/^Version: //p' "$PREFIX/lib/pkgconfig/kstub.pc")
    major=${ver%%.*}
    check "cmake: find_package(kstub $ver) gives the three targets and the function" \
        package_project "$TMP/probe-same" "$ver"
    check "cmake: find_package(kstub $major.0) is satisfied (same major, older minor)" \
        package_project "$TMP/probe-older" "$major.0"
    check "cmake: find_package(kstub $((major + 1)).0) is refused (another major)" \
        refused package_project "$TMP/probe-major" "$((major + 1)).0"
fi

echo "check-install: make uninstall"
uninstall_all() {
    $MAKE --no-print-directory uninstall B="$B" PREFIX="$PREFIX" || return 1
    local f
    f=$(find "$PREFIX" ! -type d)
    [ -z "$f" ] || { echo "left behind: $f"; return 1; }
}
check "make uninstall leaves no file" uninstall_all
check "make uninstall removes kstub's own directories" \
    test ! -e "$PREFIX/share/kstub" -a ! -e "$PREFIX/lib/cmake/kstub"

# DESTDIR: a staged install over a tree that already holds other files.
STAGE=$TMP/stage
mkdir -p "$STAGE/usr/local/bin" "$STAGE/usr/local/share/man/man1"
echo other >"$STAGE/usr/local/bin/other-tool"
(cd "$STAGE" && find . | sort) >"$TMP/before"
check "make install DESTDIR= PREFIX=/usr/local" $MAKE --no-print-directory install B="$B" \
    DESTDIR="$STAGE" PREFIX=/usr/local CUDA_PATH="$CUDA_PATH"
check "staged: every file in place" expect_files "$STAGE/usr/local"
check "staged: kstub.pc names the final prefix" \
    grep -qx 'prefix=/usr/local' "$STAGE/usr/local/lib/pkgconfig/kstub.pc"
staged_uninstall() {
    $MAKE --no-print-directory uninstall B="$B" DESTDIR="$STAGE" PREFIX=/usr/local || return 1
    local f p
    f=$(cd "$STAGE" && find . ! -type d | sort)
    [ "$f" = "./usr/local/bin/other-tool" ] || { echo "files left: $f"; return 1; }
    # What install added and uninstall left: directories only.
    for p in $(cd "$STAGE" && find . | sort | comm -13 "$TMP/before" -); do
        [ -d "$STAGE/$p" ] || { echo "left: $p"; return 1; }
    done
    [ -d "$STAGE/usr/local/share/man/man1" ] || { echo "removed a directory that was there"; return 1; }
}
check "staged: make uninstall leaves what was there, and no file" staged_uninstall

# A prefix and a DESTDIR with a space and a quote in them (issue 19 #12:
# install stopped halfway, after creating "$TMP/pre" and "./fix/..."): every
# file lands under the real prefix, nothing beside it, and uninstall takes
# every file away again.
SPACED="$TMP/pre fix'q"
spaced_round_trip() {   # spaced_round_trip ROOT MAKE-VARIABLES...: install, files, uninstall
    local root=$1; shift
    (cd "$SRC" && find . -maxdepth 1 | sort) >"$TMP/src-before"
    (cd "$TMP" && find . -maxdepth 1 | sort) >"$TMP/spaced-before"
    $MAKE --no-print-directory -C "$SRC" install B="$B" CUDA_PATH="$CUDA_PATH" "$@" || return 1
    expect_files "$root" || return 1
    local stray
    stray=$(cd "$TMP" && find . -maxdepth 1 | sort | comm -13 "$TMP/spaced-before" - |
            grep -vxF "./$(basename "$SPACED")" | grep -vx './st age')
    [ -z "$stray" ] || { echo "created beside the prefix: $stray"; return 1; }
    stray=$(cd "$SRC" && find . -maxdepth 1 | sort | comm -13 "$TMP/src-before" -)
    [ -z "$stray" ] || { echo "created in the source tree: $stray"; return 1; }
    $MAKE --no-print-directory -C "$SRC" uninstall B="$B" "$@" || return 1
    stray=$(find "$root" ! -type d)
    [ -z "$stray" ] || { echo "left behind: $stray"; return 1; }
}
check "make install/uninstall PREFIX with a space and a quote" \
    spaced_round_trip "$SPACED" PREFIX="$SPACED"
check "make install/uninstall DESTDIR with a space, PREFIX with a quote" \
    spaced_round_trip "$TMP/st age/opt/it's" DESTDIR="$TMP/st age" PREFIX="/opt/it's"

echo "check-install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
