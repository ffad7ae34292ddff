"""A row that cannot get its memory fails on every rank, says what it asked for, and the run goes
on."""

import json
import os
import shlex
import subprocess
import tempfile
import unittest

from xfer_testlib import MPIRUN, XFERBENCH, failed, rows


class Allocation(unittest.TestCase):
    def test_a_refused_allocation_fails_that_row_everywhere_and_the_run_goes_on(self):
        # 4 GiB fits the machine (the up-front check passes) but not a 3 GB address-space limit.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            command = MPIRUN + [
                "2",
                XFERBENCH,
                "--xfer_sizes=8,4GiB",
                "--xfer_modes=pingpong,stream",
                "--xfer_max_time=0.05",
                "--benchmark_out=" + out,
            ]
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            proc = subprocess.run(
                ["bash", "-c", "ulimit -v 3000000; exec " + shlex.join(command)],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=300,
                env=env,
                check=False,
            )
            self.assertEqual(proc.returncode, 1, proc.stderr)
            with open(out, encoding="utf-8") as f:
                got = {r["name"].replace("/manual_time", ""): r for r in rows(json.load(f))}
            for mode in ("pingpong", "stream"):
                small = got[f"mpi_host/mode:{mode}/bytes:8"]
                self.assertFalse(failed(small), small)
                big = got[f"mpi_host/mode:{mode}/bytes:4294967296"]
                self.assertTrue(failed(big), big)
                message = big.get("error_message") or big.get("skip_message")
                self.assertIn("cannot allocate 4 GiB of host memory", message)
            self.assertIn("row(s) failed", proc.stderr)


if __name__ == "__main__":
    unittest.main()
