"""mpi_host end to end: what a user sees on the console, in the file and in the exit status."""

import json
import os
import tempfile
import unittest

from xfer_testlib import QUICK, failed, launch, launch_json, rows


class TwoRanks(unittest.TestCase):
    def test_one_table_with_a_row_per_size(self):
        proc = launch(2, QUICK + ["--benchmark_color=false"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.count("Benchmark "), 1, proc.stdout)
        for size in (8, 4096, 262144):
            self.assertEqual(
                proc.stdout.count(f"mpi_host/mode:pingpong/bytes:{size}/manual_time"), 1
            )
        self.assertIn("GB/s=", proc.stdout)
        self.assertIn("latency_us=", proc.stdout)

    def test_json_rows_carry_one_way_time_bandwidth_and_latency(self):
        proc, doc = launch_json(2, QUICK)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.leftover_files, [])
        got = rows(doc)
        self.assertEqual(
            [r["name"] for r in got],
            [f"mpi_host/mode:pingpong/bytes:{s}/manual_time" for s in (8, 4096, 262144)],
        )
        for row in got:
            size = int(row["name"].split("bytes:")[1].split("/")[0])
            self.assertFalse(failed(row))
            self.assertEqual(row["time_unit"], "us")
            # real_time is the one-way time; every figure must say the same thing.
            self.assertAlmostEqual(
                row["latency_us"], row["real_time"], delta=row["real_time"] * 1e-6
            )
            self.assertAlmostEqual(
                row["GB/s"], size / (row["real_time"] * 1e-6) / 1e9, delta=row["GB/s"] * 1e-3
            )
            self.assertAlmostEqual(
                row["bytes_per_second"], row["GB/s"] * 1e9, delta=row["bytes_per_second"] * 1e-3
            )
            self.assertGreaterEqual(row["batch"], 1)
            self.assertEqual(row["iterations"] % int(row["batch"]), 0)

    def test_context_records_the_run(self):
        proc, doc = launch_json(2, QUICK)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ctx = doc["context"]["xferbench"]
        self.assertEqual(ctx["world_size"], 2)
        self.assertEqual([r["rank"] for r in ctx["ranks"]], [0, 1])
        self.assertEqual([r["local_rank"] for r in ctx["ranks"]], [0, 1])
        self.assertTrue(all(r["host"] for r in ctx["ranks"]))
        self.assertRegex(ctx["benchmark_version"], r"^1\.\d+\.\d+$")
        self.assertIn("MPI", ctx["mpi"]["library"])
        self.assertEqual(ctx["sizes"], [8, 4096, 262144])
        self.assertIsInstance(ctx["harness_version"], str)
        self.assertIsInstance(ctx["git_revision"], str)
        # Google Benchmark's own context is still there for its tools.
        self.assertIn("num_cpus", doc["context"])

    def test_filter_and_repetitions_work_unchanged(self):
        proc, doc = launch_json(
            2,
            QUICK
            + ["--benchmark_filter=mpi_host/mode:pingpong/bytes:4096", "--benchmark_repetitions=3"],
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(rows(doc)), 3)
        aggregates = {r["aggregate_name"] for r in rows(doc, "aggregate")}
        self.assertTrue({"mean", "median", "stddev"} <= aggregates, aggregates)

    def test_corrupted_byte_fails_the_row_and_the_run(self):
        proc, doc = launch_json(2, QUICK + ["--xfer_test_corrupt=mpi_host"])
        self.assertNotEqual(proc.returncode, 0)
        bad = [r for r in rows(doc) if failed(r)]
        self.assertEqual(len(bad), 3, doc["benchmarks"])
        message = bad[0].get("error_message") or bad[0].get("skip_message")
        self.assertIn("mpi_host/mode:pingpong/bytes:8", message)
        self.assertIn("rank 1", message)
        self.assertIn("validation: 1 of 8 bytes differ", message)
        self.assertIn("row(s) failed", proc.stderr)


class ManyRanks(unittest.TestCase):
    def test_three_ranks_print_one_table_and_one_json_document(self):
        proc = launch(3, QUICK + ["--benchmark_format=json"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)  # one document, nothing else on stdout
        self.assertEqual(doc["context"]["xferbench"]["world_size"], 3)
        self.assertEqual(len(doc["context"]["xferbench"]["ranks"]), 3)
        self.assertEqual(len(rows(doc)), 3)

    def test_three_ranks_write_the_file_once(self):
        proc, doc = launch_json(3, QUICK)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.leftover_files, [])
        self.assertEqual(len(rows(doc)), 3)
        console = launch(3, QUICK + ["--benchmark_color=false"])
        self.assertEqual(console.stdout.count("Benchmark "), 1, console.stdout)

    def test_a_slowed_rank_neither_deadlocks_nor_changes_iteration_counts(self):
        for slow_rank in ("1", "2"):
            with self.subTest(slow_rank=slow_rank), tempfile.TemporaryDirectory() as dump:
                proc = launch(
                    3,
                    QUICK + [f"--xfer_test_slow_rank={slow_rank}", f"--xfer_test_rank_dump={dump}"],
                    timeout=300,
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                counts = []
                for rank in range(3):
                    with open(os.path.join(dump, f"rank{rank}.txt"), encoding="utf-8") as f:
                        counts.append(f.read().split("\n"))
                self.assertGreater(len(counts[0]), 3)
                self.assertEqual(counts[0], counts[1])
                self.assertEqual(counts[0], counts[2])


class Watchdog(unittest.TestCase):
    def test_a_rank_that_stops_answering_ends_the_job_instead_of_hanging(self):
        # One visit per row, rows in their own order: the first row is the one that hangs (with
        # several visits the first round runs in an order shuffled by a seed rank 0 draws).
        proc = launch(
            2,
            QUICK + ["--xfer_test_hang_rank=1", "--xfer_timeout=2", "--xfer_visits=1"],
            timeout=120,
        )
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(
            "mpi_host/mode:pingpong/bytes:8: no result after 2 s (--xfer_timeout)", proc.stderr
        )
        # It names the rank it exchanges with and that rank's host: on a cluster, where to look.
        self.assertRegex(
            proc.stderr,
            r"a peer rank may have failed \(this rank's peer: rank [01] "
            r"on \S+\) or the device hangs",
        )


class OneRank(unittest.TestCase):
    def test_mpi_host_is_skipped_with_its_reason(self):
        proc, doc = launch_json(0, QUICK)
        self.assertEqual(proc.returncode, 1, proc.stderr)  # it measured nothing
        self.assertIn("skipped mpi_host: needs 2 ranks", proc.stderr)
        skipped = {s["path"]: s["reason"] for s in doc["context"]["xferbench"]["skipped"]}
        self.assertIn("needs 2 ranks", skipped["mpi_host"])
        self.assertEqual(rows(doc), [])

    def test_required_path_that_is_skipped_fails_the_run(self):
        proc = launch(0, QUICK + ["--xfer_require=mpi_host"])
        self.assertEqual(proc.returncode, 1)
        self.assertIn("required path mpi_host was skipped", proc.stderr)


if __name__ == "__main__":
    unittest.main()
