#!/usr/bin/env python3
"""tools/check-node over every stored default run of one H200 (issue 34, item 3).

    docs/results/2026-11-28-check-node-shares/shares.py [--fixture OUT.json]

Unpacks the stored runs (the 17 of 2026-11-28-h200-plan and the 11 of 2026-11-26 that carry
pct_of_link), prints for each family with a known link its median share by size (relative to
1 GiB: where bandwidth saturates) and its best share from 256 MiB, lowest and highest over the
runs (the default shares' figures), then runs tools/check-node --from on every run as stored
(each must exit 0) and with each judged family made 20% slower (each must exit 1 naming it).
The slower copy is what XFER_TEST_SLOWDOWN=FAMILY:20 makes: every time of the family's rows
x 1.2, so GB/s, bytes_per_second and pct_of_link / 1.2. --fixture writes the trimmed copy of
the run tests/fixtures/check-node/ holds. Exit status 0 when every run passes and every slowed
family fails by name.
"""

import argparse
import copy
import glob
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from xfertools.core.sizes import format_size  # noqa: E402
from xfertools.node import links  # noqa: E402

RESULTS = os.path.join(ROOT, "docs", "results")
SOURCES = [  # (tarball, the merged runs inside it)
    ("2026-11-28-h200-plan/lease1-json.tar.xz", "json/run-*.json"),
    ("2026-11-28-h200-plan/lease2-json.tar.xz", "json/run-*.json"),
    ("2026-11-26-h200-merged-code/json.tar.xz", "run-*.json"),
    ("2026-11-26-h200-five-short-jobs/json.tar.xz", "json/*.json"),
    ("2026-11-26-h200-v0.2.0/json.tar.xz", "json/run-*.json"),
]
FIXTURE_RUN = "2026-11-28-h200-plan/lease2-json.tar.xz:json/run-1.json"
TIMES = ("real_time", "latency_us", "median_us", "min_us", "max_us", "p90_us", "p99_us")
RATES = ("GB/s", "bytes_per_second", "pct_of_link")


def slowed(document, family, factor=1.2):
    """The document with `family`'s rows as XFER_TEST_SLOWDOWN=family:20 reports them."""
    document = copy.deepcopy(document)
    for row in document["benchmarks"]:
        if row["name"].startswith(family + "/bytes:"):
            for key in TIMES:
                if key in row:
                    row[key] *= factor
            for key in RATES:
                if key in row:
                    row[key] /= factor
    return document


def size_of(row):
    return int(row["name"].split("/bytes:")[1].split("/")[0])


def family_of(row):
    return row["name"].split("/bytes:")[0]


def runs(tmp):
    found = []
    for tarball, pattern in SOURCES:
        where = os.path.join(tmp, os.path.dirname(tarball), os.path.basename(tarball)[:-7])
        with tarfile.open(os.path.join(RESULTS, tarball)) as archive:
            # The "data" filter where this Python has it (3.11.4 on; Debian 12's is 3.11.2).
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            archive.extractall(where, **safe)
        for path in sorted(glob.glob(os.path.join(where, pattern))):
            with open(path, encoding="utf-8") as f:
                found.append((f"{tarball}:{os.path.relpath(path, where)}", json.load(f)))
    return found


def share_table(found):
    by_size, best = {}, {}
    for _, document in found:
        run_best = {}
        for row in document["benchmarks"]:
            if "pct_of_link" not in row or row.get("error_occurred"):
                continue
            family, size = family_of(row), size_of(row)
            by_size.setdefault(family, {}).setdefault(size, []).append(row["pct_of_link"])
            if size >= links.JUDGED_FROM_BYTES:
                run_best[family] = max(run_best.get(family, 0), row["pct_of_link"])
        for family, value in run_best.items():
            best.setdefault(family, []).append(value)
    print("median share by size over the runs, and as a share of the median at 1 GiB")
    for family in sorted(by_size):
        at_1g = statistics.median(by_size[family][1 << 30])
        medians = {s: statistics.median(v) for s, v in by_size[family].items() if s >= 16 << 20}
        cells = [
            f"{format_size(s)} {m:.1f} ({m / at_1g:.0%})" for s, m in sorted(medians.items())
        ]
        print(f"  {family}: " + ", ".join(cells))
    print(f"\nbest share from {format_size(links.JUDGED_FROM_BYTES)}, over the runs")
    for family in sorted(best):
        values = best[family]
        judged = "judged" if links.FILLING.match(family) else "not judged"
        print(
            f"  {family}: {len(values)} runs, lowest {min(values):.2f}, highest "
            f"{max(values):.2f}, spread {max(values) - min(values):.1f} points, "
            f"highest x 1/1.2 {max(values) / 1.2:.1f} ({judged})"
        )


def check_node(document, tmp):
    path = os.path.join(tmp, "check.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f)
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "check-node"), "--from", path],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def campaign(found, tmp):
    bad = 0
    for name, document in found:
        status, output = check_node(document, tmp)
        judged = [
            line.split()[2].rstrip(":")
            for line in output.splitlines()
            if line.startswith("check-node: ok   ")
        ]
        verdicts = [f"{name}: exit {status}, {len(judged)} judged"]
        bad += status != 0
        for family in judged:
            slow_status, slow_output = check_node(slowed(document, family), tmp)
            named = any(
                line.startswith(f"check-node: FAIL {family}:") for line in slow_output.splitlines()
            )
            bad += slow_status != 1 or not named
            short = family.split("/")[1:3]
            verdicts.append(f"{'/'.join(short)} slower: exit {slow_status}, named {named}")
        print("  " + "; ".join(verdicts))
        if status != 0:
            print(output)
    return bad


def fixture(found, out):
    """A trimmed copy of FIXTURE_RUN: its context without the visits' records, and the rows of
    every family at 8 B and 1 GiB, with the pinned ones also at 128, 256 and 512 MiB."""
    document = copy.deepcopy(dict(found)[FIXTURE_RUN])
    document["context"]["xferbench"].pop("visits", None)
    keep = []
    for row in document["benchmarks"]:
        size, family = size_of(row), family_of(row)
        pinned_bw = links.FILLING.match(family) is not None
        if size in (8, 1 << 30) or (pinned_bw and size >= 128 << 20):
            keep.append(row)
    document["benchmarks"] = keep
    with open(out, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print(f"\nfixture: {out} ({len(keep)} rows of {FIXTURE_RUN})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixture", metavar="OUT.json", help="also write the trimmed fixture")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = runs(tmp)
        print(f"{len(found)} stored default runs of one H200 with pct_of_link\n")
        share_table(found)
        print("\ntools/check-node --from each run, and with each judged family 20% slower")
        bad = campaign(found, tmp)
        if args.fixture:
            fixture(found, args.fixture)
    print(f"\n{'every run passes and every slowed family fails by name' if not bad else bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
