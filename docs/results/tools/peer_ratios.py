#!/usr/bin/env python3
"""xferbench against OSU micro-benchmarks, from one session's log, round by round.

    docs/results/tools/peer_ratios.py SESSION_DIR [--json]

SESSION_DIR holds session.log as precision-session and modes-session (in this folder) write
it: every command on a line starting with "$ ", its output, then "(exit N)". OSU runs are
read from their output; xferbench runs from the JSON file named by their --benchmark_out. Each
OSU figure is paired with the xferbench row that measures the same thing, from the xferbench run
that follows it in the same round (peer, xferbench, peer, ...):

    osu_latency H H / D D   mpi_host / mpi_cuda_aware mode:pingpong   time, us (lower is better)
    osu_bw      H H / D D   mpi_host / mpi_cuda_aware mode:stream     MB/s = 1e6 B/s
    osu_bibw    H H / D D   mpi_host / mpi_cuda_aware mode:bidir      MB/s (both directions)
    osu_mbw_mr  H H         mpi_host mode:stream/pairs:N              MB/s (all pairs)

Prints one line per comparison and size: every round's ratio (xferbench / OSU: time for
latency, bandwidth otherwise) and their median. Standard library only. Exit status 2 on a
missing or unreadable session.
"""

import argparse
import json
import os
import re
import shlex
import statistics
import sys

import repo_tools  # noqa: F401 (this folder's: puts the repository's tools/ on sys.path)

from xfertools.core.files import InputError, load_result

ROW = re.compile(r"^\s*(\d+)\s+([0-9.]+)")
XFER_PATH = {"H": "mpi_host", "D": "mpi_cuda_aware"}
OSU_MODE = {
    "osu_latency": "pingpong",
    "osu_bw": "stream",
    "osu_bibw": "bidir",
    "osu_mbw_mr": "stream",
}


def blocks(log_text):
    """(command words, output lines) for every command in the log."""
    command, output = None, []
    for line in log_text.splitlines():
        if line.startswith("$ "):
            command, output = shlex.split(line[2:]), []
        elif line.startswith("(exit ") and command is not None:
            yield command, output
            command = None
        elif command is not None:
            output.append(line)


def osu_run(command, output):
    """{'test', 'buffers', 'ranks', 'values': {size: value}} or None for other commands."""
    test = next((os.path.basename(w) for w in command if os.path.basename(w) in OSU_MODE), None)
    if test is None:
        return None
    ranks = int(command[command.index("-np") + 1]) if "-np" in command else 2
    buffers = "D" if command[-2:] == ["D", "D"] else "H"
    values = {}
    for line in output:
        match = ROW.match(line)
        if match:
            values[int(match.group(1))] = float(match.group(2))
    return {"test": test, "buffers": buffers, "ranks": ranks, "values": values}


def xfer_rows(command, session_dir):
    """{row name without /manual_time: row} of the run's --benchmark_out file, or None."""
    out = next((w.split("=", 1)[1] for w in command if w.startswith("--benchmark_out=")), None)
    if out is None or "xferbench" not in " ".join(command):
        return None
    base = os.path.basename(out)
    path = next(
        (
            p
            for p in (out, os.path.join(session_dir, "json", base), os.path.join(session_dir, base))
            if os.path.exists(p)
        ),
        None,
    )
    if path is None:
        return {}
    document = load_result(path)
    return {
        r["name"].replace("/manual_time", ""): r
        for r in document.get("benchmarks", [])
        if r.get("run_type") == "iteration" and "real_time" in r
    }


def xfer_figure(rows, osu, size):
    """The xferbench figure an OSU value at `size` is compared with, or None."""
    path = XFER_PATH[osu["buffers"]]
    mode = OSU_MODE[osu["test"]]
    pairs = f"/pairs:{osu['ranks'] // 2}" if osu["test"] == "osu_mbw_mr" else ""
    names = (
        f"{path}/mode:{mode}{pairs}/bytes:{size}",
        f"{path}/mode:{mode}/ack:buffers{pairs}/bytes:{size}",  # --xfer_ack=buffers, as osu_bw
        f"{path}/bytes:{size}",
    )
    for name in names:
        row = rows.get(name)
        if row is None or (name.endswith(f"{path}/bytes:{size}") and mode != "pingpong"):
            continue
        if "error_occurred" in row and row["error_occurred"]:
            return None
        if mode == "pingpong":
            return row["real_time"]  # us: every xferbench family reports in us
        return row["GB/s"] * 1000.0  # MB/s, as OSU prints it
    return None


def comparisons(session_dir):
    with open(os.path.join(session_dir, "session.log"), encoding="utf-8", errors="replace") as f:
        runs = list(blocks(f.read()))
    pending, table = [], {}
    for command, output in runs:
        osu = osu_run(command, output)
        if osu is not None:
            pending.append(osu)
            continue
        rows = xfer_rows(command, session_dir)
        if rows is None:
            continue
        for run in pending:
            for size, value in run["values"].items():
                mine = xfer_figure(rows, run, size)
                if mine is None or value <= 0:
                    continue
                key = (run["test"], run["buffers"], run["ranks"], size)
                table.setdefault(key, []).append({"osu": value, "xferbench": mine})
        pending = []
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("session_dir")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.session_dir, "session.log")):
        print(f"peer_ratios.py: {args.session_dir}: no session.log there", file=sys.stderr)
        return 2
    try:
        table = comparisons(args.session_dir)
    except (OSError, InputError) as e:
        print(f"peer_ratios.py: {args.session_dir}: {e}", file=sys.stderr)
        return 2
    results = []
    for (test, buffers, ranks, size), rounds in sorted(table.items()):
        ratios = [r["xferbench"] / r["osu"] for r in rounds]
        results.append(
            {
                "test": test,
                "buffers": f"{buffers} {buffers}",
                "ranks": ranks,
                "bytes": size,
                "unit": "us" if test == "osu_latency" else "MB/s",
                "rounds": rounds,
                "ratios": ratios,
                "median_ratio": statistics.median(ratios),
            }
        )
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(
        f"{'peer':<12} {'buf':<4} {'np':>2} {'bytes':>10}  {'osu (each round)':<34} "
        f"{'xferbench (each round)':<34} {'ratio':>6}"
    )
    for r in results:
        osu = " ".join(f"{x['osu']:.5g}" for x in r["rounds"])
        mine = " ".join(f"{x['xferbench']:.5g}" for x in r["rounds"])
        print(
            f"{r['test']:<12} {r['buffers']:<4} {r['ranks']:>2} {r['bytes']:>10}  "
            f"{osu:<34} {mine:<34} {r['median_ratio']:>6.3f}"
        )
    print(
        "ratio: median over rounds of xferbench / OSU (time for osu_latency: below 1 is "
        "faster; bandwidth otherwise: above 1 is more)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
