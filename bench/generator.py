#!/usr/bin/env python3
"""generator.py — benchmark question 3: the generator's wall time and peak
memory per .cu file, with and without its precompiled prelude cache, against
the libclang parse floor and nvcc -ptx; and a make -j build of 30 files.

For every file of kernels/, tests/corpus/, tests/corpus/real/ and a
synthetic corpus (bench/corpus.py), REPS times, the tools interleaved file by
file, each file with the flags of its "// abi-kstub:" and "// abi-nvcc:"
lines (as check-abi runs it):

  warm      kstub FILE -o TMP/out --cache-dir WARM (the cache filled beforehand)
  cold      kstub with an empty cache directory of its own (it builds the PCH)
  nocache   kstub --no-cache (a whole parse, as before the cache)
  clang     clang -fsyntax-only with kstub's exact parse arguments (written by
            kstub under KSTUB_DEBUG_ARGS, the compat header included): the
            parse floor. N/A for a file clang refuses (an error in a function
            body, which kstub reports as a warning); the file still counts.
  nvcc      nvcc -ptx for the same architecture

Each run is one child process: wall time from spawn to os.wait4, and
wait4's ru_maxrss (which covers the children the tool itself waited for,
e.g. nvcc's cicc); the 1-minute load average is sampled at each run (the
machine is shared). Then 30 corpus files built by make -j (one kstub per
file) with no cache, a cold cache and a warm cache, interleaved, REPS times.

    generator.py [--reps N] [--files N] [--kernels N] [--kstub PATH] [--out DIR]

Writes DIR/generator.md, DIR/generator.png, DIR/generator_raw.csv
(default DIR: bench/results). Runs on the CPU machine (needs libclang 22 and nvcc).
"""
import argparse
import csv
import glob
import itertools
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
LOADS = []   # the 1-minute load average at each run
COLD = itertools.count()   # cold cache directories, one per run


TOOLS = ("warm", "cold", "nocache", "clang", "nvcc")


def file_flags(f, which):
    """The flags of a corpus file's "// abi-WHICH:" lines (check_abi.c's convention)."""
    flags = []
    with open(f) as fh:
        for line in fh:
            if line.startswith("// abi-%s:" % which):
                flags += line.split(":", 1)[1].split()
    return flags


def clang_args(f, tmp, kflags):
    """kstub's exact parse arguments for f (its compat header written beside
    them), from one kstub run under KSTUB_DEBUG_ARGS."""
    d = tempfile.mkdtemp(prefix="args.", dir=tmp)
    env = dict(os.environ, KSTUB_DEBUG_ARGS=d)
    subprocess.run([os.path.join(tmp, "kstub"), f] + kflags + ["-o", os.path.join(tmp, "args"), "--no-cache"],
                   check=True, capture_output=True, env=env)
    with open(os.path.join(d, "args")) as fh:
        return fh.read().splitlines()


def tools(tmp, f):
    """The commands for file f, or None for a tool that cannot run on it."""
    kstub = os.path.join(tmp, "kstub")
    out = os.path.join(tmp, "out")
    kflags, nflags = file_flags(f, "kstub"), file_flags(f, "nvcc")
    clang = [os.path.join(LLVM, "bin", "clang")] + clang_args(f, tmp, kflags) + ["-fsyntax-only", f]
    if subprocess.run(clang, capture_output=True).returncode != 0:
        clang = None
    # A fresh, empty cache directory per run: this run builds the PCH.
    cold = lambda: [kstub, f] + kflags + ["-o", out, "--cache-dir", os.path.join(tmp, "cold%d" % next(COLD))]
    return [
        ("warm", lambda: [kstub, f] + kflags + ["-o", out, "--cache-dir", os.path.join(tmp, "warm")]),
        ("cold", cold),
        ("nocache", lambda: [kstub, f] + kflags + ["-o", out, "--no-cache"]),
        ("clang", (lambda: clang) if clang else None),
        ("nvcc", lambda: [os.path.join(CUDA, "bin", "nvcc"), "-ptx", "-arch=compute_" + ARCH, "-std=c++17"]
         + nflags + [f, "-o", os.path.join(tmp, "out.ptx")]),
    ], kflags


def run(cmd):
    """Wall seconds and peak RSS (MiB) of one child; raises on failure."""
    LOADS.append(os.getloadavg()[0])
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


def count_kernels(f, tmp, kflags):
    man = os.path.join(tmp, "count.json")
    subprocess.run([os.path.join(tmp, "kstub"), f] + kflags + ["-o", os.path.join(tmp, "count"),
                    "--manifest", man], check=True, capture_output=True)
    with open(man) as fh:
        return len(json.load(fh)["kernels"])


def main():
    ap = argparse.ArgumentParser(description="kstub generator benchmark")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--files", type=int, default=30)
    ap.add_argument("--kernels", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--kstub", default=os.environ.get("KSTUB", os.path.join(ROOT, "build", "bin", "kstub")))
    ap.add_argument("--make-reps", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0,
                    help="at most N files of each repository set (a smoke run; 0: all)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="kstub-genbench.")
    try:
        return bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def make_build(args, tmp, files):
    """A make -j build of files (one kstub per file, as kstub.mk runs it):
    wall seconds per mode, modes interleaved, REPS times."""
    kstub = os.path.join(tmp, "kstub")
    jobs = os.cpu_count() or 2
    res = {m: [] for m in ("nocache", "cold", "warm")}
    warm = os.path.join(tmp, "make-warm")
    for rep in range(args.make_reps):
        for mode in ("nocache", "cold", "warm"):
            d = os.path.join(tmp, "make-%s-%d" % (mode, rep))
            os.makedirs(d)
            cache = {"nocache": "--no-cache", "cold": "--cache-dir " + os.path.join(d, "cache"),
                     "warm": "--cache-dir " + warm}[mode]
            if mode == "warm" and not os.path.isdir(warm):
                for f in files:   # fill it once, untimed
                    subprocess.run([kstub, f, "-o", os.path.join(tmp, "prime"), "--cache-dir", warm],
                                   check=True, capture_output=True)
            with open(os.path.join(d, "Makefile"), "w") as mk:
                outs = [os.path.basename(f)[:-3] + ".h" for f in files]
                mk.write("all: %s\n" % " ".join(outs))
                for f, o in zip(files, outs):
                    mk.write("%s: %s\n\t%s %s -o %s %s\n" % (o, f, kstub, f, o[:-2], cache))
            w, _ = run(["make", "-s", "-j%d" % jobs, "-C", d])
            res[mode].append(w)
            print("generator: make -j%d, %d files, %-7s %.2f s" % (jobs, len(files), mode, w), flush=True)
    return jobs, res


def bench(args, tmp):
    # A private copy: a rebuild of the binary during the run must not touch it.
    shutil.copy2(args.kstub, os.path.join(tmp, "kstub"))
    cdir = os.path.join(tmp, "corpus")
    rng = corpus.random.Random(20261129)
    os.makedirs(cdir)
    for i in range(args.files):
        with open(os.path.join(cdir, "corpus_%03d.cu" % i), "w") as fh:
            fh.write(corpus.make_file(rng, i, args.kernels))
    def cu(*parts):
        return sorted(glob.glob(os.path.join(ROOT, *parts, "*.cu")))[:args.limit or None]
    sets = [("kernels/", cu("kernels")),
            ("tests/corpus/", cu("tests", "corpus")),
            ("tests/corpus/real/", cu("tests", "corpus", "real")),
            ("corpus (bench/corpus.py, %d x %d)" % (args.files, args.kernels),
             sorted(glob.glob(os.path.join(cdir, "*.cu"))))]
    raw = []     # set, file, kernels, templates, tool, rep, wall_s, rss_mib, load
    per_file = []  # set, file, kernels, {tool: (median wall, max rss), or None: N/A}, templates
    start = time.time()
    for sname, files in sets:
        for f in files:
            # Every file is measured: kstub or nvcc failing on one is an error,
            # never a file left out.
            tl, kflags = tools(tmp, f)
            nk = count_kernels(f, tmp, kflags)
            run(tl[0][1]())   # fills the warm cache for this file's configuration, untimed
            with open(f) as fh:  # template kernels (instantiated explicitly or by launches)
                templ = int(re.search(r"template\s*(<[^;{]*>)?\s*__global__", fh.read()) is not None)
            walls = {t: [] for t, c in tl if c}
            rss = {t: [] for t, c in tl if c}
            for rep in range(args.reps):
                for tname, cmd in tl:
                    if not cmd:
                        continue
                    w, m = run(cmd())
                    walls[tname].append(w)
                    rss[tname].append(m)
                    raw.append([sname, os.path.basename(f), nk, templ, tname, rep, "%.4f" % w, "%.1f" % m,
                                "%.2f" % LOADS[-1]])
            r = {t: (median(walls[t]), max(rss[t])) if t in walls else None for t in TOOLS}
            per_file.append((sname, os.path.basename(f), nk, r, templ))
            print("generator: %-22s %3d kernels  warm %.3f  cold %.3f  nocache %.3f  clang %s  nvcc %.3f s"
                  "  (%.0f s)" % (os.path.basename(f), nk, r["warm"][0], r["cold"][0], r["nocache"][0],
                                  "%.3f" % r["clang"][0] if r["clang"] else "N/A", r["nvcc"][0],
                                  time.time() - start), flush=True)
    corpus_files = sorted(glob.glob(os.path.join(cdir, "*.cu")))
    make_res = make_build(args, tmp, corpus_files)
    warm_bytes = sum(os.path.getsize(p) for p in glob.glob(os.path.join(tmp, "warm", "*")))
    warm_pch = len(glob.glob(os.path.join(tmp, "warm", "*.pch")))
    with open(os.path.join(args.out, "generator_raw.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["set", "file", "kernels", "templates", "tool", "rep", "wall_s", "peak_rss_mib", "load1"])
        w.writerows(raw)
        for mode, walls in make_res[1].items():
            for rep, wall in enumerate(walls):
                w.writerow(["make -j%d" % make_res[0], "%d corpus files" % len(corpus_files), "", "", mode, rep,
                            "%.4f" % wall, "", ""])
    report(args, sets, per_file, make_res, len(corpus_files), warm_bytes, warm_pch)
    return 0


def verdict(med, worst, goal):
    return "**met**" if worst <= goal else "**met for the median file**" if med <= goal else "**not met**"


def report(args, sets, per_file, make_res, nmake, warm_bytes, warm_pch):
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
    kv = version([args.kstub, "--version"])[0]
    cv = version([os.path.join(LLVM, "bin", "clang"), "--version"])[0]
    nv = [l for l in version([os.path.join(CUDA, "bin", "nvcc"), "--version"]) if "release" in l]
    loads = sorted(LOADS) or [0.0]
    md = ["# kstub generator benchmark\n",
          "Produced by `bench/generator.py` (`make bench-generator`) on the CPU machine; the "
          "GPU machine has no libclang 22.\n",
          "| | |", "| --- | --- |",
          "| date (UTC) | %s |" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "| CPU | %s, %d cores, shared with other work: 1-minute load average during the runs "
          "median %.2f (%.2f-%.2f) |" % (cpu, os.cpu_count(), median(loads), loads[0], loads[-1]),
          "| OS | %s |" % platform.platform(),
          "| kstub | %s, commit %s (and the working tree) |" % (kv, commit),
          "| clang | %s |" % cv,
          "| nvcc | %s |" % (nv[0].strip() if nv else "?"),
          "| repetitions | %d per file and tool, interleaved; medians |" % args.reps,
          ""]
    md.append("Per file: *warm* is `kstub FILE -o OUT` with the prelude cache filled (header and stubs, "
              "no image embedded); *cold* the same with an empty cache directory (it builds this "
              "configuration's PCH, then uses it); *no cache* is `kstub --no-cache` (a whole parse); "
              "*clang* is the parse floor without a PCH, `clang -fsyntax-only` with kstub's exact parse "
              "arguments (written by kstub under `KSTUB_DEBUG_ARGS`: nvcc's macros, the SDK version, the "
              "resource directory, the compat header and its flags; `--cuda-path=%s --cuda-gpu-arch=sm_%s`), "
              "N/A where clang refuses the file (an error in a function body, which kstub reports as a "
              "warning); *nvcc* is `nvcc -ptx -arch=compute_%s -std=c++17`. Files take the flags of their "
              "`// abi-kstub:` and `// abi-nvcc:` lines. Wall time from spawn to `wait4`; peak memory is "
              "`wait4`'s `ru_maxrss` (for nvcc, the largest of its sub-processes).\n" % (CUDA, ARCH, ARCH))
    panels = []
    for sname, files in sets:
        rows = [p for p in per_file if p[0] == sname]
        if not rows:
            continue
        nk = sum(p[2] for p in rows)
        rw = [p[3]["warm"][0] / p[3]["nvcc"][0] for p in rows]
        rcold = [p[3]["cold"][0] / p[3]["nvcc"][0] for p in rows]
        rn = [p[3]["nocache"][0] / p[3]["nvcc"][0] for p in rows]
        rc = [p[3]["nocache"][0] / p[3]["clang"][0] for p in rows if p[3]["clang"]]
        na = [p[1] for p in rows if not p[3]["clang"]]
        md.append("## %s: %d files, %d kernels\n" % (sname, len(rows), nk))
        md.append("| file | kernels | kstub warm | kstub cold | kstub no cache | clang -fsyntax-only | "
                  "nvcc -ptx | warm / nvcc | cold / nvcc | no cache / nvcc | peak MiB warm / cold / no cache / nvcc |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        show = rows if len(rows) <= 14 else rows[:5] + [None] + rows[-3:]
        for p in show:
            if p is None:
                md.append("| … | | | | | | | | | | |")
                continue
            t = p[3]
            md.append("| %s | %d | %.3f s | %.3f s | %.3f s | %s | %.3f s | %.2f | %.2f | %.2f | "
                      "%.0f / %.0f / %.0f / %.0f |" % (
                          p[1], p[2], t["warm"][0], t["cold"][0], t["nocache"][0],
                          "%.3f s" % t["clang"][0] if t["clang"] else "N/A", t["nvcc"][0],
                          t["warm"][0] / t["nvcc"][0], t["cold"][0] / t["nvcc"][0],
                          t["nocache"][0] / t["nvcc"][0], t["warm"][1], t["cold"][1], t["nocache"][1],
                          t["nvcc"][1]))
        med = {tool: median([p[3][tool][0] for p in rows if p[3][tool]] or [float("nan")]) for tool in TOOLS}
        mem = {tool: max([p[3][tool][1] for p in rows if p[3][tool]] or [float("nan")]) for tool in TOOLS}
        md.append("| **median per file** | %.1f (mean) | %.3f s | %.3f s | %.3f s | %.3f s | %.3f s | %.2f | %.2f | "
                  "%.2f | max %.0f / %.0f / %.0f / %.0f |"
                  % (nk / len(rows), med["warm"], med["cold"], med["nocache"], med["clang"], med["nvcc"],
                     median(rw), median(rcold), median(rn), mem["warm"], mem["cold"], mem["nocache"], mem["nvcc"]))
        md.append("")
        if na:
            md.append("Parse floor N/A (clang refuses the file): %s; the clang median is over the other %d.\n"
                      % (", ".join(na), len(rows) - len(na)))
        md.append("| goal | median file | worst file | |")
        md.append("| --- | ---: | ---: | --- |")
        md.append("| kstub (warm cache) ≤ %.1f × nvcc -ptx | %.2f | %.2f | %s |" % (
            GOAL_NVCC, median(rw), max(rw), verdict(median(rw), max(rw), GOAL_NVCC)))
        md.append("| kstub (cold cache) / nvcc -ptx | %.2f | %.2f | (the first file of a configuration) |" % (
            median(rcold), max(rcold)))
        if rc:
            md.append("| kstub --no-cache ≤ %.1f × the parse floor | %.2f | %.2f | %s |" % (
                GOAL_CLANG, median(rc), max(rc), verdict(median(rc), max(rc), GOAL_CLANG)))
        md.append("")
        short = sname.split(" ")[0]
        panels.append(("%s median wall time per file (%d files, %d kernels)" % (short, len(rows), nk),
                       "seconds", [("kstub, warm cache", med["warm"], None, None, "kstub"),
                                   ("kstub, cold cache", med["cold"], None, None, "kstub"),
                                   ("kstub --no-cache", med["nocache"], None, None, "kstub"),
                                   ("clang -fsyntax-only (parse floor)", med["clang"], None, None, "ref"),
                                   ("nvcc -ptx", med["nvcc"], None, None, "other")]))
    jobs, mres = make_res
    mm = {m: median(v) for m, v in mres.items()}
    md.append("## make -j%d: %d corpus files, one kstub each\n" % (jobs, nmake))
    md.append("| cache | wall (median of %d) | runs | / no cache |" % args.make_reps)
    md.append("| --- | ---: | --- | ---: |")
    for m, label in (("nocache", "none (`--no-cache`)"), ("cold", "cold (empty directory)"),
                     ("warm", "warm")):
        md.append("| %s | %.2f s | %s | %.2f |" % (label, mm[m], ", ".join("%.2f" % v for v in mres[m]),
                                                    mm[m] / mm["nocache"]))
    md.append("")
    md.append("The warm cache after every configuration above: %d PCHs, %.0f MiB in all.\n"
              % (warm_pch, warm_bytes / 1048576.0))
    panels.append(("make -j%d, %d files" % (jobs, nmake), "seconds",
                   [("kstub, warm cache", mm["warm"], None, None, "kstub"),
                    ("kstub, cold cache", mm["cold"], None, None, "kstub"),
                    ("kstub --no-cache", mm["nocache"], None, None, "kstub")]))
    md.append("Raw numbers: `generator_raw.csv`. Reproduce: `make bench-generator` (or "
              "`python3 bench/generator.py --reps 3 --kstub build/bin/kstub`).\n")
    try:
        how = plot.hbar_panels(os.path.join(args.out, "generator.png"),
                               "kstub generator: prelude cache warm / cold / off vs clang and nvcc -ptx (%d cores)"
                               % os.cpu_count(),
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
