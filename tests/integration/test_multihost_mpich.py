"""xferbench built against MPICH (mpich_build.py), launched across a test bed of two hosts
(testbed.py) by MPICH's mpiexec with its own launcher option: -launcher ssh -launcher-exec
netns-agent, started on nodeA.

MPICH here runs over UCX, which sees one machine under the namespaces and would carry the bytes
through shared memory; UCX_TLS=self,tcp makes it use the network, as between real hosts. One rank
per host: MPICH's ranks spin while they wait, and two spinning ranks per host on these 2 cores
turn a message into a scheduler tick (4 ms).
"""

import json
import os
import tempfile
import unittest

from mpich_build import build, mpich_env
from testbed import AGENT, Testbed
from xfer_testlib import assert_cut_short, assert_kept_from_round_one, failed, rows

QUICK = ["--xfer_sizes=8,64K", "--xfer_max_time=0.02", "--benchmark_color=false"]
LONG = [
    "--xfer_sizes=8B:4KiB:x2",
    "--xfer_precision=0.001",
    "--xfer_max_time=0.9",
    "--xfer_visits=3",
    "--benchmark_color=false",
]  # visits of 0.3 s each, 3 a row: in the first round at the fault
TIMEOUT = 120
FAULT_BOUND = 30  # seconds from the fault to the end of mpiexec; past that it is a hang
UCX_OVER_TCP = {"UCX_TLS": "self,tcp"}


class AcrossTwoHosts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bed = Testbed(2)  # skips (or fails) here where namespaces cannot be made
        cls.mpiexec, cls.binary = build()
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()

    def mpiexec_argv(self, args):
        return [
            self.mpiexec,
            "-launcher",
            "ssh",
            "-launcher-exec",
            AGENT,
            "-hosts",
            "nodeA,nodeB",
            "-n",
            "2",
            self.binary,
        ] + list(args)

    def test_a_rank_on_each_host(self):
        before = self.bed.bridge_bytes("nodeB")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.bed.run(
                "nodeA",
                self.mpiexec_argv(QUICK + ["--benchmark_out=" + out]),
                timeout=TIMEOUT,
                env=mpich_env(UCX_OVER_TCP),
            )
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        crossed = self.bed.bridge_bytes("nodeB") - before
        context = document["context"]["xferbench"]
        self.assertIn("MPICH", context["mpi"]["library"])
        self.assertEqual(
            [(r["rank"], r["host"], r["local_rank"]) for r in context["ranks"]],
            [(0, "nodeA", 0), (1, "nodeB", 0)],
        )
        self.assertEqual(
            [(p["ranks"], p["hosts"], p["inter_node"]) for p in context["pairs"]],
            [([0, 1], ["nodeA", "nodeB"], True)],
        )
        self.assertIn("rank pairs: 0:1 (inter-node)\n", proc.stderr)
        got = {r["name"]: r for r in rows(document)}
        self.assertFalse(any(failed(r) for r in got.values()), got)
        # The bytes crossed the bridge: at least every timed 64 KiB message.
        row = got["mpi_host/mode:pingpong/bytes:65536/manual_time"]
        self.assertGreater(crossed, row["iterations"] * 65536)

    def test_the_processes_of_one_host_killed(self):
        status, said, document, _ = self.bed.run_and_break(
            "nodeA",
            lambda out: self.mpiexec_argv(LONG + ["--benchmark_out=" + out]),
            lambda: self.assertEqual(self.bed.kill("nodeB", "xferbench"), 1),
            FAULT_BOUND,
            mpich_env(UCX_OVER_TCP),
        )
        self.assertNotEqual(status, 0, said)
        # Killed outright: the file is rank 0's last rewrite, from round one.
        assert_cut_short(self, document)
        assert_kept_from_round_one(self, document)
        # Hydra names the host; it ends every rank with SIGKILL, so xferbench says nothing.
        self.assertIn("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", said)
        self.assertRegex(said, r"PID \d+ RUNNING AT nodeB\n=   EXIT CODE: 9")


if __name__ == "__main__":
    unittest.main()
