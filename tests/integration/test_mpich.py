"""xferbench built against MPICH and launched with MPICH's mpiexec (hydra): the same table, file,
pairs and exit statuses as under Open MPI's mpirun. mpich_build.py builds that xferbench (and
skips, or fails in CI, without MPICH).
"""

import json
import os
import subprocess
import tempfile
import unittest

from mpich_build import build, mpich_env
from xfer_testlib import failed, rows

QUICK = ["--xfer_sizes=8,4K", "--benchmark_min_time=0.01", "--benchmark_color=false"]


class UnderMpichMpiexec(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mpiexec, cls.binary = build()

    def launch(self, ranks, args, out=None):
        command = [self.mpiexec, "-n", str(ranks), self.binary] + QUICK + list(args)
        if out:
            command.append("--benchmark_out=" + out)
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=120,
            env=mpich_env(),
            check=False,
        )

    def test_the_binary_is_built_against_mpich(self):
        proc = subprocess.run(
            [self.binary, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("MPICH", proc.stdout)

    def test_two_ranks_one_table_one_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.launch(2, [], out)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertEqual(proc.stdout.count("Benchmark "), 1, proc.stdout)  # rank 0 alone
            self.assertEqual(sorted(os.listdir(tmp)), ["run.json"])
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        names = [r["name"] for r in rows(document)]
        self.assertEqual(
            names,
            [
                "mpi_host/mode:pingpong/bytes:8/manual_time",
                "mpi_host/mode:pingpong/bytes:4096/manual_time",
            ],
        )
        self.assertFalse(any(failed(r) for r in rows(document)))
        context = document["context"]["xferbench"]
        self.assertIn("MPICH", context["mpi"]["library"])
        self.assertEqual(context["world_size"], 2)

    def test_four_ranks_in_halves(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.launch(
                4, ["--xfer_pairs=halves", "--xfer_modes=stream", "--xfer_max_time=0.05"], out
            )
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        names = [r["name"] for r in rows(document)]
        self.assertIn("mpi_host/mode:stream/pairs:2/bytes:4096/manual_time", names)
        pairs = document["context"]["xferbench"]["pairs"]
        self.assertEqual([p["ranks"] for p in pairs], [[0, 2], [1, 3]])

    def test_bad_input_is_said_once_with_exit_2(self):
        proc = self.launch(2, ["--xfer_pairs=0:7"])
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(proc.stderr.count("--xfer_pairs"), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
