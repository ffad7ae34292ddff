#!/usr/bin/env python3
"""How well runs of one build agree, and how often each row's stated uncertainty said so.

    docs/results/tools/coverage.py RUN.json RUN.json [RUN.json ...] [--rows REGEX] [--json OUT]

For every pair of runs and every row both measured: the rerun difference |ln(a / b)| in percent,
against the rows' combined stated uncertainty sqrt(ci95_a^2 + ci95_b^2). Prints, per path and
variant and in all: the share of (pair, row) comparisons the stated uncertainty covered; the
per-row spread over the runs (standard deviation of log time, in percent: median, 90th
percentile, worst); the median stated ci95; and the family shifts (geomean of the rows' change
from the median run). A stated interval is honest when it covers >= 90% of comparisons.
"""

import argparse
import itertools
import json
import math
import re
import statistics
import sys
from collections import defaultdict

import repo_tools  # noqa: F401 (this folder's: puts the repository's tools/ on sys.path)

from xfertools.core.files import InputError, load_result
from xfertools.core.names import family_of


def measured_rows(path, pattern):
    out = {}
    for r in load_result(path).get("benchmarks", []):
        if r.get("run_type", "iteration") != "iteration" or r.get("error_occurred"):
            continue
        if r.get("skipped") or not r.get("real_time", 0) > 0 or "ci95_pct" not in r:
            continue
        name = r["name"].replace("/manual_time", "")
        if pattern.search(name):
            out[name] = (math.log(r["real_time"]), r["ci95_pct"])
    return out


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def summarise(runs):
    """{family: {...}} and the same for all rows together under '(all)'."""
    names = sorted(set.intersection(*(set(r) for r in runs)))
    by_family = defaultdict(lambda: {"covered": 0, "compared": 0, "spread": [], "stated": []})
    for name in names:
        fam = by_family[family_of(name)]
        logs = [r[name][0] for r in runs]
        fam["spread"].append(statistics.stdev(logs) * 100)
        fam["stated"].append(statistics.median(r[name][1] for r in runs))
        for a, b in itertools.combinations(runs, 2):
            fam["compared"] += 1
            allowed = math.hypot(a[name][1], b[name][1])
            fam["covered"] += abs(a[name][0] - b[name][0]) * 100 <= allowed
    total = {"covered": 0, "compared": 0, "spread": [], "stated": []}
    for fam in by_family.values():
        for key in total:
            total[key] += fam[key]
    by_family["(all)"] = total
    return by_family


def family_shifts(runs):
    """Per family, each run's geomean change from the per-row median over runs, in percent."""
    names = sorted(set.intersection(*(set(r) for r in runs)))
    medians = {n: statistics.median(r[n][0] for r in runs) for n in names}
    shifts = defaultdict(list)
    for run in runs:
        per_family = defaultdict(list)
        for n in names:
            per_family[family_of(n)].append(run[n][0] - medians[n])
        for fam, deltas in per_family.items():
            shifts[fam].append(statistics.fmean(deltas) * 100)
    return shifts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--rows", default=".", help="only rows whose name matches (re.search)")
    parser.add_argument("--json", help="also write the tables here")
    args = parser.parse_args()
    try:
        pattern = re.compile(args.rows)
    except re.error as e:
        parser.error(f"--rows: not a regular expression: {e}")
    if len(args.runs) < 2:
        parser.error("expected 2 or more result files")
    try:
        runs = [measured_rows(p, pattern) for p in args.runs]
    except InputError as e:
        print(f"coverage.py: {e}", file=sys.stderr)
        return 2
    table = summarise(runs)
    shifts = family_shifts(runs)
    print(f"{len(runs)} runs, {len(runs) * (len(runs) - 1) // 2} pairs")
    print(f"{'family':66s} covered  spread med/p90/max  stated  shifts (%)")
    report = {}
    for fam in sorted(table, key=lambda f: (f == "(all)", f)):
        t = table[fam]
        share = t["covered"] / t["compared"] * 100 if t["compared"] else float("nan")
        spread = t["spread"]
        row = {
            "covered_pct": share,
            "compared": t["compared"],
            "spread_median_pct": statistics.median(spread),
            "spread_p90_pct": percentile(spread, 0.9),
            "spread_max_pct": max(spread),
            "stated_median_pct": statistics.median(t["stated"]),
            "family_shifts_pct": shifts.get(fam, []),
        }
        report[fam] = row
        shift_text = " ".join(f"{s:+.1f}" for s in row["family_shifts_pct"])
        print(
            f"{fam[:66]:66s} {share:6.1f}%  {row['spread_median_pct']:5.2f} "
            f"{row['spread_p90_pct']:5.2f} {row['spread_max_pct']:6.2f}  "
            f"{row['stated_median_pct']:6.2f}  {shift_text}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
