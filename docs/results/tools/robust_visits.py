#!/usr/bin/env python3
"""Would a robust figure per visit steady the default run, and how often is a whole visit slow?
From sessions of `targets` (runs:N). Section robust needs runs whose visits carry `robust`:
the quartiles of the visit's samples and the mean of those at most 2x and 3x the median and
under Tukey's far fence (Q3 + 3 IQR). Only a trial build recorded it (the runs of
docs/results/2026-11-25-robust-visits/h100); xferbench does not, as this found no steadier
figure.

    docs/results/tools/robust_visits.py SESSION_DIR [SESSION_DIR ...] [--json OUT]

  robust  how many samples each rule leaves out; per estimator (the mean, as xferbench reports,
          the median, and the three trimmed means), the median, 75th and 90th percentile over
          rows of the per-row spread over the runs (sd of log, %), with the row's figure the
          mean of its visits' figures; and the six rows of the reproducibility target.
  slow    per path, how many of the session's visits read over 1.08x the median of their row's
          visits in all its default runs (a slow visit: one slow spell of the machine, the
          visit's own samples steady).
  lone    mpi_host ping-pong at 128 MiB and more, where a default run times one round trip a
          job: how many visits read over 1.25x their row's median, by whether a warm-up message
          came first (warm_messages) and by when in the job the visit began (at_s).
"""

import collections
import statistics
import sys

import ack_and_time  # this folder's: the session's result files, spread_pct

ESTIMATORS = {
    "mean": lambda v: v["latency_us"],
    "median": lambda v: v["robust"]["q50_us"],
    "<=2x median": lambda v: v["robust"]["le2x_us"],
    "<=3x median": lambda v: v["robust"]["le3x_us"],
    "Tukey far": lambda v: v["robust"]["tukey3_us"],
}
TRIMS = {"<=2x median": "le2x", "<=3x median": "le3x", "Tukey far": "tukey3"}
TARGET_ROWS = [
    f"{family}/mode:pingpong/bytes:{size}"
    for family in ("mpi_host", "mpi_cuda_aware")
    for size in (8, 1 << 20, 256 << 20)
]


def robust(session, docs, out):
    names = ack_and_time.numbered(docs, "run")
    figures = collections.defaultdict(lambda: collections.defaultdict(list))
    kept, left_out = 0, collections.Counter()
    for name in names:
        for row, visits in docs[name]["context"]["xferbench"]["visits"].items():
            visits = [v for v in visits if "robust" in v]
            if not visits:
                continue
            for label, figure in ESTIMATORS.items():
                figures[row][label].append(statistics.mean(figure(v) for v in visits))
            for v in visits:
                kept += v["robust"]["kept"]
                for label, key in TRIMS.items():
                    left_out[label] += v["robust"]["kept"] - v["robust"][f"{key}_n"]
    if not kept:
        return
    print(f"== {session}: robust figures per visit, {len(names)} default runs, {kept} samples")
    result = {"left_out_pct": {k: 100 * n / kept for k, n in left_out.items()}, "spread": {}}
    print("  left out: " + ", ".join(f"{k} {v:.2f}%" for k, v in result["left_out_pct"].items()))
    for label in ESTIMATORS:
        spreads = sorted(ack_and_time.spread_pct(f[label]) for f in figures.values())
        pick = {q: spreads[int(q * (len(spreads) - 1))] for q in (0.5, 0.75, 0.9)}
        result["spread"][label] = {
            "median": pick[0.5],
            "p75": pick[0.75],
            "p90": pick[0.9],
            "target_rows": {r: ack_and_time.spread_pct(figures[r][label]) for r in TARGET_ROWS},
        }
        print(
            f"  {label:12s} per-row spread median {pick[0.5]:.2f}% p75 {pick[0.75]:.2f}% "
            f"p90 {pick[0.9]:.2f}%; target rows "
            + " ".join(f"{ack_and_time.spread_pct(figures[r][label]):.2f}" for r in TARGET_ROWS)
        )
    out["robust"] = result


SLOW = 1.08  # a visit over this times its row's median


def visits_by_row(documents, wanted=lambda row, visit: True):
    """{row: its measured visits in all the result files that `wanted` keeps}; rows left with
    none are left out."""
    rows = collections.defaultdict(list)
    for document in documents:
        for row, visits in document["context"]["xferbench"]["visits"].items():
            rows[row] += [v for v in visits if "latency_us" in v and wanted(row, v)]
    return {row: visits for row, visits in rows.items() if visits}


def slow_visits(documents):
    """{path: [visits over SLOW x their row's median, visits]} over the result files' visits,
    each row's median taken over its visits in all of them."""
    counts = collections.defaultdict(lambda: [0, 0])
    for row, visits in visits_by_row(documents).items():
        values = [v["latency_us"] for v in visits]
        median = statistics.median(values)
        count = counts[row.split("/", 1)[0]]
        count[0] += sum(v > SLOW * median for v in values)
        count[1] += len(values)
    return counts


def slow(session, docs, out):
    names = ack_and_time.numbered(docs, "run")
    if not names:
        return
    counts = slow_visits(docs[name] for name in names)
    print(f"== {session}: visits over {SLOW}x their row's median, {len(names)} default runs")
    for path, (n, total) in sorted(counts.items()):
        print(f"  {path:15s} {n:4d} of {total:5d} ({100 * n / total:.1f}%)")
    out["slow_visits"] = {path: {"slow": n, "visits": total} for path, (n, total) in counts.items()}


LONE = 1.25  # a lone message over this times its row's median
LONE_ROWS = "mpi_host/mode:pingpong/bytes:"


def lone(session, docs, out):
    names = ack_and_time.numbered(docs, "run")
    rows = visits_by_row(
        (docs[name] for name in names),
        # Older result files have no warm_messages in their visits, so nothing to split by.
        lambda row, v: (
            row.startswith(LONE_ROWS)
            and int(row.rsplit(":", 1)[1]) >= 128 << 20
            and "warm_messages" in v
        ),
    )
    if not rows:
        return
    groups = collections.defaultdict(lambda: [0, 0])
    for visits in rows.values():
        median = statistics.median(v["latency_us"] for v in visits)
        for v in visits:
            when = "at_s < 5" if v["at_s"] < 5 else "at_s 5-10" if v["at_s"] < 10 else "at_s >= 10"
            warm = "warmed up" if v["warm_messages"] else "no warm-up"
            for group in ("all", warm, when):
                groups[group][0] += v["latency_us"] > LONE * median
                groups[group][1] += 1
    print(f"== {session}: {LONE_ROWS}>=128MiB visits over {LONE}x their row's median")
    for group, (n, total) in groups.items():
        print(f"  {group:11s} {n:3d} of {total:4d} ({100 * n / total:.1f}%)")
    out["lone"] = {group: {"slow": n, "visits": total} for group, (n, total) in groups.items()}


def main():
    return ack_and_time.report(__doc__.split("\n\n")[0], [robust, slow, lone])


if __name__ == "__main__":
    sys.exit(main())
