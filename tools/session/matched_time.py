#!/usr/bin/env python3
"""The reproducibility target's six ping-pong rows at osu_latency's time, from sessions of
tools/session/targets (phase matched:N).

    tools/session/matched_time.py SESSION_DIR [SESSION_DIR ...] [--json OUT]

SESSION_DIR holds session.log (or session.log.xz) and json/ (or json.tar.xz).

  matched  per row (mpi_host: osu_latency H H; mpi_cuda_aware: osu_latency D D; 8 B, 1 MiB,
           256 MiB): xferbench's figure per round (matched-long-N.json, matched-short-N.json) and
           OSU's (us), each one's spread over the rounds (sd of log, %), the mean ratio
           xferbench / OSU of the same round, and the seconds each spent timing one round's
           messages (xferbench: messages x 2 x one-way time; OSU: its iterations x 2 x latency,
           10,000 up to 8 KiB and 1,000 above, or the -i the command gave).
The OSU runs are taken from the log in order: run this phase in a session of its own.
"""

import collections
import statistics
import sys

import ack_and_time  # this folder's: the session's result files, spread_pct
import peer_ratios
import rerun_targets

ROWS = [  # (xferbench family, OSU buffers)
    ("mpi_host/mode:pingpong", "H"),
    ("mpi_cuda_aware/mode:pingpong", "D"),
]
SIZES = (8, 1 << 20, 256 << 20)


def osu_iterations(command, size):
    """What osu_latency timed: its -i, else OSU 7.4's default for the size."""
    if "-i" in command:
        return int(command[command.index("-i") + 1])
    return 10000 if size <= 8192 else 1000


def matched(session, docs, out):
    names = ack_and_time.numbered(docs, "matched-long")
    if not names:
        return
    short = ack_and_time.numbered(docs, "matched-short")
    log = rerun_targets.read_log(session)
    osu = collections.defaultdict(list)  # (buffers, size): [(us, seconds timed)]
    for command, output in peer_ratios.blocks(log):
        run = peer_ratios.osu_run(command, output)
        if run and run["test"] == "osu_latency":
            for size, value in run["values"].items():
                timed = osu_iterations(command, size) * 2 * value / 1e6
                osu[(run["buffers"], size)].append((value, timed))
    xfer = collections.defaultdict(list)  # (family, size): [(us, seconds timed)]
    for name in names + short:
        for row in docs[name]["benchmarks"]:
            if row.get("run_type") != "iteration" or "latency_us" not in row:
                continue
            family, rest = row["name"].split("/bytes:")
            timed = row["iterations"] * 2 * row["latency_us"] / 1e6
            xfer[(family, int(rest.split("/")[0]))].append((row["latency_us"], timed))
    print(f"== {session}: six ping-pong rows at about osu_latency's time, {len(names)} rounds")
    result = {}
    for family, buffers in ROWS:
        for size in SIZES:
            mine, theirs = xfer[(family, size)], osu[(buffers, size)]
            if not mine or len(mine) != len(theirs):
                print(f"  {family} {size}: {len(mine)} rounds of xferbench, {len(theirs)} of OSU")
                continue
            ratio = statistics.mean(a[0] / b[0] for a, b in zip(mine, theirs))
            entry = {
                "xferbench_us": [m[0] for m in mine],
                "osu_us": [t[0] for t in theirs],
                "xferbench_spread_pct": ack_and_time.spread_pct([m[0] for m in mine]),
                "osu_spread_pct": ack_and_time.spread_pct([t[0] for t in theirs]),
                "mean_ratio": ratio,
                "xferbench_timed_s": statistics.median(m[1] for m in mine),
                "osu_timed_s": statistics.median(t[1] for t in theirs),
            }
            result[f"{family}/bytes:{size}"] = entry
            print(
                f"  {family:29s} {size:9d} B: spread xferbench {entry['xferbench_spread_pct']:.2f}%"
                f" OSU {entry['osu_spread_pct']:.2f}%; ratio {ratio:.3f}; timed per round "
                f"{entry['xferbench_timed_s']:.2f} s vs {entry['osu_timed_s']:.2f} s"
            )
            print(f"      xferbench {[round(v, 3) for v in entry['xferbench_us']]}")
            print(f"      OSU       {[round(v, 3) for v in entry['osu_us']]}")
    out["matched"] = result


def main():
    return ack_and_time.report(__doc__.split("\n\n")[0], [matched])


if __name__ == "__main__":
    sys.exit(main())
