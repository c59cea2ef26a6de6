#!/usr/bin/env python3
"""prelude_misses.py -- prelude misses of a code base's second run, kstub alone (issue 38).

Issue 38's goal: a second run over a 200-file code base misses the prelude
cache 0 times under the default cap. bench/realcode.py measures it beside
nvcc on 75 files a package; nvcc -ptx costs about 10 s a file there, so a
200-file run with it takes over an hour. This runs kstub only, on the first
--files .cu files of one unpacked package whose headers are all there
(`nvcc -M` succeeds), in realcode.py's fixed order (by the SHA-256 of the
path), with the flags an earlier realcode.py run recorded in its meta
file, each file one kstub process, serially, from an empty cache directory
under the default cap:

    first    the cache empty at the start (a CI job without a cached kstub
             cache directory)
    second   the same files again (result cache on)
    edited   again with KSTUB_RESULT_CACHE=0 (each file parsed, as if its
             own text had changed): every parse opens its prelude

Misses per pass come from `kstub cache --stats`'s counters (before and
after). Reported, never asserted.

    python3 bench/prelude_misses.py --kstub build/bin/kstub --root bench/realcode-src/flash_attn-2.8.3.post2 \
        --meta bench/results/realcode_150b/flash-attn_realcode_builds_meta.json --package flash-attn \
        --files 220 --out bench/results/prelude_misses.md
"""
import argparse
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile


def stats(kstub, cache):
    r = subprocess.run([kstub, "cache", "--stats", "--cache-dir", cache], stdout=subprocess.PIPE, text=True)
    hm = re.search(r"prelude hits\s+(\d+), misses (\d+)", r.stdout)
    b = re.search(r"total\s+(\d+) bytes", r.stdout)
    return (int(hm.group(1)) if hm else -1, int(hm.group(2)) if hm else -1, int(b.group(1)) if b else 0,
            r.stdout)


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kstub", required=True)
    ap.add_argument("--root", required=True, help="the unpacked package")
    ap.add_argument("--meta", required=True, help="a realcode.py --builds meta file: the package's flags")
    ap.add_argument("--package", required=True)
    ap.add_argument("--files", type=int, default=220)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    kstub = os.path.abspath(a.kstub)
    flags = json.load(open(a.meta))["packages"][a.package][2]
    cus = sorted(os.path.relpath(os.path.join(d, f), a.root) for d, _, fs in os.walk(a.root) for f in fs
                 if f.endswith(".cu"))
    cus.sort(key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    nvcc = os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "nvcc")
    chosen = []
    for rel in cus:
        if len(chosen) >= a.files:
            break
        if subprocess.run([nvcc, "-M", "-arch=sm_90", rel] + flags, cwd=a.root, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            chosen.append(rel)
    tmp = tempfile.mkdtemp(prefix="kstub-misses-")
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, KSTUB_CACHE_DIR=cache)
    env.pop("KSTUB_CACHE_SIZE", None)           # the default cap
    rows = []
    accepted = None
    for pname in ("first", "second", "edited"):
        penv = dict(env, KSTUB_RESULT_CACHE="0") if pname == "edited" else env
        h0, m0, _, _ = stats(kstub, cache)
        c0 = cpu()
        ok = set()
        for i, rel in enumerate(chosen):
            out = os.path.join(tmp, "out", "%d" % i)
            r = subprocess.run([kstub] + flags + [rel, "-o", out], cwd=a.root, env=penv,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if r.returncode == 0:
                ok.add(rel)
        h1, m1, nbytes, text = stats(kstub, cache)
        accepted = ok if accepted is None else accepted & ok
        rows.append((pname, len(ok), h1 - max(h0, 0), m1 - max(m0, 0), nbytes, cpu() - c0))
        print("%s: %d files accepted, prelude hits %d, misses %d" % rows[-1][:4], file=sys.stderr)
    lines = ["# Prelude misses over %d files of %s, kstub alone (issue 38)" % (len(chosen), a.package), "",
             "`python3 bench/prelude_misses.py --files %d --package %s` (the first %d of its %d .cu files whose "
             "headers are all there, in realcode.py's order; the package's flags from %s; serial, one kstub "
             "process a file, an empty cache directory under the default cap at the start)."
             % (a.files, a.package, len(chosen), len(cus), os.path.basename(a.meta)), "",
             "| pass | files kstub accepts | prelude hits | prelude misses | cache bytes after | kstub CPU s |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append("| %s | %d of %d | %d | %d | %d | %.0f |" % (r[0], r[1], len(chosen), r[2], r[3], r[4], r[5]))
    lines += ["", "A result hit (second pass) opens no prelude; the edited pass parses every file, so each of "
              "its files asks the prelude cache: its misses are the goal's (0).", "", "`kstub cache --stats` "
              "after the last pass:", "", "```", text.rstrip(), "```", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
