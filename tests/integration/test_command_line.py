"""Flags: help, version, and bad input that stops every rank with status 2 before any run."""

import os
import tempfile
import unittest

from xfer_testlib import QUICK, launch


class BadInput(unittest.TestCase):
    def assert_usage_error(self, args, *fragments, ranks=2):
        proc = launch(ranks, args, timeout=120)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)
        self.assertNotIn("Benchmark ", proc.stdout)
        # Printed once, by the rank that speaks, not by every rank.
        self.assertEqual(proc.stderr.count("xferbench: " + fragments[0]), 1, proc.stderr)

    def test_bad_sizes(self):
        for value, why in (("abc", "not a size"), ("0", "at least 1 byte"),
                           ("-8", "positive"), ("1GiB:8", "backwards")):
            with self.subTest(value=value):
                self.assert_usage_error([f"--xfer_sizes={value}"], "--xfer_sizes", why,
                                        "expected sizes like")

    def test_size_larger_than_memory(self):
        self.assert_usage_error(["--xfer_sizes=64TiB"], "--xfer_sizes", "memory")

    def test_bad_choices(self):
        self.assert_usage_error(["--xfer_cuda_aware=maybe"], "--xfer_cuda_aware",
                                "expected auto, yes or no")
        self.assert_usage_error(["--xfer_require=warp_drive"], "--xfer_require",
                                "unknown path 'warp_drive'")
        self.assert_usage_error(["--xfer_gpus=0-1"], "--xfer_gpus", "expected ordered GPU pairs")
        self.assert_usage_error(["--xfer_bogus=1"], "unknown flag --xfer_bogus")
        self.assert_usage_error(["--benchmark_out_format=xml"], "--benchmark_out_format")

    def test_unknown_benchmark_flag(self):
        proc = launch(2, QUICK + ["--benchmark_nonsense=1"], timeout=120)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("benchmark_nonsense", proc.stderr)

    def test_unwritable_output_file(self):
        proc = launch(2, QUICK + ["--benchmark_out=/nonexistent-dir/run.json"], timeout=120)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--benchmark_out=/nonexistent-dir/run.json", proc.stderr)

    def test_environment_fallback_is_checked_too(self):
        proc = launch(2, QUICK[1:], timeout=120, env={"XFER_SIZES": "zero"})
        self.assertEqual(proc.returncode, 2)
        self.assertIn("XFER_SIZES", proc.stderr)


class HelpAndVersion(unittest.TestCase):
    def test_help_lists_our_flags_then_google_benchmarks(self):
        proc = launch(0, ["--help"], timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = proc.stdout.find("--xfer_sizes")
        theirs = proc.stdout.find("--benchmark_filter")
        self.assertGreaterEqual(ours, 0)
        self.assertGreater(theirs, ours)
        for flag in ("--xfer_require", "--xfer_gpus", "--xfer_cuda_aware", "--xfer_timeout"):
            self.assertIn(flag, proc.stdout)

    def test_version(self):
        proc = launch(0, ["--version"], timeout=60)
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout, r"^xferbench \d+\.\d+\.\d+ \(git [0-9a-f]+|unknown")
        self.assertIn("Google Benchmark 1.", proc.stdout)

    def test_help_under_the_launcher_prints_once(self):
        proc = launch(2, ["--help"], timeout=60)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stdout.count("--xfer_sizes="), 1)


class ResultFile(unittest.TestCase):
    def test_existing_file_is_replaced_whole(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            with open(out, "w", encoding="utf-8") as f:
                f.write("old content " * 1000)
            proc = launch(2, QUICK + ["--benchmark_out=" + out])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                text = f.read()
            self.assertTrue(text.startswith("{"))
            self.assertNotIn("old content", text)
            self.assertEqual(os.listdir(tmp), ["run.json"])

    def test_csv_and_console_file_formats(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.csv")
            proc = launch(2, QUICK + ["--benchmark_out=" + out, "--benchmark_out_format=csv"])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                lines = f.read().splitlines()
            # Like Google Benchmark's own CSV file: its context lines, then the table.
            self.assertEqual(sum(1 for line in lines
                                 if line.startswith("name,iterations,real_time")), 1)
            self.assertEqual(sum(1 for line in lines if line.startswith('"mpi_host/')), 3)


if __name__ == "__main__":
    unittest.main()
