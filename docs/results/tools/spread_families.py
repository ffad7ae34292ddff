#!/usr/bin/env python3
"""spread.py's table summed up per condition and family, with OSU's spread beside it.

    docs/results/tools/spread_families.py SPREAD.json

Reads what `spread.py SESSION --json SPREAD.json` wrote and prints:

  1. per condition, the median over all rows of each level (jobs, visits, reps, stated), the
     drift and the order effect (as spread.py prints them);
  2. per family (path and variant, bytes:N dropped), the median over its sizes of the spread
     between jobs, each condition a column;
  3. OSU's spread between its rounds beside xferbench's spread between jobs on the same rows
     (osu_latency H H: mpi_host mode:pingpong; osu_latency D D: mpi_cuda_aware mode:pingpong;
     osu_bw has no stream rows in the session, so its line shows the ping-pong rows of that size).

All figures are standard deviations of log time (log bandwidth for osu_bw) in percent.
"""

import argparse
import json
import re
import statistics
import sys

LEVELS = ("jobs", "visits", "reps", "stated")
PATH = {"H": "mpi_host", "D": "mpi_cuda_aware"}


def family(row):
    return re.sub(r"/bytes:\d+$", "", row)


def fmt(value, width=7):
    return f"{'-':>{width}}" if value is None else f"{value:{width}.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spread_json")
    args = parser.parse_args()
    with open(args.spread_json, encoding="utf-8") as f:
        report = json.load(f)
    osu = report.pop("osu", {})
    conditions = sorted(report)

    print("median over rows, % (drift: % per 10 s; order: after a row >= 16 MiB minus the rest, %)")
    print(f"{'condition':10s}" + "".join(f"{k:>8s}" for k in LEVELS) + "   drift   order")
    for cond in conditions:
        medians = report[cond]["medians"]
        print(
            f"{cond:10s}"
            + "".join(" " + fmt(medians.get(k)) for k in LEVELS)
            + " "
            + fmt(report[cond]["drift_pct_per_10s"])
            + " "
            + fmt(report[cond]["after_big_row_pct"])
        )

    families = sorted({family(r) for cond in conditions for r in report[cond]["rows"]})
    print("\nspread between jobs, median over the family's sizes, %")
    print(f"{'family':62s}" + "".join(f"{c:>8s}" for c in conditions))
    for fam in families:
        cells = []
        for cond in conditions:
            values = [
                v["jobs"]
                for r, v in report[cond]["rows"].items()
                if family(r) == fam and v["jobs"] is not None
            ]
            cells.append(statistics.median(values) if values else None)
        print(f"{fam[:62]:62s}" + "".join(" " + fmt(c) for c in cells))

    if osu:
        print("\nOSU between rounds beside xferbench between jobs (same size), %")
        print(f"{'OSU':28s}{'OSU':>7s}  xferbench row: " + " ".join(f"{c:>7s}" for c in conditions))
        for key in sorted(osu, key=lambda k: (k.split()[0], k.split()[1], int(k.split()[-1]))):
            tool, buffers, _, size = key.split()
            row = f"{PATH[buffers]}/mode:pingpong/bytes:{size}"
            cells = [report[c]["rows"].get(row, {}).get("jobs") for c in conditions]
            note = "" if tool == "osu_latency" else " (osu_bw: ping-pong row, another mode)"
            print(
                f"{key:28s}{fmt(osu[key]['sd_pct'])}  "
                + " ".join(fmt(c) for c in cells)
                + f"  {row}{note}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
