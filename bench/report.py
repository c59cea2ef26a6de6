#!/usr/bin/env python3
"""report.py — turn the GPU benchmarks' raw numbers into the final report.

    report.py OUTDIR [RAWDIR]

reads RAWDIR (default OUTDIR/raw/): system.txt, launch_meta.txt, launch_summary.csv,
launch_py_summary.csv, coldstart_summary.csv, graph_summary.csv, status.txt,
any of which may be missing; and writes OUTDIR/gpu-results.md with every table, the
goal checks, and the plots OUTDIR/launch.png and OUTDIR/coldstart.png. A
part whose numbers are missing is reported as such; nothing here fails the run.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402

GOAL_STUB_RATIO = 1.01
GOAL_FATBIN_MS = 1.0
GOAL_NVRTC_WARM_MS = 2.0
# Issue 46: the Python target's overhead over the raw C launch against cuda.core launch()'s, and against the C stub.
GOAL_PY_OVERHEAD = 0.5
GOAL_PY_STUB = 1.2


def read_kv(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return None


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def verdict(ok):
    return "**met**" if ok else "**not met**"


def launch_section(raw, md, panels):
    meta = read_kv(os.path.join(raw, "launch_meta.txt"))
    rows = read_csv(os.path.join(raw, "launch_summary.csv"))
    py = read_csv(os.path.join(raw, "launch_py_summary.csv")) or []
    md.append("## 1. CPU time per launch\n")
    if not rows:
        md.append("No results: launch_bench did not produce results (see *Parts* above and raw/run.log).\n")
        return
    md.append(
        "One process launches the same kernel every way, interleaved: each round runs one "
        "batch of %s launches per variant (in a new shuffled order each round), every stream "
        "synchronised before a batch so the queue starts empty, only the launch loop timed "
        "with `CLOCK_MONOTONIC`; %s rounds. Grid %s block, %s threads. *ratio* is the median "
        "over rounds of (variant / raw `cuLaunchKernel`) in the same round. Python rows run "
        "in their own process right after, so their ratio is against the C process's median."
        "\n" % (meta.get("batch", "?"), meta.get("rounds", "?"), meta.get("grid", "?"),
                meta.get("block", "?")))
    goal_rows = []
    for kernel, desc in (("bench_args", "`bench_args(float, const float *, float *, int, long long)`"),
                         ("bench_struct", "`bench_struct(BenchParams /* 24-byte struct */, float *)`")):
        krows = [r for r in rows if r["kernel"] == kernel]
        if not krows:
            continue
        ref = fnum(krows[0]["median_ns"])
        md.append("### %s\n" % desc)
        md.append("| variant | ns/launch (median) | p10 – p90 | ratio to raw cuLaunchKernel | "
                  "ratio to its like-for-like raw call |")
        md.append("| --- | ---: | ---: | ---: | ---: |")
        prow = []
        for r in krows:
            med = fnum(r["median_ns"])
            pair = ""
            if r.get("pair_variant"):
                plabel = next((x["label"] for x in krows if x["variant"] == r["pair_variant"]), r["pair_variant"])
                pair = "%.3f (vs %s)" % (fnum(r["pair_ratio"]), plabel)
            md.append("| %s | %.0f | %.0f – %.0f | %.3f | %s |" % (
                r["label"], med, fnum(r["p10_ns"]), fnum(r["p90_ns"]), fnum(r["ratio"]), pair))
            kind = "ref" if r["variant"] == "raw_cuLaunchKernel" else \
                "kstub" if r["variant"].startswith("kstub") else "other"
            prow.append((r["label"], med, fnum(r["p10_ns"]), fnum(r["p90_ns"]), kind))
            if r["variant"] in ("kstub_user_stream", "kstub_default_stream", "kstub_attrs"):
                goal_rows.append((kernel, r))
        for r in py:
            if r["kernel"] != kernel:
                continue
            med = fnum(r["median_ns"])
            if r["status"] != "ok" or med is None:
                md.append("| %s | — | — | %s | |" % (r["label"], r["status"]))
                continue
            md.append("| %s | %.0f | %.0f – %.0f | %.2f | |" % (
                r["label"], med, fnum(r["p10_ns"]), fnum(r["p90_ns"]), med / ref))
            prow.append((r["label"], med, fnum(r["p10_ns"]), fnum(r["p90_ns"]), "other"))
        md.append("")
        panels.append(("%s: CPU time per launch" % kernel, "ns per launch, median; whisker p10-p90", prow))

    python_goal_section(rows, py, md)

    md.append("**Goal: stub / raw `cuLaunchKernel` ≤ %.2f in the same run** (paired per-round "
              "ratios, medians).\n" % GOAL_STUB_RATIO)
    md.append("| kernel | stub variant | / raw cuLaunchKernel (CUfunction, user stream) | goal | "
              "/ like-for-like raw call | goal |")
    md.append("| --- | --- | ---: | --- | ---: | --- |")
    for kernel, r in goal_rows:
        rat, prat = fnum(r["ratio"]), fnum(r.get("pair_ratio"))
        md.append("| %s | %s | %.3f | %s | %s | %s |" % (
            kernel, r["label"], rat, verdict(rat <= GOAL_STUB_RATIO),
            "%.3f" % prat if prat else "—", verdict(prat <= GOAL_STUB_RATIO) if prat else ""))
    md.append("")
    md.append("The like-for-like raw call of each stub row is of the same `CUkernel` handle libkstub "
              "launches: *user stream*: `cuLaunchKernel`; *default stream*: `cuLaunchKernel` on "
              "the default stream; *attributes*: `cuLaunchKernelEx` with the same single "
              "attribute. The spread between rounds (p10 – p90) is wider than the differences "
              "between variants; the paired ratios are what resolves them.\n")
    races_section(raw, md, rows)
    watch_section(raw, md, rows)


GOAL_RACES_RATIO = 2.0
GOAL_WATCH = {"pointers": 1.05, "extents": 1.03}


def watch_section(raw, md, rows):
    """The pointers and extents checks with their free watch (launch_bench -W): a process of its
    own, CUPTI loaded and its free callbacks on throughout. What a user weighs: the watch's row
    over a raw launch in a process without CUPTI (the plain run's raw CUkernel median), against
    the plain run's watch-off rows (their paired ratio to the same raw launch)."""
    watch = read_csv(os.path.join(raw, "launch_watch_summary.csv"))
    if not watch:
        return
    md.append("### The pointers check's free watch\n")
    md.append("`launch_bench -W`, a process of its own (CUPTI loaded, its free callbacks on): the same "
              "method. *paired*: against raw `cuLaunchKernel` of the `CUkernel` in the same process; "
              "*vs raw, no CUPTI*: the row's median over the plain run's raw `cuLaunchKernel` "
              "(`CUkernel`, user stream) median. The plain run's pointers and extents rows have the "
              "watch off (the buffer-id query a hit) and load no CUPTI; they follow, paired, for "
              "comparison. Goals: pointers ≤ %.2f×, extents ≤ %.2f× a raw launch.\n"
              % (GOAL_WATCH["pointers"], GOAL_WATCH["extents"]))
    md.append("| kernel | variant | ns/launch (median) | paired | vs raw, no CUPTI | goal |")
    md.append("| --- | --- | ---: | ---: | ---: | --- |")

    def goal_of(variant):
        for word, goal in GOAL_WATCH.items():
            if "check_" + word in variant and "nocache" not in variant:
                return goal
        return None

    for kernel in sorted({r["kernel"] for r in watch}):
        plain_raw = next((fnum(x["median_ns"]) for x in rows if x["kernel"] == kernel
                          and x["variant"] == "raw_cuLaunchKernel_CUkernel"), None)
        for r in watch:
            if r["kernel"] != kernel:
                continue
            med = fnum(r["median_ns"])
            vs = med / plain_raw if plain_raw and med else None
            goal = goal_of(r["variant"])
            md.append("| %s | %s | %.0f | %s | %s | %s |" % (
                kernel, r["label"], med or 0,
                "%.3f" % fnum(r["pair_ratio"]) if r.get("pair_variant") else "—",
                "%.3f" % vs if vs else "—",
                verdict(vs <= goal) if goal and vs else ""))
        for x in rows:
            if x["kernel"] != kernel or x["variant"] not in (
                    "kstub_check_pointers", "kstub_check_extents", "kstub_check_pointers_nocache"):
                continue
            prat = fnum(x.get("pair_ratio"))
            goal = goal_of(x["variant"])
            md.append("| %s | %s (plain run) | %.0f | %s | %s | %s |" % (
                kernel, x["label"], fnum(x["median_ns"]) or 0, "%.3f" % prat if prat else "—",
                "%.3f" % prat if prat else "—", verdict(prat <= goal) if goal and prat else ""))
    md.append("")


def races_section(raw, md, rows):
    """The races check (launch_bench -R): its own process, CUPTI loaded throughout."""
    races = read_csv(os.path.join(raw, "launch_races_summary.csv"))
    if not races:
        return
    md.append("### The races check\n")
    md.append("`launch_bench -R`, a process of its own (CUPTI, once loaded, slows every driver call): "
              "the same method. *vs no check, no CUPTI*: the races row's median over the plain run's "
              "`kstub_user_stream` median (goal ≤ %.1f×).\n" % GOAL_RACES_RATIO)
    md.append("| kernel | variant | ns/launch (median) | paired ratio | vs no check, no CUPTI | goal |")
    md.append("| --- | --- | ---: | ---: | ---: | --- |")
    for r in races:
        plain = next((fnum(x["median_ns"]) for x in rows
                      if x["kernel"] == r["kernel"] and x["variant"] == "kstub_user_stream"), None)
        med = fnum(r["median_ns"])
        vs = med / plain if plain and med else None
        is_races = r["variant"] == "kstub_check_races"
        md.append("| %s | %s | %.0f | %s | %s | %s |" % (
            r["kernel"], r["label"], med or 0,
            "%.3f" % fnum(r["pair_ratio"]) if r.get("pair_variant") else "—",
            "%.2f" % vs if vs else "—",
            verdict(vs <= GOAL_RACES_RATIO) if is_races and vs else ""))
    md.append("")


def python_goal_section(rows, py, md):
    """Issue 46: the Python target's overhead over the raw C launch against cuda.core launch()'s.
    Where launch_py.py ran the raw C loop in its own process (bench/py_raw.c), each overhead is
    the median over rounds of (row - that loop) in the same round; else the row's median less the
    C process's raw median. "/ C stub": where kstub's C stub ran in a C loop in the same Python
    process (kstub_c_loop), the median over rounds of (row / that loop) in the same round; else
    the row's ratio to that raw launch over the C stub's ratio to its raw launch
    (kstub_user_stream's pair ratio in the C process), marked *. "kstub's own": the overhead
    less that of the raw launch from a call given the same 8 arguments (raw_py_args), i.e.
    what kstub adds beyond the interpreter's passing them."""
    kst = [r for r in py if r["variant"].startswith("kstub_py")]
    if not kst:
        return
    md.append("**Goal (Python target): kstub's overhead over the raw C `cuLaunchKernel` of the same "
              "kernel ≤ %.1f × cuda.core `launch()`'s overhead, and kstub ≤ %.1f × kstub's C stub** "
              "(overhead: the median over rounds of the row less the raw C `cuLaunchKernel` loop "
              "run in the same Python process and round, `bench/py_raw.c`, where it ran; else less "
              "the C process's raw median, marked *. / C stub: against kstub's C stub in a C loop in "
              "the same process and round, where it ran; else the C process's stub, marked *. "
              "kstub's own: the overhead less that of the raw launch from a call given the same 8 "
              "arguments).\n" % (GOAL_PY_OVERHEAD, GOAL_PY_STUB))
    md.append("| kernel | variant | ns/launch | overhead over raw C | kstub's own | cuda.core's overhead | "
              "ratio | goal | / C stub | goal |")
    md.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |")
    for kernel in ("bench_args", "bench_struct"):
        raw_c = next((fnum(r["median_ns"]) for r in rows
                      if r["kernel"] == kernel and r["variant"] == "raw_cuLaunchKernel"), None)
        stub_row = next((r for r in rows if r["kernel"] == kernel and r["variant"] == "kstub_user_stream"), None)
        stub = fnum(stub_row["median_ns"]) if stub_row else None
        stub_ratio = fnum(stub_row.get("ratio")) if stub_row else None   # / raw CUfunction, per round
        loop = next((r for r in py if r["kernel"] == kernel and r["variant"] == "raw_c_loop"
                     and r["status"] == "ok"), None)
        stub_loop = next((r for r in py if r["kernel"] == kernel and r["variant"] == "kstub_c_loop"
                          and r["status"] == "ok"), None)

        def overhead(r):
            if loop is not None and r.get("over_raw_ns"):
                return fnum(r["over_raw_ns"]), fnum(r["ratio_raw"]), ""
            med = fnum(r["median_ns"])
            if med is None or raw_c is None:
                return None, None, ""
            return med - raw_c, med / raw_c, "*"

        def per_c_stub(r, vs_raw, mark):
            if stub_loop is not None and r.get("ratio_stub"):
                return fnum(r["ratio_stub"]), ""
            if vs_raw and stub_ratio and mark == "":
                return vs_raw / stub_ratio, "*"
            med = fnum(r["median_ns"])
            return (med / stub, "*") if stub and med else (None, "")

        core = next((r for r in py if r["kernel"] == kernel and r["variant"] == "cuda_core_launch"), None)
        core_over = overhead(core)[0] if core and core["status"] == "ok" else None
        args_row = next((r for r in py if r["kernel"] == kernel and r["variant"] == "raw_py_args"
                         and r["status"] == "ok"), None)
        args_over = overhead(args_row)[0] if args_row else None
        others = [r for r in py if r["kernel"] == kernel and r["variant"] in
                  ("kstub_c_loop", "kstub_c_call", "raw_py_call", "raw_py_args", "cuda_core_launch")]
        for r in kst + others:
            if r["kernel"] != kernel:
                continue
            med = fnum(r["median_ns"])
            if r["status"] != "ok" or med is None:
                md.append("| %s | %s | — | — | — | — | — | %s | — | |" % (kernel, r["label"], r["status"]))
                continue
            over, vs_raw, mark = overhead(r)
            if over is None:
                continue
            is_kstub = r["variant"].startswith("kstub_py")
            ratio = over / core_over if core_over and core_over > 0 and is_kstub else None
            per_stub, smark = per_c_stub(r, vs_raw, mark) if is_kstub else (None, "")
            own = over - args_over if is_kstub and args_over is not None else None
            md.append("| %s | %s | %.0f | %.0f%s | %s | %s | %s | %s | %s | %s |" % (
                kernel, r["label"], med, over, mark, "%.0f" % own if own is not None else "—",
                "%.0f" % core_over if core_over is not None else "—",
                "%.2f" % ratio if ratio is not None else "—",
                verdict(ratio <= GOAL_PY_OVERHEAD) if ratio is not None else
                ("no cuda.core row to compare" if is_kstub else ""),
                "%.3f%s" % (per_stub, smark) if per_stub else "—",
                verdict(per_stub <= GOAL_PY_STUB) if per_stub else ""))
    md.append("")


def coldstart_section(raw, md, panels):
    rows = read_csv(os.path.join(raw, "coldstart_summary.csv"))
    md.append("## 2. Cold start\n")
    if not rows:
        md.append("No results: coldstart did not produce results (see *Parts* above and raw/run.log).\n")
        return
    n = rows[0]["runs"]
    md.append(
        "A driver (bench/coldstart.c) fork/execs each program %s times, configurations "
        "interleaved after one untimed warm-up run each. *exec→done*: from just before "
        "`fork` to the first kernel completed (the program reports the instant on the same "
        "`CLOCK_MONOTONIC`); *main→done*: the program's own time from `main()`; *exec→exit*: "
        "until `wait4` returns (includes the driver's teardown at exit). Deltas are medians of "
        "per-round differences of exec→done. Every program launches `bench_args` once "
        "(n = 0) and synchronises.\n" % n)
    md.append("| configuration | exec→done (median) | p10 – p90 | main→done | exec→exit | "
              "context→done (in process) | its Δ vs CUDA context only | its Δ vs hand-written | "
              "peak RSS | image check |")
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    prow, crow = [], []
    by = {}

    def ms(v, sign=False):
        return "n/a" if v is None or v < 0 and not sign else ("%+.3f ms" if sign else "%.3f ms") % v

    for r in rows:
        by[r["config"]] = r
        cd = fnum(r.get("ctx_to_done_ms"))
        has_ctx = cd is not None and cd >= 0
        md.append("| %s | %.1f ms | %.1f – %.1f | %.1f ms | %.1f ms | %s | %s | %s | %.0f MiB | %s |" % (
            r["label"], fnum(r["exec_to_done_ms"]), fnum(r["exec_to_done_p10_ms"]),
            fnum(r["exec_to_done_p90_ms"]), fnum(r["main_to_done_ms"]), fnum(r["exec_to_exit_ms"]),
            ms(cd) if has_ctx else "n/a",
            ms(fnum(r["ctx_delta_vs_context_ms"]), True) if has_ctx else "n/a",
            ms(fnum(r["ctx_delta_vs_raw_ms"]), True) if has_ctx else "n/a",
            fnum(r["maxrss_mb"]), r["cache_check"]))
        kind = "ref" if r["config"] in ("process", "context", "raw_fatbin") else \
            "kstub" if r["config"].startswith("kstub") else "other"
        prow.append((r["label"], fnum(r["exec_to_done_ms"]), fnum(r["exec_to_done_p10_ms"]),
                     fnum(r["exec_to_done_p90_ms"]), kind))
        if has_ctx and r["config"] != "context":
            crow.append((r["label"], cd, fnum(r["ctx_to_done_p10_ms"]), fnum(r["ctx_to_done_p90_ms"]), kind))
    md.append("")
    md.append("*context→done*: measured inside the program, from its CUDA context being current to "
              "the first kernel completed: the image load, libkstub's checks and the launch, "
              "without the context creation's own noise (which spans tens of ms between runs). The "
              "kstub, hand-written and context-only programs make device 0's primary context "
              "current themselves before that point (as an application that allocates memory "
              "does; libkstub would otherwise do the same inside the first launch); the nvcc "
              "program is left as nvcc users write it, so it has no such point.\n")
    md.append("*image check*: the program reported, through `ks_image_info_get`, whether the "
              "image came from the NVRTC disk cache; `ok` means every run matched the "
              "configuration (cold: compiled, warm: from the cache).\n")
    panels.append(("Cold start: exec to first kernel completed", "ms, median; whisker p10-p90", prow))
    if crow:
        panels.append(("In process: CUDA context current to first kernel completed (image load + launch)",
                       "ms, median; whisker p10-p90", crow))

    md.append("**Goals.** \"Process start overhead\" is read as what every CUDA program pays "
              "before its first kernel: the process plus the CUDA context (the row *CUDA "
              "context only*); the row *process, no CUDA* shows the bare process.\n")
    md.append("| goal | in process (context→done, Δ vs context only) | exec→done, Δ vs context only | |")
    md.append("| --- | ---: | ---: | --- |")
    for cfg, what, goal in (("kstub_fatbin", "embedded fatbin", GOAL_FATBIN_MS),
                            ("kstub_nvrtc_warm", "NVRTC with a warm cache", GOAL_NVRTC_WARM_MS)):
        if cfg not in by:
            continue
        d = fnum(by[cfg].get("ctx_delta_vs_context_ms"))
        e = fnum(by[cfg]["delta_vs_context_ms"])
        md.append("| %s ≤ %.0f ms beyond process start | %+.3f ms | %+.2f ms | %s (in process) |" % (
            what, goal, d, e, verdict(d <= goal)))
    if "kstub_fatbin" in by and "raw_fatbin" in by:
        md.append("| (kstub embedded fatbin − hand-written driver program) | %+.3f ms | %+.2f ms | |" % (
            fnum(by["kstub_fatbin"]["ctx_delta_vs_raw_ms"]), fnum(by["kstub_fatbin"]["delta_vs_raw_ms"])))
    if "kstub_fatbin" in by and "nvcc" in by:
        md.append("| (nvcc `<<<>>>` program − kstub embedded fatbin) | n/a | %+.2f ms | |" % (
            fnum(by["nvcc"]["exec_to_done_ms"]) - fnum(by["kstub_fatbin"]["exec_to_done_ms"])))
    md.append("")


def graph_section(raw, md, panels):
    rows = read_csv(os.path.join(raw, "graph_summary.csv"))
    md.append("## 4. Stub calls captured into a CUDA graph\n")
    if not rows:
        md.append("No results: graph_bench did not produce results (see *Parts* above and raw/run.log).\n")
        return
    md.append("Stub calls on a stream under the driver's stream capture become kernel nodes like any "
              "launch (kstub's own typed nodes follow below). A sequence of %s launches of an empty kernel, %s rounds "
              "interleaved; *launch*: CPU time of the launch calls (or the one `cuGraphLaunch`) per "
              "kernel; *to done*: until the stream is synchronised, per kernel.\n" % (
                  rows[0]["kernels"], rows[0]["rounds"]))
    md.append("| variant | launch ns/kernel | to done ns/kernel |")
    md.append("| --- | ---: | ---: |")
    cap = None
    for r in rows:
        md.append("| %s | %.0f | %.0f |" % (r["label"], fnum(r["cpu_ns_per_kernel"]),
                                           fnum(r["e2e_ns_per_kernel"])))
        if r["variant"] == "graph_replay":
            cap = fnum(r["capture_instantiate_ms"])
    md.append("")
    if cap is not None:
        md.append("Capturing the %s stub calls and instantiating the graph: %.3f ms (median of 10).\n"
                  % (rows[0]["kernels"], cap))
    nodes_section(raw, md, panels)


def nodes_section(raw, md, panels):
    """Typed graph nodes (graph_nodes.csv): CPU ns per kernel, the goal check, one plot panel per size."""
    rows = read_csv(os.path.join(raw, "graph_nodes.csv"))
    if not rows:
        return
    md.append("### Typed graph nodes (`<kernel>_node`, `<kernel>_node_set`, `<kernel>_nodes_set`)\n")
    md.append("Chains of bench_args kernels (five typed arguments), %s rounds interleaved; CPU ns per "
              "kernel of the graph. Goals: nodes replayed <= 0.02x a stub launch, node_set of every "
              "node + replay <= 0.1x (issue 12); set all + replay and nodes_set + replay <= 1.1x the "
              "driver's floor for the same update, replay equal to a raw cuGraphLaunch (issue 23).\n" % rows[0]["rounds"])
    md.append("| kernels | stub | captured, replayed | nodes, replayed | raw cuGraphLaunch | set all + replay "
              "| nodes_set + replay | set one + replay | raw driver set all + replay | build + instantiate ms "
              "| capture + instantiate ms | replay / stub | set all / stub | set all / floor | nodes_set / floor "
              "| replay / raw replay | goals |")
    md.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
              "| ---: | ---: | --- |")
    by = {}
    for r in rows:
        by.setdefault(r["kernels"], {})[r["variant"]] = r
    dash = "\u2014"
    for k in sorted(by, key=int):
        v = by[k]
        if not all(x in v for x in ("stub", "captured_replay", "nodes_replay", "set_all_replay", "set_one_replay")):
            continue
        ns = {x: fnum(v[x]["cpu_ns_per_kernel"]) for x in v}
        raw_set, bulk, raw_replay = (ns.get("raw_set_all_replay"), ns.get("nodes_set_replay"),
                                     ns.get("raw_replay"))
        rr, ur = ns["nodes_replay"] / ns["stub"], ns["set_all_replay"] / ns["stub"]
        fs = ns["set_all_replay"] / raw_set if raw_set else None
        fb = bulk / raw_set if raw_set and bulk else None
        goals = "replay %s, update %s" % ("met" if rr <= 0.02 else "MISSED", "met" if ur <= 0.1 else "MISSED")
        if fs is not None:
            goals += "; floor: set %s" % ("met" if fs <= 1.1 else "MISSED")
        if fb is not None:
            goals += ", nodes_set %s" % ("met" if fb <= 1.1 else "MISSED")
        opt = lambda x, f="%.1f": f % x if x else dash
        md.append("| %s | %.1f | %.1f | %.1f | %s | %.1f | %s | %.1f | %s | %.3f | %.3f | %.4fx | %.3fx | %s | %s | %s | %s |" % (
            k, ns["stub"], ns["captured_replay"], ns["nodes_replay"], opt(raw_replay), ns["set_all_replay"],
            opt(bulk), ns["set_one_replay"], opt(raw_set),
            fnum(v["stub"]["build_instantiate_ms"]), fnum(v["stub"]["capture_instantiate_ms"]), rr, ur,
            opt(fs, "%.3fx"), opt(fb, "%.3fx"),
            opt(ns["nodes_replay"] / raw_replay if raw_replay else None, "%.3fx"), goals))
        prow = [("stub calls, one by one", ns["stub"], None, None, "ref"),
                ("stream-captured stubs, replayed", ns["captured_replay"], None, None, "other"),
                ("typed nodes, replayed", ns["nodes_replay"], None, None, "kstub"),
                ("node_set of every node + replay", ns["set_all_replay"], None, None, "kstub"),
                ("node_set of one node + replay", ns["set_one_replay"], None, None, "kstub")]
        if bulk:
            prow.append(("nodes_set of every node + replay", bulk, None, None, "kstub"))
        if raw_replay:
            prow.append(("raw cuGraphLaunch of the same instance", raw_replay, None, None, "ref"))
        if raw_set:
            prow.append(("driver floor: cuGraphExecKernelNodeSetParams of every node + replay", raw_set,
                         None, None, "ref"))
        panels.append(("graph of %s kernels" % k, "CPU ns per kernel, median", prow))
    md.append("")
    md.append("*raw driver set all*: the driver's own floor for the same update, "
              "`cuGraphExecKernelNodeSetParams` of every node with parameters prepared beforehand (no packing, "
              "no checks), then the launch. *nodes_set*: the step writes every node's `bench_args_args`, "
              "then one `bench_args_nodes_set`.\n")


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: report.py OUTDIR [RAWDIR]", file=sys.stderr)
        return 2
    out = sys.argv[1]
    raw = sys.argv[2] if len(sys.argv) == 3 else os.path.join(out, "raw")
    sysinfo = read_kv(os.path.join(raw, "system.txt"))
    status = []
    try:
        with open(os.path.join(raw, "status.txt")) as f:
            status = [l.rstrip("\n") for l in f if l.strip()]
    except OSError:
        pass

    md = ["# kstub benchmarks on the GPU\n"]
    md.append("Produced by `bench/run.sh` from the raw numbers in `raw/` (CSV; on the GPU "
              "machine's way back, `raw.tar.gz`).\n")
    md.append("| | |")
    md.append("| --- | --- |")
    for key, label in (("date", "date (UTC)"), ("gpu", "GPU"), ("driver", "driver"),
                       ("driver_cuda", "CUDA (driver API)"), ("nvcc", "CUDA toolkit (nvcc)"),
                       ("persistence", "persistence mode"), ("cpu", "CPU"), ("os", "OS"),
                       ("kernel", "Linux"), ("cc", "C compiler"), ("python", "Python"),
                       ("commit", "kstub commit")):
        if sysinfo.get(key):
            md.append("| %s | %s |" % (label, sysinfo[key]))
    md.append("")
    if status:
        md.append("Parts: " + "; ".join(status) + "\n")

    launch_panels, cold_panels = [], []
    launch_section(raw, md, launch_panels)
    coldstart_section(raw, md, cold_panels)
    md.append("## 3. Generator\n")
    md.append("Measured on the CPU machine (the GPU machine has no libclang 22): see "
              "`generator.md`.\n")
    graph_panels = []
    graph_section(raw, md, graph_panels)

    if launch_panels or cold_panels or graph_panels:
        md.append("## Plots\n")
    title_sfx = " - %s, driver %s" % (sysinfo.get("gpu", "GPU"), sysinfo.get("driver", "?"))
    for name, title, panels in (("launch.png", "kstub: CPU time per launch" + title_sfx, launch_panels),
                                ("coldstart.png", "kstub: cold start" + title_sfx, cold_panels),
                                ("graph.png", "kstub: typed graph nodes" + title_sfx, graph_panels)):
        if not panels:
            continue
        try:
            how = plot.hbar_panels(os.path.join(out, name), title, panels,
                                   note="%s; bench/run.sh" % sysinfo.get("date", ""))
            md.append("![%s](%s)\n" % (name, name))
            print("report: %s (%s)" % (name, how))
        except Exception as e:  # a plot must not cost the tables
            print("report: %s failed: %s" % (name, e), file=sys.stderr)
    with open(os.path.join(out, "gpu-results.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")
    print("report: wrote %s" % os.path.join(out, "gpu-results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
