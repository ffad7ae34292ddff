#!/usr/bin/env python3
"""The table of README.md from the compare reports run.sh wrote: per comparison its exit status,
mpi_host's family change with its 95% interval, the smallest slowdown it could have flagged, and
the load average when it was judged (counts.txt).

    summarise.py [RUNS_DIR]       (default: runs/ beside this file, unpacked from runs.tar.xz)
"""

import json
import os
import sys

runs = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "runs")
loads = {}
with open(os.path.join(runs, "counts.txt")) as stream:
    for line in stream:
        words = line.split()
        loads[words[0]] = words[4]
print("| pair | exit | rows flagged | family change | ±95% | detectable | load (1 min) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name in sorted(loads, key=lambda n: (n.split("-")[0], int(n.split("-")[1]))):
    with open(os.path.join(runs, f"{name}.compare.json")) as stream:
        report = json.load(stream)
    (family,) = report["families_judged"]
    slower = sum(row["status"] == "slower" for row in report["rows"])
    print(
        f"| {name} | {report['exit_status']} | {slower} of {len(report['rows'])} "
        f"| {family['change_percent']:+.1f}% | {family['ci95_percent']:.1f}% "
        f"| {family['detectable_percent']:.1f}% | {loads[name]} |"
    )
