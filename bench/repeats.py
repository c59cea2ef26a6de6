#!/usr/bin/env python3
"""repeats.py — the stub paths' paired ratios over several launch_bench
processes (issue 45): one run's paired ratio moves by more than the
≤ 1.005 goals' margin from one process to the next, so a claim needs the
spread of several.

    repeats.py DIR [DIR ...]  >  repeats.md

Each DIR holds one launch_bench run's launch_summary.csv (and, where it
ran, global_summary.csv from global_bench, or launch_watch_summary.csv
from launch_bench -W). Prints, per kernel and stub variant, each run's
paired ratio (against its like-for-like raw call, as the run's summary
says), their median, minimum and maximum. Reported, never asserted.
"""
import csv
import os
import statistics
import sys

ROWS = ["kstub_user_stream", "kstub_default_stream", "kstub_attrs", "kstub_check_nvtx",
        "kstub_check_pointers", "kstub_check_extents", "kstub_check_pointers_watch",
        "kstub_check_extents_watch"]


def paired(path):
    """{(kernel, variant): (label, pair_ratio)} of one summary file."""
    out = {}
    if not os.path.exists(path):
        return out
    for r in csv.DictReader(open(path)):
        if r["variant"] in ROWS and r["pair_variant"]:
            out[(r["kernel"], r["variant"])] = (r["label"], float(r["pair_ratio"]))
    return out


def main(dirs):
    runs = []
    for d in dirs:
        got = paired(os.path.join(d, "launch_summary.csv"))
        got.update(paired(os.path.join(d, "launch_watch_summary.csv")))
        g = os.path.join(d, "global_summary.csv")
        if os.path.exists(g):
            for r in csv.DictReader(open(g)):
                if r["variant"] == "ratio":
                    got[("global", "accessor_set")] = ("typed global _set / raw cuMemcpyHtoDAsync",
                                                       float(r["ns_per_call_median"]))
        runs.append(got)
    keys = []
    for got in runs:
        keys += [k for k in got if k not in keys]
    print("| kernel | variant | runs | median | min – max | each run |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for k in keys:
        vals = [got[k][1] for got in runs if k in got]
        label = next(got[k][0] for got in runs if k in got)
        print("| %s | %s | %d | %.4f | %.4f – %.4f | %s |" %
              (k[0], label, len(vals), statistics.median(vals), min(vals), max(vals),
               " ".join("%.4f" % v for v in vals)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
