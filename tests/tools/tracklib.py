"""What the tests of tools/track share: synthetic histories (xfertools/verdict/synthetic.py) written
as xferbench result files with real families' names, and running the tool."""

import datetime
import json
import os
import subprocess
import sys

from toollib import TOOLS, iteration_row
from xfertools.verdict import synthetic
from xfertools.verdict.noise import FAILED

TRACK = os.path.join(TOOLS, "track")
ROOT = os.path.dirname(TOOLS)
RESULTS = os.path.join(ROOT, "docs", "results")
START = datetime.datetime(2026, 11, 1, 2, 0, tzinfo=datetime.timezone.utc)

# Names of a default run's families (one GPU, two ranks), for synthetic.family_names(10).
FAMILIES = (
    "host_staging/host:pinned/mode:sequential/pair:0to0",
    "mpi_host/mode:pingpong",
    "mpi_staged/host:pinned/staging:sequential/mode:pingpong",
    "mpi_cuda_aware/mode:pingpong",
    "host_staging/host:pinned/mode:pipelined/pair:0to0",
    "mpi_host/mode:stream",
    "host_staging/host:pageable/mode:sequential/pair:0to0",
    "mpi_staged/host:pinned/staging:pipelined/mode:pingpong",
    "mpi_staged/host:pageable/staging:sequential/mode:pingpong",
    "mpi_cuda_aware/mode:stream",
)
REAL_NAME = dict(zip(synthetic.family_names(len(FAMILIES)), FAMILIES))


def real_name(row):
    """A synthetic row's name with its family's real name."""
    family, size = row.rsplit("/", 1)
    return f"{REAL_NAME.get(family, family)}/{size}"


def context(when, commit, gpu="NVIDIA H200", host="node1", cuda_aware="yes", incomplete=None):
    return {
        "date": when.isoformat(),
        "host_name": host,
        "num_cpus": 16,
        "library_build_type": "release",
        "xferbench": {
            "harness_version": "0.1.0",
            "git_revision": commit,
            "world_size": 2,
            "ranks": [
                {"rank": 0, "host": host, "local_rank": 0, "gpu": 0, "gpu_name": gpu},
                {"rank": 1, "host": host, "local_rank": 1, "gpu": 0, "gpu_name": gpu},
            ],
            "mpi": {"library": "Open MPI v4.1.6", "cuda_aware": cuda_aware},
            "cuda": {
                "runtime_version": "13.0",
                "driver_version": "13.0",
                "driver_release": "580.159.04",
                "devices": [{"index": 0, "name": gpu}],
                "pairs": [],
            },
            "nccl": {"version": "2.28.3"},
            "incomplete": incomplete,
        },
    }


def result_document(times, stated, when, commit, **machine):
    """An xferbench result document of one synthetic run (row -> seconds or FAILED)."""
    rows = []
    for row, seconds in times.items():
        name = real_name(row) + "/manual_time"
        if seconds == FAILED:
            rows.append(
                {
                    "name": name,
                    "run_name": name,
                    "run_type": "iteration",
                    "error_occurred": True,
                    "error_message": "validation failed at rank 1",
                }
            )
            continue
        size = int(row.rsplit("bytes:", 1)[1])
        rows.append(
            iteration_row(
                name,
                seconds * 1e6,
                latency_us=seconds * 1e6,
                bytes_per_second=size / seconds,
                ci95_pct=stated[row],
                **{"GB/s": size / seconds / 1e9},
            )
        )
    return {"context": context(when, commit, **machine), "benchmarks": rows}


def write_history(folder, made, count=None, **machine):
    """Result files of the first `count` runs of a synthetic.History, one a day: their
    paths, oldest first."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for k in range(len(made.runs) if count is None else count):
        when = START + datetime.timedelta(days=k)
        commit = f"{k:04d}abc{k:05d}"
        document = result_document(made.runs[k], made.stated[k], when, commit, **machine)
        path = os.path.join(folder, f"run-{k:02d}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f, allow_nan=False)
        paths.append(path)
    return paths


def track(*args, cwd=None):
    """tools/track with args: the finished process (text output)."""
    return subprocess.run(
        [sys.executable, TRACK, *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def realistic_history(runs=31):
    """A history like a default run's over a month: 10 families of 8-28 sizes, 1-10% noise per
    row and shared family shifts; pinned sequential staging 12% slower from run 18 on (a change
    the baseline has moved to), and pageable sequential staging 25% slower in the latest run."""
    names = synthetic.family_names(len(FAMILIES))
    steps = [synthetic.Step(names[0], 18, 1.12), synthetic.Step(names[6], runs - 1, 1.25)]
    return synthetic.history(runs=runs, families=len(FAMILIES), seed=7, steps=steps)


def strict_json(text):
    """json.loads that refuses NaN and Infinity, as JavaScript's JSON.parse does."""

    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)
