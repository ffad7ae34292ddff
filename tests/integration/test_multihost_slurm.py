"""xferbench under Slurm across two hosts of a test bed (testbed.py): a slurmd in each host's
namespace, slurmctld and srun on nodeA (slurm_cluster.SlurmClusterOnTestbed), Open MPI started by
srun through PMIx: `srun -N 2 -n 2 --mpi=pmix`.

And a host that fails mid-run. Its link down: nothing tells srun, so xferbench's watchdog ends
the job after --xfer_timeout, naming the peer's host, and srun gives up on the silent node after
its wait for the step. Its processes killed: srun names the node at once.
"""

import json
import os
import tempfile
import unittest

from slurm_cluster import SlurmClusterOnTestbed, other_ranks_lines
from testbed import OPENMPI_MCA, Testbed
from xfer_testlib import XFERBENCH, assert_cut_short, assert_kept_from_round_one, failed, rows

SRUN = ["--mpi=pmix", "--nodes=2", "--ntasks=2", "--label", "--kill-on-bad-exit=1", "--time=1"]
QUICK = ["--xfer_sizes=8,64K", "--xfer_max_time=0.02", "--benchmark_color=false"]
LONG = [
    "--xfer_sizes=8B:4KiB:x2",
    "--xfer_precision=0.001",
    "--xfer_max_time=0.9",
    "--xfer_visits=3",
    "--benchmark_color=false",
]  # visits of 0.3 s each, 3 a row: in the first round at the fault
OPENMPI_ENV = {"OMPI_MCA_" + key: value for key, value in OPENMPI_MCA.items()}
XFER_TIMEOUT = 5
# The watchdog's limit and grace, then Slurm's: srun waits KillWait + 2 s for the step to end, or
# slurmctld declares the silent node DOWN (SlurmdTimeout=10, see slurm_cluster.py). Past that it
# is a hang.
FAULT_BOUND = XFER_TIMEOUT + 15 + 25


class TwoNodesUnderSrun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bed = Testbed(2)
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()
        cls.cluster = SlurmClusterOnTestbed(cls.bed)  # skips (or fails) here without Slurm
        cls.addClassCleanup(cls.cluster.stop)
        cls.cluster.start()
        cls.cluster.require_pmix()

    def srun_args(self, args):
        return SRUN + [XFERBENCH] + list(args)

    def test_a_rank_on_each_node(self):
        before = self.bed.bridge_bytes("nodeB")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.cluster.srun(
                self.srun_args(QUICK + ["--benchmark_out=" + out]), timeout=60, env=OPENMPI_ENV
            )
            self.assertEqual(proc.returncode, 0, proc.diagnosis)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        crossed = self.bed.bridge_bytes("nodeB") - before
        self.assertEqual(other_ranks_lines(proc), [], "a rank other than 0 printed")
        self.assertIn("0: rank pairs: 0:1 (inter-node)\n", proc.stderr)
        context = document["context"]["xferbench"]
        self.assertEqual(
            [(r["rank"], r["host"], r["local_rank"], r["gpu"]) for r in context["ranks"]],
            [(0, "nodeA", 0, None), (1, "nodeB", 0, None)],
        )
        self.assertEqual(
            [(p["ranks"], p["hosts"], p["inter_node"]) for p in context["pairs"]],
            [([0, 1], ["nodeA", "nodeB"], True)],
        )
        got = {r["name"]: r for r in rows(document)}
        self.assertFalse(any(failed(r) for r in got.values()), got)
        row = got["mpi_host/mode:pingpong/bytes:65536/manual_time"]
        self.assertGreater(crossed, row["iterations"] * 65536)

    def break_run(self, fault):
        """A run broken by fault() once a row is written: (status, output). Bounded."""
        try:
            status, said, document, out = self.bed.run_and_break(
                "nodeA",
                lambda out: (
                    [self.cluster.programs["srun"]]
                    + self.srun_args(
                        LONG + [f"--xfer_timeout={XFER_TIMEOUT}", "--benchmark_out=" + out]
                    )
                ),
                fault,
                FAULT_BOUND,
                self.cluster.env(OPENMPI_ENV),
            )
        except AssertionError as error:
            raise AssertionError(f"{error}\n{self.cluster.logs()}") from None
        self.assertNotEqual(status, 0, said)
        assert_cut_short(self, document, said, out, prefix="0: ")
        assert_kept_from_round_one(self, document)
        return said

    def test_the_link_of_one_node_down(self):
        try:
            said = self.break_run(lambda: self.bed.link_down("nodeB"))
        finally:
            self.bed.link_up("nodeB")
            self.cluster.wait_for_idle()  # nodeB may have been declared DOWN: back for the next
        # xferbench's watchdog on rank 0 names the host of the rank it waits for.
        self.assertRegex(
            said,
            r"0: xferbench: rank 0: mpi_host/mode:pingpong/bytes:\d+: no result "
            rf"after {XFER_TIMEOUT} s \(--xfer_timeout\); a peer rank may have "
            r"failed \(this rank's peer: rank 1 on nodeB\) or the device "
            r"hangs\. Aborting the job\.",
        )
        self.assertIn("srun: error: nodeA: task 0: Exited with exit code 3", said)

    def test_the_processes_of_one_node_killed(self):
        said = self.break_run(lambda: self.assertEqual(self.bed.kill("nodeB", "xferbench"), 1))
        self.assertIn("srun: error: nodeB: task 1: Killed", said)


if __name__ == "__main__":
    unittest.main()
