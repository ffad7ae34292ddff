#!/usr/bin/env python3
"""xferbench / nvbandwidth per test and size, from session.sh's tarball (or its folder).

    ratios.py OUTDIR.tar.xz | OUTDIR

Each tool's figure is its median over the rounds; the ratio is xferbench's median over
nvbandwidth's, with the range of the per-round ratios. Bandwidth in GB/s (GB = 1e9 B); latency
in ns per load (ratio: xferbench's time over nvbandwidth's). Which row matches which test, and
how each tool counts bytes and time: README.md beside this script.
"""

import json
import os
import re
import statistics
import sys
import tarfile

SIZES = {"512MiB": 512 << 20, "64MiB": 64 << 20}
# (label, nvbandwidth tests whose figures add up, xferbench family, what xferbench reports)
MATCHES = (
    ("H2D CE", ["host_to_device_memcpy_ce"], "ce_copy/host:pinned/dir:h2d/gpu:0", "GB/s"),
    ("D2H CE", ["device_to_host_memcpy_ce"], "ce_copy/host:pinned/dir:d2h/gpu:0", "GB/s"),
    (
        "bi CE (sum)",
        ["host_to_device_bidirectional_memcpy_ce", "device_to_host_bidirectional_memcpy_ce"],
        "ce_copy/host:pinned/dir:bi/gpu:0",
        "GB/s",
    ),
    ("H2D SM", ["host_to_device_memcpy_sm"], "sm_copy/host:mapped/dir:h2d/gpu:0", "GB/s"),
    ("D2H SM", ["device_to_host_memcpy_sm"], "sm_copy/host:mapped/dir:d2h/gpu:0", "GB/s"),
    (
        "bi SM (sum)",
        ["host_to_device_bidirectional_memcpy_sm", "device_to_host_bidirectional_memcpy_sm"],
        "sm_copy/host:mapped/dir:bi/gpu:0",
        "GB/s",
    ),
    ("local CE", ["device_local_copy"], "ce_copy/dir:local/gpu:0", "GB/s"),
    ("local SM vs CE", ["device_local_copy"], "sm_copy/dir:local/gpu:0", "GB/s"),
    ("latency host", ["host_device_latency_sm"], "pointer_chase/host:mapped/span:2MiB/gpu:0", "ns"),
)


def documents(source):
    """{file name: parsed JSON} of the json/ folder in a tarball or a folder."""
    out = {}
    if os.path.isdir(source):
        folder = os.path.join(source, "json")
        for name in sorted(os.listdir(folder)):
            if name.endswith(".json"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    out[name] = parse(f.read(), name)
        return out
    with tarfile.open(source) as tar:
        for member in tar.getmembers():
            if member.isfile() and re.search(r"/json/[^/]+\.json$", member.name):
                text = tar.extractfile(member).read().decode("utf-8", "replace")
                out[os.path.basename(member.name)] = parse(text, member.name)
    return out


def parse(text, name):
    try:
        return json.loads(text)
    except ValueError as error:
        print(f"ratios.py: {name}: not JSON ({error}); left out", file=sys.stderr)
        return None


def nvbandwidth_value(document, test):
    """The one GPU's figure of `test` (its matrix holds numbers written as strings)."""
    for case in (document or {}).get("nvbandwidth", {}).get("testcases", []):
        if case.get("name") != test:
            continue
        for row in case.get("bandwidth_matrix") or []:
            for cell in row:
                try:
                    return float(cell)
                except (TypeError, ValueError):
                    continue
    return None


def xferbench_value(document, family, unit):
    """{bytes: figure} of `family`'s rows: GB/s, or ns per load for a latency row."""
    out = {}
    for row in (document or {}).get("benchmarks", []):
        match = re.match(r"^(.*)/bytes:(\d+)(/|$)", row.get("name", ""))
        if not match or match.group(1) != family or row.get("error_occurred"):
            continue
        value = row.get("GB/s") if unit == "GB/s" else row.get("latency_us", 0) * 1000
        if value:
            out[int(match.group(2))] = value
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    docs = documents(argv[1])
    print(f"{'test':16} {'size':7} {'xferbench':>10} {'nvbandwidth':>11} {'ratio':>6}  rounds")
    for label, tests, family, unit in MATCHES:
        for size_name, size in SIZES.items():
            pairs = []
            for name, doc in docs.items():
                found = re.fullmatch(rf"nvbandwidth-{size_name}-(\d+)\.json", name)
                if not found:
                    continue
                mine = docs.get(f"xferbench-{size_name}-{found.group(1)}.json")
                values = [nvbandwidth_value(doc, t) for t in tests]
                rows = xferbench_value(mine, family, unit)
                # A latency row has one size of its own (8 B a load); nvbandwidth's chain is 2 MiB.
                xf = next(iter(rows.values()), None) if unit == "ns" else rows.get(size)
                if xf is not None and None not in values:
                    pairs.append((xf, sum(values)))
            if not pairs:
                print(f"{label:16} {size_name:7} {'-':>10} {'-':>11} {'-':>6}  none")
                continue
            xf = statistics.median(p[0] for p in pairs)
            nv = statistics.median(p[1] for p in pairs)
            each = [p[0] / p[1] for p in pairs if p[1]]
            spread = f"{min(each):.3f}-{max(each):.3f}" if each else "-"
            print(
                f"{label:16} {size_name:7} {xf:10.2f} {nv:11.2f} {xf / nv if nv else 0:6.3f}"
                f"  {len(pairs)} ({spread}) {unit}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
