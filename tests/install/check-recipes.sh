#!/usr/bin/env bash
# check-recipes.sh — the build recipes' edges a new user meets (issue 39,
# items 1-4), each in a scratch project:
#
#   kstub.mk      kstub-check with the fatbins deleted (signatures compared,
#                 a note, exit 0); a misspelled .cu in KSTUB_KERNELS (make's
#                 own "No rule to make target"); KSTUB_ARCHS as nvcc and CMake
#                 write it (90, sm_90, 90-real, 90-virtual, compute_90, 90a,
#                 100f, native through __nvcc_device_query), the first given
#                 to kstub as --arch, anything else refused by name before
#                 anything runs
#   CMake         kstub_add_kernels with a missing .cu fails at configure;
#                 ARCHS and CUDA_ARCHITECTURES in the same spellings, the
#                 first to kstub, the rest refused at configure
#   Meson         the example with its kernel in a subfolder
#
# The Make cases use this build's kstub; CMake and Meson an install of it
# into a scratch prefix. Run from the repository root by `make check-recipes`
# (tests/install/install.mk), with B, CUDA_PATH and MAKE_CMD in the environment.
set -u

SRC=$(pwd)
B=${B:-build}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
MAKE="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u OPT ${MAKE_CMD:-make}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kstub-recipes.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
LOG=$TMP/log

pass=0
fail=0
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$1"; }
bad() {
    fail=$((fail + 1)); printf '  FAIL  %s\n' "$1"
    [ -s "$LOG" ] && sed 's/^/        | /' "$LOG" | tail -n 25
}
check() { local name=$1; shift; if "$@" >"$LOG" 2>&1; then ok "$name"; else bad "$name"; fi; }

# ---- kstub.mk ------------------------------------------------------------------
P=$TMP/mk
cp -r "$SRC/tests/mkproj" "$P"
mk() {
    (cd "$P" && $MAKE --no-print-directory KSTUB_MK="$SRC/kstub.mk" KSTUB="$SRC/$B/bin/kstub" \
        KSTUB_INCLUDE="$SRC/include/kstub" KSTUB_LIBDIR="$SRC/$B/lib" CUDA_PATH="$CUDA_PATH" "$@")
}

echo "check-recipes: kstub.mk"
check "kstub.mk: builds" mk
check "kstub.mk: kstub-check of a fresh build passes" mk kstub-check
no_fatbin_check() {
    rm -f "$P"/out/kstub/kernels/*.fatbin
    mk kstub-check 2>&1 | tee "$TMP/out" || return 1
    grep -q "scale.fatbin is not built, so only the kernels' signatures were compared" "$TMP/out"
}
check "kstub.mk: kstub-check without the fatbins compares signatures, exits 0 (item 1)" no_fatbin_check
breaking_without_fatbin() {
    cp "$P/kernels/scale.cu" "$TMP/scale.cu.keep"
    sed -i 's/real_t factor,/double factor,/' "$P/kernels/scale.cu"
    mk kstub-check; local rc=$?
    cp "$TMP/scale.cu.keep" "$P/kernels/scale.cu"
    [ "$rc" -eq 2 ] || { echo "make exited $rc, not 2"; return 1; }
}
check "kstub.mk: ... and still reports a changed signature" breaking_without_fatbin
check "kstub.mk: builds again" mk

misspelled() {
    mk KSTUB_KERNELS="kernels/scale.cu kernels/nothere.cu" >"$TMP/out" 2>&1 && return 1
    cat "$TMP/out"
    grep -q "No rule to make target 'kernels/nothere.cu'" "$TMP/out" &&
        ! grep -q 'No such file' "$TMP/out"
}
check "kstub.mk: a misspelled .cu in KSTUB_KERNELS: make's 'No rule to make target' (item 2)" misspelled

# What a dry run (-B: every step) gives nvcc and kstub for KSTUB_ARCHS=$1:
# nvcc's -gencode list must be $2 exactly and kstub's --arch $3.
archs_give() {
    mk -n -B KSTUB_ARCHS="$1" ${4:+CUDA_PATH=$4} >"$TMP/out" 2>&1 || { cat "$TMP/out"; return 1; }
    local gen arch
    gen=$(grep -e '-fatbin' "$TMP/out" | grep -o 'arch=compute_[^ ]*' | tr '\n' ' ')
    arch=$(grep -e '--embed' "$TMP/out" | grep -o -e '--arch [^ ]*' | tr '\n' ' ')
    [ "$gen" = "$2 " ] || { echo "nvcc gets: $gen"; echo "expected:  $2"; return 1; }
    [ "$arch" = "--arch $3 " ] || { echo "kstub gets: $arch (expected --arch $3)"; return 1; }
}
while IFS='|' read -r archs gencode arch; do
    check "kstub.mk: KSTUB_ARCHS='$archs' (item 4)" archs_give "$archs" "$gencode" "$arch"
done <<'EOF'
80 90|arch=compute_80,code=sm_80 arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_80
90|arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_90
sm_90|arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_90
sm_80 sm_90|arch=compute_80,code=sm_80 arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_80
90-real|arch=compute_90,code=sm_90|sm_90
80 90-real|arch=compute_80,code=sm_80 arch=compute_90,code=sm_90|sm_80
90-virtual|arch=compute_90,code=compute_90|sm_90
compute_90|arch=compute_90,code=compute_90|sm_90
80-real compute_90|arch=compute_80,code=sm_80 arch=compute_90,code=compute_90|sm_80
sm_90a|arch=compute_90a,code=sm_90a arch=compute_90a,code=compute_90a|sm_90a
100f 120|arch=compute_100f,code=sm_100f arch=compute_120,code=sm_120 arch=compute_120,code=compute_120|sm_100
EOF

# native: what __nvcc_device_query (beside nvcc) reports; none: refused.
mkdir -p "$TMP/gpu/bin" "$TMP/nogpu/bin"
printf '#!/bin/sh\necho 86\n' >"$TMP/gpu/bin/__nvcc_device_query"
printf '#!/bin/sh\necho "failed to call load_driver_entries()" >&2; exit 1\n' >"$TMP/nogpu/bin/__nvcc_device_query"
chmod +x "$TMP"/*/bin/__nvcc_device_query
check "kstub.mk: KSTUB_ARCHS=native on a machine with an sm_86 GPU (item 4)" archs_give native \
    "arch=compute_86,code=sm_86 arch=compute_86,code=compute_86" sm_86 "$TMP/gpu"
refused() {   # refused ARCHS MESSAGE: make stops, saying MESSAGE, having run nothing
    rm -rf "$P/out"
    mk KSTUB_ARCHS="$1" ${3:+CUDA_PATH=$3} >"$TMP/out" 2>&1 && { cat "$TMP/out"; return 1; }
    cat "$TMP/out"
    grep -qF -- "$2" "$TMP/out" || { echo "no: $2"; return 1; }
    [ ! -e "$P/out/kstub" ] || { echo "something was written"; find "$P/out"; return 1; }
}
check "kstub.mk: KSTUB_ARCHS=native with no GPU refused" refused native \
    "KSTUB_ARCHS has 'native', but no GPU is visible here" "$TMP/nogpu"
for a in sm_9x compute_sm_90 all 90-fake 90b; do
    check "kstub.mk: KSTUB_ARCHS='$a' refused by name" refused "80 $a" \
        "KSTUB_ARCHS: '$a' is not an architecture; write NN, sm_NN, NN-real"
done
check "kstub.mk: KSTUB_ARCHS='' refused" refused " " "KSTUB_ARCHS is empty"
arch_in_header() {
    mk KSTUB_ARCHS="sm_80 90-real" || return 1
    grep -q 'Options: .*--arch sm_80' "$P/out/kstub/kernels/scale.kstub.h" || return 1
    mk kstub-check KSTUB_ARCHS="sm_80 90-real"
}
check "kstub.mk: kstub parses for the first architecture; kstub-check agrees" arch_in_header
check "kstub.mk: make clean-like targets run with a bad KSTUB_ARCHS" mk kstub-clean KSTUB_ARCHS=bogus

# ---- CMake and Meson, against an install ------------------------------------------
PREFIX=$TMP/prefix
echo "check-recipes: make install PREFIX=$PREFIX"
check "make install" $MAKE --no-print-directory install B="$B" PREFIX="$PREFIX" CUDA_PATH="$CUDA_PATH"
USER_PATH=$PREFIX/bin:$(dirname "$(command -v cc)"):/usr/bin:/bin
bare() { env -i HOME="$TMP" PATH="$USER_PATH" LANG=C "$@"; }

# cmake_project NAME CALL...: a project whose kstub_add_kernels is CALL;
# configured with Ninja (written in build.ninja, which the checks read).
cmake_project() {
    local d=$TMP/$1; shift
    rm -rf "$d"; mkdir -p "$d"
    cp "$SRC/examples/cmake/scale.cu" "$SRC/examples/cmake/main.c" "$d/"
    cat >"$d/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(probe LANGUAGES C)
find_package(kstub CONFIG REQUIRED)
add_executable(app main.c)
$(printf '%s' "$*" | sed 's/ @ /\n/g')
CMAKE
    bare cmake -S "$d" -B "$d/build" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" >"$TMP/out" 2>&1
    local rc=$?
    cat "$TMP/out"
    return $rc
}
if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
    echo "  skipped: CMake cases: cmake or ninja is not installed (scripts/deps.sh installs them)"
else
    echo "check-recipes: CMake"
    cmake_missing() {
        cmake_project missing 'kstub_add_kernels(TARGET app SOURCES nothere.cu)' && return 1
        grep -q 'kstub_add_kernels: cannot find kernel file nothere.cu' "$TMP/out"
    }
    check "cmake: a missing .cu fails at configure (item 2)" cmake_missing
    cmake_archs() {   # cmake_archs CALL GENCODE ARCH: what nvcc and kstub get
        cmake_project archs "$1" || return 1
        local n=$TMP/archs/build/build.ninja gen arch
        gen=$(grep -e '-fatbin' "$n" | grep -o 'arch=compute_[^ ]*' | tr '\n' ' ')
        arch=$(grep -e '--embed' "$n" | grep -o -e '--arch [^ ]*' | tr '\n' ' ')
        [ "${gen% }" = "$2" ] || { echo "nvcc gets: $gen"; echo "expected:  $2"; return 1; }
        [ "$arch" = "${3:+--arch $3 }" ] || { echo "kstub gets: '$arch' (expected --arch $3)"; return 1; }
    }
    while IFS='|' read -r call gencode arch; do
        check "cmake: $call (item 4)" cmake_archs "$call" "$gencode" "$arch"
    done <<'EOF'
kstub_add_kernels(TARGET app SOURCES scale.cu ARCHS sm_80 90)|arch=compute_80,code=sm_80 arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_80
kstub_add_kernels(TARGET app SOURCES scale.cu ARCHS 80-real compute_90)|arch=compute_80,code=sm_80 arch=compute_90,code=compute_90|sm_80
kstub_add_kernels(TARGET app SOURCES scale.cu ARCHS 90)|arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_90
set_target_properties(app PROPERTIES CUDA_ARCHITECTURES "86-real;sm_90") @ kstub_add_kernels(TARGET app SOURCES scale.cu)|arch=compute_86,code=sm_86 arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_86
kstub_add_kernels(TARGET app SOURCES scale.cu)|arch=compute_80,code=sm_80 arch=compute_90,code=sm_90 arch=compute_90,code=compute_90|sm_80
EOF
    cmake_refused() {   # cmake_refused CALL MESSAGE
        cmake_project refused "$1" && return 1
        grep -qF -- "$2" "$TMP/out" || { echo "no: $2"; return 1; }
    }
    for a in sm_9x compute_sm_90 90b; do
        check "cmake: ARCHS $a refused at configure" cmake_refused \
            "kstub_add_kernels(TARGET app SOURCES scale.cu ARCHS 80 $a)" \
            "CUDA architecture '$a' is not one of"
    done
    check "cmake: ARCHS native with no GPU refused at configure" cmake_refused \
        "set(KSTUB_NVCC $TMP/nogpu/bin/nvcc) @ kstub_add_kernels(TARGET app SOURCES scale.cu ARCHS native)" \
        "CUDA architecture 'native', but no GPU is visible here"
    check "cmake: ARCHS native on a machine with an sm_86 GPU: kstub gets --arch sm_86" cmake_archs \
        "set(KSTUB_NVCC $TMP/gpu/bin/nvcc) @ kstub_add_kernels(TARGET app SOURCES scale.cu ARCHS native)" \
        "" sm_86
fi

if ! command -v meson >/dev/null || ! command -v ninja >/dev/null; then
    echo "  skipped: Meson cases: meson or ninja is not installed (scripts/deps.sh installs them)"
else
    echo "check-recipes: Meson"
    d=$TMP/meson
    mkdir -p "$d/kernels"
    cp "$SRC"/examples/meson/* "$d/"
    mv "$d/scale.cu" "$d/kernels/"
    meson_subfolder() {
        bare env PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" meson setup "$d/build" "$d" \
            -Dgpu_archs=86,90 -Dkernels=kernels/scale.cu || return 1
        bare ninja -C "$d/build" || return 1
        [ -f "$d/build/scale.kstub.h" ] || { echo "no build/scale.kstub.h"; return 1; }
        grep -q 'Options: .*--arch sm_86' "$d/build/scale.kstub.h"
    }
    check "meson: the example with its kernel in kernels/ builds; kstub parses for the first arch (items 3, 4)" meson_subfolder
fi

echo "check-recipes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
