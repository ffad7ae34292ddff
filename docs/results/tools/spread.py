#!/usr/bin/env python3
"""Where a session's spread comes from (`variance` writes the session).

usage: docs/results/tools/spread.py SESSION_DIR [--rows REGEX] [--json OUT.json]

Reads SESSION_DIR/json/COND-N.json (condition COND, MPI job N) and the OSU output in
SESSION_DIR/session.log, and prints, per condition and row, the spread (standard deviation of
log time, in percent) at each level where variance can arise:

  jobs     between MPI jobs: each job's figure for the row (a new process, same machine)
  visits   between the visits of one job (fresh buffers, another place in the run), pooled
  reps     between back-to-back repetitions of one job (same place in the run), pooled
  stated   the median ci95_pct the rows state

then, per condition, the drift of visits over a job (percent per 10 s of run time) and the
order effect (visits right after a row of 16 MiB or more, against the rest), and OSU's spread
between rounds for the sizes the session ran.
"""

import argparse
import collections
import json
import math
import os
import re
import statistics
import sys

JOB_FILE = re.compile(r"^(?P<cond>.+)-(?P<job>\d+)\.json$")
OSU_COMMAND = re.compile(r"\S*mpirun -np 2 \S*/(osu_\w+) (?:-d cuda )?-m (\d+):\d+.*?([HD] [HD])")
BIG = 16 << 20


def sd_pct(logs):
    return statistics.stdev(logs) * 100 if len(logs) >= 2 else None


def pooled_pct(groups):
    """Pooled standard deviation (percent) of log values within groups of 2 or more."""
    num = den = 0.0
    for logs in groups:
        if len(logs) >= 2:
            num += statistics.variance(logs) * (len(logs) - 1)
            den += len(logs) - 1
    return math.sqrt(num / den) * 100 if den else None


def row_name(bench):
    return bench.get("run_name", bench["name"]).replace("/manual_time", "")


def ok(bench):
    return (
        not bench.get("error_occurred")
        and bench.get("skipped") in (None, False, 0)
        and bench.get("real_time", 0) > 0
    )


def load_jobs(folder):
    jobs = collections.defaultdict(dict)  # cond -> job -> document
    for name in sorted(os.listdir(folder)):
        m = JOB_FILE.match(name)
        if m:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                jobs[m["cond"]][int(m["job"])] = json.load(f)
    return jobs


def levels(docs, pattern):
    """Per row: job figures (log), visit logs per job, repetition logs per job, stated ci."""
    out = collections.defaultdict(lambda: {"jobs": [], "visits": [], "reps": [], "stated": []})
    for doc in docs.values():
        reps = collections.defaultdict(list)
        for b in doc.get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration" or not ok(b):
                continue
            name = row_name(b)
            if pattern.search(name):
                reps[name].append(math.log(b["real_time"]))
                out[name]["stated"].append(b.get("ci95_pct", float("nan")))
        for name, logs in reps.items():
            out[name]["jobs"].append(statistics.fmean(logs))
            out[name]["reps"].append(logs)
        visits = doc.get("context", {}).get("xferbench", {}).get("visits") or {}
        for name, records in visits.items():
            if pattern.search(name):
                out[name]["visits"].append(
                    [math.log(r["latency_us"]) for r in records if r.get("latency_us", 0) > 0]
                )
    return out


def drift_and_order(docs, pattern):
    """Percent per 10 s of run time, and after-a-big-row minus the rest (percent)."""
    xs, ys, after_big, after_small = [], [], [], []
    for doc in docs.values():
        visits = doc.get("context", {}).get("xferbench", {}).get("visits") or {}
        for name, records in visits.items():
            good = [r for r in records if r.get("latency_us", 0) > 0]
            if len(good) < 2 or not pattern.search(name):
                continue
            mean = statistics.fmean(math.log(r["latency_us"]) for r in good)
            at = statistics.fmean(r["at_s"] for r in good)
            for r in good:
                resid = (math.log(r["latency_us"]) - mean) * 100
                xs.append(r["at_s"] - at)
                ys.append(resid)
                prev = r.get("after") or ""
                size = int(prev.rsplit("bytes:", 1)[1]) if "bytes:" in prev else 0
                (after_big if size >= BIG else after_small).append(resid)
    slope = None
    if len(xs) > 2 and any(x != 0 for x in xs):
        slope = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs) * 10
    order = None
    if after_big and after_small:
        order = statistics.fmean(after_big) - statistics.fmean(after_small)
    return slope, order, len(after_big)


def osu_spread(log_path):
    if not os.path.exists(log_path):
        return {}
    with open(log_path, encoding="utf-8", errors="replace") as f:
        blocks = f.read().split("\n$ ")
    values = collections.defaultdict(list)
    for block in blocks:
        m = OSU_COMMAND.match(block)
        if not m:
            continue
        tool, size, buffers = m.groups()
        for line in block.split("\n"):
            parts = line.split()
            if len(parts) == 2 and parts[0] == size:
                values[(tool, buffers, int(size))].append(float(parts[1]))
    return {k: (sd_pct([math.log(x) for x in v]), v) for k, v in values.items()}


def fmt(x):
    return "   -  " if x is None else f"{x:6.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("session")
    parser.add_argument("--rows", default=".", help="only rows whose name matches this regex")
    parser.add_argument("--json", help="write the table as JSON here too")
    args = parser.parse_args(argv)
    try:
        pattern = re.compile(args.rows)
    except re.error as e:
        parser.error(f"--rows: not a regular expression: {e}")
    folder = os.path.join(args.session, "json")
    if not os.path.isdir(folder):
        parser.error(f"{folder}: no such folder")
    report = {}
    for cond, docs in load_jobs(folder).items():
        print(f"\n== {cond}: {len(docs)} jobs")
        print(f"{'row':72s}  jobs  visits  reps  stated")
        rows = {}
        for name, lv in sorted(levels(docs, pattern).items()):
            stated = [s for s in lv["stated"] if s == s]
            entry = {
                "jobs": sd_pct(lv["jobs"]),
                "visits": pooled_pct(lv["visits"]),
                "reps": pooled_pct(lv["reps"]),
                "stated": statistics.median(stated) if stated else None,
            }
            rows[name] = entry
            print(
                f"{name[:72]:72s}{fmt(entry['jobs'])}{fmt(entry['visits'])}"
                f"{fmt(entry['reps'])}{fmt(entry['stated'])}"
            )
        slope, order, n_big = drift_and_order(docs, pattern)
        medians = {
            k: statistics.median([r[k] for r in rows.values() if r[k] is not None])
            for k in ("jobs", "visits", "reps", "stated")
            if any(r[k] is not None for r in rows.values())
        }
        print("median over rows: " + ", ".join(f"{k} {v:.2f}%" for k, v in medians.items()))
        print(
            f"drift: {fmt(slope).strip()} % per 10 s; after a row >= 16 MiB: "
            f"{fmt(order).strip()} % ({n_big} visits)"
        )
        report[cond] = {
            "rows": rows,
            "medians": medians,
            "drift_pct_per_10s": slope,
            "after_big_row_pct": order,
        }
    osu = osu_spread(os.path.join(args.session, "session.log"))
    if osu:
        print("\n== OSU between rounds")
        for (tool, buffers, size), (sd, values) in sorted(osu.items()):
            print(f"{tool} {buffers} {size:>10d}: {fmt(sd)}%  {values}")
        report["osu"] = {
            f"{t} {b} {s}": {"sd_pct": sd, "values": v} for (t, b, s), (sd, v) in osu.items()
        }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
