#!/usr/bin/env python3
"""How well two runs of the same command agree, and how often each row's stated ci95 said so.

    tools/session/rerun_coverage.py A.json B.json [--min-bytes 1MiB] [--tolerance 2]

For every row present in both runs with at least --min-bytes, per path: how many rows differ by
at most --tolerance percent, how many differ by no more than the rows' combined stated
uncertainty sqrt(ci95_a^2 + ci95_b^2) (how often the stated interval covered the rerun), and
how many meet either. Then the rows that meet neither, worst first. Standard library only; exit
status 2 on unreadable input.
"""

import argparse
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
from xfertools.files import InputError, load_result  # noqa: E402
from xfertools.sizes import parse_size  # noqa: E402


def rows(path):
    return {
        r["name"]: r
        for r in load_result(path)["benchmarks"]
        if r.get("run_type") == "iteration" and "ci95_pct" in r
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--min-bytes", default="1MiB")
    parser.add_argument("--tolerance", type=float, default=2.0, help="percent")
    args = parser.parse_args()
    try:
        a, b, least = rows(args.a), rows(args.b), parse_size(args.min_bytes)
    except (InputError, ValueError) as e:
        print(f"rerun_coverage.py: {e}", file=sys.stderr)
        return 2
    per_path = defaultdict(lambda: {"rows": 0, "within": 0, "covered": 0, "either": 0})
    misses = []
    for name, ra in a.items():
        rb = b.get(name)
        if rb is None or "/bytes:" not in name:
            continue
        if int(name.split("/bytes:")[1].split("/")[0]) < least:
            continue
        change = (rb["real_time"] / ra["real_time"] - 1) * 100
        stated = math.hypot(ra["ci95_pct"], rb["ci95_pct"])
        within, covered = abs(change) <= args.tolerance, abs(change) <= stated
        tally = per_path[name.split("/")[0]]
        tally["rows"] += 1
        tally["within"] += within
        tally["covered"] += covered
        tally["either"] += within or covered
        if not (within or covered):
            misses.append((abs(change), name, change, stated))
    print(
        f"{'path':<16} {'rows':>5} {'<=' + format(args.tolerance, 'g') + '%':>6} "
        f"{'<=ci':>6} {'either':>7}"
    )
    for path, t in sorted(per_path.items()):
        print(f"{path:<16} {t['rows']:>5} {t['within']:>6} {t['covered']:>6} {t['either']:>7}")
    if misses:
        print("\nrows beyond both (change, combined stated uncertainty):")
        for _, name, change, stated in sorted(misses, reverse=True):
            print(f"  {change:+6.1f}%  +-{stated:4.1f}%  {name.replace('/manual_time', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
