"""The fleet cases on the test bed (testbed.py), shared by test_multihost_fleet.py and the
repeatability campaign (docs/results/2026-11-28-fleet-bed/repeat.py).

Eight hosts, one rank each, every link shaped with tc htb at RATE_MBIT (2 cores cannot carry
faster flows between 8 namespaces without their own noise: testbed.shape). Slowed: SLOW_HOST's
link at RATE_MBIT / 1.3 both ways (its pairs about 30% slower at the bandwidth size), and the
pair SLOW_LINK at half the rate by a tc filter on each end's address (2x). A case runs
`tools/fleet run` on nodeA, as a user would: two passes of every pair, the judge, the re-test
of the suspects in a second launch, the final verdict.

Other beds and slowdowns (the power campaign, docs/results/2026-11-29-fleet-power/power.py) are
a Case: the host count, one switch or two, a slowdown factor for any hosts, pairs and the uplink
between two switches (each a rate of RATE_MBIT / factor), and options for tools/fleet's judge
(for example `--topology FILE`, from Testbed.write_topology). run_bed() shapes a started bed for
a case and runs it under Open MPI; SLOWED and UNSLOWED are the two cases above.
"""

import dataclasses
import json
import os
import subprocess
import time

from testbed import AGENT, OPENMPI_MCA, Testbed
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


@dataclasses.dataclass
class Case:
    """A bed and what is slowed on it. A factor f puts a link at RATE_MBIT / f both ways: a
    host's own link (`host_factors` {host: f}), a pair's traffic (`link_factors` {(a, b): f},
    a tc filter on each end), the uplink between two switches (`uplink_factor`, with
    `switches`=2: every pair across them shares it). `judge_args`: options for `tools/fleet
    run` before its `--`. Hosts are nodeA, nodeB, ... (Testbed)."""

    hosts_count: int = HOSTS
    switches: int = 1
    host_factors: dict = dataclasses.field(default_factory=dict)
    link_factors: dict = dataclasses.field(default_factory=dict)
    uplink_factor: float | None = None
    judge_args: tuple = ()

    def bed(self):
        """A Testbed for this case, not started."""
        return Testbed(self.hosts_count, switches=self.switches)


SLOWED = Case(host_factors={SLOW_HOST: 1.3}, link_factors={SLOW_LINK: 2})
UNSLOWED = Case()


def shape_case(bed, case, rate_mbit=RATE_MBIT):
    """Shapes `bed` (started, with the case's hosts and switches) as `case` says: every link at
    `rate_mbit`, each slowed one at rate_mbit / its factor."""
    if len(bed.hosts) != case.hosts_count or len(bed.leaves) != case.switches:
        raise ValueError(
            f"a bed of {len(bed.hosts)} hosts on {len(bed.leaves)} switches for a case of "
            f"{case.hosts_count} on {case.switches}"
        )
    unknown = set(case.host_factors) - set(bed.hosts)
    if unknown:
        raise ValueError(f"no such hosts on the bed: {sorted(unknown)}")
    bed.shape(
        rate_mbit,
        host_rates={h: rate_mbit / f for h, f in case.host_factors.items()},
        pair_rates={pair: rate_mbit / f for pair, f in case.link_factors.items()},
        uplink_rate=None if case.uplink_factor is None else rate_mbit / case.uplink_factor,
    )


def shape(bed, slowed):
    """The test's two cases: SLOWED or UNSLOWED."""
    shape_case(bed, SLOWED if slowed else UNSLOWED)


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


def run_case(on_node_a, launch, binary, out_dir, seed, env, timeout=BOUND_S + 30, judge_args=()):
    """tools/fleet run on nodeA (`on_node_a(argv)` makes the command line that runs argv
    there), with `judge_args` before its `--`: returns (process, verdict or None, wall
    seconds). subprocess.TimeoutExpired past `timeout`."""
    argv = (
        ["/usr/bin/python3", FLEET, "run", "--out", out_dir, *judge_args, "--"]
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


def run_bed(bed, case, out_dir, seed, mpirun, binary, timeout=BOUND_S + 30):
    """Shapes the started `bed` for `case` and runs `tools/fleet run` on its nodeA under Open
    MPI's `mpirun`, with the case's judge options: returns run_case()'s (process, verdict or
    None, wall seconds). On a timeout every process left on the bed is killed (the launch's
    ranks outlive the killed tools/fleet) and subprocess.TimeoutExpired raised."""
    shape_case(bed, case)
    try:
        return run_case(
            lambda argv: bed.on("nodeA", argv),
            openmpi_launch(bed, mpirun),
            binary,
            out_dir,
            seed,
            bed.env(openmpi_env()),
            timeout=timeout,
            judge_args=tuple(case.judge_args),
        )
    except subprocess.TimeoutExpired:
        for host in bed.hosts:
            bed.kill(host)
        raise


def named(verdict):
    """(hosts, links) called slow in any series of a verdict."""
    hosts, links = set(), set()
    for series in verdict["series"]:
        hosts |= {h["host"] for h in series["hosts"] if h["status"] == "slow"}
        links |= {x["link"] for x in series["links"] if x["status"] == "slow"}
    return hosts, links


# The field that names an entry of a verdict's list, by the list's key; a list not here (a kind
# a later tools/fleet adds, such as switches or uplinks) is named as _entry_name says.
_NAME_FIELD = {"hosts": "host", "links": "link", "rails": "rank"}


def named_all(verdict, status="slow"):
    """{kind: sorted names} of every entry with `status` in any series of a verdict, for each
    list of entries the series hold (hosts, links, rails, and any kind tools/fleet adds, such
    as switches), so a campaign records what a newer judge names without knowing its kinds."""
    found = {"hosts": set(), "links": set()}
    for series in verdict.get("series", []):
        for kind, entries in series.items():
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                continue
            for entry in entries:
                if "status" not in entry:
                    continue
                found.setdefault(kind, set())
                if entry["status"] == status:
                    found[kind].add(_entry_name(kind, entry))
    return {kind: sorted(names) for kind, names in found.items()}


def _entry_name(kind, entry):
    """An entry's name: its kind's field, else "name", "switch" or "leaf", else its first
    string field other than the status, or list of strings (joined with "-")."""
    for key in (_NAME_FIELD.get(kind), "name", "switch", "leaf"):
        if key in entry:
            return str(entry[key])
    for key, value in entry.items():
        if isinstance(value, str) and key != "status":
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return "-".join(value)
    return "?"


def round_walls(out_dir):
    """Each launch's rounds' wall seconds ([fleet.json's, retest.json's]), as far as written."""
    walls = []
    for name in ("fleet.json", "retest.json"):
        path = os.path.join(out_dir, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                document = json.load(f)
            walls.append(document["context"]["xferbench"]["fleet"]["rounds"]["wall_s"])
    return walls


def openmpi_env():
    return dict(os.environ, **OPENMPI_AS_ROOT)
