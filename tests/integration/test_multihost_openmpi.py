"""Open MPI's mpirun across a test bed of hosts (network namespaces, see testbed.py): started on
nodeA, its rsh launcher reaching the other hosts through netns-agent, as it would through ssh.

What a user of a cluster sees: pairs across hosts are labelled inter-node in the console and the
JSON, each rank's host and node-local rank are recorded, and TCP carries the bytes between hosts
(shared memory only within one). And when a host fails: its processes killed, its link down, or
unreachable at launch, the job ends within seconds with a non-zero status and a line naming the
host, keeping the rows it finished, marked incomplete.
"""

import json
import os
import re
import tempfile
import unittest

from testbed import AGENT, OPENMPI_MCA, SUBNET, Testbed, require_open_mpi
from xfer_testlib import (
    MPIRUN,
    OPENMPI_AS_ROOT,
    XFERBENCH,
    assert_cut_short,
    assert_kept_from_round_one,
    failed,
    rows,
)

QUICK = [
    "--benchmark_filter=mpi_host",
    "--xfer_sizes=8,64K",
    "--xfer_max_time=0.02",
    "--benchmark_color=false",
]
# Visits of a fixed 0.3 s each (a precision no row reaches), 3 a row, so the run is in its first
# round at the fault (which comes once the first visit is in the result file).
LONG = [
    "--benchmark_filter=mpi_host",
    "--xfer_pairs=halves",
    "--xfer_sizes=8B:4KiB:x2",
    "--xfer_precision=0.001",
    "--xfer_max_time=0.9",
    "--xfer_visits=3",
    "--benchmark_color=false",
]
TIMEOUT = 120  # a launch takes a few seconds; a hang fails the test instead of stalling CI
MCA = dict(
    OPENMPI_MCA,
    plm_rsh_agent=AGENT,
    # mpirun notices within about 4 s that a daemon went silent (a link down); Open MPI's
    # default is 5 minutes idle, then 9 probes 20 s apart.
    oob_tcp_keepalive_time="1",
    oob_tcp_keepalive_intvl="1",
    oob_tcp_keepalive_probes="3",
)
XFER_TIMEOUT = 10
FAULT_BOUND = XFER_TIMEOUT + 15  # the watchdog's limit and its grace: past that it is a hang
TWO_BY_TWO = ["--host", "nodeA:2,nodeB:2", "-np", "4"]
AS_ROOT = dict(os.environ, **OPENMPI_AS_ROOT)


def mpirun(placement, args, mca=None):
    argv = [MPIRUN[0]] + placement
    for key, value in dict(MCA, **(mca or {})).items():
        argv += ["--mca", key, value]
    return argv + [XFERBENCH] + list(args)


class OnTestbed(unittest.TestCase):
    HOSTS = 2

    @classmethod
    def setUpClass(cls):
        require_open_mpi(MPIRUN[0])
        cls.bed = Testbed(cls.HOSTS)
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()

    def launch(self, placement, args, mca=None):
        """mpirun on nodeA; returns (process, result document)."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.bed.run(
                "nodeA",
                mpirun(placement, list(args) + ["--benchmark_out=" + out], mca),
                timeout=TIMEOUT,
                env=AS_ROOT,
            )
            proc.diagnosis = f"exit status {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            self.assertEqual(proc.returncode, 0, proc.diagnosis)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        self.assertFalse(any(failed(r) for r in rows(document)), proc.diagnosis)
        return proc, document

    def assert_pairs(self, proc, document, expected):
        """`expected`: (ranks, hosts, inter_node) per pair, in the JSON and the console."""
        pairs = document["context"]["xferbench"]["pairs"]
        self.assertEqual([(p["ranks"], p["hosts"], p["inter_node"]) for p in pairs], expected)
        console = ", ".join(
            f"{a}:{b} ({'inter' if inter else 'intra'}-node)" for (a, b), _, inter in expected
        )
        self.assertIn("rank pairs: " + console + "\n", proc.stderr)

    def assert_ranks(self, document, hosts):
        """Rank r runs on hosts[r], numbered from 0 on each host; no GPU here, so none mapped."""
        local = [hosts[:r].count(h) for r, h in enumerate(hosts)]
        self.assertEqual(
            [
                (r["rank"], r["host"], r["local_rank"], r["gpu"])
                for r in document["context"]["xferbench"]["ranks"]
            ],
            [(r, h, local[r], None) for r, h in enumerate(hosts)],
        )


class TwoHostsTwoRanksEach(OnTestbed):
    def test_each_host_has_its_name(self):
        for host in self.bed.hosts:  # hostname(1) asks gethostname()
            proc = self.bed.run(host, ["hostname"], timeout=30)
            self.assertEqual(proc.stdout.strip(), host, proc.stderr)

    def test_the_bed_has_no_way_out(self):
        # A host's only route is the bed's subnet, on its cable to the bridge: no default route.
        for host in self.bed.hosts:
            proc = self.bed.run(host, ["ip", "-4", "route"], timeout=30)
            self.assertEqual(
                [line.split()[:3] for line in proc.stdout.splitlines()],
                [[SUBNET, "dev", "eth0"]],
                proc.stderr,
            )

    def test_halves_pair_across_hosts_and_tcp_carries_them(self):
        before = self.bed.bridge_bytes("nodeB")
        # btl_base_verbose: each rank says which transport (BTL) reaches each other rank.
        proc, document = self.launch(
            TWO_BY_TWO, QUICK + ["--xfer_pairs=halves"], mca={"btl_base_verbose": "1"}
        )
        crossed = self.bed.bridge_bytes("nodeB") - before
        AB = ["nodeA", "nodeB"]
        self.assert_pairs(proc, document, [([0, 2], AB, True), ([1, 3], AB, True)])
        self.assert_ranks(document, ["nodeA", "nodeA", "nodeB", "nodeB"])
        self.assertIn("world: 4 ranks: 0@nodeA 1@nodeA 2@nodeB 3@nodeB", proc.stderr)

        # "[nodeA:123] mca: bml: Using tcp btl for send to [[4567,1],2] on node nodeB"
        used = re.findall(
            r"\[(\w+):\d+\] mca: bml: Using (\w+) btl for send to "
            r"\[\[\d+,\d+\],\d+\] on node (\w+)",
            proc.stdout + proc.stderr,
        )
        self.assertTrue(used, proc.diagnosis)
        for sender, btl, receiver in used:
            expected = ("tcp",) if sender != receiver else ("vader", "self")
            self.assertIn(btl, expected, f"{sender} -> {receiver}")
        self.assertEqual({btl for _, btl, _ in used}, {"tcp", "vader", "self"})
        self.assertEqual(document["context"]["xferbench"]["env"]["OMPI_MCA_btl"], "self,tcp,vader")
        # And the bytes crossed the bridge: at least every timed 64 KiB message of both pairs.
        row = {r["name"]: r for r in rows(document)}[
            "mpi_host/mode:pingpong/pairs:2/bytes:65536/manual_time"
        ]
        self.assertGreater(crossed, 2 * row["iterations"] * 65536)

    def test_rows_between_hosts_carry_their_share_of_the_network_port(self):
        # The recorded answers hold one active 400 Gb/s port: an mpi_host pair across hosts
        # crosses it, so its rows carry link_gbps (50 GB/s) and pct_of_link. Each rank's host
        # is read from the context the ranks gathered (live runs once routed no rank pair).
        source = os.environ.get("XFER_SOURCE_DIR", "../..")
        links = os.path.join(source, "tests", "fixtures", "links", "nvlink-two-gpus-edited")
        _, document = self.launch(
            ["--host", "nodeA,nodeB", "-np", "2"],
            [
                "--benchmark_filter=mpi_host/mode:pingpong",
                "--xfer_sizes=1M",
                "--xfer_test_links=" + os.path.abspath(links),
            ],
        )
        routes = document["context"]["xferbench"]["links"]["routes"]
        self.assertEqual(routes["mpi_host/mode:pingpong"]["links"], ["network:mlx5_0/1"])
        for row in rows(document):
            self.assertEqual(row["link_gbps"], 50.0, row["name"])
            self.assertAlmostEqual(row["pct_of_link"], row["GB/s"] / 50.0 * 100, places=6)

    def test_a_hostfile_and_explicit_pairs(self):
        with tempfile.NamedTemporaryFile("w", suffix=".hosts") as hostfile:
            hostfile.write("nodeA slots=2\nnodeB slots=2\n")
            hostfile.flush()
            placement = ["--hostfile", hostfile.name, "-np", "4"]
            AB = ["nodeA", "nodeB"]
            proc, document = self.launch(placement, QUICK + ["--xfer_pairs=0:2,1:3"])
            self.assert_pairs(proc, document, [([0, 2], AB, True), ([1, 3], AB, True)])
            self.assert_ranks(document, ["nodeA", "nodeA", "nodeB", "nodeB"])
            # Pairs within a host are intra-node.
            proc, document = self.launch(placement, QUICK + ["--xfer_pairs=0:1,2:3"])
            self.assert_pairs(
                proc, document, [([0, 1], ["nodeA"] * 2, False), ([2, 3], ["nodeB"] * 2, False)]
            )


class FourHosts(OnTestbed):
    HOSTS = 4

    def test_one_rank_per_host(self):
        hosts = ["nodeA", "nodeB", "nodeC", "nodeD"]
        proc, document = self.launch(
            ["--host", ",".join(hosts), "-np", "4"], QUICK + ["--xfer_pairs=halves"]
        )
        self.assert_ranks(document, hosts)
        self.assert_pairs(
            proc, document, [([0, 2], ["nodeA", "nodeC"], True), ([1, 3], ["nodeB", "nodeD"], True)]
        )


class HostFailures(OnTestbed):
    def break_run(self, fault):
        """A 2 x 2 run in halves, broken by fault() once a row is written: (status, output,
        document). The run is bounded: FAULT_BOUND seconds after the fault it is a hang."""
        status, said, document, out = self.bed.run_and_break(
            "nodeA",
            lambda out: mpirun(
                TWO_BY_TWO, LONG + [f"--xfer_timeout={XFER_TIMEOUT}", "--benchmark_out=" + out]
            ),
            fault,
            FAULT_BOUND,
            AS_ROOT,
        )
        self.assertNotEqual(status, 0, said)
        assert_cut_short(self, document, said, out)
        assert_kept_from_round_one(self, document)
        return said

    def test_the_processes_of_one_host_killed(self):
        said = self.break_run(lambda: self.assertEqual(self.bed.kill("nodeB", "xferbench"), 2))
        # (mpirun or mpiexec: Open MPI says the name it was started by)
        self.assertRegex(
            said,
            r"\w+ noticed that process rank [23] with PID \d+ on node nodeB "
            r"exited on signal 9 \(Killed\)",
        )

    def test_the_link_of_one_host_down(self):
        try:
            said = self.break_run(lambda: self.bed.link_down("nodeB"))
        finally:
            self.bed.link_up("nodeB")
        self.assertIn("ORTE has lost communication with a remote daemon", said)
        self.assertRegex(said, r"Remote daemon: \[\[\d+,0\],1\] on node nodeB")

    def test_a_host_unreachable_at_launch(self):
        self.bed.link_down("nodeB")
        try:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "run.json")
                proc = self.bed.run(
                    "nodeA",
                    mpirun(TWO_BY_TWO, LONG + ["--benchmark_out=" + out]),
                    timeout=FAULT_BOUND,
                    env=AS_ROOT,
                )
                self.assertFalse(os.path.exists(out), "no rank started")
        finally:
            self.bed.link_up("nodeB")
        said = proc.stdout + proc.stderr
        self.assertNotEqual(proc.returncode, 0, said)
        # The daemon started on nodeB cannot call mpirun back.
        self.assertIn("A process or daemon was unable to complete a TCP connection", said)
        self.assertRegex(said, r"Local host: +nodeB\n +Remote host: +nodeA")
        self.assertNotIn("xferbench", said)


if __name__ == "__main__":
    unittest.main()
