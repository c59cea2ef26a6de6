#!/usr/bin/env python3
"""project.py — a project's first build: kstub over a multi-directory
project from an empty prelude cache and again warm, against nvcc -ptx of the
same files in the same run, with the number of preludes built.

The project (written to a temporary folder) has DIRS directories; each
builds its .cu files with its own include directory (-I dirN/inc) and its own
macro (-DLOCAL_N=N), as the CUDA samples, benchmark suites and many
applications do; every file includes <cuda_fp16.h>, a header of the shared
include directory (-I shared) and its directory's header, and is compiled
as C++17. Half of the directories' files start with <cuda_fp16.h>, half
include <cstdio> first (two lists of leading headers: one prelude of the
CUDA headers and a layer for each list).

For each of REPS rounds, the three runs are interleaved in a new shuffled
order: nvcc (every file, one after another), kstub cold (an empty cache
directory of its own), kstub warm (the cache the cold run left). A last run
starts PARALLEL kstub processes at once on one cold cache (make -j's case)
and counts the preludes built. --baseline KSTUB runs another kstub binary
(e.g. the one before a change) the same way, for comparison.

    project.py [--reps N] [--dirs N] [--files-per-dir N] [--kstub PATH]
               [--baseline PATH [--baseline-label TEXT]] [--out DIR]
               [--leading two|per-dir|per-file] [--layers RULE,RULE...]

--leading picks the lists of leading headers: two (the default, above), one
per directory, or one per file (real code bases' usual case: most files
start with their own). --layers measures kstub once per rule for layers
(KSTUB_LAYERS: seen, the default, builds a layer once a second input starts
with a list; always; never), each as a tool of its own in every round.

Writes DIR/project.md and DIR/project_raw.csv (default DIR: bench/results).
Goals (issue 28): first build <= 0.5x nvcc, <= 2 preludes built; warm per
file <= 0.25x nvcc. Reported, never asserted.
"""
import argparse
import csv
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CUDA = os.environ.get("CUDA_PATH", "/usr/local/cuda")
ARCH = "90"

SHARED_H = """#pragma once
#include <cstdint>
struct Tile { float scale; int32_t rows, cols; };
template <typename T> struct Span { T *data; int64_t n; };
enum class Mode : int { Fast = 0, Exact = 1 };
"""

KERNEL = """{first}
#include <cuda_fp16.h>
#include "common.h"
#include "local{d}.h"

__global__ void scale{d}_{f}(__half *out, const __half *in, Tile t, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < LOCAL_N * 1024)
        out[i] = __float2half(__half2float(in[i]) * t.scale * LOCAL_SCALE);
}}

__global__ void reduce{d}_{f}(Span<float> s, float *sum, Mode m)
{{
    float v = 0.f;
    for (int64_t i = threadIdx.x; i < s.n; i += blockDim.x)
        v += m == Mode::Fast ? s.data[i] : s.data[i] * 1.0f;
    atomicAdd(sum, v);
}}

template <typename T>
__global__ void fill{d}_{f}(T *p, T v, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}}
template __global__ void fill{d}_{f}<float>(float *, float, int);
template __global__ void fill{d}_{f}<__half>(__half *, __half, int);
"""


LEADING = ["<cstdio>", "<cuda_fp16.h>", "<cstdint>", "<cmath>", "<cstring>", "<climits>", "<cfloat>",
           "<cstddef>", "<cassert>", "<cstdlib>", "<utility>", "<limits>", "<type_traits>", "<cuda_bf16.h>"]


def leading_list(mode, d, i, per_dir):
    """The file's leading includes: two lists, one per directory or one per file."""
    if mode == "two":
        return "#include <cuda_fp16.h>" if d % 2 == 0 else "#include <cstdio>"
    n = d if mode == "per-dir" else d * per_dir + i
    # A distinct pair (then triple) of headers per number.
    a, b = n % len(LEADING), (n // len(LEADING)) % len(LEADING)
    heads = [LEADING[a]] + ([LEADING[b]] if b != a else []) + ([LEADING[(a + 7) % len(LEADING)]] if n >= 14 * 14 else [])
    return "\n".join("#include %s" % h for h in heads)


def write_project(root, dirs, per_dir, leading="two"):
    os.makedirs(os.path.join(root, "shared"))
    with open(os.path.join(root, "shared", "common.h"), "w") as f:
        f.write(SHARED_H)
    files = []
    for d in range(dirs):
        inc = os.path.join(root, "dir%d" % d, "inc")
        os.makedirs(inc)
        with open(os.path.join(inc, "local%d.h" % d), "w") as f:
            f.write("#pragma once\n#define LOCAL_SCALE %d.0f\n" % (d + 1))
        for i in range(per_dir):
            path = os.path.join(root, "dir%d" % d, "k%d.cu" % i)
            first = leading_list(leading, d, i, per_dir)
            with open(path, "w") as f:
                f.write(KERNEL.format(first=first, d=d, f=i))
            files.append((d, path))
    return files


def flags(root, d):
    return ["-std=c++17", "-I", os.path.join(root, "dir%d" % d, "inc"), "-I", os.path.join(root, "shared"),
            "-DLOCAL_N=%d" % (d + 1)]


def run_all(cmds, cwd, env=None):
    """Runs cmds one after another: (wall seconds, CPU seconds of them and their children)."""
    t0 = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for c in cmds:
        r = subprocess.run(c, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        if r.returncode != 0:
            sys.exit("failed: %s\n%s" % (" ".join(c), r.stderr.decode(errors="replace")))
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return time.perf_counter() - t0, cpu


def kstub_cmds(kstub, root, files, cache, out):
    return [[kstub, path] + flags(root, d) + ["--cache-dir", cache, "-o",
             os.path.join(out, "d%d_%s" % (d, os.path.basename(path)[:-3]))] for d, path in files]


def nvcc_cmds(root, files, out):
    return [[os.path.join(CUDA, "bin", "nvcc"), "-ptx", "-arch=sm_" + ARCH, path] + flags(root, d) +
            ["-o", os.path.join(out, "d%d_%s.ptx" % (d, os.path.basename(path)[:-3]))] for d, path in files]


def preludes(cache):
    """(whole preludes, layers, MB of PCH) in cache: a layer's entry (KEY.prelude) names the
    base prelude it is chained on in a "base NAME STAMP" line; a whole prelude's names none."""
    whole = layers = 0
    size = 0
    if not os.path.isdir(cache):
        return 0, 0, 0.0
    for n in os.listdir(cache):
        path = os.path.join(cache, n)
        if n.endswith(".pch"):
            size += os.path.getsize(path)
        elif n.endswith(".prelude"):
            with open(path, "rb") as f:
                if b"\nbase " in f.read()[80:]:
                    layers += 1
                else:
                    whole += 1
    return whole, layers, size / 1e6


def built_text(p):
    return "%d + %d layer%s (%.1f MB)" % (p[0], p[1], "" if p[1] == 1 else "s", p[2])


def parallel_cold(kstub, root, files, tmp, n):
    """n kstub processes on the same file at once, one cold cache: preludes built."""
    cache = tempfile.mkdtemp(dir=tmp, prefix="par-")
    os.chmod(cache, 0o700)
    d, path = files[0]
    procs = [subprocess.Popen([kstub, path] + flags(root, d) + ["--cache-dir", cache, "-o",
                                                                   os.path.join(cache, "..", "par%d" % i)],
                              cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for i in range(n)]
    rcs = [p.wait() for p in procs]
    return preludes(cache), rcs.count(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dirs", type=int, default=12)
    ap.add_argument("--files-per-dir", type=int, default=1)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--kstub", default=os.path.join(ROOT, "build", "bin", "kstub"))
    ap.add_argument("--baseline", help="another kstub binary to measure the same way")
    ap.add_argument("--baseline-label", default="baseline", help="what to call it in the table")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--leading", choices=["two", "per-dir", "per-file"], default="two")
    ap.add_argument("--layers", help="rules for layers to measure apart (seen,always,never)")
    a = ap.parse_args()
    tools = {"kstub": os.path.abspath(a.kstub)}
    envs = {"kstub": None}
    if a.layers:
        tools, envs = {}, {}
        for rule in a.layers.split(","):
            tools["layers=" + rule] = os.path.abspath(a.kstub)
            envs["layers=" + rule] = dict(os.environ, KSTUB_LAYERS=rule)
    if a.baseline:
        tools["baseline"] = os.path.abspath(a.baseline)
        envs["baseline"] = None
    tmp = tempfile.mkdtemp(prefix="kstub-project-")
    rows = []
    try:
        root = os.path.join(tmp, "proj")
        files = write_project(root, a.dirs, a.files_per_dir, a.leading)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        for rep in range(a.reps):
            order = ["nvcc"] + list(tools)
            random.shuffle(order)
            for name in order:
                if name == "nvcc":
                    rows.append((rep, "nvcc", "total") + run_all(nvcc_cmds(root, files, out), tmp) + (0, 0, 0.0))
                    continue
                cache = os.path.join(tmp, "cache-%s-%d" % (name, rep))
                os.mkdir(cache, 0o700)
                cold = run_all(kstub_cmds(tools[name], root, files, cache, out), tmp, envs[name])
                built = preludes(cache)
                warm = run_all(kstub_cmds(tools[name], root, files, cache, out), tmp, envs[name])
                rows.append((rep, name, "cold") + cold + built)
                rows.append((rep, name, "warm") + warm + preludes(cache))
                shutil.rmtree(cache)
            print("round %d of %d done" % (rep + 1, a.reps), file=sys.stderr)
        par = {name: parallel_cold(path, root, files, tmp, a.parallel) for name, path in tools.items()} \
            if a.parallel else {}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "project_raw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rep", "tool", "run", "wall_s", "cpu_s", "preludes", "layers", "pch_mb"])
        w.writerows(rows)

    def med(tool, run, col):
        return statistics.median(r[col] for r in rows if r[1] == tool and r[2] == run)

    nv, nvc = med("nvcc", "total", 3), med("nvcc", "total", 4)
    nfiles = len(files)
    lines = ["# A project's first build (bench/project.py)", "",
             "%d directories, %d .cu file%s each (%d files), each directory with its own -I and -D, a shared "
             "include directory, C++17, <cuda_fp16.h>; leading headers: %s; sm_%s. Medians of %d rounds, the "
             "runs of a round in a shuffled order; the machine's load average at the end: %.2f." %
             (a.dirs, a.files_per_dir, "" if a.files_per_dir == 1 else "s", nfiles,
              {"two": "two lists", "per-dir": "a list per directory", "per-file": "a list per file"}[a.leading],
              ARCH, a.reps, os.getloadavg()[0]), "",
             "Wall time is what a user waits for; CPU time (user + system of the tool and its children) is "
             "what the ratios are judged by on a shared machine, where other work stretches wall time.", "",
             "A prelude is the CUDA headers precompiled (one PCH of the whole); a layer is a PCH of what a "
             "list of leading headers (<cstdio>, <cuda_fp16.h>) adds, chained on the prelude without them.", "",
             "| run | wall s | CPU s | CPU per file | x nvcc (CPU) | x nvcc (wall) | preludes built | goal (CPU) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
             "| nvcc -ptx, every file | %.2f | %.2f | %.3f | 1.00 | 1.00 | | |" % (nv, nvc, nvc / nfiles)]
    for name in tools:
        c, w = med(name, "cold", 4), med(name, "warm", 4)
        cw, ww = med(name, "cold", 3), med(name, "warm", 3)
        built = max((r[5], r[6], r[7]) for r in rows if r[1] == name and r[2] == "cold")
        label = "kstub (%s)" % (a.baseline_label if name == "baseline" else name) if name != "kstub" else "kstub"
        lines.append("| %s, cold (empty cache) | %.2f | %.2f | %.3f | %.2f | %.2f | %s | <= 0.5x, <= 2 preludes: %s |" %
                     (label, cw, c, c / nfiles, c / nvc, cw / nv, built_text(built),
                      "met" if c / nvc <= 0.5 and built[0] <= 2 else "missed"))
        lines.append("| %s, warm | %.2f | %.2f | %.3f | %.2f | %.2f | 0 more | <= 0.25x: %s |" %
                     (label, ww, w, w / nfiles, w / nvc, ww / nv, "met" if w / nvc <= 0.25 else "missed"))
    lines.append("")
    for name, (built, ok) in par.items():
        lines.append("%s: %d processes at once on one cold cache (one file): %d of them succeeded, built %s." %
                     (name, a.parallel, ok, built_text(built)))
    lines.append("")
    text = "\n".join(lines)
    with open(os.path.join(a.out, "project.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
