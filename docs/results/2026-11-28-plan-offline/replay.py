#!/usr/bin/env python3
"""What the machine file (tools/track floor, format xferbench-floor/2) would have said on stored
sessions: their merged runs fed, oldest first, through the floor writer into a temporary folder,
with each job's seconds from the session's console, printing after each run the history's size,
the plan, the run level per family and the floors.

    replay.py [--merge-with XFERBENCH] [--budget SECONDS] [--max-time [PATTERN=]SECONDS]...
              SESSION_DIR...

A SESSION_DIR holds json.tar.xz (json/*.json merged runs, results/<stem>.jobs/job-N.json) and
session.log.xz (tools/run's console: "job N of M: exit 0 in S s (.../<stem>.jobs/job-N.log)").
Each session is its own machine (a lease): its own folder. With --merge-with, every run is
merged again from its job files by that xferbench (the merged rows of older code state no
ci95_df, which the plan's degrees of freedom are learned from); the merge's Google Benchmark
context (num_cpus) is set back to the jobs' own so the machine stays the same.
"""

import argparse
import fnmatch
import json
import lzma
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
from xfertools.machine import components, floors, plan  # noqa: E402

JOB_LINE = re.compile(r"job (\d+) of (\d+): exit 0 in ([\d.]+) s \(\S*/results/(\S+)\.jobs/")
SHORT = {
    "host_staging/host:pageable/mode:pipelined/pair:0to0": "staging pageable pipelined",
    "host_staging/host:pageable/mode:sequential/pair:0to0": "staging pageable sequential",
    "host_staging/host:pageable/mode:sequential/timing:latency/pair:0to0": (
        "staging pageable latency"
    ),
    "host_staging/host:pinned/mode:pipelined/pair:0to0": "staging pinned pipelined",
    "host_staging/host:pinned/mode:sequential/pair:0to0": "staging pinned sequential",
    "host_staging/host:pinned/mode:sequential/timing:latency/pair:0to0": "staging pinned latency",
    "mpi_cuda_aware/mode:pingpong": "mpi_cuda_aware",
    "mpi_host/mode:pingpong": "mpi_host",
    "mpi_staged/host:pageable/staging:sequential/mode:pingpong": "mpi_staged pageable",
    "mpi_staged/host:pinned/staging:pipelined/mode:pingpong": "mpi_staged pinned pipelined",
    "mpi_staged/host:pinned/staging:sequential/mode:pingpong": "mpi_staged pinned sequential",
}


def job_seconds(session):
    """[(stem, [seconds of job 1, 2, ...]), ...] in the console's order."""
    text = lzma.open(os.path.join(session, "session.log.xz"), "rt").read()
    runs = {}
    for job, _, seconds, stem in JOB_LINE.findall(text):
        runs.setdefault(stem, {})[int(job)] = float(seconds)
    return [(stem, [by_job[j] for j in sorted(by_job)]) for stem, by_job in runs.items()]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def seed_of(document):
    xferbench = document["context"]["xferbench"]
    return (xferbench.get("merged") or {}).get("seeds", [xferbench["plan"]["seed"]])[0]


def merged_runs(unpacked, session, merge_with):
    """[(merged file, job seconds)] oldest first: each merged run found by its first job's
    seed, merged again by `merge_with` if given."""
    by_seed = {}
    for name in sorted(os.listdir(os.path.join(unpacked, "json"))):
        by_seed[seed_of(load(os.path.join(unpacked, "json", name)))] = name
    out = []
    for stem, seconds in job_seconds(session):
        jobs = os.path.join(unpacked, "results", stem + ".jobs")
        files = [os.path.join(jobs, f"job-{n}.json") for n in range(1, len(seconds) + 1)]
        name = by_seed[seed_of(load(files[0]))]
        path = os.path.join(unpacked, "json", name)
        if merge_with:
            path = os.path.join(unpacked, "remerged-" + name)
            subprocess.run(
                [merge_with, "--xfer_merge=" + ",".join(files), "--benchmark_out=" + path],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            document = load(path)
            document["context"]["num_cpus"] = load(files[0])["context"]["num_cpus"]
            with open(path, "w", encoding="utf-8") as f:
                json.dump(document, f)
        out.append((path, seconds))
    return out


def family_medians(points, column):
    return {f: statistics.median(p[column] for p in found) for f, found in points.items()}


def flag_seconds(name, choices):
    """The --xfer_max_time the run `name` was made with: the last of choices ([PATTERN=]SECONDS)
    whose pattern matches its name (none: every run), else 0.1 s, xferbench's default."""
    seconds = 0.1
    for choice in choices:
        pattern, _, value = choice.rpartition("=")
        if fnmatch.fnmatch(name, pattern or "*"):
            seconds = float(value)
    return seconds


def modelled_wall(content, flag):
    """The plan's cost model for the newest run as it was made (its jobs, the same
    --xfer_max_time for every row, no overhead): J (c0 + sum c_r) + sum clamp(T, J s_r, cap)."""
    jobs = content["history"][-1]["jobs"]
    rows = components.components(content["history"])
    caps = plan.precision_caps(rows)
    timed = sum(min(max(flag, jobs * r.sample_s), cap) for r, cap in zip(rows, caps))
    per_job = content["costs"]["job_s"] + content["costs"]["visits_s"]
    return jobs * per_job + timed


def report(path, content, seconds, max_time):
    made, costs = content["plan"], content["costs"]
    runs = len(content["history"])
    name = os.path.basename(path).replace("remerged-", "")
    head = f"{runs:>2} {name:<18} jobs {len(seconds)}, {sum(seconds):5.1f} s"
    head += f" | c0 {costs['job_s']:.2f} s, sum c_r {costs['visits_s']:.2f} s,"
    head += f" sum s_r {costs['sample_s']:.2f} s, q {costs['df_per_job_df']:.2f}"
    print(head)
    flag = flag_seconds(name, max_time)
    wall = modelled_wall(content, flag)
    measured = sum(seconds)
    print(
        f"   as made: --xfer_max_time {flag:g} s, modelled {wall:.1f} s, measured {measured:.1f} s"
    )
    if made:
        least = made["jobs"] * costs["sample_s"]
        timed = sum(s for found in made["rows"].values() for _, s in found)
        ci = made["predicted_ci95_pct"]
        print(
            f"   plan: J {made['jobs']}, predicted wall {made['predicted_wall_s']:.1f} s "
            f"(fixed {made['jobs'] * (costs['job_s'] + costs['visits_s']):.1f} s, least times "
            f"{least:.1f} s, timed {timed:.1f} s), ci95 median {ci['median']:.1f}% "
            f"p90 {ci['p90']:.1f}%"
        )
    else:
        print("   plan: none")
    run_sd = family_medians(content["run_floors"], 1)
    floor = family_medians(content["floors"], 1)
    for family in sorted(floor):
        predicted = made["predicted_ci95_pct"]["families"].get(family) if made else None
        print(
            f"   {SHORT.get(family, family):<30} floor {floor[family]:5.1f}%"
            + (f"  run sd {run_sd[family]:5.2f}%" if family in run_sd else "")
            + (f"  predicted ci95 {predicted:5.1f}%" if predicted is not None else "")
        )


def replay(session, merge_with, budget, max_time):
    print(f"== {os.path.basename(os.path.normpath(session))}")
    with tempfile.TemporaryDirectory() as tmp:
        unpacked = os.path.join(tmp, "data")
        with tarfile.open(os.path.join(session, "json.tar.xz")) as tar:
            tar.extractall(unpacked)  # this repository's own data
        folder = os.path.join(tmp, "floors")
        for path, seconds in merged_runs(unpacked, session, merge_with):
            _, content = floors.write_floor(path, folder, seconds, budget)
            report(path, content, seconds, max_time)
            last = content
        (target,) = os.listdir(folder)
        with open(os.path.join(folder, target), encoding="utf-8") as f:
            print(f"   file: {len(f.read())} bytes")
    candidates_table(last)
    least_rows(last)
    return last


def least_rows(content, count=8):
    """The rows whose one sample a job costs most: what keeps J down."""
    rows = sorted(components.components(content["history"]), key=lambda r: -r.sample_s)
    total = sum(r.sample_s for r in rows)
    shown = rows[:count]
    print(
        f"   one sample of every row: {total:.2f} s a job; the {count} largest "
        f"({sum(r.sample_s for r in shown):.2f} s):"
    )
    for r in shown:
        print(
            f"     {SHORT.get(r.family, r.family):<30} {r.bytes >> 20:5d} MiB  {r.sample_s:.3f} s"
        )


def candidates_table(content):
    """Every J the last plan weighed: its predicted wall and ci95, and where its time goes."""
    costs = content["costs"]
    rows = components.components(content["history"])
    weighed = plan.Costs(costs["job_s"], costs["df_per_job_df"], content["plan"]["budget_s"])
    fits = {c.jobs: c for c in plan.candidates(rows, weighed)}
    print("   J  fixed s  least s  timed s  wall s  median  p90")
    for jobs in range(plan.MIN_JOBS, plan.MAX_JOBS + 1):
        fixed = jobs * (costs["job_s"] + costs["visits_s"])
        least = float(sum(plan.least_times(rows, jobs, plan.precision_caps(rows))))
        c = fits.get(jobs)
        tail = "does not fit"
        if c:
            p90 = float(plan.np.percentile(c.ci95_pct, 90))
            tail = f"{sum(c.seconds):7.1f}  {c.wall_s:6.1f}  {c.median:5.1f}%  {p90:4.1f}%"
        print(f"  {jobs:2d}  {fixed:7.1f}  {least:7.1f}  {tail}")
        if not c:
            break


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sessions", nargs="+", metavar="SESSION_DIR")
    parser.add_argument("--merge-with", metavar="XFERBENCH", help="merge every run again")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument(
        "--max-time",
        action="append",
        default=[],
        metavar="[PATTERN=]SECONDS",
        help="the --xfer_max_time runs (named like PATTERN) were made with (default 0.1)",
    )
    args = parser.parse_args()
    for session in args.sessions:
        replay(session, args.merge_with, args.budget, args.max_time)


if __name__ == "__main__":
    main()
