#!/usr/bin/env bash
# run.sh — build and run kstub's GPU benchmarks, then write the report.
#
#   bash bench/run.sh [--no-build]        (or: make bench-run)
#
# Results go to $OUT when it is set, else bench/results/:
#   gpu-results.md            every table, the goal checks, machine and versions
#   launch.png, coldstart.png, graph.png  the plots
#   raw/                      the raw and summary CSVs, system.txt, run.log, status.txt
#                             (under $OUT: raw.tar.gz holding raw/, and run.log)
#
# Made for one unattended run on the GPU machine: each part has a time limit
# and the whole stays under BENCH_BUDGET_S seconds (default 450, i.e. 7.5
# minutes); a part that fails or is skipped (no driver, no CuPy) is recorded
# in raw/status.txt and the others still run; the report is always written.
# BENCH_QUICK=1 runs few rounds (a smoke test); BENCH_LAUNCH_ROUNDS and
# BENCH_PY_ROUNDS set the launch tables' rounds (100, 50); BENCH_SKIP names
# parts to leave out (coldstart, graph, global).
set -u

cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${OUT:-$ROOT/bench/results}
# Under $OUT (the GPU machine's way back), few files: the raw folder travels as
# raw.tar.gz (and run.log beside it). In the repository it stays a folder.
if [ -n "${OUT:-}" ]; then
    RAW=$(mktemp -d "${TMPDIR:-/tmp}/kstub-bench.XXXXXX")/raw
else
    RAW=$OUTDIR/raw
fi
BIN=$ROOT/build/bench
BUDGET=${BENCH_BUDGET_S:-450}
START=$(date +%s)
mkdir -p "$RAW"
# Nothing stale may pass for this run's numbers.
rm -f "$RAW"/*.csv "$RAW"/*.txt "$OUTDIR/gpu-results.md" "$OUTDIR/launch.png" "$OUTDIR/coldstart.png" "$OUTDIR/graph.png" \
    "$OUTDIR/raw.tar.gz" "$OUTDIR/run.log"
: > "$RAW/status.txt"
exec > >(tee "$RAW/run.log") 2>&1

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    LAUNCH_ROUNDS=5; COLD_RUNS=3; GRAPH_ROUNDS=5; PY_ROUNDS=3
else
    LAUNCH_ROUNDS=${BENCH_LAUNCH_ROUNDS:-100}; COLD_RUNS=40; GRAPH_ROUNDS=100; PY_ROUNDS=${BENCH_PY_ROUNDS:-50}
fi
# BENCH_SKIP="coldstart graph" leaves those parts out (recorded as skipped):
# for a run with little device time left, the launch tables first.
skipped() {
    case " ${BENCH_SKIP:-} " in
        *" $1 "*) status "$1: skipped (BENCH_SKIP)"; return 0 ;;
    esac
    return 1
}

say() { printf '[run.sh %4ds] %s\n' "$(( $(date +%s) - START ))" "$*"; }
status() { echo "$*" >> "$RAW/status.txt"; say "status: $*"; }
# Seconds a part may take: its own limit, or what is left of the budget less
# a reserve for the parts after it and the report.
limit() {
    local want=$1 reserve=$2 left
    left=$(( BUDGET - ($(date +%s) - START) - reserve ))
    [ "$left" -lt 10 ] && left=10
    [ "$want" -lt "$left" ] && echo "$want" || echo "$left"
}
# run_part NAME LIMIT RESULT CMD...: run with a time limit, record how it
# ended; exit 0 without RESULT (a file, or - for none) means it skipped itself.
run_part() {
    local name=$1 lim=$2 result=$3 rc
    shift 3
    say "$name: start (limit ${lim}s)"
    timeout --kill-after=10 "$lim" "$@"
    rc=$?
    case $rc in
        0) if [ "$result" = - ] || [ -s "$result" ]; then status "$name: ok"
           else status "$name: skipped (no results; see run.log)"; fi ;;
        124|137) status "$name: TIMED OUT after ${lim}s" ;;
        *) status "$name: FAILED (exit $rc)" ;;
    esac
    return 0
}

# ---- the machine ------------------------------------------------------------------
say "results to $OUTDIR"
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    if command -v nvidia-smi > /dev/null 2>&1; then
        echo "gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
        echo "driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
        echo "persistence=$(nvidia-smi --query-gpu=persistence_mode --format=csv,noheader 2>/dev/null | head -1)"
    fi
    NVCC=${NVCC:-${CUDA_PATH:-/usr/local/cuda}/bin/nvcc}
    [ -x "$NVCC" ] || NVCC=$(command -v nvcc || true)
    [ -n "$NVCC" ] && echo "nvcc=$("$NVCC" --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)"
    echo "cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores)"
    echo "os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "kernel=$(uname -r)"
    echo "cc=$(${CC:-cc} --version 2>/dev/null | head -1)"
    echo "python=$(python3 --version 2>&1)"
    if git -C "$ROOT" rev-parse --short HEAD > /dev/null 2>&1; then
        echo "commit=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || echo ' (with local changes)')"
    else
        echo "commit=${BENCH_COMMIT:-unknown (no git here; set BENCH_COMMIT)}"
    fi
} > "$RAW/system.txt"
cat "$RAW/system.txt"
command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi 2>&1 | head -15

# libkstub finds libnvrtc with dlopen; point it at the toolkit's if the loader would not.
if [ -z "${KSTUB_LIBNVRTC:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc.so.13 '; then
    for d in "${CUDA_PATH:-/usr/local/cuda}/lib64" "${CUDA_PATH:-/usr/local/cuda}/targets/x86_64-linux/lib"; do
        if [ -e "$d/libnvrtc.so.13" ]; then export KSTUB_LIBNVRTC=$d/libnvrtc.so.13; break; fi
    done
    say "KSTUB_LIBNVRTC=${KSTUB_LIBNVRTC:-unset}"
fi

# The races check and the free watch load libcupti with dlopen; point them at the toolkit's if the loader would not.
if [ -z "${KSTUB_CUPTI:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcupti.so.13 '; then
    for d in "${CUDA_PATH:-/usr/local/cuda}/extras/CUPTI/lib64" "${CUDA_PATH:-/usr/local/cuda}/lib64" \
             "${CUDA_PATH:-/usr/local/cuda}/targets/x86_64-linux/lib"; do
        if [ -e "$d/libcupti.so.13" ]; then export KSTUB_CUPTI=$d/libcupti.so.13; break; fi
    done
    say "KSTUB_CUPTI=${KSTUB_CUPTI:-unset}"
fi

# ---- build --------------------------------------------------------------------------
if [ "${1:-}" != "--no-build" ]; then
    # The top-level Makefile includes bench/bench.mk; if this checkout's does not yet, add it.
    MK=(make)
    grep -q 'bench/bench.mk' Makefile || MK=(make -f Makefile -f bench/bench.mk)
    # Other compilers warn differently: warnings are not errors here.
    run_part build "$(limit 240 200)" - "${MK[@]}" -j"$(nproc)" bench BENCH_WERROR=
fi
if [ ! -x "$BIN/launch_bench" ]; then
    status "build: no programs under $BIN; nothing to run"
fi

# ---- 1. launch cost (C), then the Python launchers -----------------------------------
[ -x "$BIN/launch_bench" ] &&
    run_part launch "$(limit 150 160)" "$RAW/launch_summary.csv" "$BIN/launch_bench" -r "$LAUNCH_ROUNDS" -b 1000 -o "$RAW"
# The races check in a process of its own: CUPTI, once loaded, slows every driver call (issue 45).
[ -x "$BIN/launch_bench" ] &&
    run_part launch_races "$(limit 60 150)" "$RAW/launch_races_summary.csv" "$BIN/launch_bench" -R -r "$LAUNCH_ROUNDS" -b 1000 -o "$RAW"
# The pointers and extents checks with their free watch (CUPTI's callbacks on every free), also
# a process of its own; the plain run above has the watch off (issue 45).
[ -x "$BIN/launch_bench" ] &&
    run_part launch_watch "$(limit 60 150)" "$RAW/launch_watch_summary.csv" "$BIN/launch_bench" -W -r "$LAUNCH_ROUNDS" -b 1000 -o "$RAW"

# ---- 2. cold start -------------------------------------------------------------------
if [ -x "$BIN/coldstart" ] && ! skipped coldstart; then
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kstub-coldstart.XXXXXX")
    lim=$(limit 240 90)
    run_part coldstart "$lim" "$RAW/coldstart_summary.csv" "$BIN/coldstart" -d "$BIN" -k "$ROOT/bench/kernels/bench_kernels.cu" \
        -w "$WORK" -n "$COLD_RUNS" -t $(( lim - 30 )) -o "$RAW"
    rm -rf "$WORK"
fi

# ---- 4. graphs -------------------------------------------------------------------------
[ -x "$BIN/graph_bench" ] && ! skipped graph &&
    run_part graph "$(limit 60 70)" "$RAW/graph_summary.csv" "$BIN/graph_bench" -r "$GRAPH_ROUNDS" -k 100 -o "$RAW"

# ---- 5. a device variable's accessor against the raw copy (issue 29) -------------------
[ -x "$BIN/global_bench" ] && ! skipped global &&
    run_part global "$(limit 60 30)" "$RAW/global_summary.csv" "$BIN/global_bench" -r 200 -b 1000 -o "$RAW"

# ---- 1b. Python (optional) ---------------------------------------------------------------
if command -v python3 > /dev/null 2>&1; then
    # kstub's Python target: its module of the same kernels, for this python3 (bench/python.mk).
    run_part python-module "$(limit 60 140)" - "${MK[@]:-make}" bench-py-module BENCH_PYTHON=python3
    run_part python "$(limit 120 25)" "$RAW/launch_py_summary.csv" python3 bench/launch_py.py bench/kernels/bench_kernels.cu \
        "$RAW" "$PY_ROUNDS" 1000
else
    status "python: skipped (no python3)"
fi

# ---- report ------------------------------------------------------------------------------
if command -v python3 > /dev/null 2>&1; then
    run_part report 60 "$OUTDIR/gpu-results.md" python3 bench/report.py "$OUTDIR" "$RAW"
else
    status "report: skipped (no python3); the summaries are in raw/*.csv and run.log"
fi
say "done in $(( $(date +%s) - START ))s; results in $OUTDIR"
if [ -n "${OUT:-}" ]; then
    cp "$RAW/run.log" "$OUTDIR/run.log"
    tar -czf "$OUTDIR/raw.tar.gz" -C "$(dirname "$RAW")" raw
    rm -rf "$(dirname "$RAW")"
fi
ls -la "$OUTDIR"
