"""xferbench launched by Slurm's srun (2 ranks, Open MPI through PMIx) on a one-node cluster
started on localhost for the test: the same table, file, context and exit status as under mpirun.

Skips without slurmctld, slurmd, srun and munged (Debian: slurmctld slurmd slurm-client munge) or
without root; with XFER_EXPECT_SLURM=1 those are failures. See slurm_cluster.py for the cluster.
"""

import json
import os
import tempfile
import unittest

from slurm_cluster import SlurmCluster, other_ranks_lines
from xfer_testlib import XFERBENCH, failed, rows

SIZES = ["--xfer_sizes=8,4K", "--benchmark_min_time=0.01"]
SRUN_TIMEOUT = 60  # each run takes about a second; the job's own limit (--time) is a minute
# Open MPI 4.1 direct-launched by srun finds its peers only through Slurm's PMIx plugin
# (--mpi=pmi2 and --mpi=none end in "OMPI was not built with SLURM's PMI support").
SRUN = ["--mpi=pmix", "--nodes=1", "--ntasks=2", "--label", "--kill-on-bad-exit=1", "--time=1"]


class TwoRanksUnderSrun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = SlurmCluster()  # skips (or fails) here when Slurm cannot run
        cls.addClassCleanup(cls.cluster.stop)
        cls.cluster.start()
        cls.cluster.require_pmix()

    def srun(self, args):
        return self.cluster.srun(SRUN + [XFERBENCH] + list(args), timeout=SRUN_TIMEOUT)

    def assert_only_rank_0_speaks(self, proc):
        self.assertEqual(other_ranks_lines(proc), [], "a rank other than 0 printed")

    def test_one_table_one_file_and_the_context_of_both_ranks(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.srun(SIZES + ["--benchmark_color=false", "--benchmark_out=" + out])
            self.assertEqual(proc.returncode, 0, proc.diagnosis)
            self.assertEqual(sorted(os.listdir(tmp)), ["run.json"])
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)

        self.assert_only_rank_0_speaks(proc)
        self.assertEqual(proc.stdout.count("Benchmark "), 1, proc.diagnosis)
        for size in (8, 4096):
            row = f"mpi_host/mode:pingpong/bytes:{size}/manual_time"
            self.assertEqual(proc.stdout.count(row), 1, proc.diagnosis)
        self.assertIn("0: rank pairs: 0:1 (intra-node)", proc.stderr)

        got = rows(doc)
        self.assertEqual(
            [r["name"] for r in got],
            [f"mpi_host/mode:pingpong/bytes:{s}/manual_time" for s in (8, 4096)],
        )
        self.assertFalse(any(failed(r) for r in got), got)
        ctx = doc["context"]["xferbench"]
        self.assertEqual(ctx["world_size"], 2)
        self.assertEqual([r["rank"] for r in ctx["ranks"]], [0, 1])
        self.assertEqual([r["local_rank"] for r in ctx["ranks"]], [0, 1])
        hosts = [r["host"] for r in ctx["ranks"]]
        self.assertTrue(hosts[0], ctx["ranks"])
        self.assertEqual(hosts[0], hosts[1], "both ranks run on the one node")
        self.assertEqual(
            [(p["ranks"], p["hosts"], p["inter_node"]) for p in ctx["pairs"]],
            [([0, 1], hosts, False)],
        )
        self.assertIn("Open MPI", ctx["mpi"]["library"])
        self.assertEqual(ctx["sizes"], [8, 4096])

    def test_a_usage_error_is_printed_once_and_ends_the_job_with_status_2(self):
        # The rank is read from PMIX_RANK / SLURM_PROCID before MPI starts.
        proc = self.srun(["--xfer_sizes=bogus"])
        self.assertEqual(proc.returncode, 2, proc.diagnosis)
        self.assertEqual(proc.stderr.count("--xfer_sizes='bogus'"), 1, proc.diagnosis)
        self.assert_only_rank_0_speaks(proc)

    def test_a_failed_row_fails_the_job(self):
        proc = self.srun(["--xfer_sizes=8", "--xfer_test_corrupt=mpi_host"])
        self.assertEqual(proc.returncode, 1, proc.diagnosis)
        self.assertIn(
            "rank 1: validate: validation: 1 of 8 bytes differ", proc.stdout, proc.diagnosis
        )
        self.assertIn("row(s) failed", proc.stderr, proc.diagnosis)
        self.assert_only_rank_0_speaks(proc)


if __name__ == "__main__":
    unittest.main()
