#!/usr/bin/env python3
"""The figures behind the pinned-memory, warm-up and binding changes, from sessions of
`targets` (this folder's).

    docs/results/tools/pinned_and_warm.py SESSION_DIR [SESSION_DIR ...] [--json OUT]

SESSION_DIR holds session.log (or session.log.xz) and json/ (or json.tar.xz).

  pinned  phase `pinned`: each line pinned_alloc (pinned_alloc.cu) prints, every run of it side
          by side (ms).
  warm    default runs (run-N.json): rows above 64 MiB, per family and size, the median one-way
          time of visits that warmed up and of those that did not, their ratio, and for the
          visits that warmed up, the warm-up message's time over a timed message's (1: the
          warm-up found nothing to warm), split by whether the family had run before in that job.
  time    default runs: seconds per job, as ack_and_time.py prints them.
  outliers default runs: visits of rows up to 1 MiB that read over 1.5x the median of their
          row's visits in the session, in all and by the size of the row visited just before.
  bind    phase bind:N (bind-core-N.json, bind-numa-N.json): per binding and size, the
          mpi_host ping-pong figure per round (us), its spread over the rounds (sd of log, %),
          the mean ratio to osu_latency H H at 8 B of the same round, and how many visits read
          over 1.5x the median of that size's visits under that binding.
  context phase context:N: per size (8 B, 1 MiB), osu_latency H H without a CUDA context and
          with one (-d cuda), and mpi_host ping-pong (context-N.json) and the same with no GPU
          visible (context-nogpu-N.json): the figure per round (us), the mean, and the mean
          ratio of each xferbench variant to the OSU run of the same kind in the same round.
bind and context pair their rounds with every osu_latency H H run in the session's log, in
order: run those phases in sessions of their own.
"""

import collections
import re
import statistics
import sys

import ack_and_time  # this folder's: the session's result files and the time per job
import peer_ratios
import rerun_targets

BIG = 64 << 20


def pinned(session, docs, out):
    log = rerun_targets.read_log(session)
    runs = []
    for command, output in peer_ratios.blocks(log):
        if command and command[0].endswith("pinned_alloc"):
            runs.append(output)
    if not runs:
        return
    print(f"== {session}: making 1 GiB of page-locked memory, {len(runs)} runs (ms)")
    table = []
    for lines in zip(*runs):
        label = re.sub(r"\s+[\d.]+ ms.*$", "", lines[0])
        values = [m.group(1) for m in (re.search(r"([\d.]+) ms", x) for x in lines) if m]
        table.append({"step": label.strip(), "ms": [float(v) for v in values]})
        print(f"  {label:40s} " + "  ".join(f"{v:>7}" for v in values))
    out["pinned"] = table


def job_orders(document):
    """{job: [(at_s, row, visit)]} in run order."""
    jobs = collections.defaultdict(list)
    for row, visits in document["context"]["xferbench"]["visits"].items():
        for v in visits:
            jobs[v.get("job", 0)].append((v["at_s"], row, v))
    for listed in jobs.values():
        listed.sort(key=lambda t: t[0])
    return jobs


def warm(session, docs, out):
    runs = ack_and_time.numbered(docs, "run")
    if not runs:
        return
    times = collections.defaultdict(lambda: ([], []))  # (family, size): (cold, warmed)
    ratios = collections.defaultdict(lambda: ([], []))  # family: (seen before, family's first)
    for name in runs:
        for listed in job_orders(docs[name]).values():
            seen = set()
            for _, row, v in listed:
                family, size = row.rsplit("/bytes:", 1)
                size = int(size)
                # warm_messages where the build records it; before, a host path's warm-up of a
                # big row took over a millisecond, and device rows warmed up every visit
                guess = "mpi_cuda_aware" in row or v.get("warm_s", 0) > 1e-3
                warmed = v.get("warm_messages", int(guess)) > 0
                if size > BIG and "latency_us" in v:
                    times[(family, size)][warmed].append(v["latency_us"])
                    if warmed:
                        trips = 2 if "mode:pingpong" in row else 1
                        ratio = v["warm_s"] / (v["latency_us"] * 1e-6 * trips)
                        ratios[family][family not in seen].append(ratio)
                seen.add(family)
    print(f"== {session}: rows above 64 MiB, visits with and without a warm-up ({len(runs)} runs)")
    table = []
    for (family, size), (cold, warmed) in sorted(times.items()):
        if not cold or not warmed:
            continue
        c, w = statistics.median(cold), statistics.median(warmed)
        table.append(
            {
                "family": family,
                "bytes": size,
                "cold": len(cold),
                "warmed": len(warmed),
                "cold_over_warmed": c / w,
            }
        )
        print(
            f"  {family:60s} {size >> 20:5d} MiB  not warmed {len(cold):2d}, warmed "
            f"{len(warmed):2d}: median time ratio {c / w:.3f}"
        )
    ratio_rows = []
    for family, (before, first) in sorted(ratios.items()):
        entry = {"family": family, "run_before": before, "first_of_family": first}
        ratio_rows.append(entry)
        med = f"{statistics.median(before):.2f}" if before else "-"
        print(
            f"  warm-up message / timed message, {family}: family had run before "
            f"(n={len(before)}) median {med}; family's first {[round(x, 2) for x in first]}"
        )
    out["warm"] = {"times": table, "warm_ratio": ratio_rows}


def outliers(session, docs, out):
    runs = ack_and_time.numbered(docs, "run")
    if not runs:
        return
    counts = collections.defaultdict(lambda: [0, 0])  # what ran before: [slow visits, visits]
    by_row = collections.defaultdict(list)
    for name in runs:
        for row, visits in docs[name]["context"]["xferbench"]["visits"].items():
            if int(row.rsplit("bytes:", 1)[1]) <= 1 << 20:
                by_row[row] += [v for v in visits if "latency_us" in v]
    for visits in by_row.values():
        median = statistics.median(v["latency_us"] for v in visits)
        for v in visits:
            before = int(v["after"].rsplit("bytes:", 1)[1]) if v.get("after") else 0
            kind = (
                "above 64 MiB" if before > BIG else "1-64 MiB" if before > 1 << 20 else "to 1 MiB"
            )
            for key in (kind, "all"):
                counts[key][0] += v["latency_us"] > 1.5 * median
                counts[key][1] += 1
    print(
        f"== {session}: visits of rows up to 1 MiB over 1.5x their row's median ({len(runs)} runs)"
    )
    for key in ("all", "to 1 MiB", "1-64 MiB", "above 64 MiB"):
        slow, total = counts[key]
        label = "in all" if key == "all" else f"after a row of {key}"
        print(f"  {label:28s} {slow:3d} of {total:4d} ({100 * slow / max(total, 1):.1f}%)")
    out["outliers"] = {key: {"slow": c[0], "visits": c[1]} for key, c in counts.items()}


def bind(session, docs, out):
    log = rerun_targets.read_log(session)
    osu = [
        run["values"][8]
        for run in (peer_ratios.osu_run(c, o) for c, o in peer_ratios.blocks(log))
        if run and run["test"] == "osu_latency" and run["buffers"] == "H" and 8 in run["values"]
    ]
    result = {}
    for binding in ("core", "numa"):
        names = ack_and_time.numbered(docs, f"bind-{binding}")
        if not names:
            continue
        if binding == "core":
            print(
                f"== {session}: mpi_host ping-pong bound to a core and to the NUMA domain, "
                f"{len(names)} rounds; osu_latency H H 8 B {osu}"
            )
        per_size = collections.defaultdict(list)
        visit_times = collections.defaultdict(list)
        for name in names:
            for row in docs[name]["benchmarks"]:
                if row.get("run_type") == "iteration" and "latency_us" in row:
                    per_size[int(row["name"].split("bytes:")[1].split("/")[0])].append(
                        row["latency_us"]
                    )
            for row, visits in docs[name]["context"]["xferbench"]["visits"].items():
                visit_times[int(row.rsplit("bytes:", 1)[1])] += [
                    v["latency_us"] for v in visits if "latency_us" in v
                ]
        result[binding] = {}
        for size, figures in sorted(per_size.items()):
            spread = ack_and_time.spread_pct(figures)
            med = statistics.median(visit_times[size])
            slow = sum(1 for t in visit_times[size] if t > 1.5 * med)
            ratio = (
                statistics.mean(f / o for f, o in zip(figures, osu))
                if size == 8 and len(osu) == len(figures)
                else None
            )
            result[binding][size] = {
                "figures": figures,
                "spread_pct": spread,
                "ratio_to_osu": ratio,
                "visits": len(visit_times[size]),
                "slow_visits": slow,
            }
            extra = f", mean ratio to osu_latency {ratio:.3f}" if ratio else ""
            print(
                f"  {binding:4s} {size:8d} B: {[round(f, 3) for f in figures]} spread "
                f"{spread:.2f}%{extra}; visits over 1.5x median {slow} of "
                f"{len(visit_times[size])}"
            )
    if result:
        result["osu_latency_hh_8"] = osu
        out["bind"] = result


def context(session, docs, out):
    log = rerun_targets.read_log(session)
    osu = collections.defaultdict(list)  # (with context, size): [us per round]
    for command, output in peer_ratios.blocks(log):
        run = peer_ratios.osu_run(command, output)
        if run and run["test"] == "osu_latency" and run["buffers"] == "H":
            for size, value in run["values"].items():
                osu[("-d" in command, size)].append(value)
    xfer = collections.defaultdict(list)  # (with GPU, size): [us per round]
    for gpu, stem in ((True, "context"), (False, "context-nogpu")):
        for name in ack_and_time.numbered(docs, stem):
            for row in docs[name]["benchmarks"]:
                if row.get("run_type") == "iteration" and "latency_us" in row:
                    size = int(row["name"].split("bytes:")[1].split("/")[0])
                    xfer[(gpu, size)].append(row["latency_us"])
    if not xfer:
        return
    if any(
        len(osu[(c, size)]) != len(xfer[(True, size)]) for c in (False, True) for _, size in xfer
    ):
        print(f"== {session}: context rounds without their OSU runs (a phase of its own?): skipped")
        return
    print(f"== {session}: a CUDA context and small host messages (us per round)")
    result = {}
    for size in sorted({size for _, size in xfer}):
        entry = {}
        for label, figures in (
            ("osu_latency H H", osu[(False, size)]),
            ("osu_latency -d cuda H H", osu[(True, size)]),
            ("mpi_host, GPU visible", xfer[(True, size)]),
            ("mpi_host, no GPU", xfer[(False, size)]),
        ):
            entry[label] = figures
            print(
                f"  {size:8d} B {label:24s} {[round(f, 3) for f in figures]} mean "
                f"{statistics.mean(figures):.3f}"
            )
        for mine, theirs in (
            ("mpi_host, GPU visible", "osu_latency -d cuda H H"),
            ("mpi_host, no GPU", "osu_latency H H"),
        ):
            pairs = list(zip(entry[mine], entry[theirs]))
            ratio = statistics.mean(a / b for a, b in pairs)
            entry[f"{mine} / {theirs}"] = ratio
            print(f"  {size:8d} B {mine} / {theirs}: mean ratio {ratio:.3f}")
        result[size] = entry
    out["context"] = result


def main():
    return ack_and_time.report(
        __doc__.split("\n\n")[0],
        [pinned, warm, ack_and_time.time_breakdown, outliers, bind, context],
    )


if __name__ == "__main__":
    sys.exit(main())
