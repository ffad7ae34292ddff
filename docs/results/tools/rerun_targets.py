#!/usr/bin/env python3
"""How default runs of one build agree, how long they take and how they compare with OSU, from
sessions of `targets` (runs:N or bare:N).

    docs/results/tools/rerun_targets.py SESSION_DIR [SESSION_DIR ...] [--track] [--json OUT]

A SESSION_DIR holds what `targets` writes: session.log (or session.log.xz),
walls.txt, and the result files json/run-N.json (or json.tar.xz holding them). Per session:

  walls     each default run's wall time (walls.txt: tools/run from start to end; and the
            "wall time" xferbench prints, the three jobs and the merge), target <= 60 s
  stated    the rows' stated ci95_pct per run (median, 90th percentile) and the time-limited rows
  coverage  coverage.py's table over all pairs of runs: the share of (pair, row)
            comparisons whose difference |ln(a/b)| is within sqrt(ci95_a^2 + ci95_b^2)
            (target >= 90%), and the per-row spread over the runs (sd of log time, %)
  osu       where the session ran OSU rounds (runs:N): each OSU figure per round, OSU's spread
            over its rounds beside xferbench's spread over its runs on the matching row, and for
            osu_latency the ratio xferbench / OSU per round (both one-way times; target 1 +- 3%)

With --track: tools/track check over each session's runs and over all sessions' runs together
(one identity), two ways: each run against the runs before it (as a CI gate sees them), and
leave-one-out (each run against all the others: a copy of it dated a minute after the newest is
checked against a history of the others; only context.date is changed). Needs numpy and scipy.
"""

import argparse
import collections
import datetime
import importlib.util
import json
import lzma
import math
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile

import repo_tools  # this folder's: where the repository's tools/ is

HERE = os.path.dirname(os.path.realpath(__file__))
TRACK = os.path.join(repo_tools.TOOLS, "track")
RUN_FILE = re.compile(r"run-(\d+)\.json$")
JOB_LINE = re.compile(r"^xferbench: job (\d+) of (\d+): exit (\d+) in ([0-9.]+) s")
WALL_LINE = re.compile(r"wall time ([0-9.]+) s")
XFER_PATH = {"H": "mpi_host", "D": "mpi_cuda_aware"}
OSU_MODE = {"osu_latency": "pingpong", "osu_bw": "stream"}


def sibling(name):
    """A module of this folder by file (coverage.py would clash with the coverage package)."""
    spec = importlib.util.spec_from_file_location(
        f"session_{name}", os.path.join(HERE, name + ".py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


coverage = sibling("coverage")
peer_ratios = sibling("peer_ratios")


def sd_pct(values):
    logs = [math.log(v) for v in values]
    return statistics.stdev(logs) * 100 if len(logs) >= 2 else None


def percentile(values, q):
    return coverage.percentile(values, q)


def run_files(session, scratch):
    """{N: path of run-N.json}, from SESSION/json/ or SESSION/json.tar.xz (unpacked in scratch)."""
    folder = os.path.join(session, "json")
    if not os.path.isdir(folder):
        packed = os.path.join(session, "json.tar.xz")
        if not os.path.isfile(packed):
            raise SystemExit(f"rerun_targets.py: {session}: neither json/ nor json.tar.xz there")
        folder = os.path.join(scratch, os.path.basename(os.path.abspath(session)))
        with tarfile.open(packed) as tar:
            for member in tar.getmembers():
                match = RUN_FILE.search(member.name)
                if member.isfile() and match:
                    member.name = os.path.basename(member.name)
                    tar.extract(member, folder)
    found = {}
    for name in os.listdir(folder):
        match = RUN_FILE.fullmatch(name)
        if match:
            found[int(match.group(1))] = os.path.join(folder, name)
    return dict(sorted(found.items()))


def read_log(session):
    plain = os.path.join(session, "session.log")
    if os.path.isfile(plain):
        with open(plain, encoding="utf-8", errors="replace") as f:
            return f.read()
    with lzma.open(plain + ".xz", "rt", encoding="utf-8", errors="replace") as f:
        return f.read()


def read_walls(session):
    walls = {}
    with open(os.path.join(session, "walls.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                walls[parts[0]] = (float(parts[1]), int(parts[2]))
    return walls


def log_runs(log_text):
    """Per default run N: its job times, its printed wall time, and the OSU runs after it."""
    runs = {}
    current = None
    for command, output in peer_ratios.blocks(log_text):
        out = next((w for w in command if w.startswith("--benchmark_out=")), "")
        match = RUN_FILE.search(out)
        if command and command[0].endswith("tools/run") and match:
            current = int(match.group(1))
            entry = runs.setdefault(current, {"jobs": [], "wall": None, "osu": []})
            for line in output:
                job = JOB_LINE.match(line)
                if job:
                    entry["jobs"].append(float(job.group(4)))
                wall = WALL_LINE.search(line)
                if line.startswith("rows:") and wall:
                    entry["wall"] = float(wall.group(1))
            continue
        osu = peer_ratios.osu_run(command, output)
        if osu is not None and current is not None:
            runs[current]["osu"].append(osu)
    return runs


def rows_of(path):
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    rows = {
        b["name"].replace("/manual_time", ""): b
        for b in document.get("benchmarks", [])
        if b.get("run_type", "iteration") == "iteration"
    }
    return document, rows


def walls_section(numbers, walls, logged, documents):
    out = []
    print("\n-- walls: tools/run from start to end (walls.txt); xferbench's wall time; jobs (s)")
    for n in numbers:
        wall, rc = walls.get(f"run-{n}", (None, None))
        printed = logged.get(n, {}).get("wall")
        jobs = logged.get(n, {}).get("jobs", [])
        summary = documents[n]["context"]["xferbench"].get("summary", {})
        out.append(
            {"run": n, "walls_txt_s": wall, "exit": rc, "wall_time_s": printed, "jobs_s": jobs}
        )
        print(
            f"run-{n}: {wall} s (exit {rc}); wall time {printed} s "
            f"(JSON {summary.get('wall_time_s', float('nan')):.1f}); jobs {jobs}"
        )
    shown = [w["walls_txt_s"] for w in out if w["walls_txt_s"] is not None]
    if shown:
        print(
            f"walls.txt: {min(shown):.1f}-{max(shown):.1f} s, median {statistics.median(shown):.1f}"
        )
    return out


def stated_section(numbers, all_rows, documents):
    out, pooled = [], []
    print("\n-- stated ci95_pct per run (all rows): median, p90, max; time-limited rows")
    for n in numbers:
        cis = [r["ci95_pct"] for r in all_rows[n].values() if "ci95_pct" in r]
        limited = sum(1 for r in all_rows[n].values() if r.get("time_limited"))
        summary = documents[n]["context"]["xferbench"].get("summary", {})
        pooled += cis
        entry = {
            "run": n,
            "rows": len(all_rows[n]),
            "median": statistics.median(cis),
            "p90": percentile(cis, 0.9),
            "max": max(cis),
            "time_limited": limited,
            "summary_time_limited": summary.get("time_limited"),
            "failed": summary.get("failed"),
        }
        out.append(entry)
        print(
            f"run-{n}: {entry['rows']} rows, median {entry['median']:.2f}%, "
            f"p90 {entry['p90']:.2f}%, max {entry['max']:.1f}%; time-limited {limited} "
            f"(summary {entry['summary_time_limited']}); failed {entry['failed']}"
        )
    print(
        f"all runs' rows together: median {statistics.median(pooled):.2f}%, "
        f"p90 {percentile(pooled, 0.9):.2f}%"
    )
    return {"runs": out, "median": statistics.median(pooled), "p90": percentile(pooled, 0.9)}


def coverage_section(paths):
    runs = [coverage.measured_rows(p, re.compile(".")) for p in paths]
    table = coverage.summarise(runs)
    print(f"\n-- coverage: {len(runs)} runs, {len(runs) * (len(runs) - 1) // 2} pairs")
    print(f"{'family':66s} covered  compared  spread med/p90/max  stated med")
    out = {}
    for fam in sorted(table, key=lambda f: (f == "(all)", f)):
        t = table[fam]
        entry = {
            "covered_pct": t["covered"] / t["compared"] * 100,
            "compared": t["compared"],
            "spread_median_pct": statistics.median(t["spread"]),
            "spread_p90_pct": percentile(t["spread"], 0.9),
            "spread_max_pct": max(t["spread"]),
            "stated_median_pct": statistics.median(t["stated"]),
        }
        out[fam] = entry
        print(
            f"{fam[:66]:66s} {entry['covered_pct']:6.1f}%  {entry['compared']:8d}  "
            f"{entry['spread_median_pct']:5.2f} {entry['spread_p90_pct']:5.2f} "
            f"{entry['spread_max_pct']:6.2f}  {entry['stated_median_pct']:6.2f}"
        )
    return out


def osu_section(numbers, logged, all_rows):
    rounds = collections.defaultdict(dict)  # (test, buffers, size) -> {run: value}
    for n in numbers:
        for osu in logged.get(n, {}).get("osu", []):
            for size, value in osu["values"].items():
                rounds[(osu["test"], osu["buffers"], size)][n] = value
    if not rounds:
        return None
    print("\n-- OSU rounds (round N follows default run N) against the matching xferbench rows")
    out = []
    for (test, buffers, size), values in sorted(rounds.items()):
        path, mode = XFER_PATH[buffers], OSU_MODE[test]
        row = f"{path}/mode:{mode}/bytes:{size}"
        ran = [n for n in numbers if n in values]
        mine = {n: all_rows[n][row]["real_time"] for n in ran if row in all_rows[n]}
        entry = {
            "osu": f"{test} {buffers} {buffers}",
            "bytes": size,
            "osu_values": [values[n] for n in ran],
            "osu_unit": "us one-way" if test == "osu_latency" else "MB/s",
            "osu_spread_pct": sd_pct([values[n] for n in ran]),
            "row": row,
        }
        if not mine:
            near = f"{path}/mode:pingpong/bytes:{size}"
            near_values = [all_rows[n][near]["real_time"] for n in ran if near in all_rows[n]]
            entry["row"] = None
            entry["note"] = f"no {row} in the default run; {near} shown (another mode)"
            entry["pingpong_row_spread_pct"] = sd_pct(near_values)
            print(
                f"{test} {buffers} {buffers} {size:>10d}: OSU {entry['osu_values']} spread "
                f"{entry['osu_spread_pct']:.2f}%; no {mode} row in the default run "
                f"({near}: spread {entry['pingpong_row_spread_pct']:.2f}%)"
            )
        else:
            entry["xferbench_values"] = [mine[n] for n in ran]
            entry["xferbench_spread_pct"] = sd_pct(entry["xferbench_values"])
            text = (
                f"{test} {buffers} {buffers} {size:>10d}: OSU {entry['osu_values']} spread "
                f"{entry['osu_spread_pct']:.2f}%; {row} "
                f"{[round(v, 4) for v in entry['xferbench_values']]} spread "
                f"{entry['xferbench_spread_pct']:.2f}%"
            )
            if test == "osu_latency":
                ratios = [mine[n] / values[n] for n in ran]
                entry["ratios"] = ratios
                entry["mean_ratio"] = statistics.fmean(ratios)
                text += f"; ratio per round {[round(r, 3) for r in ratios]}"
                text += f", mean {entry['mean_ratio']:.3f}"
            print(text)
        out.append(entry)
    return out


def track(args_list, check=False):
    command = [sys.executable, TRACK, *args_list]
    done = subprocess.run(command, capture_output=True, text=True)
    if check and done.returncode == 2:
        return None
    if done.returncode not in (0, 1):
        raise SystemExit(f"rerun_targets.py: {' '.join(command)}: {done.stderr.strip()}")
    return json.loads(done.stdout) if check else done


def flagged(judgement):
    families = [
        f"{f['family']} {f['verdict']} {f['test']['shift_pct']:+.1f}%"
        for f in judgement["judgement"]["families"]
        if f.get("verdict") not in (None, "no change")
    ]
    rows = collections.Counter(
        r["verdict"]
        for r in judgement["judgement"]["rows"]
        if r.get("verdict") not in (None, "no change")
    )
    return families, dict(rows)


def dated_copy(path, when, folder):
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    document["context"]["date"] = when.isoformat()
    copy = os.path.join(folder, "judged-" + os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        json.dump(document, f)
    return copy


def track_section(label, paths, scratch):
    """paths: {label: file}. Sequential and leave-one-out checks; returns a summary."""
    print(f"\n-- tools/track check: {label} ({len(paths)} runs)")
    out = {"sequential": [], "leave_one_out": []}
    history = tempfile.mkdtemp(dir=scratch)
    track(["record", "--history", history, *paths.values()])
    for name, path in paths.items():
        result = track(["check", "--history", history, "--format", "json", path], check=True)
        if result is None:
            print(f"before it: {name}: no earlier run to judge it by")
            continue
        families, rows = flagged(result)
        basis = result["judgement"]["basis"]
        earlier = result["judgement"]["earlier_runs"]
        out["sequential"].append(
            {
                "run": name,
                "verdict": result["verdict"],
                "basis": basis,
                "earlier": earlier,
                "families": families,
                "rows": rows,
            }
        )
        print(
            f"before it: {name}: {result['verdict']} ({basis}, {earlier} earlier); "
            f"families {families or '-'}; rows {rows or '-'}"
        )
    dates = {}
    for name, path in paths.items():
        with open(path, encoding="utf-8") as f:
            dates[name] = datetime.datetime.fromisoformat(json.load(f)["context"]["date"])
    when = max(dates.values()) + datetime.timedelta(minutes=1)
    detectable = collections.defaultdict(list)  # family -> detectable_pct, one per run judged
    for name, path in paths.items():
        history = tempfile.mkdtemp(dir=scratch)
        others = [p for n, p in paths.items() if n != name]
        track(["record", "--history", history, *others])
        copy = dated_copy(path, when, tempfile.mkdtemp(dir=scratch))
        result = track(["check", "--history", history, "--format", "json", copy], check=True)
        families, rows = flagged(result)
        for fam in result["judgement"]["families"]:
            if fam.get("test"):
                detectable[fam["family"]].append(fam["test"]["detectable_pct"])
        out["leave_one_out"].append(
            {
                "run": name,
                "verdict": result["verdict"],
                "basis": result["judgement"]["basis"],
                "earlier": result["judgement"]["earlier_runs"],
                "families": families,
                "rows": rows,
            }
        )
        print(
            f"all others: {name}: {result['verdict']} ({result['judgement']['earlier_runs']} "
            f"others); families {families or '-'}; rows {rows or '-'}"
        )
    out["detectable_median_pct"] = {f: statistics.median(v) for f, v in detectable.items()}
    print("all others: the smallest family slowdown flagged (detectable_pct), median over runs:")
    for fam, value in sorted(out["detectable_median_pct"].items()):
        print(f"  {value:6.1f}%  {fam}")
    return out


def session_report(session, scratch):
    print(f"== {session}")
    files = run_files(session, scratch)
    numbers = list(files)
    documents, all_rows = {}, {}
    for n, path in files.items():
        documents[n], all_rows[n] = rows_of(path)
    logged = log_runs(read_log(session))
    report = {
        "runs": numbers,
        "walls": walls_section(numbers, read_walls(session), logged, documents),
        "stated": stated_section(numbers, all_rows, documents),
        "coverage": coverage_section(list(files.values())),
        "osu": osu_section(numbers, logged, all_rows),
    }
    return report, files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sessions", nargs="+", metavar="SESSION_DIR")
    parser.add_argument("--track", action="store_true", help="also judge the runs with tools/track")
    parser.add_argument("--json", help="also write everything printed here, as JSON")
    args = parser.parse_args()
    report = {}
    with tempfile.TemporaryDirectory() as scratch:
        every = {}
        for session in args.sessions:
            report[session], files = session_report(session, scratch)
            label = os.path.basename(os.path.abspath(session))
            every.update({f"{label}/run-{n}": p for n, p in files.items()})
        if args.track:
            for session in args.sessions:
                label = os.path.basename(os.path.abspath(session))
                mine = {k: v for k, v in every.items() if k.startswith(label + "/")}
                report[session]["track"] = track_section(label, mine, scratch)
            if len(args.sessions) > 1:
                report["track_all"] = track_section("all sessions together", every, scratch)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
