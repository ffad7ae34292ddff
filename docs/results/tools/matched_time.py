#!/usr/bin/env python3
"""The reproducibility target's ping-pong rows against osu_latency at OSU's time, and the D D
rows under CUDA MPS, from sessions of `targets` (phases matched:N and mps:N).

    docs/results/tools/matched_time.py SESSION_DIR [SESSION_DIR ...] [--json OUT]

SESSION_DIR holds session.log (or session.log.xz) and json/ (or json.tar.xz).

  matched  per row (mpi_host: osu_latency H H; mpi_cuda_aware: osu_latency D D; 8 B, 1 MiB,
           256 MiB): xferbench's figure per round (matched-long-N.json, matched-short-N.json) and
           OSU's (us), each one's spread over the rounds (sd of log, %), the mean ratio
           xferbench / OSU of the same round, and the seconds each spent timing one round's
           messages (xferbench: messages x 2 x one-way time; OSU: its iterations x 2 x latency,
           10,000 up to 8 KiB and 1,000 above, or the -i the command gave).
  mps, monitor
           per condition (mps: off, or under CUDA MPS: on; monitor: quiet, or polled by
           nvidia-smi) and row (mpi_cuda_aware ping-pong and osu_latency D D at 8 B, 1 MiB,
           256 MiB): each round's figures (KIND-CONDITION-N.json; OSU's by the step names in
           walls.txt), each one's spread over the rounds (sd of log, %), the mean ratio
           xferbench / OSU, how many of xferbench's visits read over 1.08x their row's median,
           and how often nvidia-smi (smi.csv) saw each clock event reason.
  single   mpi_host ping-pong at 256 MiB alone (single-default-N.json: one timed message a
           job; single-long-N.json: about ten) and osu_latency H H at 256 MiB (loop: -i 100
           -x 10; three: -i 3 -x 0), each round's figure, their mean and spread.
  short    mpi_cuda_aware ping-pong at 8 B and 256 MiB at the default time (short-N.json)
           against osu_latency D D given as many round trips (three launches of -i 200 and
           -i 25, averaged) and at its own (-i 10000 and -i 100): each one's spread.
The OSU runs are taken from the log in order: run each phase in a session of its own.
"""

import collections
import lzma
import os
import statistics
import sys

import ack_and_time  # this folder's: the session's result files, spread_pct
import peer_ratios
import rerun_targets
import robust_visits

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


def osu_steps(session):
    """[(step name, OSU run)] of the session's osu_latency steps, in order: walls.txt names each
    step and session.log holds their output in the same order."""
    with open(os.path.join(session, "walls.txt"), encoding="utf-8") as f:
        names = [line.split()[0] for line in f if line.startswith("osu_latency")]
    runs = [
        peer_ratios.osu_run(command, output)
        for command, output in peer_ratios.blocks(rerun_targets.read_log(session))
    ]
    return list(zip(names, [run for run in runs if run and run["test"] == "osu_latency"]))


def xfer_latency(document):
    """{size: one-way us} of a result file's ping-pong rows."""
    found = {}
    for row in document["benchmarks"]:
        if row.get("run_type") == "iteration" and "latency_us" in row:
            found[int(row["name"].split("/bytes:")[1].split("/")[0])] = row["latency_us"]
    return found


def clock_reasons(session):
    """{reason: samples} over smi.csv's (or smi.csv.xz's) lines: nvidia-smi's active clock event
    reasons."""
    counts = collections.Counter()
    for name, opener in (("smi.csv", open), ("smi.csv.xz", lzma.open)):
        try:
            with opener(os.path.join(session, name), "rt", encoding="utf-8") as f:
                for line in f:
                    reason = line.rsplit(",", 1)[-1].strip()
                    if reason.startswith("0x"):
                        counts[reason] += 1
            break
        except FileNotFoundError:
            continue
    return dict(counts)


CONDITIONS = {"mps": ("off", "on"), "monitor": ("quiet", "polled")}


def conditions(session, docs, out):
    """Phases mps:N and monitor:N: mpi_cuda_aware and osu_latency D D under two conditions."""
    osu = collections.defaultdict(dict)  # (condition, size): {round: us}
    for name, run in osu_steps(session):
        size, tag = name.split("-")[2:4]  # osu_latency-DD-SIZE-CONDITIONROUND
        condition = tag.rstrip("0123456789")
        osu[(condition, int(size))][int(tag[len(condition) :])] = run["values"][int(size)]
    reasons = clock_reasons(session)
    for kind, pair in CONDITIONS.items():
        if not ack_and_time.numbered(docs, f"{kind}-{pair[0]}"):
            continue
        print(f"== {session}: mpi_cuda_aware ping-pong and osu_latency D D, {kind}: {pair}")
        result = {"clock_event_reasons": reasons}
        for condition in pair:
            rounds = ack_and_time.numbered(docs, f"{kind}-{condition}")
            mine = [xfer_latency(docs[n]) for n in rounds]
            for size in SIZES:
                xs = [m[size] for m in mine if size in m]
                theirs = [osu[(condition, size)][r] for r in sorted(osu[(condition, size)])]
                if not xs or len(xs) != len(theirs):
                    print(f"  {condition} {size}: {len(xs)} rounds of ours, {len(theirs)} of OSU")
                    continue
                entry = {
                    "xferbench_us": xs,
                    "osu_us": theirs,
                    "xferbench_spread_pct": ack_and_time.spread_pct(xs),
                    "osu_spread_pct": ack_and_time.spread_pct(theirs),
                    "mean_ratio": statistics.mean(a / b for a, b in zip(xs, theirs)),
                }
                result[f"{condition}/bytes:{size}"] = entry
                print(
                    f"  {condition:6s} {size:9d} B: xferbench {statistics.mean(xs):9.2f} us, "
                    f"spread {entry['xferbench_spread_pct']:.2f}%; OSU "
                    f"{statistics.mean(theirs):9.2f} us, spread {entry['osu_spread_pct']:.2f}%; "
                    f"ratio {entry['mean_ratio']:.3f}"
                )
            counts = robust_visits.slow_visits(docs[n] for n in rounds).values()
            slow, total = (sum(c[i] for c in counts) for i in (0, 1))
            result[f"{condition}/slow_visits"] = [slow, total]
            print(
                f"  {condition:6s} visits over {robust_visits.SLOW}x their row's median: "
                f"{slow} of {total}"
            )
        print(f"  nvidia-smi clock event reasons (samples): {result['clock_event_reasons']}")
        out[kind] = result


def single(session, docs, out):
    """Phase single:N: mpi_host ping-pong at 256 MiB alone, one timed message a job and about ten,
    against osu_latency H H in a loop of 100 and in three messages without warm-up."""
    if not ack_and_time.numbered(docs, "single-default"):
        return
    series = collections.defaultdict(list)
    for name, run in osu_steps(session):
        series["osu " + name.rsplit("-", 1)[1].rstrip("0123456789")] += run["values"].values()
    for variant in ("default", "long"):
        for name in ack_and_time.numbered(docs, f"single-{variant}"):
            series[f"xferbench {variant}"] += xfer_latency(docs[name]).values()
    print(f"== {session}: mpi_host ping-pong at 256 MiB alone against osu_latency H H (us)")
    result = {}
    for label, values in series.items():
        result[label] = {
            "us": values,
            "mean_us": statistics.mean(values),
            "spread_pct": ack_and_time.spread_pct(values),
        }
        print(
            f"  {label:18s} mean {statistics.mean(values):9.1f}, spread "
            f"{result[label]['spread_pct']:.2f}%: {[round(v) for v in values]}"
        )
    out["single"] = result


def short(session, docs, out):
    """Phase short:N: mpi_cuda_aware ping-pong at 8 B and 256 MiB at the default time against
    osu_latency D D given as many round trips (the mean of three launches) and at its own."""
    names = ack_and_time.numbered(docs, "short")
    if not names:
        return
    osu = collections.defaultdict(lambda: collections.defaultdict(list))  # (kind, size): round
    for name, run in osu_steps(session):
        parts = name.split("-")  # osu_latency-DD-SIZE-{shortR-J,fullR}
        kind = parts[3].rstrip("0123456789")
        if kind in ("short", "full"):
            size = int(parts[2])
            osu[(kind, size)][int(parts[3][len(kind) :])].append(run["values"][size])
    print(f"== {session}: mpi_cuda_aware ping-pong against osu_latency D D at the same time")
    result = {}
    for size in (8, 256 << 20):
        series = {
            "xferbench, default time": [xfer_latency(docs[n])[size] for n in names],
            "OSU, the same round trips": [
                statistics.mean(v) for _, v in sorted(osu[("short", size)].items())
            ],
            "OSU, its own time": [v[0] for _, v in sorted(osu[("full", size)].items())],
        }
        result[size] = {}
        for label, values in series.items():
            result[size][label] = {"us": values, "spread_pct": ack_and_time.spread_pct(values)}
            print(
                f"  {size:9d} B {label:26s} mean {statistics.mean(values):8.2f} us, spread "
                f"{result[size][label]['spread_pct']:.2f}% over {len(values)} rounds"
            )
    out["short"] = result


def main():
    return ack_and_time.report(__doc__.split("\n\n")[0], [matched, conditions, single, short])


if __name__ == "__main__":
    sys.exit(main())
