#!/usr/bin/env python3
"""The standing calibration table of docs/reproducibility.md: `tools/track calibration` over
every recorded series of back-to-back default runs that kept its jobs' files, one command:

    docs/results/2026-11-29-calibration/table.py [--xferbench build/xferbench] [--write]

prints the table (markdown) and, with --write, puts it into docs/reproducibility.md between
its <!-- calibration-table --> markers; the reports as JSON go to table.json beside this file.
Series (archives under docs/results, laid out as tools/run leaves runs: RUN.json beside
RUN.jobs/): see SERIES below. The CPU campaigns of 2026-11-28 leave out their planted runs
(slow-K-b, which never joined the machine file)."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RESULTS = os.path.join(ROOT, "docs", "results")
MARK = "<!-- calibration-table -->"
# (name, machine, archives under docs/results holding its runs)
SERIES = [
    ("2026-11-29 live 1", "H200 (1 GPU)", ["2026-11-29-calibration/h200-runs-1.tar.xz"]),
    ("2026-11-29 live 2", "H200 (1 GPU)", ["2026-11-29-calibration/h200-runs-2.tar.xz"]),
    ("2026-11-28 lease 1", "H200 (1 GPU)", ["2026-11-28-h200-plan/lease1-json.tar.xz"]),
    ("2026-11-28 lease 2", "H200 (1 GPU)", ["2026-11-28-h200-plan/lease2-json.tar.xz"]),
    (
        "2026-11-28 links",
        "2 H200 (NVLink)",
        ["2026-11-28-h200x2-links/lease1-call1.tar.xz", "2026-11-28-h200x2-links/lease1-call2.tar.xz"],
    ),
    ("2026-11-29 sitting 1", "CPU (2 cores)", ["2026-11-29-calibration/cpu-sitting-1.tar.xz"]),
    ("2026-11-29 sitting 2", "CPU (2 cores)", ["2026-11-29-calibration/cpu-sitting-2.tar.xz"]),
    ("2026-11-29 sitting 3", "CPU (2 cores)", ["2026-11-29-calibration/cpu-sitting-3.tar.xz"]),
    ("2026-11-28 campaign 1", "CPU (2 cores)", ["2026-11-28-cpu-planned/campaign-1.tar.xz"]),
    ("2026-11-28 campaign 2", "CPU (2 cores)", ["2026-11-28-cpu-planned/campaign-2.tar.xz"]),
]


def lay_out(archives, folder):
    """The archives unpacked into one folder, planted runs left out."""
    for k, archive in enumerate(archives):  # each its own folder: their paths may repeat
        with tarfile.open(os.path.join(RESULTS, archive)) as tar:
            tar.extractall(os.path.join(folder, str(k)))  # noqa: S202 (the project's own)
    for top, dirs, names in os.walk(folder):
        for name in list(dirs) + names:
            if name.startswith("slow-") and name.split(".")[0].endswith("-b"):
                path = os.path.join(top, name)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    return folder


def cell(summary, key, form):
    value = summary.get(key) if summary else None
    return "-" if value is None else form.format(value)


def table(reports):
    lines = [
        "| series | machine | runs (jobs) | wall | runs 1-3: covered, tight, median ci95 "
        "| runs 4+: covered, tight, median ci95 | targets missed |",
        "|---|---|---|---|---|---|---|",
    ]
    for (name, machine, _), report in zip(SERIES, reports):
        walls = [w for w in report["walls_s"] if w is not None]
        groups = []
        for group in ("runs 1-3", "runs 4+"):
            s = report["groups"].get(group, {}).get("all rows")
            groups.append(
                ", ".join(
                    (
                        cell(s, "covered_pct", "{:.1f}%"),
                        cell(s, "tight", "{:.2f}"),
                        cell(s, "median_ci95_pct", "{:.1f}%"),
                    )
                )
                if s
                else "-"
            )
        missed = [v for v in report["verdicts"] if not v["met"]]
        why = "; ".join(f"{v['group']} {v['family']}: {v['target']} ({v['figure']})" for v in missed)
        jobs = sorted(set(report["jobs"]))
        jobs_text = f"{jobs[0]}-{jobs[-1]}" if len(jobs) > 1 else str(jobs[0])
        wall = f"{min(walls):.0f}-{max(walls):.0f} s" if walls else "-"
        lines.append(
            f"| {name} | {machine} | {report['runs']} ({jobs_text}) | {wall} | {groups[0]} "
            f"| {groups[1]} | {why or 'none'} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xferbench", default=os.path.join(ROOT, "build", "xferbench"))
    parser.add_argument("--write", action="store_true", help="into docs/reproducibility.md")
    args = parser.parse_args()
    reports = []
    with tempfile.TemporaryDirectory() as scratch:
        for k, (name, _, archives) in enumerate(SERIES):
            folder = lay_out(archives, os.path.join(scratch, f"series-{k}"))
            out = os.path.join(scratch, f"report-{k}.json")
            command = [sys.executable, os.path.join(ROOT, "tools", "track"), "calibration",
                       "--xferbench", args.xferbench, "--json", out, folder]
            proc = subprocess.run(command, capture_output=True, text=True, check=False)
            if proc.returncode not in (0, 1):
                sys.exit(f"table.py: {name}: {proc.stderr.strip()}")
            print(proc.stdout.replace(folder, name), file=sys.stderr)
            (report,) = json.load(open(out, encoding="utf-8"))
            report["series"] = name
            reports.append(report)
    with open(os.path.join(HERE, "table.json"), "w", encoding="utf-8") as f:
        json.dump(reports, f, indent=1)
        f.write("\n")
    text = table(reports)
    print(text)
    if args.write:
        path = os.path.join(ROOT, "docs", "reproducibility.md")
        with open(path, encoding="utf-8") as f:
            before, _, rest = f.read().partition(MARK + "\n")
            _, _, after = rest.partition(MARK.replace("<!-- ", "<!-- /") + "\n")
        with open(path, "w", encoding="utf-8") as f:
            f.write(before + MARK + "\n" + text + "\n" + MARK.replace("<!-- ", "<!-- /") + "\n" + after)


if __name__ == "__main__":
    main()
