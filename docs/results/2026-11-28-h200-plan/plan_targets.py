#!/usr/bin/env python3
"""Issue 28's interval targets over sets of default runs, judged as 2026-11-26-pooled-intervals
judges them (its judge(): per path, the share of (pair of runs, row) whose |ln(a / b)| is within
the rows' ci95 combined in quadrature; the median and 90th percentile over rows of the row's
median stated ci95; "tight": the median over rows of that median / (1.96 x the row's sd of ln
time over the runs)), with the runs' wall times and plans.

    plan_targets.py NAME=RUN.json[,RUN.json...] [NAME=...] [--json OUT]
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "2026-11-26-pooled-intervals"))
from pooled_intervals import judge  # noqa: E402


def load(path):
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    rows = {}
    for r in document["benchmarks"]:
        if r.get("run_type", "iteration") != "iteration" or r.get("error_occurred"):
            continue
        rows[r["name"].replace("/manual_time", "")] = (
            math.log(r["real_time"]),
            r["ci95_pct"],
            r.get("ci95_rows"),
            r.get("ci95_df"),
        )
    xferbench = document["context"]["xferbench"]
    plan = xferbench.get("plan") or {}
    return rows, xferbench.get("jobs"), plan.get("source"), xferbench["summary"]["wall_time_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", metavar="NAME=RUN.json[,RUN.json...]")
    parser.add_argument("--json")
    args = parser.parse_args()
    out = {}
    for item in args.sets:
        name, paths = item.split("=", 1)
        loaded = [load(p) for p in paths.split(",")]
        runs = [rows for rows, *_ in loaded]
        figures = judge(runs)
        jobs = sorted({j for _, j, _, _ in loaded})
        walls = [w for *_, w in loaded]
        print(f"{name}: {len(runs)} runs, jobs {jobs}, plan {sorted({str(s) for _, _, s, _ in loaded})}, "
              f"xferbench wall {min(walls):.1f}-{max(walls):.1f} s")
        print(f"  {'path':16s} {'covered':>8s} {'median':>7s} {'p90':>7s} {'tight':>6s}")
        for path, f in sorted(figures.items(), key=lambda kv: (kv[0] == "(all)", kv[0])):
            print(f"  {path:16s} {f['covered_pct']:7.1f}% {f['stated_median_pct']:6.2f}% "
                  f"{f['stated_p90_pct']:6.2f}% {f['tight']:6.2f}")
        out[name] = {"runs": len(runs), "jobs": jobs, "walls_s": walls, "paths": figures}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
