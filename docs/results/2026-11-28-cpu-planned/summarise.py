#!/usr/bin/env python3
"""The tables of README.md from what run.sh wrote: per compare.py judgement its exit status,
mpi_host's family change with its 95% interval, the smallest slowdown it could have flagged,
and the load when it was judged; then the single runs' coverage and tightness.

    summarise.py RUNS_DIR [REPORT_SUFFIX]    (REPORT_SUFFIX: .compare.json, the reports by the
                                              committed compare.py; .compare-at-run.json, run.sh's)
"""

import json
import math
import os
import statistics
import sys

runs = sys.argv[1]
suffix = sys.argv[2] if len(sys.argv) > 2 else ".compare.json"
print("| pair | exit | rows flagged | family change | ±95% | detectable | load (1 min) |")
print("|---|---:|---:|---:|---:|---:|---:|")
flagged = {"same": 0, "slow": 0}
with open(os.path.join(runs, "counts.txt")) as stream:
    loads = {w[0]: w[-3] for w in (line.split() for line in stream) if w[0].count("-") == 1}
for kind in ("same", "slow"):
    for k in range(1, 11):
        name = f"{kind}-{k}"
        with open(os.path.join(runs, name + suffix)) as stream:
            report = json.load(stream)
        (family,) = report["families_judged"]
        slower = sum(row["status"] == "slower" for row in report["rows"])
        flagged[kind] += report["exit_status"] != 0
        print(
            f"| {name} | {report['exit_status']} | {slower} of {len(report['rows'])} "
            f"| {family['change_percent']:+.1f}% | {family['ci95_percent']:.1f}% "
            f"| {family['detectable_percent']:.1f}% | {loads.get(name, '-')} |"
        )
print(f"\nsame build flagged: {flagged['same']} of 10; planted 10% flagged: {flagged['slow']} of 10")

singles = []
for k in range(1, 5):
    with open(os.path.join(runs, f"single-{k}.json")) as stream:
        document = json.load(stream)
    singles.append({r["name"]: (math.log(r["real_time"]), r["ci95_pct"], r.get("floor_pct"))
                    for r in document["benchmarks"] if r.get("run_type") == "iteration"})
covered = compared = 0
ratios, stated, floors = [], [], []
for name in singles[0]:
    values = [s[name] for s in singles]
    for i in range(4):
        for j in range(i + 1, 4):
            compared += 1
            covered += abs(values[i][0] - values[j][0]) * 100 <= math.hypot(values[i][1], values[j][1])
    sd = statistics.stdev(v[0] for v in values) * 100
    ci = statistics.median(v[1] for v in values)
    stated.append(ci)
    floors.append(values[0][2])
    ratios.append(ci / (1.96 * sd))
shifts = [statistics.fmean(s[n][0] - statistics.fmean(t[n][0] for t in singles) for n in s)
          for s in singles]
print(f"single runs: {covered / compared:.1%} of (pair, row) covered; median stated ci95 "
      f"{statistics.median(stated):.1f}% (floors {min(floors):.1f}-{max(floors):.1f}%); tight "
      f"{statistics.median(ratios):.2f}; each run's shift "
      + " ".join(f"{math.expm1(x) * 100:+.1f}%" for x in shifts))
