#!/usr/bin/env python3
"""Where a default job's time goes, and how much a family moves from one job to the next.

    job_costs.py SESSION_DIR     (a folder holding json.tar.xz and session.log.xz of targets)

For every job of every merged run: the launcher's wall time (tools/run's "job N of 3: exit 0 in
S s" line), the sum over its visits of their wall time, and within it the set-up of buffers
(setup_s less the warm-up it holds), the warm-up and the pattern checks (context.xferbench.visits); the rest of the job is start-up
and tear-down (MPI, CUDA, registration). Then, per family, the sd over all jobs of the family's
shift (the geometric mean over its rows of the row's time against the row's mean over all jobs)
and, from it, the smallest change two sides of n jobs each tell from noise at 80% power
(two-sided 5%, normal approximation, one family): 2.80 x sd x sqrt(2 / n).
"""

import json
import lzma
import math
import os
import re
import statistics
import sys
import tarfile
from collections import defaultdict


def jobs_of(session):
    """{job file name: document} of every job file in the session's json.tar.xz."""
    out = {}
    with tarfile.open(os.path.join(session, "json.tar.xz")) as tar:
        for member in tar.getmembers():
            if re.search(r"\.jobs/job-\d+\.json$", member.name):
                out[member.name] = json.load(tar.extractfile(member))
    return out


def launcher_walls(session):
    text = lzma.open(os.path.join(session, "session.log.xz"), "rt").read()
    return {
        f"results/{stem}.jobs/job-{n}.json": float(s)
        for n, s, stem in re.findall(
            r"job (\d+) of \d+: exit 0 in ([\d.]+) s \(\S*/results/(\S+)\.jobs/", text
        )
    }


def family(row):
    return row.rsplit("/bytes:", 1)[0]


def main(session):
    jobs = jobs_of(session)
    walls = launcher_walls(session)
    parts = defaultdict(list)
    times = defaultdict(dict)  # row -> {job: latency}
    for name, doc in sorted(jobs.items()):
        visits = doc["context"]["xferbench"]["visits"]
        sums = defaultdict(float)
        for row, records in visits.items():
            for r in records:
                sums["visits"] += r["wall_s"]
                for key in ("setup_s", "warm_s", "check_s"):
                    sums[key] += r.get(key, 0.0)
                times[row][name] = r["latency_us"]
        # setup_s holds warm_s: buffers are what set-up spends beside the warm-up.
        sums["buffers"] = sums.pop("setup_s") - sums["warm_s"]
        sums["timed"] = sums["visits"] - sums["buffers"] - sums["warm_s"] - sums["check_s"]
        if name in walls:
            sums["launch"] = walls[name]
            sums["start-up and tear-down"] = walls[name] - sums["visits"]
        for key, value in sums.items():
            parts[key].append(value)
    print(f"{len(jobs)} jobs; per job, median (min-max) seconds:")
    for key in ("launch", "visits", "timed", "buffers", "warm_s", "check_s",
                "start-up and tear-down"):
        if parts[key]:
            v = parts[key]
            print(f"  {key:24s} {statistics.median(v):6.2f} ({min(v):.2f}-{max(v):.2f})")
    shifts = defaultdict(lambda: defaultdict(list))
    for row, by_job in times.items():
        if len(by_job) != len(jobs):
            continue
        mean = statistics.fmean(math.log(t) for t in by_job.values())
        for job, t in by_job.items():
            shifts[family(row)][job].append(math.log(t) - mean)
    launch = statistics.median(parts["launch"]) if parts["launch"] else 15.0
    print(f"\nper family: sd of the job's shift; smallest change seen at 80% power with n jobs a"
          f" side (n = minutes x 60 / {launch:.1f} s / 2)")
    print(f"{'family':68s} {'sd %':>6s} {'5 min':>7s} {'8 min':>7s}")
    for fam in sorted(shifts):
        per_job = [statistics.fmean(v) for v in shifts[fam].values()]
        sd = 100 * statistics.stdev(per_job)
        seen = [2.80 * sd * math.sqrt(2 / max(1, int(m * 60 / launch / 2))) for m in (5, 8)]
        print(f"{fam:68s} {sd:6.2f} {seen[0]:6.2f}% {seen[1]:6.2f}%")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: job_costs.py SESSION_DIR")
    main(sys.argv[1])
