"""The fleet cases on the test bed (testbed.py), shared by test_multihost_fleet.py and the
repeatability campaign (docs/results/2026-11-28-fleet-bed/repeat.py).

Eight hosts, one rank each, every link shaped with tc htb at RATE_MBIT (2 cores cannot carry
faster flows between 8 namespaces without their own noise: testbed.shape). Slowed: SLOW_HOST's
link at RATE_MBIT / 1.3 both ways (its pairs about 30% slower at the bandwidth size), and the
pair SLOW_LINK at half the rate by a tc filter on each end's address (2x). A case runs
`tools/fleet run` on nodeA, as a user would: two passes of every pair, the judge, the re-test
of the suspects in a second launch, the final verdict.
"""

import json
import os
import subprocess
import time

from testbed import AGENT, OPENMPI_MCA
from xfer_testlib import OPENMPI_AS_ROOT

SOURCE = os.environ.get("XFER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
FLEET = os.path.join(SOURCE, "tools", "fleet")
HOSTS = 8
RATE_MBIT = 200
SLOW_HOST = "nodeC"
SLOW_LINK = ("nodeA", "nodeF")
# One bandwidth size: at 200 Mbit/s a 256 KiB message takes about 10 ms, the shaping's time,
# not the 2 cores'; a latency size on this bed measures the scheduler, which tc cannot slow.
XFER_ARGS = [
    "--benchmark_filter=mpi_host",
    "--xfer_sizes=256K",
    "--xfer_max_time=0.25",
    "--benchmark_color=false",
]
BOUND_S = 90  # a case, both launches and the judge, on CI's 2 cores


def shape(bed, slowed):
    if slowed:
        bed.shape(
            RATE_MBIT,
            host_rates={SLOW_HOST: RATE_MBIT / 1.3},
            pair_rates={SLOW_LINK: RATE_MBIT / 2},
        )
    else:
        bed.shape(RATE_MBIT)


def openmpi_launch(bed, mpirun):
    argv = [mpirun, "--host", ",".join(bed.hosts), "-np", str(len(bed.hosts))]
    for key, value in dict(OPENMPI_MCA, plm_rsh_agent=AGENT).items():
        argv += ["--mca", key, value]
    return argv


def mpich_launch(bed, mpiexec):
    return [mpiexec, "-launcher", "ssh", "-launcher-exec", AGENT, "-hosts", ",".join(bed.hosts)] + [
        "-n",
        str(len(bed.hosts)),
    ]


def run_case(on_node_a, launch, binary, out_dir, seed, env, timeout=BOUND_S + 30):
    """tools/fleet run on nodeA (`on_node_a(argv)` makes the command line that runs argv
    there): returns (process, verdict or None, wall seconds)."""
    argv = (
        ["/usr/bin/python3", FLEET, "run", "--out", out_dir, "--"]
        + launch
        + [binary, f"--xfer_seed={seed}"]
        + XFER_ARGS
    )
    start = time.monotonic()
    proc = subprocess.run(
        on_node_a(argv),
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        env=env,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    wall = time.monotonic() - start
    verdict = None
    path = os.path.join(out_dir, "verdict.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            verdict = json.load(f)
    return proc, verdict, wall


def named(verdict):
    """(hosts, links) called slow in any series of a verdict."""
    hosts, links = set(), set()
    for series in verdict["series"]:
        hosts |= {h["host"] for h in series["hosts"] if h["status"] == "slow"}
        links |= {x["link"] for x in series["links"] if x["status"] == "slow"}
    return hosts, links


def openmpi_env():
    return dict(os.environ, **OPENMPI_AS_ROOT)
