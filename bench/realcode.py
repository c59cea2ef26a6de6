#!/usr/bin/env python3
"""realcode.py — kstub against nvcc -ptx on real, public CUDA code bases
(issue 38): each file with its package's flags, from an empty prelude cache
and warm, serially.

The code bases are fetched, not committed: the source distributions of
PACKAGES (default xformers and flash-attn) through the package index's JSON
API (the index pip uses: --index, else $PIP_INDEX_URL, else pip's default),
into bench/realcode-src/ (git-ignored), and unpacked there. The API names
each sdist by a URL that may be relative to the API's own address; it is
resolved with urljoin.

Files: every .cu of a package whose headers are all there (a preflight
`nvcc -M` with the package's flags; torch's headers are not fetched, so
files that include torch, ATen or pybind11, directly or not, drop out
here), in a fixed shuffled order, the first --files of each package that
nvcc -ptx compiles. Flags: the package's include folders (PKG_FLAGS below),
-std=c++17, and the -D/-U options its setup.py spells as string literals
(read statically, never run; ROCm-only ones and formatted values left out). nvcc gets -ptx -arch=sm_ARCH as well; kstub
--arch sm_ARCH.

Per file, serially, --reps rounds (median): nvcc -ptx; kstub with an empty
cache of its own (the file alone: a one-file project); kstub again on that
cache (warm). Then per package, the files in order on one empty cache (a
code base's first build, a CI job without a cached kstub directory) and
again (its second run: prelude misses counted from the cache's counters).
Times are CPU seconds (user + system of the process and its children),
which a loaded, shared machine stretches less than wall time.

    realcode.py [--packages xformers,flash-attn] [--files N] [--reps N]
                [--kstub PATH] [--index URL] [--out DIR] [--arch 90]

--builds (the code-base measurement, cheaper per file): each package a code
base on one empty cache, its files in order, each file nvcc -ptx and then
kstub (interleaved, so that a shared machine's load falls on both alike):
the first build, then the second (warm) run, a result cache hit for
every file it stored, then the same with the result cache off
(KSTUB_RESULT_CACHE=0: what a file whose own text was edited costs, its
prelude a hit), then --no-cache on every --nocache-every'th file, again
each beside its own nvcc. Writes
DIR/realcode_builds.md and DIR/realcode_builds_raw.csv (a line per file
and pass, flushed as it goes: a run cut short keeps what it measured).

Writes DIR/realcode.md, DIR/realcode_raw.csv and DIR/realcode.png (default
DIR: bench/results). Goals (issue 38): warm per file median <= 0.25x nvcc,
p90 <= 0.5x; first build from an empty cache <= 0.5x nvcc's total; 0
prelude misses on the second run. Reported, never asserted. A run on a
subset says so in its report: it is never the whole.
"""
import argparse
import csv
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from urllib.parse import urljoin

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(HERE, "realcode-src")
CUDA = os.environ.get("CUDA_PATH", "/usr/local/cuda")

# Each package's include folders, relative to its unpacked sdist, as its
# setup.py passes them (those that exist are used).
PKG_FLAGS = {
    "xformers": ["xformers/csrc", "xformers/csrc/attention", "third_party/cutlass/include",
                 "third_party/cutlass/tools/util/include", "third_party/cutlass/examples/common",
                 "third_party/flash-attention/csrc/flash_attn/src"],
    "flash-attn": ["csrc/flash_attn", "csrc/flash_attn/src", "csrc/cutlass/include",
                   "csrc/cutlass/tools/util/include", "csrc/cutlass/examples/common"],
}


def index_api(explicit):
    """The JSON API's base: .../pypi/ beside the simple index pip uses."""
    url = explicit or os.environ.get("PIP_INDEX_URL")
    if not url:
        try:
            from pip._internal.models.index import PyPI  # pip's own default index
            url = PyPI.url
        except Exception:
            sys.exit("no package index: pass --index URL")
    url = re.sub(r"simple/?$", "", url.rstrip("/") + "/")
    return urljoin(url, "pypi/")


def fetch(name, api):
    """The unpacked sdist's folder for package name (fetched once)."""
    os.makedirs(SRC, exist_ok=True)
    meta_url = urljoin(api, "%s/json" % name)
    with urllib.request.urlopen(meta_url, timeout=60) as r:
        meta = json.load(r)
    sdists = [u for u in meta["urls"] if u["packagetype"] == "sdist"]
    if not sdists:
        sys.exit("%s %s has no sdist" % (name, meta["info"]["version"]))
    url = urljoin(meta_url, sdists[0]["url"])
    tgz = os.path.join(SRC, os.path.basename(url))
    if not os.path.exists(tgz):
        print("fetching %s" % url, file=sys.stderr)
        with urllib.request.urlopen(url, timeout=600) as r, open(tgz + ".part", "wb") as f:
            shutil.copyfileobj(r, f)
        os.rename(tgz + ".part", tgz)
    with tarfile.open(tgz) as t:
        top = t.getnames()[0].split("/")[0]
        dest = os.path.join(SRC, top)
        if not os.path.isdir(dest):
            t.extractall(SRC, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(SRC)
    return dest, meta["info"]["version"]


def setup_defines(root):
    """-D/-U options setup.py spells as string literals (read, never run)."""
    path = os.path.join(root, "setup.py")
    if not os.path.exists(path):
        return []
    text = open(path, errors="replace").read()
    out = []
    for m in re.finditer(r"""["'](-[DU][A-Za-z_][A-Za-z0-9_]*(?:=[^"'\s]*)?)["']""", text):
        d = m.group(1)
        # ROCm's (HIP, composable_kernel) and Python-formatted values are not the CUDA build's.
        if "{" in d or re.match(r"-[DU](__HIP|CK_|USE_PROF|HIP)", d) or d in out:
            continue
        out.append(d)
    return out


def cpu_run(cmd, cwd, env=None):
    """(returncode, CPU seconds of the child, stderr)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.returncode, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), r.stderr.decode(errors="replace")


def counts(kstub, cache):
    """(misses, bytes) of the cache, from kstub cache --stats."""
    r = subprocess.run([kstub, "cache", "--stats", "--cache-dir", cache], stdout=subprocess.PIPE, text=True)
    m = re.search(r"prelude hits\s+\d+, misses (\d+)", r.stdout)
    b = re.search(r"total\s+(\d+) bytes", r.stdout)
    return (int(m.group(1)) if m else -1), (int(b.group(1)) if b else 0)


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", default="xformers,flash-attn")
    ap.add_argument("--files", type=int, default=75, help="files per package (the subset's size)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--arch", default="90")
    ap.add_argument("--kstub", default=os.path.join(ROOT, "build", "bin", "kstub"))
    ap.add_argument("--index")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--builds", action="store_true", help="the interleaved code-base passes (above)")
    ap.add_argument("--nocache-every", type=int, default=1)
    ap.add_argument("--note", help="--builds: a paragraph for the report (how the run was made)")
    ap.add_argument("--files-from", help="--builds: the chosen files of an earlier run's meta file")
    ap.add_argument("--nvcc-once", action="store_true",
                    help="--builds: nvcc runs in the first pass only; the others compare with that time "
                         "(a subset of 150 files then takes about 40 minutes less here)")
    ap.add_argument("--report-from", help="--builds' report again from its raw CSV (beside its meta file)")
    a = ap.parse_args()
    if a.report_from:       # the report again from a run's CSV and its meta file (a run cut short)
        meta = json.load(open(os.path.join(os.path.dirname(a.report_from), "realcode_builds_meta.json")))
        pk = {n: tuple(v[:4]) + ([],) for n, v in meta["packages"].items()}
        rows = []
        for r in csv.reader(open(a.report_from)):
            if r[0] == "package":
                continue
            if r[2].startswith("misses-"):
                pk[r[0]][4].append((int(r[3]), int(r[4])))
            else:
                rows.append((r[0], r[1], r[2], float(r[3]), int(r[4]), float(r[5]), int(r[6])))
        return builds_report(a, rows, pk)
    if a.builds:
        return builds_main(a)
    kstub = os.path.abspath(a.kstub)
    nvcc = os.path.join(CUDA, "bin", "nvcc")
    api = index_api(a.index)
    tmp = tempfile.mkdtemp(prefix="kstub-realcode-")
    rows, builds, chosen_all, seen = [], [], {}, {}
    env = dict(os.environ)
    env.pop("KSTUB_CACHE_DIR", None)
    try:
        for name in a.packages.split(","):
            root, version = fetch(name, api)
            incs = [d for d in PKG_FLAGS.get(name, []) if os.path.isdir(os.path.join(root, d))]
            flags = ["-std=c++17"] + ["-I" + os.path.join(root, d) for d in incs] + setup_defines(root)
            cus = sorted(os.path.relpath(os.path.join(dp, f), root) for dp, _, fs in os.walk(root)
                         for f in fs if f.endswith(".cu"))
            cus.sort(key=lambda p: hashlib.sha256(p.encode()).hexdigest())
            chosen, tried = [], 0
            kflags = flags + ["--arch", "sm_" + a.arch]
            for rel in cus:
                if len(chosen) >= a.files:
                    break
                path = os.path.join(root, rel)
                tried += 1
                rc, _, _ = cpu_run([nvcc, "-M", "-arch=sm_" + a.arch, path] + flags, tmp)
                if rc != 0:
                    continue
                ok = True
                for rep in range(a.reps):
                    rc, nv, _ = cpu_run([nvcc, "-ptx", "-arch=sm_" + a.arch, path, "-o",
                                         os.path.join(tmp, "p.ptx")] + flags, tmp)
                    if rc != 0:            # nvcc does not compile it: not in the set
                        ok = False
                        break
                    cache = os.path.join(tmp, "cache-one")
                    shutil.rmtree(cache, ignore_errors=True)
                    os.mkdir(cache, 0o700)
                    rc1, cold, err = cpu_run([kstub, path] + kflags + ["--cache-dir", cache, "-o",
                                                                       os.path.join(tmp, "k")], tmp, env)
                    rc2, warm, _ = cpu_run([kstub, path] + kflags + ["--cache-dir", cache, "-o",
                                                                     os.path.join(tmp, "k")], tmp, env)
                    misses, nbytes = counts(kstub, cache)
                    rows.append((name, rel, rep, nv, cold, warm, rc1 or rc2, misses, nbytes))
                    if rc1:
                        print("kstub failed on %s:\n%s" % (rel, err[-2000:]), file=sys.stderr)
                if ok:
                    chosen.append(rel)
                    print("  %s" % rel, file=sys.stderr)
                else:
                    rows = [r for r in rows if not (r[0] == name and r[1] == rel)]
            seen[name] = (version, len(cus), tried, flags)
            chosen_all[name] = chosen
            print("%s %s: %d of %d .cu files (%d tried)" % (name, version, len(chosen), len(cus), tried),
                  file=sys.stderr)
            # The package as a code base: every chosen file kstub accepts, in order on one empty
            # cache, then again (a refusal stops early: its time is no stub's).
            chosen = [rel for rel in chosen
                      if not any(r[6] for r in rows if r[0] == name and r[1] == rel)]
            cache = os.path.join(tmp, "cache-" + name)
            os.mkdir(cache, 0o700)
            first = second = nvtotal = 0.0
            for rel in chosen:
                first += cpu_run([kstub, os.path.join(root, rel)] + kflags + ["--cache-dir", cache, "-o",
                                                                              os.path.join(tmp, "k")], tmp, env)[1]
            m1, b1 = counts(kstub, cache)
            for rel in chosen:
                second += cpu_run([kstub, os.path.join(root, rel)] + kflags + ["--cache-dir", cache, "-o",
                                                                               os.path.join(tmp, "k")], tmp, env)[1]
            m2, _ = counts(kstub, cache)
            nvtotal = sum(statistics.median(r[3] for r in rows if r[0] == name and r[1] == rel) for rel in chosen)
            if chosen:
                builds.append((name, len(chosen), nvtotal, first, second, m1, m2 - m1, b1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "realcode_raw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["package", "file", "rep", "nvcc_cpu_s", "kstub_cold_cpu_s", "kstub_warm_cpu_s", "kstub_failed",
                    "misses", "cache_bytes"])
        w.writerows(rows)

    per = {}
    for r in rows:
        per.setdefault((r[0], r[1]), []).append(r)
    ratios_warm, ratios_cold = [], []
    refused = sorted(k for k, rs in per.items() if any(r[6] for r in rs))
    for k, rs in per.items():
        if k in refused:           # a refusal's time is no stub's
            continue
        nv = statistics.median(r[3] for r in rs)
        ratios_warm.append(statistics.median(r[5] for r in rs) / nv)
        ratios_cold.append(statistics.median(r[4] for r in rs) / nv)
    nfiles = len(per)
    total = sum(seen[n][1] for n in seen)
    lines = ["# kstub on real code (bench/realcode.py)", "",
             "**A subset**: %d of the %d .cu files of %s (the first --files %d of each package, in a fixed "
             "shuffled order, whose headers are all there and which nvcc -ptx compiles; torch's headers are "
             "not fetched), %d round%s per file, sm_%s, serially on a shared 2-core machine (load average "
             "%.2f at the end). CPU seconds. Not the whole code bases." %
             (nfiles, total, " and ".join("%s %s" % (n, seen[n][0]) for n in seen), a.files, a.reps,
              "" if a.reps == 1 else "s", a.arch, os.getloadavg()[0]), ""]
    if refused:
        lines += ["kstub refused %d of these files, which nvcc compiles (left out of the ratios): %s." %
                  (len(refused), ", ".join("%s %s" % k for k in refused)), ""]
    if ratios_warm:
        lines += ["| per file, x nvcc -ptx (CPU) | median | p90 | goal |", "| --- | ---: | ---: | --- |",
                  "| kstub warm | %.2f | %.2f | <= 0.25x / 0.5x: %s |" %
                  (statistics.median(ratios_warm), pct(ratios_warm, 0.9),
                   "met" if statistics.median(ratios_warm) <= 0.25 and pct(ratios_warm, 0.9) <= 0.5 else "missed"),
                  "| kstub alone, empty cache | %.2f | %.2f | |" %
                  (statistics.median(ratios_cold), pct(ratios_cold, 0.9)), ""]
    lines += ["The files of each package that kstub accepts, as a code base:", "",
              "| package as a code base | files | nvcc s | first build s (x nvcc) | second run s (x nvcc) | "
              "misses first / second | cache bytes | goal |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for n, k, nv, first, second, m1, m2, b1 in builds:
        lines.append("| %s | %d | %.1f | %.1f (%.2fx) | %.1f (%.2fx) | %d / %d | %d | first <= 0.5x: %s; 0 misses: %s |" %
                     (n, k, nv, first, first / nv if nv else 0, second, second / nv if nv else 0, m1, m2, b1,
                      "met" if nv and first / nv <= 0.5 else "missed", "met" if m2 == 0 else "missed"))
    lines += ["", "Files (package: path):", ""]
    for n, ch in chosen_all.items():
        lines += ["- %s: %s" % (n, rel) for rel in ch]
    lines += ["", "Flags per package: " + "; ".join("%s: %s" % (n, " ".join(
        f.replace(SRC + "/", "") for f in seen[n][3])) for n in seen), ""]
    text = "\n".join(lines)
    with open(os.path.join(a.out, "realcode.md"), "w") as f:
        f.write(text)
    print(text)
    if ratios_warm:
        sys.path.insert(0, HERE)
        import plot
        rows_p = []
        for (n, rel), rs in sorted(per.items()):
            if (n, rel) in refused:
                continue
            nv = statistics.median(r[3] for r in rs)
            rows_p.append(("%s %s" % (n, os.path.basename(rel)), statistics.median(r[5] for r in rs) / nv,
                           None, None, "kstub"))
        plot.hbar_panels(os.path.join(a.out, "realcode.png"), "kstub warm / nvcc -ptx per file (CPU), subset",
                         [("x nvcc", "x", rows_p)], note="%d files; goal median <= 0.25x" % nfiles)


def package_files(name, api, a, tmp):
    """(root, version, flags, every .cu, chosen): the first --files of the
    package, in the fixed shuffled order, whose headers are all there."""
    root, version = fetch(name, api)
    incs = [d for d in PKG_FLAGS.get(name, []) if os.path.isdir(os.path.join(root, d))]
    flags = ["-std=c++17"] + ["-I" + os.path.join(root, d) for d in incs] + setup_defines(root)
    cus = sorted(os.path.relpath(os.path.join(dp, f), root) for dp, _, fs in os.walk(root)
                 for f in fs if f.endswith(".cu"))
    cus.sort(key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    nvcc = os.path.join(CUDA, "bin", "nvcc")
    chosen = []
    for rel in cus:
        if len(chosen) >= a.files:
            break
        if cpu_run([nvcc, "-M", "-arch=sm_" + a.arch, os.path.join(root, rel)] + flags, tmp)[0] == 0:
            chosen.append(rel)
    return root, version, flags, cus, chosen


def builds_main(a):
    """--builds: the interleaved first build, second run and --no-cache passes."""
    kstub = os.path.abspath(a.kstub)
    nvcc = os.path.join(CUDA, "bin", "nvcc")
    api = index_api(a.index)
    tmp = tempfile.mkdtemp(prefix="kstub-realcode-")
    env = dict(os.environ)
    env.pop("KSTUB_CACHE_DIR", None)
    env.pop("KSTUB_CACHE_SIZE", None)
    env.pop("KSTUB_LAYERS", None)
    env.pop("KSTUB_RESULT_CACHE", None)
    # "edited": the warm prelude with the result cache off, which is what a
    # file whose own text changed costs (its result misses; its prelude hits)
    edited_env = dict(env, KSTUB_RESULT_CACHE="0")
    os.makedirs(a.out, exist_ok=True)
    raw = open(os.path.join(a.out, "realcode_builds_raw.csv"), "w", newline="")
    w = csv.writer(raw)
    w.writerow(["package", "file", "pass", "nvcc_cpu_s", "nvcc_rc", "kstub_cpu_s", "kstub_rc"])
    rows, pk, ctx = [], {}, {}
    try:
        given = json.load(open(a.files_from))["packages"] if a.files_from else {}
        for name in a.packages.split(","):
            if name in given:           # the files a run chose before (its meta file): no preflight again
                root = fetch(name, api)[0]
                version, ncu, flags, chosen = given[name][:4]
                # the meta file names include folders from the repository's root; the runs' cwd is elsewhere
                flags = ["-I" + os.path.join(ROOT, f[2:]) if f.startswith("-I") and not os.path.isabs(f[2:]) else f
                         for f in flags]
                cus, chosen = range(ncu), chosen[:a.files]
            else:
                root, version, flags, cus, chosen = package_files(name, api, a, tmp)
            print("%s %s: %d of %d .cu files" % (name, version, len(chosen), len(cus)), file=sys.stderr)
            cache = os.path.join(tmp, "cache-" + name)
            os.mkdir(cache, 0o700)
            ctx[name] = (root, flags, chosen, cache)
            pk[name] = (version, len(cus), flags, chosen, [])
        with open(os.path.join(a.out, "realcode_builds_meta.json"), "w") as f:
            json.dump({"packages": pk, "load": None}, f)
        # pass by pass over every package, so that a run cut short has each package's first build
        for pname in ("first", "second", "edited", "nocache"):
            for name, (root, flags, chosen, cache) in ctx.items():
                kflags = flags + ["--arch", "sm_" + a.arch]
                extra = ["--no-cache"] if pname == "nocache" else ["--cache-dir", cache]
                m0 = counts(kstub, cache)[0]
                for i, rel in enumerate(chosen):
                    if pname == "nocache" and i % a.nocache_every:
                        continue
                    path = os.path.join(root, rel)
                    if pname in ("edited", "nocache") or (pname == "second" and a.nvcc_once):
                        # nvcc's time: the median of its interleaved runs (one with --nvcc-once)
                        nvs = [r for r in rows if r[0] == name and r[1] == rel]
                        nv, nrc = statistics.median(r[3] for r in nvs), max(r[4] for r in nvs)
                    else:
                        nrc, nv, _ = cpu_run([nvcc, "-ptx", "-arch=sm_" + a.arch, path, "-o",
                                              os.path.join(tmp, "p.ptx")] + flags, tmp)
                    krc, ks, err = cpu_run([kstub, path] + kflags + extra + ["-o", os.path.join(tmp, "k")], tmp,
                                           edited_env if pname == "edited" else env)
                    if krc and not nrc and pname == "first":
                        print("kstub refused %s:\n%s" % (rel, err[-1500:]), file=sys.stderr)
                    row = (name, rel, pname, round(nv, 3), nrc, round(ks, 3), krc)
                    w.writerow(row)
                    raw.flush()
                    rows.append(row)
                m1, nbytes = counts(kstub, cache)
                pk[name][4].append((m1 - m0, nbytes))
                w.writerow([name, "", "misses-" + pname, m1 - m0, nbytes, "", ""])
                raw.flush()
                print("%s %s pass done: %d misses" % (name, pname, m1 - m0), file=sys.stderr)
    finally:
        raw.close()
        shutil.rmtree(tmp, ignore_errors=True)
    builds_report(a, rows, pk)


def builds_report(a, rows, pk):
    """realcode_builds.md from the rows of builds_main."""
    nv_fail = {(r[0], r[1]) for r in rows if r[4]}
    refused = sorted({(r[0], r[1]) for r in rows if r[6] and (r[0], r[1]) not in nv_fail})
    bad = nv_fail | set(refused)
    ok = lambda p: [r for r in rows if r[2] == p and (r[0], r[1]) not in bad]
    lines = ["# kstub on real code: code bases built in order (bench/realcode.py --builds)", "",
             "%s; %d .cu files per package at most (the first --files %d of each, in a fixed shuffled order, "
             "whose headers are all there: torch's headers are not fetched), sm_%s, serially. Each file "
             "nvcc -ptx and then kstub, interleaved, on a shared 2-core machine (other jobs ran beside it: "
             "load average %.2f at the end), so that the load falls on both alike. CPU seconds (user + system "
             "of the process and its children). Default cache cap (2 GiB), KSTUB_LAYERS unset (layers where "
             "seen)." % (" and ".join("%s %s (%d .cu)" % (n, pk[n][0], pk[n][1]) for n in pk), a.files, a.files,
                         a.arch, os.getloadavg()[0]), ""]
    if nv_fail:
        lines += ["nvcc -ptx failed on %d of the chosen files (left out): %s." %
                  (len(nv_fail), ", ".join("%s %s" % k for k in sorted(nv_fail))), ""]
    if refused:
        lines += ["**kstub refused %d files that nvcc compiles** (left out of the ratios): %s." %
                  (len(refused), ", ".join("%s %s" % k for k in refused)), ""]
    lines += ["| package as a code base | files | nvcc s | first build s (x nvcc) | second run s (x nvcc) | "
              "second run per file median / p90 | prelude misses first / second | cache bytes |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    allw, alln, tot = [], [], [0.0, 0.0, 0.0, 0.0]
    for n, (version, ncu, flags, chosen, misses) in pk.items():
        f = [r for r in ok("first") if r[0] == n]
        sec = [r for r in ok("second") if r[0] == n]
        if not f:
            continue
        nv1, k1 = sum(r[3] for r in f), sum(r[5] for r in f)
        nv2, k2 = sum(r[3] for r in sec), sum(r[5] for r in sec)
        ratios = [r[5] / r[3] for r in sec if r[3] > 0]
        allw += ratios
        tot = [tot[0] + nv1, tot[1] + k1, tot[2] + nv2, tot[3] + k2]
        lines.append("| %s | %d | %.0f | %.0f (%.2fx) | %.0f (%.2fx) | %.2fx / %.2fx | %d / %d | %d |" %
                     (n, len(f), nv1, k1, k1 / nv1, k2, k2 / nv2 if nv2 else 0,
                      statistics.median(ratios) if ratios else 0, pct(ratios, 0.9) if ratios else 0,
                      misses[0][0] if misses else -1, misses[1][0] if len(misses) > 1 else -1,
                      misses[-1][1] if misses else 0))
    nf = len(ok("first"))
    if nf and allw:
        lines.append("| **all** | %d | %.0f | %.0f (**%.2fx**) | %.0f (%.2fx) | **%.2fx / %.2fx** | | |" %
                     (nf, tot[0], tot[1], tot[1] / tot[0], tot[3], tot[3] / tot[2] if tot[2] else 0,
                      statistics.median(allw), pct(allw, 0.9)))
    ed = ok("edited")
    if ed:
        alle = [r[5] / r[3] for r in ed if r[3] > 0]
        lines += ["", "File edited (result miss, prelude hit: the second run's cache with KSTUB_RESULT_CACHE=0, "
                  "the parse an edited file costs; nvcc's time is the median of its two interleaved runs): %d files, "
                  "per file median %.2fx, p90 %.2fx. The second run above is the result cache's hit: it helps "
                  "unchanged files only." % (len(ed), statistics.median(alle), pct(alle, 0.9))]
    nc = ok("nocache")
    if nc:
        alln = [r[5] / r[3] for r in nc if r[3] > 0]
        lines += ["", "--no-cache (%s; nvcc's time is the median of its two interleaved runs): %d files, per file median %.2fx, p90 "
                  "%.2fx; sum %.0f s against nvcc's %.0f s (%.2fx)." %
                  ("every file" if a.nocache_every == 1 else "one file in %d" % a.nocache_every, len(nc),
                   statistics.median(alln), pct(alln, 0.9), sum(r[5] for r in nc), sum(r[3] for r in nc),
                   sum(r[5] for r in nc) / sum(r[3] for r in nc))]
    if nf and allw:
        med, p90 = statistics.median(allw), pct(allw, 0.9)
        first = tot[1] / tot[0]
        second_misses = sum(pk[n][4][1][0] if len(pk[n][4]) > 1 else 10 ** 6 for n in pk)
        lines += ["", "| goal (issue 38) | measured | |", "| --- | --- | --- |",
                  "| warm per file: median <= 0.25x, p90 <= 0.5x | %.2fx / %.2fx | %s |" %
                  (med, p90, "met" if med <= 0.25 and p90 <= 0.5 else "missed"),
                  "| first build from an empty cache <= 0.5x nvcc's total | %.2fx | %s |" %
                  (first, "met" if first <= 0.5 else "missed"),
                  "| second run: 0 prelude misses under the default cap | %d | %s |" %
                  (second_misses, "met" if second_misses == 0 else "missed")]
    if a.note:
        lines += ["", a.note]
    lines += ["", "Files (package: path), in build order:", ""]
    for n in pk:
        lines += ["- %s: %s" % (n, rel) for rel in pk[n][3]]
    lines += ["", "Flags per package: " + "; ".join("%s: %s" % (n, " ".join(
        f.replace(SRC + "/", "") for f in pk[n][2])) for n in pk), ""]
    text = "\n".join(lines)
    with open(os.path.join(a.out, "realcode_builds.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
