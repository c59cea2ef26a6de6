#!/usr/bin/env python3
"""front_scale.py -- how the front end scales with explicit instantiations
and with headers that hold kernels (issue 41 #11).

Three generated inputs per size N, each listed with `kstub --list` (best of
--reps, the prelude cache warmed first):

    inst   one template kernel and N explicit instantiations of it
    dirs   N times: a #define, an instantiation through it, a plain kernel
    hdrs   N headers with one kernel each, all included by one .cu
    macro  one template kernel and N explicit instantiations written through
           a function-like macro, INST(int, i)
    mixed  N/4 times: a #define of a value, an instantiation through INST
           with it, a plain instantiation, a kernel a macro defines, a
           plain kernel (N kernels in all)

Before the fix, 4,000 / 8,000 instantiations took 5.1-5.7 / 17.5-19.3 s
(87 % in clang_annotateTokens over the whole file) and 2,000 / 8,000
headers 5.3 / 24.8 s (each header's explicit instantiations were looked for
with a walk of the whole unit). The numbers are reported, never asserted:
the exit status is 0 unless kstub itself fails, or lists a number of
kernels other than the input's. With N macros, source_macros.c looked up
each identifier of an expansion in every definition before it, each
definition's tokens in every one tokenized before, and each invocation's
first token from the file's start (issue 41, item 11's rest).

    python3 bench/front_scale.py --kstub build/bin/kstub [--sizes 1000,2000,4000,8000] [--reps 3]
        [--old-kstub OTHER --old-max 4000] [--inputs inst,dirs,hdrs,macro,mixed]
        [--out bench/results/front_scale.md]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def write_inst(d, n):
    lines = ["template <int N> __global__ void k(int *p) { p[0] = N; }"]
    lines += ["template __global__ void k<%d>(int *);" % i for i in range(n)]
    path = os.path.join(d, "inst.cu")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, n


def write_dirs(d, n):
    lines = ["template <int N> __global__ void k(int *p) { p[0] = N; }"]
    for i in range(n):
        lines += ["#define M%d %d" % (i, i), "template __global__ void k<M%d>(int *);" % i,
                  "__global__ void g%d(int *p) {}" % i]
    path = os.path.join(d, "dirs.cu")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, 2 * n


def write_hdrs(d, n):
    os.makedirs(os.path.join(d, "h"))
    lines = []
    for i in range(n):
        with open(os.path.join(d, "h", "h%d.cuh" % i), "w") as f:
            f.write("#pragma once\n__global__ void hk%d(int *p) { p[0] = %d; }\n" % (i, i))
        lines.append('#include "h/h%d.cuh"' % i)
    lines.append("__global__ void own(int *p) {}")
    path = os.path.join(d, "hdrs.cu")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, n + 1


def write_macro(d, n):
    lines = ["template <class T, int N> __global__ void k(T *p) { p[0] = N; }",
             "#define INST(T, N) template __global__ void k<T, N>(T *);"]
    lines += ["INST(int, %d)" % i for i in range(n)]
    path = os.path.join(d, "macro.cu")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, n


def write_mixed(d, n):
    lines = ["template <class T, int N> __global__ void k(T *p) { p[0] = N; }",
             "#define INST(T, N) template __global__ void k<T, N>(T *);",
             "#define KERN(name) __global__ void name(int *p) { p[0] = 1; }"]
    for i in range(n // 4):
        lines += ["#define V%d %d" % (i, i), "INST(int, V%d)" % i,
                  "template __global__ void k<float, V%d>(float *);" % i, "KERN(km%d)" % i,
                  "__global__ void kp%d(int *p) {}" % i]
    path = os.path.join(d, "mixed.cu")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, 4 * (n // 4)


INPUTS = [("inst", write_inst), ("dirs", write_dirs), ("hdrs", write_hdrs), ("macro", write_macro),
          ("mixed", write_mixed)]


def timed(kstub, path, want):
    d = os.path.dirname(path)
    out = os.path.join(d, "out")
    t0 = time.perf_counter()
    r = subprocess.run([kstub, os.path.basename(path), "-o", out, "--list"], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.perf_counter() - t0
    got = sum(1 for line in r.stdout.splitlines() if line.startswith("ks_status "))
    if r.returncode != 0 or got != want:
        sys.exit("%s %s: exit %d, %d kernels listed of %d:\n%s" % (kstub, path, r.returncode, got, want,
                                                                   r.stdout[-2000:]))
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kstub", required=True)
    ap.add_argument("--sizes", default="1000,2000,4000,8000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--old-kstub", help="another kstub to time beside it")
    ap.add_argument("--old-max", type=int, default=4000, help="the largest size the other kstub runs")
    ap.add_argument("--inputs", default=",".join(name for name, _ in INPUTS),
                    help="which inputs, comma-separated")
    ap.add_argument("--out", help="write the table here (markdown) as well")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    a.kstub = os.path.abspath(a.kstub)
    a.old_kstub = a.old_kstub and os.path.abspath(a.old_kstub)
    rows = []
    tmp = tempfile.mkdtemp(prefix="kstub-front-scale-")
    try:
        for name, write in [i for i in INPUTS if i[0] in a.inputs.split(",")]:
            for n in sizes:
                d = os.path.join(tmp, "%s%d" % (name, n))
                os.makedirs(d)
                path, want = write(d, n)
                row = [name, n]
                for kstub in [a.kstub] + ([a.old_kstub] if a.old_kstub else []):
                    if kstub != a.kstub and n > a.old_max:
                        row.append(None)
                        continue
                    timed(kstub, path, want)          # warms the prelude cache
                    row.append(min(timed(kstub, path, want) for _ in range(a.reps)))
                rows.append(row)
                print("%-5s %6d  %s" % (name, n, "  ".join("-" if t is None else "%.2f s" % t
                                                          for t in row[2:])), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    head = "| input | N | kstub (s) |" + (" other kstub (s) |" if a.old_kstub else "")
    sep = "| --- | ---: | ---: |" + (" ---: |" if a.old_kstub else "")
    table = [head, sep] + ["| %s | %d | %s |" % (r[0], r[1], " | ".join("-" if t is None else "%.2f" % t
                                                                        for t in r[2:])) for r in rows]
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
