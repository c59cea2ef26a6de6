#!/usr/bin/env python3
"""cold.py — issue 45's cold-cache emulation (bench/cold.mk, `make bench-cold`).

Runs each path of bench/cold_paths.c (its list: `cold_paths -l`) against the
cold fake driver under cachegrind (a 2 MiB, 16-way last-level cache and a
32 KiB L1i, as the recipe sets them) for two call counts, and prints, per
call, the last-level misses of code (ILmr) and data (DLmr + DLmw) and the
instructions (Ir), each over the path's raw floor's: the cache lines the
path touches per call that a real launch, which evicts the caches, makes
miss again. The difference of two counts cancels the start-up. Cachegrind
is deterministic, so one run per count is enough. --annotate PATH also
prints cg_annotate's per-function misses of that path (cg_diff of the two
runs). Reported, never asserted: a CPU emulation, not a GPU measurement.
"""
import argparse
import os
import subprocess
import sys
import tempfile

CACHES = ["--cache-sim=yes", "--LL=2097152,16,64", "--I1=32768,8,64", "--D1=32768,8,64"]


def summary(path):
    events = totals = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                totals = [int(x) for x in line.split()[1:]]
    return dict(zip(events, totals))


def run(args, tmp, name, calls):
    out = os.path.join(tmp, f"cg.{name}.{calls}")
    env = dict(os.environ, KSTUB_LIBCUDA=args.driver)
    env.pop("KSTUB_CHECK", None)
    if args.cupti:
        env["KSTUB_CUPTI"] = args.cupti
    else:
        env["KSTUB_CUPTI"] = "/nonexistent/libcupti.so"   # the watch off: the buffer-id path
    p = subprocess.run(["valgrind", "--tool=cachegrind", *CACHES, f"--cachegrind-out-file={out}",
                        args.prog, name, str(calls)], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"cold.py: {name} {calls} failed:\n{p.stdout}{p.stderr}")
    note = [l for l in p.stdout.splitlines() if l.startswith("cold_paths:")]
    return out, summary(out), note


def per_call(a, b, n):
    code = (b["ILmr"] - a["ILmr"]) / n
    data = (b["DLmr"] + b["DLmw"] - a["DLmr"] - a["DLmw"]) / n
    return code, data, (b["Ir"] - a["Ir"]) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prog", default="build/bench/cold_paths")
    ap.add_argument("--driver", default=os.path.abspath("build/tests/libcuda_cold.so"))
    ap.add_argument("--cupti", default=None, help="the fake libcupti (the free watch on)")
    ap.add_argument("--calls", default="50,150", help="the two call counts")
    ap.add_argument("--paths", default=None, help="comma-separated paths (default: all)")
    ap.add_argument("--annotate", default=None, help="a path to break down by function")
    args = ap.parse_args()
    n1, n2 = (int(x) for x in args.calls.split(","))
    listing = subprocess.run([args.prog, "-l"], capture_output=True, text=True, check=True).stdout
    paths = [l.split(" ", 2) for l in listing.splitlines()]
    floor = {p[0]: None if p[1] == "-" else p[1] for p in paths}
    what = {p[0]: p[2] for p in paths}
    names = [p[0] for p in paths]
    if args.paths:
        want = args.paths.split(",")
        names = [n for n in names if n in want or any(floor[w] == n for w in want if w in floor)]
    with tempfile.TemporaryDirectory() as tmp:
        res, files, notes = {}, {}, {}
        for name in names:
            o1, s1, _ = run(args, tmp, name, n1)
            o2, s2, note = run(args, tmp, name, n2)
            res[name], files[name], notes[name] = per_call(s1, s2, n2 - n1), (o1, o2), note
        print(f"bench-cold: LL misses per call over {n2 - n1} calls (cachegrind, LL 2 MiB 16-way, "
              f"L1i/L1d 32 KiB; the fake driver evicts both in every launch)")
        print(f"  {'path':<15} {'code':>7} {'data':>7} {'instr':>8}   {'over floor: code':>16} {'data':>6} "
              f"{'instr':>6}   what")
        for name in names:
            c, d, i = res[name]
            f = floor[name]
            if f and f in res:
                fc, fd, fi = res[f]
                over = f"{c - fc:16.1f} {d - fd:6.1f} {i - fi:6.0f}"
            else:
                over = f"{'(floor)':>16} {'':6} {'':6}"
            print(f"  {name:<15} {c:7.1f} {d:7.1f} {i:8.0f}   {over}   {what[name]}")
            for line in notes[name]:
                print(f"  {'':15} {line}")
        if args.annotate in files:
            o1, o2 = files[args.annotate]
            diff = os.path.join(tmp, "diff")
            with open(diff, "w") as f:
                subprocess.run(["cg_diff", o1, o2], stdout=f, check=True)
            p = subprocess.run(["cg_annotate", "--show=ILmr,DLmr,DLmw", "--sort=ILmr", "--threshold=0.0001",
                                "--auto=no", diff], capture_output=True, text=True, check=True)
            print(f"\n{args.annotate}: misses by function over {n2 - n1} calls (cg_annotate of cg_diff)")
            print(p.stdout)


if __name__ == "__main__":
    main()
