"""tools/ab on the CPU machine: two sides of one build in alternating jobs (ABBA), one of them
with a planted slowdown (--xfer_test_slowdown through its environment fallback), judged as
tools/compare.py judges jobs. Short on purpose: a few sizes of mpi_host, six jobs a side. A
rank that loses its core for a few milliseconds moves a short visit's mean by far more than
10%: on a busy machine the planted slowdown cannot be required, and the test says so."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from xfer_testlib import OPENMPI_AS_ROOT, XFERBENCH

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AB = os.path.join(ROOT, "tools", "ab")
BUILD = os.path.dirname(os.path.abspath(XFERBENCH))
FAMILY = "mpi_host/mode:pingpong"
ROWS = ["--benchmark_filter=mpi_host/mode:pingpong", "--xfer_sizes=256KiB:4MiB:x4"]


class AbCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.out = os.path.join(self.dir, "ab.json")

    def ab(self, *args, timeout=300):
        env = dict(OPENMPI_AS_ROOT, **os.environ)
        env.pop("XFER_TEST_SLOWDOWN", None)
        return subprocess.run(
            [sys.executable, AB, "--a-build", BUILD, "--b-build", BUILD, "--out", self.out]
            + list(args),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )

    def document(self):
        with open(self.out, encoding="utf-8") as stream:
            return json.load(stream)


class AbJudgementTest(AbCase):
    def test_identical_sides_find_nothing(self):
        result = self.ab("--jobs", "6", *ROWS)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertTrue(result.stdout.startswith("ab: no regression: 0 of 3 rows slower"))
        self.assertIn("Software differences: none", result.stdout)
        document = self.document()
        ab = document["ab"]
        self.assertEqual(ab["order"], list("ABBAABBAABBA"))
        report = ab["report"]
        self.assertEqual((report["judged_by"], report["base"]["jobs"]), ("jobs", 6))
        (family,) = report["families_judged"]
        self.assertEqual((family["family"], family["status"]), (FAMILY, "same"))
        # The document is B's merged result, which plot.py and compare.py read.
        self.assertEqual(document["context"]["xferbench"]["merged"]["jobs"], 6)
        compared = subprocess.run(
            [sys.executable, os.path.join(ROOT, "tools", "compare.py"), self.out],
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertEqual(compared.returncode, 0, compared.stdout + compared.stderr)
        picture = os.path.join(self.dir, "ab.png")
        plotted = subprocess.run(
            [sys.executable, os.path.join(ROOT, "tools", "plot.py"), self.out, "-o", picture],
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertEqual(plotted.returncode, 0, plotted.stderr)
        self.assertGreater(os.path.getsize(picture), 0)

    def test_planted_slowdown_on_one_side_is_found(self):
        # tools/run's sweep of mpi_host (22 sizes): a family of many rows, so that one row's
        # stalled visit moves the family's shift less.
        sweep = ["--benchmark_filter=mpi_host/mode:pingpong", "--xfer_sizes=8B:16MiB:x2"]
        result = self.ab("--jobs", "6", "--b-env", "XFER_TEST_SLOWDOWN=mpi_host:10", *sweep)
        self.assertIn(result.returncode, (0, 1), result.stderr)
        self.assertIn("- env XFER_TEST_SLOWDOWN: A None, B 'mpi_host:10'", result.stdout)
        (family,) = self.document()["ab"]["report"]["families_judged"]
        # Where the jobs could see half of the planted 10%, it must be found.
        if family["detectable_percent"] >= 5:
            self.skipTest(
                f"jobs too noisy here to require finding 10%: smallest detectable change "
                f"{family['detectable_percent']:.0f}% (load {os.getloadavg()[0]:.1f})"
            )
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(f"(families: 1 of 1 moved: {FAMILY} slower +", result.stdout)
        self.assertEqual(family["status"], "slower")


class AbInterruptTest(AbCase):
    """A signal ends a sitting early: what each side finished is judged, equal jobs a side, the
    document kept and marked incomplete, exit 130 (as tools/run and xferbench)."""

    def interrupt_after(self, jobs, signum, group):
        """Runs a sitting of 6 jobs a side, sends signum once `jobs` jobs have finished (to the
        process group, as Ctrl-C, or to tools/ab alone, as `timeout`); (exit, stdout, stderr)."""
        env = dict(OPENMPI_AS_ROOT, **os.environ)
        env.pop("XFER_TEST_SLOWDOWN", None)
        err_path = os.path.join(self.dir, "stderr")
        command = [sys.executable, AB, "--a-build", BUILD, "--b-build", BUILD, "--out", self.out]
        with (
            open(err_path, "w") as err,
            subprocess.Popen(
                command + ["--jobs", "6"] + ROWS,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
                start_new_session=True,  # a process group of its own, as a shell gives a command
            ) as ab,
        ):
            deadline = time.monotonic() + 240
            while self.finished(err_path) < jobs and ab.poll() is None:
                self.assertLess(time.monotonic(), deadline, "the jobs did not finish")
                time.sleep(0.1)
            if group:
                os.killpg(ab.pid, signum)
            else:
                os.kill(ab.pid, signum)
            out, _ = ab.communicate(timeout=120)
        with open(err_path) as err:
            return ab.returncode, out, err.read()

    @staticmethod
    def finished(err_path):
        with open(err_path) as err:
            return sum(1 for line in err if ": exit 0 in " in line or ": exit 1 in " in line)

    def assert_kept(self, status, out, err):
        self.assertEqual(status, 130, out + err)
        self.assertNotIn("Traceback", err)
        self.assertIn(f"tools/ab: written to {self.out} (incomplete)", err)
        ab = self.document()["ab"]
        incomplete = ab["incomplete"]
        self.assertEqual(incomplete["jobs_planned"], 12)
        judged = incomplete["order_judged"]
        self.assertEqual(judged, list("ABBAABBAABBA")[: len(judged)])
        self.assertEqual(judged.count("A"), judged.count("B"))
        self.assertEqual(ab["jobs_per_side"], len(judged) // 2)
        for kept in incomplete["not_judged"]:  # kept on disk
            self.assertTrue(os.path.isfile(os.path.join(self.dir, "ab.jobs", kept["job"] + ".log")))
        return ab

    def test_sigint_to_the_process_group_keeps_a_verdict(self):
        status, out, err = self.interrupt_after(5, signal.SIGINT, group=True)
        ab = self.assert_kept(status, out, err)
        self.assertGreaterEqual(ab["jobs_per_side"], 2)
        self.assertRegex(out, r"^ab: (no regression|REGRESSION): ")
        self.assertIn("ab: interrupted by SIGINT: ", out)
        self.assertEqual(ab["report"]["base"]["jobs"], ab["jobs_per_side"])
        compared = subprocess.run(
            [sys.executable, os.path.join(ROOT, "tools", "compare.py"), self.out],
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertIn(compared.returncode, (0, 1), compared.stderr)
        self.assertIn("an incomplete sitting (interrupted by SIGINT)", compared.stderr)

    def test_sigterm_to_tools_ab_keeps_a_verdict(self):
        status, out, err = self.interrupt_after(4, signal.SIGTERM, group=False)
        ab = self.assert_kept(status, out, err)
        self.assertGreaterEqual(ab["jobs_per_side"], 2)
        self.assertIn("ab: interrupted by SIGTERM: ", out)

    def test_one_job_a_side_gives_no_verdict(self):
        status, out, err = self.interrupt_after(1, signal.SIGTERM, group=False)
        self.assertEqual(status, 130, out + err)
        self.assertTrue(out.startswith("ab: no verdict: "), out)
        self.assertIn(f"tools/ab: written to {self.out} (incomplete, no verdict)", err)
        self.assertIsNone(self.document()["ab"]["report"])
        compared = subprocess.run(
            [sys.executable, os.path.join(ROOT, "tools", "compare.py"), self.out],
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertEqual(compared.returncode, 2)
        self.assertIn("no verdict", compared.stderr)


class AbInputTest(AbCase):
    def assert_refused(self, result, *words):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        for word in words:
            self.assertIn(word, result.stderr)

    def test_build_without_xferbench_is_refused(self):
        result = self.ab("--b-build", self.dir)
        self.assert_refused(result, f"--b-build {self.dir}: no xferbench there")

    def test_bad_settings_are_refused(self):
        self.assert_refused(self.ab("--a-env", "no-equals"), "--a-env", "NAME=VALUE")
        self.assert_refused(self.ab("--jobs", "1"), "--jobs", "expected 2 to 32")
        self.assert_refused(self.ab("--jobs", "4", "--time-budget", "60"), "not both")
        self.assert_refused(self.ab("--benchmark_out=x.json"), "--benchmark_out")

    def test_a_bad_xferbench_flag_stops_at_the_first_job(self):
        result = self.ab("--xfer_sizes=bogus")
        self.assert_refused(result, "job-01-A1 of side A failed", "--xfer_sizes")

    def test_sides_with_other_ranks_are_refused(self):
        result = self.ab("--jobs", "2", "--b-env", "RANKS=3", "--b-env", "XFER_BIND=none", *ROWS)
        self.assert_refused(result, "different hardware or placement", "world_size: 2 vs 3")


if __name__ == "__main__":
    unittest.main()
