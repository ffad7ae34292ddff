#!/usr/bin/env python3
"""Repeatability of the fleet verdict on the 8-host test bed (issue 37, item 5): the slowed and
the unslowed case of tests/integration/fleet_bed.py, each RUNS times under Open MPI's mpirun,
with a new seed each run, as `tools/fleet run` would be run by a user.

usage: repeat.py OUTDIR [RUNS]   (as root, from a build: XFERBENCH=build/xferbench)
Writes OUTDIR/runs.json (per run: case, seed, exit, hosts and links named, the residual
spread, host effects, each round's wall time, the whole case's wall time) and prints a summary.
"""

import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
os.environ.setdefault("XFERBENCH", os.path.join(ROOT, "build", "xferbench"))
os.environ.setdefault("XFER_SOURCE_DIR", ROOT)

import fleet_bed  # noqa: E402
from testbed import Testbed  # noqa: E402
from xfer_testlib import MPIRUN, XFERBENCH  # noqa: E402


def one(bed, slowed, seed):
    fleet_bed.shape(bed, slowed)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "fleet")
        proc, verdict, wall = fleet_bed.run_case(
            lambda argv: bed.on("nodeA", argv),
            fleet_bed.openmpi_launch(bed, MPIRUN[0]),
            XFERBENCH,
            out,
            seed,
            bed.env(fleet_bed.openmpi_env()),
        )
        rounds = []
        for name in ("fleet.json", "retest.json"):
            path = os.path.join(out, name)
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    document = json.load(f)
                rounds.append(document["context"]["xferbench"]["fleet"]["rounds"]["wall_s"])
    hosts, links = fleet_bed.named(verdict) if verdict else (set(), set())
    series = verdict["series"][0] if verdict else {}
    return {
        "case": "slowed" if slowed else "unslowed",
        "seed": seed,
        "exit": proc.returncode,
        "hosts": sorted(hosts),
        "links": sorted(links),
        "sigma_pct": series.get("sigma_pct"),
        "host_effects": series.get("host_effects"),
        "suspects": series.get("suspects"),
        "round_wall_s": rounds,
        "wall_s": wall,
    }


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 10
    os.makedirs(out, exist_ok=True)
    bed = Testbed(fleet_bed.HOSTS)
    bed.start()
    results = []
    try:
        for k in range(runs):
            for slowed in (True, False):
                r = one(bed, slowed, 1000 + 2 * k + slowed)
                results.append(r)
                print(json.dumps({x: r[x] for x in ("case", "exit", "hosts", "links", "wall_s")}))
                sys.stdout.flush()
    finally:
        bed.stop()
    with open(os.path.join(out, "runs.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    want = {"slowed": ([fleet_bed.SLOW_HOST], ["-".join(fleet_bed.SLOW_LINK)]), "unslowed": ([], [])}
    for case, (hosts, links) in want.items():
        mine = [r for r in results if r["case"] == case]
        right = sum(r["hosts"] == hosts and r["links"] == links for r in mine)
        sigmas = [r["sigma_pct"] for r in mine if r["sigma_pct"] is not None]
        rounds = [w for r in mine for part in r["round_wall_s"] for w in part]
        print(
            f"{case}: right {right} of {len(mine)}; exits {[r['exit'] for r in mine]}; "
            f"sigma median {statistics.median(sigmas):.2f}% (max {max(sigmas):.2f}%); "
            f"round median {statistics.median(rounds):.3f} s; case wall median "
            f"{statistics.median(r['wall_s'] for r in mine):.1f} s (max "
            f"{max(r['wall_s'] for r in mine):.1f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
