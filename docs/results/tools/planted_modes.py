#!/usr/bin/env python3
"""Planted changes and modes against OSU, from a session of `targets`.

    docs/results/tools/planted_modes.py SESSION_DIR [--earlier SESSION_DIR ...] [--json OUT]

SESSION_DIR holds what `targets OUT ... planted modes:N bare:M` writes:
session.log (or session.log.xz), and json/ (or json.tar.xz) with planted-*.json, modes-N.json
and the default runs run-N.json. --earlier names other sessions of the same machine identity
whose run-N.json join the history (their json/ or json.tar.xz).

  planted   each planted-*.json judged by `tools/track check` against a history of (a) this
            session's default runs and (b) those and the earlier sessions' runs. The planted
            runs were made before the default runs, and check judges a run only against runs
            dated before it, so a copy is judged whose context.date (and nothing else) is moved
            to a minute after the newest run of the history. Prints the exit status, every
            family's verdict, shift, noise and detectable shift, the flagged rows per family,
            and what was flagged outside the paths the planted change should touch. Then, for
            contrast, tools/compare.py (the two-run tool) planted against run-1.
  modes     per round N, the osu_bw / osu_bibw D D runs before modes-N.json against its
            mpi_cuda_aware mode:stream / mode:bidir rows: xferbench GB/s * 1000 / OSU MB/s (OSU's
            MB = 1e6 B), per round and mean; each tool's spread over the rounds (sd of log, %);
            and how long each timed (xferbench: iterations x real_time summed over its jobs;
            OSU: the bytes its timed windows moved / its figure).

Needs numpy and scipy (tools/track check).
"""

import argparse
import collections
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile

import repo_tools  # this folder's: where the repository's tools/ is
import rerun_targets  # this folder's: the session log, and peer_ratios

TRACK = os.path.join(repo_tools.TOOLS, "track")
COMPARE = os.path.join(repo_tools.TOOLS, "compare.py")
RUN_FILE = re.compile(r"run-(\d+)\.json$")
MODES_FILE = re.compile(r"modes-(\d+)\.json$")

# The paths each planted change should move (what the session plants: `targets`, phase planted):
# CUDA IPC off changes how Open MPI's smcuda moves device buffers, so mpi_cuda_aware only
# (mpi_staged and mpi_host hand MPI host buffers); TCP instead of shared memory moves every MPI
# path; the test-only slowdown matches ^mpi_cuda_aware/. host_staging uses no MPI in its timing.
EXPECTED = {
    "planted-ipc-off.json": {"mpi_cuda_aware"},
    "planted-tcp.json": {"mpi_host", "mpi_staged", "mpi_cuda_aware"},
    "planted-slow.json": {"mpi_cuda_aware"},
}
OSU_MODE = {"osu_bw": "stream", "osu_bibw": "bidir"}
OSU_ITERATIONS_LARGE = 20  # osu_bw / osu_bibw timed windows above 8 KiB, without -i
OSU_WINDOW = 64


peer_ratios = rerun_targets.peer_ratios
read_log = rerun_targets.read_log
dated_copy = rerun_targets.dated_copy


def unpack(session, scratch):
    """The folder holding the session's result files (json/, or json.tar.xz unpacked)."""
    folder = os.path.join(session, "json")
    if os.path.isdir(folder):
        return folder
    packed = os.path.join(session, "json.tar.xz")
    if not os.path.isfile(packed):
        raise SystemExit(f"planted_modes.py: {session}: neither json/ nor json.tar.xz there")
    folder = tempfile.mkdtemp(dir=scratch)
    with tarfile.open(packed) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".json"):
                member.name = os.path.basename(member.name)
                tar.extract(member, folder)
    return folder


def runs_in(folder):
    found = {}
    for name in os.listdir(folder):
        match = RUN_FILE.fullmatch(name)
        if match:
            found[int(match.group(1))] = os.path.join(folder, name)
    return [found[n] for n in sorted(found)]


def sd_pct(values):
    return statistics.stdev(math.log(v) for v in values) * 100 if len(values) >= 2 else None


def date_of(path):
    with open(path, encoding="utf-8") as f:
        return datetime.datetime.fromisoformat(json.load(f)["context"]["date"])


def run_tool(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"planted_modes.py: {' '.join(command)}: {done.stderr.strip()}")
    return done.returncode, json.loads(done.stdout) if done.stdout.strip().startswith("{") else None


def judge(planted, history_runs, scratch):
    history = tempfile.mkdtemp(dir=scratch)
    subprocess.run(
        [sys.executable, TRACK, "record", "--history", history, *history_runs],
        check=True,
        capture_output=True,
    )
    when = max(date_of(p) for p in history_runs) + datetime.timedelta(minutes=1)
    copy = dated_copy(planted, when, tempfile.mkdtemp(dir=scratch))
    status, result = run_tool(
        [sys.executable, TRACK, "check", "--history", history, "--format", "json", copy]
    )
    j = result["judgement"]
    families = [
        {
            "family": f["family"],
            "verdict": f.get("verdict"),
            "shift_pct": f["test"]["shift_pct"] if f.get("test") else None,
            "noise_pct": f["test"]["noise_pct"] if f.get("test") else None,
            "detectable_pct": f["test"]["detectable_pct"] if f.get("test") else None,
        }
        for f in j["families"]
    ]
    flagged_rows = collections.defaultdict(list)
    for r in j["rows"]:
        if r.get("verdict") not in (None, "no change"):
            size = int(r["row"].rsplit("bytes:", 1)[1])
            flagged_rows[r["family"]].append((r["verdict"], size, r["change_pct"]))
    expected = EXPECTED.get(os.path.basename(planted), set())
    outside = sorted(
        {f["family"] for f in families if f["verdict"] not in (None, "no change")}
        | set(flagged_rows)
    )
    outside = [f for f in outside if f.split("/")[0] not in expected]
    return {
        "exit_status": status,
        "verdict": result["verdict"],
        "basis": j["basis"],
        "earlier_runs": len(result["earlier_runs"]),
        "identity": result["identity"],
        "summary": result["summary"].replace(copy, os.path.basename(planted) + ", dated copy"),
        "families": families,
        "rows": {
            fam: {
                "verdicts": dict(collections.Counter(v for v, _, _ in rows)),
                "sizes": [s for _, s, _ in sorted(rows, key=lambda x: x[1])],
                "change_pct_min": min(c for _, _, c in rows),
                "change_pct_max": max(c for _, _, c in rows),
            }
            for fam, rows in sorted(flagged_rows.items())
        },
        "outside_expected": outside,
    }


def size_text(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def print_judgement(label, out):
    print(
        f"{label}: exit {out['exit_status']}, {out['verdict']} ({out['basis']}, "
        f"{out['earlier_runs']} earlier runs of {out['identity']})"
    )
    print(f"  {out['summary']}")
    for f in out["families"]:
        if f["shift_pct"] is None:
            print(f"  {'-':11s} {'':8s} {f['family']}")
            continue
        print(
            f"  {f['verdict']:11s} shift {f['shift_pct']:+8.1f}%  noise {f['noise_pct']:4.1f}%  "
            f"detectable {f['detectable_pct']:6.1f}%  {f['family']}"
        )
    for fam, rows in out["rows"].items():
        sizes = rows["sizes"]
        print(
            f"  rows flagged in {fam}: {rows['verdicts']}, sizes "
            f"{', '.join(size_text(s) for s in sizes)}; change {rows['change_pct_min']:+.1f}% to "
            f"{rows['change_pct_max']:+.1f}%"
        )
    print(f"  flagged outside the expected paths: {out['outside_expected'] or 'nothing'}")


def contrast(planted, base):
    status, result = run_tool([sys.executable, COMPARE, "--format", "json", base, planted])
    by_path = collections.defaultdict(collections.Counter)
    for r in result["rows"]:
        by_path[r["path"]][r["status"]] += 1
    out = {
        "exit_status": status,
        "base": os.path.basename(base),
        "by_path": {p: dict(c) for p, c in sorted(by_path.items())},
        "summary": result["summary"],
    }
    print(f"  compare.py {out['base']} {os.path.basename(planted)}: exit {status}")
    for path, counts in out["by_path"].items():
        ratios = [
            f"{s['size_class']} {s['ratio']:.3f}" for s in result["summary"] if s["path"] == path
        ]
        print(f"    {path:16s} {counts}  time ratio new/base (geomean): {', '.join(ratios)}")
    return out


def planted_section(folder, earlier_runs, scratch):
    mine = runs_in(folder)
    histories = [(f"this session's {len(mine)} runs", mine)]
    if earlier_runs:
        every = earlier_runs + mine
        histories.append((f"all {len(every)} runs", every))
    out = {}
    for name in sorted(EXPECTED):
        planted = os.path.join(folder, name)
        if not os.path.isfile(planted):
            continue
        print(f"\n-- {name} (expected to move: {', '.join(sorted(EXPECTED[name]))})")
        out[name] = {}
        for label, runs in histories:
            out[name][label] = judge(planted, runs, scratch)
            print_judgement(f"against {label}", out[name][label])
        out[name]["compare"] = contrast(planted, mine[0])
    return out


def osu_timed_s(command, test, size, value):
    iterations = OSU_ITERATIONS_LARGE
    if "-i" in command:
        iterations = int(command[command.index("-i") + 1])
    moved = size * OSU_WINDOW * iterations * (2 if test == "osu_bibw" else 1)
    return moved / (value * 1e6)


def modes_section(session, folder):
    rounds = collections.defaultdict(dict)  # (test, size) -> {round: entry}
    pending = []
    for command, output in peer_ratios.blocks(read_log(session)):
        osu = peer_ratios.osu_run(command, output)
        if osu is not None and osu["test"] in OSU_MODE and osu["buffers"] == "D":
            pending.append((command, osu))
            continue
        out = next((w for w in command if w.startswith("--benchmark_out=")), "")
        match = MODES_FILE.search(out)
        if not match:
            continue
        n = int(match.group(1))
        with open(os.path.join(folder, f"modes-{n}.json"), encoding="utf-8") as f:
            rows = {
                b["name"].replace("/manual_time", ""): b
                for b in json.load(f)["benchmarks"]
                if b.get("run_type", "iteration") == "iteration"
            }
        for osu_command, osu in pending:
            for size, value in osu["values"].items():
                row = rows.get(f"mpi_cuda_aware/mode:{OSU_MODE[osu['test']]}/bytes:{size}")
                if row is None:
                    continue
                rounds[(osu["test"], size)][n] = {
                    "osu_mb_s": value,
                    "osu_timed_s": osu_timed_s(osu_command, osu["test"], size, value),
                    "xferbench_gb_s": row["GB/s"],
                    "xferbench_timed_s": row["iterations"] * row["real_time"] * 1e-6,
                    "xferbench_ci95_pct": row["ci95_pct"],
                    "xferbench_messages_per_sample": row["batch"],
                    "xferbench_samples": row["samples"],
                    "xferbench_slowest_sample_us": row["max_us"],
                    "xferbench_mean_us": row["latency_us"],
                    # OSU's window time / 64, as xferbench's time a message is its sample's / 64
                    "osu_mean_us": size * (2 if osu["test"] == "osu_bibw" else 1) / value,
                    "ratio": row["GB/s"] * 1000 / value,
                }
        pending = []
    print(
        "\n-- modes: mpi_cuda_aware against OSU D D, per round (xferbench GB/s * 1000 / OSU MB/s)"
    )
    out = []
    for (test, size), by_round in sorted(rounds.items()):
        ns = sorted(by_round)
        entries = [by_round[n] for n in ns]
        ratios = [e["ratio"] for e in entries]
        entry = {
            "osu": f"{test} D D",
            "row": f"mpi_cuda_aware/mode:{OSU_MODE[test]}/bytes:{size}",
            "bytes": size,
            "rounds": ns,
            "per_round": entries,
            "mean_ratio": statistics.fmean(ratios),
            "osu_spread_pct": sd_pct([e["osu_mb_s"] for e in entries]),
            "xferbench_spread_pct": sd_pct([e["xferbench_gb_s"] for e in entries]),
        }
        entry["every_round_within_3pct"] = all(abs(r - 1) <= 0.03 for r in ratios)
        entry["mean_within_3pct"] = abs(entry["mean_ratio"] - 1) <= 0.03
        entry["spread_not_above_osu"] = entry["xferbench_spread_pct"] <= entry["osu_spread_pct"]
        out.append(entry)
        print(
            f"{test:8s} {size_text(size):>8s}: OSU MB/s "
            f"{[round(e['osu_mb_s'], 2) for e in entries]} "
            f"(spread {entry['osu_spread_pct']:.2f}%); "
            f"xferbench GB/s {[round(e['xferbench_gb_s'], 2) for e in entries]} "
            f"(spread {entry['xferbench_spread_pct']:.2f}%)"
        )
        print(
            f"{'':19s}ratio {[round(r, 4) for r in ratios]}, mean {entry['mean_ratio']:.4f}; "
            f"every round within 3%: {entry['every_round_within_3pct']}, mean within 3%: "
            f"{entry['mean_within_3pct']}, spread <= OSU's: {entry['spread_not_above_osu']}"
        )
        print(
            f"{'':19s}timed s: OSU {[round(e['osu_timed_s'], 4) for e in entries]}; xferbench "
            f"{[round(e['xferbench_timed_s'], 4) for e in entries]} (3 jobs); xferbench stated "
            f"ci95 {[round(e['xferbench_ci95_pct'], 1) for e in entries]}%, messages a sample "
            f"{sorted({int(e['xferbench_messages_per_sample']) for e in entries})}, samples "
            f"{[int(e['xferbench_samples']) for e in entries]}"
        )
        print(
            f"{'':19s}us a message (window time / messages a window): OSU's mean "
            f"{[round(e['osu_mean_us'], 3) for e in entries]}; xferbench's mean "
            f"{[round(e['xferbench_mean_us'], 3) for e in entries]}, slowest "
            f"sample {[round(e['xferbench_slowest_sample_us'], 3) for e in entries]}"
        )
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("session", metavar="SESSION_DIR")
    parser.add_argument("--earlier", nargs="*", default=[], metavar="SESSION_DIR")
    parser.add_argument("--json", help="also write everything printed here, as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = unpack(args.session, scratch)
        earlier = [p for s in args.earlier for p in runs_in(unpack(s, scratch))]
        also = f" (history also: {' '.join(args.earlier)})" if earlier else ""
        print(f"== {args.session}{also}")
        report = {
            "planted": planted_section(folder, earlier, scratch),
            "modes": modes_section(args.session, folder),
        }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
