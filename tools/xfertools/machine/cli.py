"""Calibrate mpi_host against the plainest MPI ping-pong, run alternately in one job.

The harness adds agreement between ranks and Google Benchmark's bookkeeping around the same
MPI_Send/MPI_Recv loop; this measures what that costs. Both programs are built by the same
CMake build (build/xferbench, build/plain_pingpong) and run in turn, several rounds, so drift
on the machine hits both alike. Prints a JSON record; medians decide.

usage: tools/calibrate.py [--build build] [--bytes 8] [--rounds 5] [--out FILE]
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys

from ..core import fields


def launcher():
    mpirun = os.environ.get("MPIRUN", "mpirun")
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True, check=False)
    extra = ["--oversubscribe"] if "Open MPI" in version.stdout + version.stderr else []
    return [mpirun] + extra + ["-np", "2"]


def run(command):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=600, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"calibrate: {shlex.join(command)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def plain_one_way_us(build, size, round_trips):
    out = run(launcher() + [os.path.join(build, "plain_pingpong"), str(size), str(round_trips)])
    return json.loads(out)["one_way_us"]


def xferbench_one_way_us(build, size):
    out = run(
        launcher()
        + [
            os.path.join(build, "xferbench"),
            f"--xfer_sizes={size}",
            "--benchmark_filter=mpi_host",
            "--benchmark_format=json",
        ]
    )
    rows = [r for r in json.loads(out)[fields.BENCHMARKS] if r.get(fields.RUN_TYPE) == "iteration"]
    return rows[0][fields.LATENCY_US]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build", help="build directory (default build)")
    parser.add_argument("--bytes", type=int, default=8, help="message size (default 8)")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds (default 10)")
    # About as long as xferbench's timed loop at 8 B (0.5 s of one-way time): on virtual
    # machines the speed of a ping-pong depends on how long it has been spinning.
    parser.add_argument(
        "--round-trips",
        type=int,
        default=2000000,
        help="round trips of the plain loop (default 2000000)",
    )
    parser.add_argument("--out", help="also write the JSON record here")
    args = parser.parse_args(argv)
    if args.bytes <= 0 or args.rounds <= 0 or args.round_trips <= 0:
        parser.error("--bytes, --rounds and --round-trips must be positive")
    for name in ("xferbench", "plain_pingpong"):
        if not os.access(os.path.join(args.build, name), os.X_OK):
            parser.error(f"--build {args.build}: no executable {name}; build first (tools/test)")

    plain, harness = [], []
    for _ in range(args.rounds):
        plain.append(plain_one_way_us(args.build, args.bytes, args.round_trips))
        harness.append(xferbench_one_way_us(args.build, args.bytes))
    record = {
        "bytes": args.bytes,
        "rounds": args.rounds,
        "plain_round_trips": args.round_trips,
        "plain_one_way_us": plain,
        "xferbench_one_way_us": harness,
        "plain_median_us": statistics.median(plain),
        "xferbench_median_us": statistics.median(harness),
        "plain_min_us": min(plain),
        "xferbench_min_us": min(harness),
    }
    # Virtual machines flip between fast and slow placements of the two ranks from one launch
    # to the next; the best of several launches compares like with like, the median is shown
    # for honesty.
    record["ratio_of_minimums"] = record["xferbench_min_us"] / record["plain_min_us"]
    record["ratio_of_medians"] = record["xferbench_median_us"] / record["plain_median_us"]
    record["within_10_percent"] = abs(record["ratio_of_minimums"] - 1) <= 0.10
    text = json.dumps(record, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0
