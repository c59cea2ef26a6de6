#!/usr/bin/env python3
"""generator.py — benchmark question 3: the generator's wall time and peak
memory per .cu file, against the libclang parse floor and nvcc -ptx.

For every file of kernels/ and of a synthetic corpus (bench/corpus.py), REPS
times, the three tools interleaved file by file:

  kstub     build/bin/kstub FILE -o TMP/out (header and stubs, no image embedded)
  clang     clang -fsyntax-only with the flags kstub gives libclang (the parse floor)
  nvcc      nvcc -ptx for the same architecture

Each run is one child process: wall time from spawn to os.wait4, and
wait4's ru_maxrss (which covers the children the tool itself waited for,
e.g. nvcc's cicc). Reports per-file medians and, per set, the median and the
worst per-file ratio kstub/nvcc and kstub/clang.

    generator.py [--reps N] [--files N] [--kernels N] [--out DIR]

Writes DIR/generator.md, DIR/generator.png, DIR/generator_raw.csv
(default DIR: bench/results). Runs on the CPU machine (needs libclang 22 and nvcc).
"""
import argparse
import csv
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import corpus  # noqa: E402
import plot  # noqa: E402

CUDA = os.environ.get("CUDA_PATH", "/usr/local/cuda")
LLVM = os.environ.get("LLVM_DIR", "/usr/lib/llvm-22")
ARCH = "90"
GOAL_NVCC, GOAL_CLANG = 0.5, 1.1


def tools(tmp):
    kstub = os.path.join(tmp, "kstub")
    clang_flags = ["-x", "cuda", "--cuda-device-only", "-nocudalib", "-Wno-unknown-cuda-version",
                   "--cuda-path=" + CUDA, "--cuda-gpu-arch=sm_" + ARCH, "-std=c++17",
                   "-isystem", os.path.join(CUDA, "include", "cccl")]
    return [
        ("kstub", lambda f: [kstub, f, "-o", os.path.join(tmp, "out")]),
        ("clang", lambda f: [os.path.join(LLVM, "bin", "clang")] + clang_flags + ["-fsyntax-only", f]),
        ("nvcc", lambda f: [os.path.join(CUDA, "bin", "nvcc"), "-ptx", "-arch=compute_" + ARCH,
                            "-std=c++17", f, "-o", os.path.join(tmp, "out.ptx")]),
    ]


def run(cmd):
    """Wall seconds and peak RSS (MiB) of one child; raises on failure."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # wait4 gives this child's own rusage (with its waited-for descendants).
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, err[:500]))
    return wall, ru.ru_maxrss / 1024.0


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
        return out.strip().splitlines()
    except Exception:
        return ["?"]


def count_kernels(f, tmp):
    man = os.path.join(tmp, "count.json")
    subprocess.run([os.path.join(tmp, "kstub"), f, "-o", os.path.join(tmp, "count"),
                    "--manifest", man], check=True, capture_output=True)
    with open(man) as fh:
        return len(json.load(fh)["kernels"])


def main():
    ap = argparse.ArgumentParser(description="kstub generator benchmark")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--files", type=int, default=30)
    ap.add_argument("--kernels", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="kstub-genbench.")
    try:
        return bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench(args, tmp):
    # A private copy: a rebuild of build/bin/kstub during the run must not touch it.
    shutil.copy2(os.path.join(ROOT, "build", "bin", "kstub"), os.path.join(tmp, "kstub"))
    cdir = os.path.join(tmp, "corpus")
    rng = corpus.random.Random(20261129)
    os.makedirs(cdir)
    for i in range(args.files):
        with open(os.path.join(cdir, "corpus_%03d.cu" % i), "w") as fh:
            fh.write(corpus.make_file(rng, i, args.kernels))
    sets = [("kernels/", sorted(glob.glob(os.path.join(ROOT, "kernels", "*.cu")))),
            ("corpus (bench/corpus.py, %d x %d)" % (args.files, args.kernels),
             sorted(glob.glob(os.path.join(cdir, "*.cu"))))]
    tl = tools(tmp)
    raw = []     # set, file, kernels, templates, tool, rep, wall_s, rss_mib
    per_file = []  # set, file, kernels, {tool: (median wall, max rss)}, templates
    start = time.time()
    for sname, files in sets:
        for f in files:
            nk = count_kernels(f, tmp)
            with open(f) as fh:  # explicit instantiations of template kernels, which kstub resolves
                templ = int(re.search(r"template\s+__global__", fh.read()) is not None)
            walls = {t: [] for t, _ in tl}
            rss = {t: [] for t, _ in tl}
            for rep in range(args.reps):
                for tname, cmd in tl:
                    w, m = run(cmd(f))
                    walls[tname].append(w)
                    rss[tname].append(m)
                    raw.append([sname, os.path.basename(f), nk, templ, tname, rep, "%.4f" % w, "%.1f" % m])
            per_file.append((sname, os.path.basename(f), nk,
                             {t: (median(walls[t]), max(rss[t])) for t, _ in tl}, templ))
            r = per_file[-1][3]
            print("generator: %-16s %3d kernels  kstub %.3f s  clang %.3f s  nvcc %.3f s  (%.0f s)" % (
                os.path.basename(f), nk, r["kstub"][0], r["clang"][0], r["nvcc"][0],
                time.time() - start), flush=True)

    with open(os.path.join(args.out, "generator_raw.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["set", "file", "kernels", "templates", "tool", "rep", "wall_s", "peak_rss_mib"])
        w.writerows(raw)
    report(args, sets, per_file)
    return 0


def report(args, sets, per_file):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    kv = version([os.path.join(ROOT, "build", "bin", "kstub"), "--version"])[0]  # the copy is gone
    cv = version([os.path.join(LLVM, "bin", "clang"), "--version"])[0]
    nv = [l for l in version([os.path.join(CUDA, "bin", "nvcc"), "--version"]) if "release" in l]
    md = ["# kstub generator benchmark\n",
          "Produced by `bench/generator.py` (`make bench-generator`) on the CPU machine; the "
          "GPU machine has no libclang 22.\n",
          "| | |", "| --- | --- |",
          "| date (UTC) | %s |" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "| CPU | %s, %d cores (shared with other work: timings carry that noise) |" % (cpu, os.cpu_count()),
          "| OS | %s |" % platform.platform(),
          "| kstub | %s, commit %s |" % (kv, commit),
          "| clang | %s |" % cv,
          "| nvcc | %s |" % (nv[0].strip() if nv else "?"),
          "| repetitions | %d per file and tool, interleaved; medians |" % args.reps,
          ""]
    md.append("Per file: *kstub* is `build/bin/kstub FILE -o OUT` (header and stubs, no image "
              "embedded); *clang* is the parse floor, `clang -fsyntax-only` with the flags kstub "
              "gives libclang (`-x cuda --cuda-device-only -nocudalib --cuda-path=%s "
              "--cuda-gpu-arch=sm_%s -std=c++17 -isystem %s/include/cccl "
              "-Wno-unknown-cuda-version`); *nvcc* is `nvcc -ptx -arch=compute_%s -std=c++17`. "
              "Wall time from spawn to `wait4`; peak memory is `wait4`'s `ru_maxrss` (for nvcc, "
              "the largest of its sub-processes).\n" % (CUDA, ARCH, CUDA, ARCH))
    panels = []
    for sname, files in sets:
        rows = [p for p in per_file if p[0] == sname]
        if not rows:
            continue
        nk = sum(p[2] for p in rows)
        rn = [p[3]["kstub"][0] / p[3]["nvcc"][0] for p in rows]
        rc = [p[3]["kstub"][0] / p[3]["clang"][0] for p in rows]
        md.append("## %s: %d files, %d kernels\n" % (sname, len(rows), nk))
        md.append("| file | kernels | kstub | clang -fsyntax-only | nvcc -ptx | kstub / nvcc | "
                  "kstub / clang | peak MiB kstub / clang / nvcc |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        show = rows if len(rows) <= 12 else rows[:5] + [None] + rows[-3:]
        for p in show:
            if p is None:
                md.append("| … | | | | | | | |")
                continue
            t = p[3]
            md.append("| %s | %d | %.3f s | %.3f s | %.3f s | %.2f | %.2f | %.0f / %.0f / %.0f |" % (
                p[1], p[2], t["kstub"][0], t["clang"][0], t["nvcc"][0],
                t["kstub"][0] / t["nvcc"][0], t["kstub"][0] / t["clang"][0],
                t["kstub"][1], t["clang"][1], t["nvcc"][1]))
        med = {tool: median([p[3][tool][0] for p in rows]) for tool in ("kstub", "clang", "nvcc")}
        mem = {tool: max(p[3][tool][1] for p in rows) for tool in ("kstub", "clang", "nvcc")}
        md.append("| **median per file** | %.1f (mean) | %.3f s | %.3f s | %.3f s | %.2f | %.2f | max %.0f / %.0f / %.0f |"
                  % (nk / len(rows), med["kstub"], med["clang"], med["nvcc"], median(rn), median(rc),
                     mem["kstub"], mem["clang"], mem["nvcc"]))
        md.append("")
        for flag, what in ((0, "without"), (1, "with")):
            sub = [p for p in rows if p[4] == flag]
            if sub:
                md.append("Files %s explicitly instantiated template kernels (%d): median kstub / clang %.2f, kstub / nvcc %.2f."
                          % (what, len(sub), median([p[3]["kstub"][0] / p[3]["clang"][0] for p in sub]),
                             median([p[3]["kstub"][0] / p[3]["nvcc"][0] for p in sub])))
                md.append("")
        md.append("| goal | median file | worst file | |")
        md.append("| --- | ---: | ---: | --- |")
        md.append("| kstub ≤ %.1f × nvcc -ptx | %.2f | %.2f | %s |" % (
            GOAL_NVCC, median(rn), max(rn), "**met**" if max(rn) <= GOAL_NVCC else
            "**met for the median file**" if median(rn) <= GOAL_NVCC else "**not met**"))
        md.append("| kstub ≤ %.1f × the parse floor | %.2f | %.2f | %s |" % (
            GOAL_CLANG, median(rc), max(rc), "**met**" if max(rc) <= GOAL_CLANG else
            "**met for the median file**" if median(rc) <= GOAL_CLANG else "**not met**"))
        md.append("")
        short = sname.split(" ")[0]
        panels.append(("%s median wall time per file (%d files, %d kernels)" % (short, len(rows), nk),
                       "seconds", [("kstub", med["kstub"], None, None, "kstub"),
                                   ("clang -fsyntax-only (parse floor)", med["clang"], None, None, "ref"),
                                   ("nvcc -ptx", med["nvcc"], None, None, "other")]))
        panels.append(("%s peak memory, largest file" % short, "MiB",
                       [("kstub", mem["kstub"], None, None, "kstub"),
                        ("clang -fsyntax-only (parse floor)", mem["clang"], None, None, "ref"),
                        ("nvcc -ptx", mem["nvcc"], None, None, "other")]))
    md.append("Raw numbers: `generator_raw.csv`. Reproduce: `make bench-generator` (or "
              "`python3 bench/generator.py --reps 3`).\n")
    try:
        how = plot.hbar_panels(os.path.join(args.out, "generator.png"),
                               "kstub generator vs libclang parse floor vs nvcc -ptx (%d cores)" % os.cpu_count(),
                               panels, note=time.strftime("%Y-%m-%d", time.gmtime()) + "; bench/generator.py")
        md.append("![generator](generator.png)\n")
        print("generator: generator.png (%s)" % how)
    except Exception as e:
        print("generator: plot failed: %s" % e, file=sys.stderr)
    with open(os.path.join(args.out, "generator.md"), "w") as fh:
        fh.write("\n".join(md).rstrip() + "\n")
    print("generator: wrote %s" % os.path.join(args.out, "generator.md"))


if __name__ == "__main__":
    sys.exit(main())
