#!/usr/bin/env bash
# check-prefix.sh — `make install` into a PREFIX holding each character a
# POSIX path may hold and a build file may trip on (issue 26 #4): a space,
# '&', '#' and a single quote. Each is installed
# once, then three consumers are built against that install in a bare
# environment and run (no driver: the app says so and exits 0):
#
#   pkg-config  eval of `pkg-config --variable=kstub` and `--cflags --libs`,
#               as a shell (or a make recipe) reads them; run with no
#               LD_LIBRARY_PATH (kstub.pc's rpath)
#   CMake       examples/cmake with CMAKE_PREFIX_PATH (Unix Makefiles)
#   kstub.mk    `make -I PREFIX/share/kstub` of a Makefile that includes
#               kstub.mk, the installed kstub on PATH
#
# then `make uninstall` leaves no file. What the installed files cannot work
# with is refused before anything is written (make fails naming the
# character; the prefix's parent stays empty): '$', '(' and ')', which
# pkgconf prints unescaped, a newline (a .pc file is read by lines), '|'
# (make's order-only separator, in kstub.mk's and CMake's rules), '\'
# (CMake's path separator) and '"' (nvcc refuses it in an -I path).
#
# The kernel image is built once (nvcc -fatbin) and handed to the pkg-config
# and kstub.mk consumers; the CMake consumer runs nvcc itself.
#
# Run from the repository root by `make check-install` and `make
# check-install-prefix` (tests/install/install.mk), with B, CUDA_PATH and MAKE_CMD in
# the environment.
set -u

SRC=$(pwd)
B=${B:-build}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
MAKE="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u OPT ${MAKE_CMD:-make}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kstub-prefix.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
LOG=$TMP/log

pass=0
fail=0
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$1"; }
bad() {
    fail=$((fail + 1)); printf '  FAIL  %s\n' "$1"
    [ -s "$LOG" ] && sed 's/^/        | /' "$LOG" | tail -n 25
}
check() { local name=$1; shift; if "$@" >"$LOG" 2>&1; then ok "$name"; else bad "$name"; fi; }

mkdir -p "$TMP/home" "$TMP/src"
cp examples/cmake/scale.cu examples/cmake/main.c examples/cmake/CMakeLists.txt "$TMP/src/"
"$CUDA_PATH/bin/nvcc" -fatbin -gencode arch=compute_90,code=sm_90 -o "$TMP/src/scale.fatbin" \
    "$TMP/src/scale.cu" || { echo "check-prefix: nvcc failed"; exit 1; }

bare() {   # bare PREFIX COMMAND...: a fresh environment with PREFIX/bin on PATH
    local p=$1; shift
    local extra=()
    [ "$CUDA_PATH" != /usr/local/cuda ] && extra+=("CUDA_PATH=$CUDA_PATH")
    env -i HOME="$TMP/home" PATH="$p/bin:$(dirname "$(command -v cc)"):/usr/bin:/bin" LANG=C \
        "${extra[@]}" "$@"
}

consumer_pc() {   # consumer_pc PREFIX DIR
    mkdir -p "$2" && cp "$TMP/src/scale.cu" "$TMP/src/main.c" "$TMP/src/scale.fatbin" "$2/"
    bare "$1" PKG_CONFIG_PATH="$1/lib/pkgconfig" sh -c '
        set -e
        cd "$0"
        eval "k=$(pkg-config --variable=kstub kstub)"
        [ -x "$k" ] || { echo "pkg-config --variable=kstub: $k is not kstub"; exit 1; }
        "$k" scale.cu --embed scale.fatbin -o scale.kstub
        eval "cc -std=c11 -Wall -Wextra -Werror main.c scale.kstub.c -o app $(pkg-config --cflags --libs kstub)"
        ' "$2" || return 1
    bare "$1" sh -c 'cd "$0" && exec ./app' "$2" >"$TMP/run.out" 2>&1 ||
        { cat "$TMP/run.out"; return 1; }
    grep -qi driver "$TMP/run.out"
}
consumer_cmake() {   # consumer_cmake PREFIX DIR
    mkdir -p "$2" && cp "$TMP/src/scale.cu" "$TMP/src/main.c" "$TMP/src/CMakeLists.txt" "$2/"
    bare "$1" cmake -S "$2" -B "$2/build" -G "Unix Makefiles" -DCMAKE_PREFIX_PATH="$1" \
        -DEXAMPLE_ARCHS=90 &&
        bare "$1" cmake --build "$2/build" &&
        bare "$1" sh -c 'exec "$0"' "$2/build/scale_app" >"$TMP/run.out" 2>&1 ||
        { cat "$TMP/run.out"; return 1; }
    grep -qi driver "$TMP/run.out"
}
consumer_mk() {   # consumer_mk PREFIX DIR
    mkdir -p "$2/build/kstub" && cp "$TMP/src/scale.cu" "$TMP/src/main.c" "$2/"
    cp "$TMP/src/scale.fatbin" "$2/build/kstub/" && touch "$2/build/kstub/scale.fatbin"
    cat >"$2/Makefile" <<'MK'
KSTUB_KERNELS := scale.cu
KSTUB_ARCHS := 90
include kstub.mk
app: build/main.o $(KSTUB_OBJS)
	$(CC) $^ -o $@ $(KSTUB_LIBS)
build/main.o: main.c | $(KSTUB_HEADERS)
	$(CC) -std=c11 -Wall -Wextra -Werror $(KSTUB_CPPFLAGS) -c $< -o $@
MK
    bare "$1" make --no-print-directory -C "$2" -I "$1/share/kstub" &&
        bare "$1" sh -c 'exec "$0"' "$2/app" >"$TMP/run.out" 2>&1 ||
        { cat "$TMP/run.out"; return 1; }
    grep -qi driver "$TMP/run.out"
}
uninstalls() {
    $MAKE --no-print-directory uninstall B="$B" PREFIX="$1" || return 1
    local f
    f=$(find "$1" ! -type d)
    [ -z "$f" ] || { echo "left behind: $f"; return 1; }
}

i=0
for c in ${ONLY-' ' '&' '#' "'"}; do
    i=$((i + 1))
    P="$TMP/pre${c}fix"
    name="PREFIX with $(printf '%q' "$c")"
    echo "check-prefix: $name"
    check "$name: make install" $MAKE --no-print-directory install B="$B" PREFIX="$P" CUDA_PATH="$CUDA_PATH"
    [ -f "$P/lib/pkgconfig/kstub.pc" ] || continue
    check "$name: pkg-config consumer builds and runs" consumer_pc "$P" "$TMP/pc$i"
    if command -v cmake >/dev/null; then
        check "$name: CMake consumer builds and runs" consumer_cmake "$P" "$TMP/cmake$i"
    else
        echo "  skipped: CMake consumer: cmake is not installed (scripts/deps.sh installs it)"
    fi
    check "$name: kstub.mk consumer builds and runs" consumer_mk "$P" "$TMP/mk$i"
    check "$name: make uninstall leaves no file" uninstalls "$P"
done

# refused PREFIX-AS-MAKE-SEES-IT WHAT: make install fails naming WHAT and
# writes nothing (the prefix's parent holds what it held before).
refused() {
    mkdir -p "$TMP/refused"
    $MAKE --no-print-directory install B="$B" PREFIX="$TMP/refused/$1" CUDA_PATH="$CUDA_PATH" && return 1
    grep -qF "PREFIX holds a $2:" "$LOG" || return 1
    [ -z "$(ls -A "$TMP/refused")" ] || { echo "written: $(ls -A "$TMP/refused")"; return 1; }
}
echo "check-prefix: refused before anything is written"
check "PREFIX with \$b (make would read a variable) refused" refused 'a$bc' "'\$'"
check "PREFIX with \$\$ (a literal \$) refused" refused 'a$$bc' "'\$'"
check "PREFIX with ( refused" refused 'a(bc' "'('"
check "PREFIX with ) refused" refused 'a)bc' "')'"
check "PREFIX with a newline refused" refused $'a\nbc' newline
check "PREFIX with | refused" refused 'a|bc' "'|'"
check "PREFIX with \\ refused" refused 'a\bc' "'\\'"
check "PREFIX with \" refused" refused 'a"bc' "'\"'"
refused_cuda() {
    mkdir -p "$TMP/refused"
    $MAKE --no-print-directory install B="$B" PREFIX="$TMP/refused/p" CUDA_PATH="$TMP/c|uda" && return 1
    grep -qF "CUDA_PATH holds a '|'" "$LOG" || return 1
    [ -z "$(ls -A "$TMP/refused")" ] || { echo "written: $(ls -A "$TMP/refused")"; return 1; }
}
check "CUDA_PATH with | refused" refused_cuda

echo "check-prefix: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
