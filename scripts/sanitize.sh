#!/usr/bin/env bash
# sanitize.sh — the loops behind the fuzz and valgrind targets of
# tests/runtime/sanitize.mk and tests/generator/sanitize.mk, written once: the
# Makefile builds the programs, this script runs them and says what it found.
#
#   sanitize.sh fuzz SECONDS OUTDIR TARGET...
#       each libFuzzer target OUTDIR/bin/TARGET for SECONDS, from its working
#       corpus OUTDIR/TARGET/corpus and its seeds OUTDIR/TARGET/seeds (with
#       its tests/fuzz/dict/ dictionary, under -rss_limit_mb=$FUZZ_RSS_MB,
#       default 2048); the log is OUTDIR/TARGET/log. A crash, leak, timeout
#       or oom artifact left in OUTDIR/TARGET/, or a run that did not finish,
#       fails that target; every target still runs its time, and the loop
#       exits 1 at the end naming the targets that failed.
#   sanitize.sh replay OUTDIR TARGET...
#       each target once on every input of its seeds OUTDIR/TARGET/seeds;
#       the log is OUTDIR/TARGET.replay.log. An input that fails, fails its
#       target; the others still run, and the loop exits 1 at the end.
#   sanitize.sh valgrind KSTUB OUTDIR INPUT...
#       $VALGRIND (default valgrind) on KSTUB over each .cu; libclang's own
#       reports suppressed (tests/valgrind-libclang.supp). A valgrind error
#       fails; kstub's own exit status is reported, not judged.
#
# A target's seeds are made afresh at each run: the inputs committed under
# tests/fuzz/corpus/TARGET/ (crafted ones, past findings, nvcc's images) and
# copies of what the tree already holds in the target's format, taken now:
# the .cu files of tests/corpus/, tests/corpus/real/ and kernels/, the
# templates, the golden manifest. Copies of those are never committed.
#
# Environment: FUZZ_ARGS, more libFuzzer options for `fuzz` (the generator's
# targets pass -close_fd_mask=2 -max_len=32768 -timeout=10); FUZZ_SYMBOLIZER,
# an llvm-symbolizer for readable stacks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() { sed -n '4,27p' "$0" >&2; exit 2; }

# The -dict= option of target $1 (nothing when it has no dictionary).
dict_of() {
    local d=
    case $1 in
        fuzz_gen_source|fuzz_cache_includes|fuzz_gen_instscan) d=cu ;;
        fuzz_gen_render) d=render ;;
        fuzz_gen_manifest) d=manifest ;;
        fuzz_gen_image|fuzz_image_kind) d=image ;;
    esac
    [ -z "$d" ] || echo "-dict=$root/tests/fuzz/dict/$d.dict"
}

# Paths are absolute: a target may change directory (fuzz_cache_includes does).
abs() { case $1 in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }

# put DIR NAME < bytes: one seed, named seed-NAME.
put() { cat > "$1/seed-$2"; }
flat() { echo "$1" | tr '/' '_'; }

# Makes OUTDIR/TARGET/seeds (see above) and prints its path.
seeds() {
    local out=$1 t=$2 d f
    d=$out/$t/seeds
    rm -rf "$d"; mkdir -p "$d"
    if [ -d "$root/tests/fuzz/corpus/$t" ]; then cp "$root/tests/fuzz/corpus/$t"/* "$d"/; fi
    case $t in
        fuzz_gen_source|fuzz_gen_instscan)
            for f in tests/corpus/*.cu tests/corpus/real/*.cu kernels/*.cu; do
                put "$d" "$(flat "${f#tests/}")" < "$f"
            done ;;
        fuzz_cache_includes)
            # the source, a NUL, then the header "h.h"
            for f in kernels/*.cu tests/corpus/real/*.cu; do
                { cat "$f"; printf '\0#pragma once\ntypedef int cfg_t;\n'; } | put "$d" "$(flat "${f#tests/}")"
            done ;;
        fuzz_gen_render)
            for f in templates/*.in; do put "$d" "$(basename "$f")" < "$f"; done ;;
        fuzz_gen_manifest)
            put "$d" golden-basic.json < tests/golden/basic.kstub.json ;;
    esac
    echo "$d"
}

fuzz() {
    local seconds=$1 out t dict sd found k failed=()
    out=$(abs "$2"); shift 2
    for t in "$@"; do
        mkdir -p "$out/$t/corpus"
        sd=$(seeds "$out" "$t")
        dict=$(dict_of "$t")
        echo "== $t for $seconds s"
        # shellcheck disable=SC2086  # FUZZ_ARGS and dict are lists of options
        ASAN_SYMBOLIZER_PATH=${FUZZ_SYMBOLIZER:-} "$out/bin/$t" -max_total_time="$seconds" -print_final_stats=1 \
            -rss_limit_mb="${FUZZ_RSS_MB:-2048}" $dict ${FUZZ_ARGS:-} -artifact_prefix="$out/$t/" \
            "$out/$t/corpus" "$sd" > "$out/$t/log" 2>&1 || true
        grep -E 'ERROR|SUMMARY|stat::number_of_executed_units|stat::new_units_added|stat::peak_rss|^Done' \
            "$out/$t/log" | tail -6 || true
        found=
        for k in crash leak timeout oom; do     # (ls of four globs failed when one matched nothing)
            if compgen -G "$out/$t/$k-*" >/dev/null; then found=$k; fi
        done
        if [ -n "$found" ]; then
            echo "$t: FAILED: findings in $out/$t/ (log: $out/$t/log)"; failed+=("$t")
        elif ! grep -q '^Done' "$out/$t/log"; then
            echo "$t: FAILED: did not finish: $out/$t/log"; failed+=("$t")
        fi
    done
    # every target runs its time; one that failed does not stop the others
    if [ ${#failed[@]} -gt 0 ]; then echo "fuzz: ${#failed[@]} of $# targets failed: ${failed[*]}"; exit 1; fi
}

replay() {
    local out t sd failed=()
    out=$(abs "$1"); shift
    for t in "$@"; do
        sd=$(seeds "$out" "$t")
        if "$out/bin/$t" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" "$sd"/* > "$out/$t.replay.log" 2>&1; then
            echo "$t: $(ls "$sd" | wc -l) inputs passed"
        else
            tail -30 "$out/$t.replay.log"; echo "$t: FAILED: an input failed"; failed+=("$t")
        fi
    done
    if [ ${#failed[@]} -gt 0 ]; then echo "replay: ${#failed[@]} of $# targets failed: ${failed[*]}"; exit 1; fi
}

valgrind_gen() {
    local kstub=$1 out=$2 f rc vg=${VALGRIND:-valgrind}
    shift 2
    command -v "$vg" >/dev/null || { echo "valgrind-gen: no $vg (apt-get install valgrind)"; exit 1; }
    mkdir -p "$out"
    for f in "$@"; do
        rc=0
        "$vg" -q --error-exitcode=9 --leak-check=no --suppressions=tests/valgrind-libclang.supp \
            "$kstub" "$f" -o "$out/$(basename "$f" .cu)" > "$out/log" 2>&1 || rc=$?
        if [ $rc -eq 9 ]; then cat "$out/log"; echo "valgrind-gen: $f: errors"; exit 1; fi
        echo "valgrind-gen: $f: clean (kstub exit $rc)"
    done
}

[ $# -ge 1 ] || usage
mode=$1; shift
case $mode in
    fuzz) [ $# -ge 3 ] || usage; fuzz "$@" ;;
    replay) [ $# -ge 2 ] || usage; replay "$@" ;;
    valgrind) [ $# -ge 3 ] || usage; valgrind_gen "$@" ;;
    *) usage ;;
esac
