#!/usr/bin/env python3
"""cache_scale.py -- how `kstub cache` scales with the number of entries.

Every cache operation (--stats, --prune, --clear, and the trim after a write
that kstub and libkstub run) reads the directory once and sorts
(common/cache_entry.c), so its time should grow with the number of entries
as --stats does: about linearly. Issue 26 #6 measured the quadratic code
before: --clear of 2,000 / 4,000 / 8,000 entries 2.6 / 11.0 / 50.3 s,
--prune --max-size 1K of 20,000 entries 641 s.

For each size, a cache directory of N prelude entries (KEY.prelude and
KEY.SUM.pch, 64 bytes each, used at distinct times) is made afresh for each
operation, and the operation timed (best of --reps):

    --stats                 read and count
    --prune --max-size 1K   evict all but a few, least recently used first
    --clear                 remove everything

The numbers are reported, never asserted: the exit status is 0 unless kstub
itself fails.

    python3 bench/cache_scale.py --kstub build/bin/kstub [--sizes 2000,4000,8000,20000] [--reps 3]
        [--dir /dev/shm] [--old-kstub OTHER --old-max 4000] [--out bench/results/cache_scale.md]

--dir puts the scratch caches on another file system: making 40,000 files
on this project's loaded disk takes minutes (13 s for 4,000), on tmpfs a
second, and the operations' scaling is the same.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def make_cache(path, n):
    os.makedirs(path, mode=0o700)
    now = time.time()
    pad = b"\0" * 64
    for i in range(n):
        key = "%064x" % (i * 2654435761 % (1 << 255) + 1)
        for name in (key + ".prelude", key + "." + "%016x" % i + ".pch"):
            p = os.path.join(path, name)
            with open(p, "wb") as f:
                f.write(pad)
            t = now - 10 * n + 10 * i
            os.utime(p, (t, t))


def timed(kstub, args, cache):
    t0 = time.perf_counter()
    r = subprocess.run([kstub, "cache"] + args + ["--cache-dir", cache],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("kstub cache %s failed:\n%s" % (" ".join(args), r.stdout))
    return dt, r.stdout.strip()


OPS = [("--stats", ["--stats"]), ("--prune --max-size 1K", ["--prune", "--max-size", "1K"]),
       ("--clear", ["--clear"])]


def measure(kstub, n, reps, tmp):
    row = {}
    for label, args in OPS:
        best = None
        for r in range(reps):
            cache = os.path.join(tmp, "c%d-%d" % (n, r))
            make_cache(cache, n)
            dt, out = timed(kstub, args, cache)
            shutil.rmtree(cache)
            best = dt if best is None else min(best, dt)
        row[label] = best
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kstub", required=True)
    ap.add_argument("--sizes", default="2000,4000,8000,20000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--old-kstub", help="another kstub to time beside it (the code before)")
    ap.add_argument("--old-max", type=int, default=4000, help="largest size to give --old-kstub")
    ap.add_argument("--out", help="also write the table (markdown) here")
    ap.add_argument("--dir", help="where to make the scratch caches (default: TMPDIR)")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    tmp = tempfile.mkdtemp(prefix="kstub-cache-scale-", dir=a.dir)
    lines = ["| entries | " + " | ".join(l for l, _ in OPS) + " | --clear / --stats |",
             "| ---: | " + " | ".join("---:" for _ in OPS) + " | ---: |"]
    try:
        for who, kstub, limit in (("kstub", a.kstub, None), ("before", a.old_kstub, a.old_max)):
            if not kstub:
                continue
            for n in sizes:
                if limit and n > limit:
                    continue
                row = measure(kstub, n, a.reps, tmp)
                cells = " | ".join("%.3f s" % row[l] for l, _ in OPS)
                ratio = row["--clear"] / row["--stats"]
                line = "| %s%d | %s | %.1f |" % ("" if who == "kstub" else "before: ", n, cells, ratio)
                lines.append(line)
                print(line, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("`python3 bench/cache_scale.py%s` (best of %d; %s; seconds of wall time, each "
                    "operation one kstub process on a fresh cache of N prelude entries, 2 files each)\n\n"
                    % (" --dir " + a.dir if a.dir else "", a.reps, time.strftime("%Y-%m-%d")))
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
