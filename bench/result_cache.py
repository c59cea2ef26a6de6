#!/usr/bin/env python3
"""result_cache.py — what the result cache (issue 38) saves on a second run
of an unchanged file, and what storing costs on a miss: CPU seconds (user +
system of the process) of kstub per file, three ways on one warm prelude
cache, interleaved round by round so that a shared machine's load falls on
all alike:

  off     KSTUB_RESULT_CACHE=0: the prelude hits, the file is parsed (what
          an edited file costs)
  miss    the file's result entry removed first: parsed, and stored
  hit     the entry there: nothing parsed, the outputs written from it

    result_cache.py [--reps 5] [--kstub build/bin/kstub] FILE.cu...

Each file with the flags of its "// abi-kstub:" lines (as check-abi runs
it). Prints a Markdown table: per file the median of each, and hit / off.
Reported, never asserted.
"""
import argparse
import glob
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile


def cpu_run(cmd, cwd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, cpu, p.stderr.decode(errors="replace")


def flags_of(path):
    out = []
    for line in open(path, errors="replace"):
        m = re.match(r"// abi-kstub:(.*)", line)
        if m:
            out += m.group(1).split()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kstub", default="build/bin/kstub")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    kstub = os.path.abspath(a.kstub)
    tmp = tempfile.mkdtemp(prefix="kstub-result-bench-")
    cache = os.path.join(tmp, "cache")
    os.mkdir(cache, 0o700)
    env = dict(os.environ, KSTUB_CACHE_DIR=cache)
    for k in ("KSTUB_RESULT_CACHE", "KSTUB_DEBUG_PCH", "KSTUB_LAYERS", "KSTUB_CACHE_SIZE", "KSTUB_CACHE"):
        env.pop(k, None)
    off_env = dict(env, KSTUB_RESULT_CACHE="0")
    rows = []
    try:
        for f in a.files:
            path = os.path.abspath(f)
            cmd = [kstub, path] + flags_of(path) + ["-o", "out", "--manifest", "out.json", "-MD"]
            rc, _, err = cpu_run(cmd, tmp, off_env)           # warms the prelude
            if rc:
                print("%s: kstub failed:\n%s" % (f, err[-800:]), file=sys.stderr)
                continue
            t = {"off": [], "miss": [], "hit": []}
            for _ in range(a.reps):
                t["off"].append(cpu_run(cmd, tmp, off_env)[1])
                for e in glob.glob(os.path.join(cache, "*.result")):
                    os.unlink(e)
                t["miss"].append(cpu_run(cmd, tmp, env)[1])
                t["hit"].append(cpu_run(cmd, tmp, env)[1])
            m = {k: statistics.median(v) for k, v in t.items()}
            rows.append((os.path.relpath(path), m["off"], m["miss"], m["hit"]))
            print("%s: off %.3f miss %.3f hit %.3f" % (f, m["off"], m["miss"], m["hit"]), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| file | edited (result off, prelude hit) s | miss (parse + store) s | hit s | hit / edited |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| %s | %.3f | %.3f | %.3f | %.3f |" % (r[0], r[1], r[2], r[3], r[3] / r[1] if r[1] else 0))
    if rows:
        print("| **median** | %.3f | %.3f | %.3f | %.3f |" % tuple(
            [statistics.median(r[i] for r in rows) for i in (1, 2, 3)] +
            [statistics.median(r[3] / r[1] for r in rows if r[1])]))


if __name__ == "__main__":
    main()
