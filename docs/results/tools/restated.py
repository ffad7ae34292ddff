#!/usr/bin/env python3
"""Do merged rows state an interval that reruns confirm, now that a lone sample is no spread?

    docs/results/tools/restated.py SESSION_DIR [SESSION_DIR ...] [--json OUT]

From sessions of `targets` (runs:N or bare:N: default runs of tools/run, 3 jobs of
one visit each, merged). A job whose visit timed one sample (a round trip of 256 MiB or more in
its share of the time) states 100%: unknown, not a spread. The merge counted it as a spread, so
such a row stated 100 / sqrt(3) = 57.7% whatever its messages did; since support/jobs/merge.cpp's
combine_jobs leaves it out, the row states the spread between its jobs (Student's t), as a job
of several samples always did. Per session, from the visits each merged file keeps: every row's
interval rebuilt by the old rule and by the new one (one of them is what the file states; the
report says which, and how closely it is reproduced); for
all rows and for those whose interval changed, the median interval and the share of (pair of
runs, row) comparisons whose difference |ln(a / b)| the rows' combined interval covers (honest
at >= 90%).
"""

import math
import statistics
import sys

import ack_and_time  # this folder's: the session's result files, the report command line
import repo_tools  # noqa: F401 (this folder's: puts the repository's tools/ on sys.path)
import rerun_targets  # this folder's: coverage.py

from xfertools.core.stats import mean_interval

coverage = rerun_targets.coverage


def merged_interval(visits, lone_sample_counts):
    """The ci95 (%) combine_jobs states from a merged row's jobs of one visit each: the larger of
    the spread between the jobs (Student's t) and the jobs' own intervals. With
    `lone_sample_counts` a job of one sample adds its 100%, as before; without, it adds nothing."""
    times = [v["latency_us"] for v in visits]
    n = len(times)
    mean, half = mean_interval(times)
    between = half / mean * 100
    own = [
        (v["ci95_pct"] / 100 * v["latency_us"]) ** 2
        for v in visits
        if v["samples"] > 1 or lone_sample_counts
    ]
    within = math.sqrt(sum(own) / len(own) / n) / mean * 100 if own else 0
    return max(between, within)


def merged_rows(document):
    """{row: (time, stated ci95, as the old merge states it, as the merge now states it)} of a
    merged default run's rows (jobs of one visit each)."""
    found = {}
    visits = document.get("context", {}).get("xferbench", {}).get("visits", {})
    for r in document.get("benchmarks", []):
        name = r["name"].replace("/manual_time", "")
        if r.get("run_type", "iteration") != "iteration" or "ci95_pct" not in r:
            continue
        jobs = [v for v in visits.get(name, []) if "latency_us" in v]
        if len(jobs) < 2 or len({v["job"] for v in jobs}) != len(jobs):
            continue
        found[name] = (
            r["real_time"],
            r["ci95_pct"],
            merged_interval(jobs, True),
            merged_interval(jobs, False),
        )
    return found


def covered(runs, which, names):
    """(covered, compared): coverage.py's count of (pair, row) comparisons of rows in `names`
    within the rows' combined interval `which` (1: stored, 3: as the merge now states it)."""
    chosen = [{n: (math.log(run[n][0]), run[n][which]) for n in names} for run in runs]
    table = coverage.summarise(chosen)["(all)"]
    return table["covered"], table["compared"]


def restated(session, docs, out):
    names = ack_and_time.numbered(docs, "run")
    runs = [merged_rows(docs[name]) for name in names]
    if len(runs) < 2:
        return
    if not all(runs):
        raise ValueError("a run-N.json holds no merged rows of a default run (tools/run)")
    # One of the two rules reproduces what the files state (older files hold the old one): the
    # reconstruction is right, and the report says which rule the files hold.
    worst = {
        rule: max(abs(rebuilt[i] - ci) for run in runs for _, ci, *rebuilt in run.values())
        for i, rule in enumerate(("old", "new"))
    }
    rule = min(worst, key=worst.get)
    every = set.intersection(*(set(run) for run in runs))
    changed = {n for n in every if any(run[n][3] < run[n][2] - 1e-9 for run in runs)}
    result = {
        "runs": len(runs),
        "rows": len(every),
        "stored_rule": rule,
        "reconstruction_worst_pct": worst[rule],
    }
    for label, chosen in (("all", every), ("changed", changed)):
        (old_hits, total), (new_hits, _) = covered(runs, 1, chosen), covered(runs, 3, chosen)
        now = sorted(run[n][3] for run in runs for n in chosen) or [math.nan]
        result[label] = {
            "rows": len(chosen),
            "comparisons": total,
            "covered_stored_pct": 100 * old_hits / total if total else math.nan,
            "covered_now_pct": 100 * new_hits / total if total else math.nan,
            "stated_median_pct": statistics.median(run[n][1] for run in runs for n in chosen)
            if chosen
            else math.nan,
            "now_median_pct": statistics.median(now),
            "now_p10_pct": now[len(now) // 10],
        }
    print(
        f"== {session}: {len(runs)} runs, {len(every)} rows "
        f"(stored intervals: the {rule} rule's, rebuilt within {worst[rule]:.4f} points)"
    )
    for label in ("all", "changed"):
        r = result[label]
        print(
            f"  {label:8s} {r['rows']:3d} rows, {r['comparisons']:5d} comparisons: stated median "
            f"{r['stated_median_pct']:5.1f}% covered {r['covered_stored_pct']:5.1f}%; now median "
            f"{r['now_median_pct']:5.1f}% (p10 {r['now_p10_pct']:4.1f}%) "
            f"covered {r['covered_now_pct']:5.1f}%"
        )
    out["restated"] = result


def main():
    return ack_and_time.report(__doc__.split("\n\n")[0], [restated])


if __name__ == "__main__":
    sys.exit(main())
