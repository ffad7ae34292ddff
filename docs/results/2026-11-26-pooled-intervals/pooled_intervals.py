#!/usr/bin/env python3
"""Old and pooled merged intervals, each made by a built xferbench, judged by stored reruns.

    pooled_intervals.py --old OLD_XFERBENCH --new NEW_XFERBENCH SESSION [SESSION ...] [--json OUT]

A SESSION is a folder holding run-N.json in json/ or json.tar.xz, or whose run-N.json are
SESSION_NAME/json/run-N.json in the raw.tar.xz of the folder above it: default runs of tools/run,
each merged from 3 jobs of one visit each. The merged file keeps every job's figure of every row in
context.xferbench.visits ("job": 0, 1, 2). From those, each run's three job files are rebuilt
(only what --xfer_merge reads: the rows' time, messages, samples, their own ci95, batch) and
merged again by each binary, so the intervals compared are what each build's merge states. The
check line says how far the old binary's intervals are from those the files store: nil for runs
made at 2f05373 or later, up to 57.7 points before it (a job of one lone sample then counted as
100%, which 2f05373 ended).

Per session and path, for each rule: the share of (pair of runs, row) whose difference
|ln(a / b)| the rows' combined ci95 covers (target >= 90%); the median and 90th percentile over
rows of the row's median stated ci95 over the runs; "tight": the median over rows of (that
median) / (1.96 x the row's sd of ln time over the runs); and, for the new rule, the share of
rows whose interval came from a pool of rows (ci95_rows > 1), from their own jobs (1) or from
the jobs' own samples (0). Last, per path over the sessions of 4 runs or more: the median
coverage (and the lowest), and the medians over sessions of the other figures.
"""

import argparse
import io
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict


def run_number(name):
    """N of a path ending in run-N.json, else None."""
    base = os.path.basename(name)
    if base.startswith("run-") and base.endswith(".json") and base[4:-5].isdigit():
        return int(base[4:-5])
    return None


def run_documents(session):
    """{N: document} of the session's run-N.json files: SESSION/json/ (unpacked), else
    SESSION/json.tar.xz, else SESSION_NAME/json/run-N.json in the raw.tar.xz of the folder
    above SESSION (an experiment whose sessions' raw files are packed as one archive)."""
    session = os.path.normpath(session)
    folder = os.path.join(session, "json")
    if os.path.isdir(folder):
        out = {}
        for name in os.listdir(folder):
            if run_number(name) is not None:
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    out[run_number(name)] = json.load(f)
        return dict(sorted(out.items()))
    packed = os.path.join(session, "json.tar.xz")
    raw = os.path.join(os.path.dirname(session), "raw.tar.xz")
    if os.path.isfile(packed):
        archive, wanted = packed, lambda name: True
    elif os.path.isfile(raw):
        inside = os.path.basename(session) + "/json"
        archive, wanted = raw, lambda name: os.path.dirname(name) == inside
    else:
        return {}
    out = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.isfile() and wanted(member.name) and run_number(member.name) is not None:
                document = json.load(io.TextIOWrapper(tar.extractfile(member)))
                out[run_number(member.name)] = document
    return dict(sorted(out.items()))


def job_documents(document):
    """The job files a merged run was made from, as far as --xfer_merge reads them; None if the
    file keeps no per-job figures."""
    x = document["context"]["xferbench"]
    merged = x.get("merged")
    if not merged or x.get("plan", {}).get("visits") != 1:
        return None
    jobs = merged["jobs"]
    visits = x.get("visits", {})
    rows = [[] for _ in range(jobs)]
    for r in document["benchmarks"]:
        if r.get("run_type", "iteration") != "iteration":
            continue
        name = r["name"].replace("/manual_time", "")
        if r.get("error_occurred") or r.get("skipped"):
            for j in range(jobs):
                rows[j].append(dict(r))
            continue
        figures = {v["job"]: v for v in visits.get(name, []) if "latency_us" in v}
        if sorted(figures) != list(range(jobs)):
            return None
        for j in range(jobs):
            v = figures[j]
            rows[j].append({
                "name": r["name"], "run_name": r.get("run_name", r["name"]),
                "run_type": "iteration", "repetition_index": 0,
                "iterations": v["messages"], "real_time": v["latency_us"], "time_unit": "us",
                "latency_us": v["latency_us"], "batch": r.get("batch", 1),
                "pairs": r.get("pairs", 1), "visits": 1, "samples": v["samples"],
                "ci95_pct": v["ci95_pct"], "floor_pct": 0,
                "time_limited": 1 if v["time_limited"] else 0,
                "median_us": v["latency_us"], "min_us": v["latency_us"],
                "max_us": v["latency_us"], "p90_us": v["latency_us"], "p99_us": v["latency_us"],
            })
    out = []
    for j in range(jobs):
        context = {k: v for k, v in x.items() if k not in ("merged", "visits", "jobs")}
        context["plan"] = dict(x["plan"], seed=merged["seeds"][j])
        context["incomplete"] = None
        context["summary"] = None
        context["visits"] = {}
        out.append({"context": {"xferbench": context}, "benchmarks": rows[j]})
    return out


def merge(binary, jobs, scratch):
    """{row: (ln time, ci95_pct, ci95_rows or None)} as `binary --xfer_merge` states them."""
    paths = []
    for j, doc in enumerate(jobs):
        path = os.path.join(scratch, f"job-{j + 1}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        paths.append(path)
    out_path = os.path.join(scratch, "merged.json")
    subprocess.run(
        [binary, "--xfer_merge=" + ",".join(paths), "--benchmark_out=" + out_path,
         "--benchmark_out_format=json"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out_path, encoding="utf-8") as f:
        document = json.load(f)
    found = {}
    for r in document["benchmarks"]:
        if r.get("error_occurred") or r.get("skipped") or not r.get("real_time", 0) > 0:
            continue
        name = r["name"].replace("/manual_time", "")
        found[name] = (math.log(r["real_time"]), r["ci95_pct"], r.get("ci95_rows"), r.get("ci95_df"))
    return found


def stored(document):
    return {r["name"].replace("/manual_time", ""): r["ci95_pct"] for r in document["benchmarks"]
            if "ci95_pct" in r and not r.get("error_occurred")}


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def judge(runs):
    """{path: figures} over the rows every run measured, and '(all)'."""
    names = sorted(set.intersection(*(set(r) for r in runs)))
    acc = defaultdict(lambda: {"covered": 0, "compared": 0, "stated": [], "tight": [],
                               "rows": defaultdict(int), "df": []})
    for name in names:
        logs = [r[name][0] for r in runs]
        sd = statistics.stdev(logs) * 100
        stated = statistics.median(r[name][1] for r in runs)
        for key in (name.split("/")[0], "(all)"):
            a = acc[key]
            a["stated"].append(stated)
            if sd > 0:
                a["tight"].append(stated / (1.96 * sd))
            for x, y in itertools.combinations(runs, 2):
                a["compared"] += 1
                a["covered"] += abs(x[name][0] - y[name][0]) * 100 <= math.hypot(x[name][1], y[name][1])
            for r in runs:
                if r[name][2] is not None:
                    a["rows"]["pooled" if r[name][2] > 1 else "own" if r[name][2] == 1 else "samples"] += 1
                    if r[name][2] > 1:
                        a["df"].append(r[name][3])
    out = {}
    for key, a in acc.items():
        counted = sum(a["rows"].values())
        out[key] = {
            "covered_pct": a["covered"] / a["compared"] * 100,
            "compared": a["compared"],
            "stated_median_pct": statistics.median(a["stated"]),
            "stated_p90_pct": percentile(a["stated"], 0.9),
            "tight": statistics.median(a["tight"]) if a["tight"] else float("nan"),
            "rule_shares_pct": {k: v / counted * 100 for k, v in sorted(a["rows"].items())} if counted else {},
            "pooled_df_median": statistics.median(a["df"]) if a["df"] else None,
        }
    return out


def session_report(session, old, new, scratch):
    docs = run_documents(session)
    if len(docs) < 2:
        return None
    old_runs, new_runs, worst_check = [], [], 0.0
    for doc in docs.values():
        jobs = job_documents(doc)
        if jobs is None:
            return None
        o = merge(old, jobs, scratch)
        old_runs.append(o)
        new_runs.append(merge(new, jobs, scratch))
        kept = stored(doc)
        worst_check = max([worst_check] + [abs(o[n][1] - kept[n]) for n in o if n in kept])
    return {"runs": len(docs), "old_vs_stored_max_abs_pct": worst_check,
            "old": judge(old_runs), "new": judge(new_runs)}


def print_session(name, report):
    print(f"\n{name}: {report['runs']} runs; the old binary's ci95 against the stored one: "
          f"largest difference {report['old_vs_stored_max_abs_pct']:.3g} points")
    print(f"{'path':16s} {'rule':4s} {'covered':>8s} {'median':>7s} {'p90':>7s} {'tight':>6s}  new rule's rows (pooled/own/samples, pooled df median)")
    for path in sorted(report["new"], key=lambda p: (p == "(all)", p)):
        for rule in ("old", "new"):
            t = report[rule][path]
            extra = ""
            if rule == "new":
                s = t["rule_shares_pct"]
                extra = (f"  {s.get('pooled', 0):.0f}/{s.get('own', 0):.0f}/{s.get('samples', 0):.0f}%"
                         f", df {t['pooled_df_median'] or 0:.1f}")
            print(f"{path:16s} {rule:4s} {t['covered_pct']:7.1f}% {t['stated_median_pct']:6.2f}% "
                  f"{t['stated_p90_pct']:6.2f}% {t['tight']:6.2f}{extra}")


def summary(reports):
    """Per path, over the sessions of 4 runs or more: the lowest coverage and the medians over
    the sessions of each figure."""
    chosen = [r for r in reports.values() if r["runs"] >= 4]
    print(f"\nover the {len(chosen)} sessions of 4 runs or more: lowest coverage, and medians over "
          f"the sessions")
    print(f"{'path':16s} {'rule':4s} {'covered (lowest)':>17s} {'median':>7s} {'p90':>7s} {'tight':>6s}")
    paths = sorted({p for r in chosen for p in r["new"]}, key=lambda p: (p == "(all)", p))
    for path in paths:
        for rule in ("old", "new"):
            figures = [r[rule][path] for r in chosen if path in r[rule]]
            print(f"{path:16s} {rule:4s} {statistics.median(f['covered_pct'] for f in figures):8.1f}% "
                  f"({min(f['covered_pct'] for f in figures):5.1f}%) "
                  f"{statistics.median(f['stated_median_pct'] for f in figures):6.2f}% "
                  f"{statistics.median(f['stated_p90_pct'] for f in figures):6.2f}% "
                  f"{statistics.median(f['tight'] for f in figures):6.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sessions", nargs="+")
    parser.add_argument("--old", required=True, help="xferbench built at the old rule")
    parser.add_argument("--new", required=True, help="xferbench built at the pooled rule")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    reports = {}
    with tempfile.TemporaryDirectory() as scratch:
        for session in args.sessions:
            name = os.path.relpath(os.path.abspath(session), os.path.dirname(os.path.abspath(__file__)) + "/..")
            report = session_report(session, args.old, args.new, scratch)
            if report is None:
                print(f"\n{name}: skipped (no json.tar.xz, fewer than 2 runs, or no per-job figures kept)")
                continue
            reports[name] = report
            print_session(name, report)
    summary(reports)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(reports, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
