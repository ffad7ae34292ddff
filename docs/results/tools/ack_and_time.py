#!/usr/bin/env python3
"""The acknowledgement experiment and where a default run's time goes, from sessions of
`targets` (this folder's).

    docs/results/tools/ack_and_time.py SESSION_DIR [SESSION_DIR ...] [--json OUT]

SESSION_DIR holds session.log (or session.log.xz) and json/ (or json.tar.xz).

  ack    per round N (phase ack:N): osu_latency D D at 1 B (what one acknowledgement in device
         memory costs), osu_bw D D at 1, 16 and 256 MiB, and the mpi_cuda_aware mode:stream rows
         of ack-host-N.json and ack-buffers-N.json (--xfer_ack=buffers). Prints each figure per
         round, the ratio of each xferbench variant to osu_bw (GB/s * 1000 / OSU MB/s), each one's
         spread over the rounds (sd of log, %), and the window time a model predicts for OSU:
         the host-ack window time scaled to OSU's window of 64 plus one osu_latency D D 1 B.
  time   per default run (run-N.json): the visits' wall, make (setup_s - warm_s), warm_s,
         check_s and message time (one-way time x messages, twice for ping-pong) per job,
         for rows up to 64 MiB and above it, averaged over the session's jobs.
"""

import argparse
import collections
import io
import json
import lzma
import os
import re
import statistics
import sys
import tarfile

import peer_ratios  # this folder's: how session.log holds commands and OSU's figures
import rerun_targets

SIZES = (1048576, 16777216, 268435456)
WINDOW_IN_FLIGHT = 4 << 30  # support/mpi/exchange.hpp: kWindowInFlight


def documents(session):
    """{file name: document} of json/*.json, or of json.tar.xz."""
    found = {}
    folder = os.path.join(session, "json")
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                found[name] = json.load(f)
    else:
        with tarfile.open(os.path.join(session, "json.tar.xz")) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith(".json"):
                    data = tar.extractfile(member).read()
                    found[os.path.basename(member.name)] = json.load(io.BytesIO(data))
    return found


def numbered(docs, stem):
    """The names STEM-N.json among `docs`, in the order of N."""
    found = {}
    for name in docs:
        match = re.fullmatch(re.escape(stem) + r"-(\d+)\.json", name)
        if match:
            found[int(match.group(1))] = name
    return [found[n] for n in sorted(found)]


def osu_figures(log):
    """{(test, size): [figure per round]} of the OSU runs on device buffers (D D), in log order."""
    figures = collections.defaultdict(list)
    for command, output in peer_ratios.blocks(log):
        run = peer_ratios.osu_run(command, output)
        if run and run["buffers"] == "D":
            for size, value in run["values"].items():
                figures[(run["test"], size)].append(value)
    return figures


def spread_pct(values):
    """sd of log over the rounds, in percent (nan below 2 rounds)."""
    spread = rerun_targets.sd_pct(values)
    return float("nan") if spread is None else spread


def stream_gbps(document, size):
    for row in document["benchmarks"]:
        if f"/bytes:{size}/" in row["name"] and "mode:stream" in row["name"]:
            return row["GB/s"]
    return None


def ack(session, docs, out):
    log = rerun_targets.read_log(session)
    osu = osu_figures(log)
    rounds = sorted(
        int(m.group(1)) for m in (re.match(r"ack-host-(\d+)\.json", n) for n in docs) if m
    )
    if not rounds:
        return
    print(f"== {session}: acknowledgement rounds {rounds}")
    ack_us = osu.get(("osu_latency", 1), [])
    print(f"osu_latency D D 1 B: {ack_us} us")
    result = {"osu_latency_dd_1b_us": ack_us, "sizes": {}}
    for size in SIZES:
        bw = osu.get(("osu_bw", size), [])
        host = [stream_gbps(docs[f"ack-host-{r}.json"], size) for r in rounds]
        buffers = [stream_gbps(docs[f"ack-buffers-{r}.json"], size) for r in rounds]
        mean = statistics.fmean
        # Model: OSU's window of 64 = 64 host-ack message times + one 1-byte device message.
        per_message_s = size / (mean(host) * 1e9)
        window = min(64, max(1, WINDOW_IN_FLIGHT // size))
        predicted_osu = size / (per_message_s + mean(ack_us) * 1e-6 / 64) / 1e6
        predicted_buffers = size / (per_message_s + mean(ack_us) * 1e-6 / window) / 1e9
        entry = {
            "osu_bw_mbps": bw,
            "host_gbps": host,
            "buffers_gbps": buffers,
            "ratio_host": mean(host) * 1000 / mean(bw),
            "ratio_buffers": mean(buffers) * 1000 / mean(bw),
            "spread_pct": {
                "osu": spread_pct(bw),
                "host": spread_pct(host),
                "buffers": spread_pct(buffers),
            },
            "window_xferbench": window,
            "predicted_osu_mbps": predicted_osu,
            "predicted_buffers_gbps": predicted_buffers,
        }
        result["sizes"][size] = entry
        print(
            f"{size:>10} B  osu_bw {[round(v / 1000, 1) for v in bw]} GB/s | host ack "
            f"{[round(v, 1) for v in host]} | ack:buffers {[round(v, 1) for v in buffers]}"
        )
        print(
            f"{'':>12} mean ratio to osu_bw: host {entry['ratio_host']:.3f}, buffers "
            f"{entry['ratio_buffers']:.3f}; spread osu {entry['spread_pct']['osu']:.2f}% host "
            f"{entry['spread_pct']['host']:.2f}% buffers {entry['spread_pct']['buffers']:.2f}%"
        )
        print(
            f"{'':>12} model (host-ack time per message + one {mean(ack_us):.1f} us ack per "
            f"window): osu_bw {predicted_osu / 1000:.1f} GB/s (measured {mean(bw) / 1000:.1f}), "
            f"ack:buffers with its window of {window} {predicted_buffers:.1f} GB/s (measured "
            f"{mean(buffers):.1f})"
        )
    out["ack"] = result


def time_breakdown(session, docs, out):
    runs = numbered(docs, "run")
    if not runs:
        return
    totals = collections.defaultdict(float)
    jobs = 0
    for name in runs:
        xb = docs[name]["context"]["xferbench"]
        jobs += xb.get("jobs", 1)
        for row, visits in xb["visits"].items():
            size = "above 64 MiB" if int(row.rsplit("bytes:", 1)[1]) > 64 << 20 else "to 64 MiB"
            trips = 2 if "mode:pingpong" in row else 1
            for v in visits:
                totals[(size, "wall")] += v["wall_s"]
                totals[(size, "make")] += v["setup_s"] - v.get("warm_s", 0)
                totals[(size, "warm")] += v.get("warm_s", 0)
                totals[(size, "check")] += v.get("check_s", 0)
                totals[(size, "messages")] += v["latency_us"] * 1e-6 * v["messages"] * trips
    print(f"== {session}: seconds per job, mean over {jobs} jobs of {len(runs)} default runs")
    result = {}
    for size in ("to 64 MiB", "above 64 MiB"):
        parts = {k: totals[(size, k)] / jobs for k in ("wall", "messages", "make", "warm", "check")}
        result[size] = parts
        print(f"  rows {size:>12}: " + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()))
    out["time_per_job"] = result


def report(description, sections, argv=None):
    """The command line of a session report: SESSION_DIR... [--json OUT]. Each of `sections`
    is called as section(session, docs, out) for every session, in order; it prints its
    figures and stores them in `out`, which --json writes, keyed by session. A session whose
    files cannot be read ends it with one line naming them, and exit status 2."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("sessions", nargs="+", metavar="SESSION_DIR")
    parser.add_argument("--json", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    everything = {}
    for session in args.sessions:
        out = {}
        try:
            docs = documents(session)
            for section in sections:
                section(session, docs, out)
        except (OSError, ValueError, tarfile.TarError, lzma.LZMAError) as e:
            parser.exit(2, f"{parser.prog}: {session}: cannot read the session: {e}\n")
        everything[session] = out
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(everything, f, indent=1, allow_nan=False, default=str)
    return 0


def main():
    return report(__doc__.split("\n\n")[0], [ack, time_breakdown])


if __name__ == "__main__":
    sys.exit(main())
