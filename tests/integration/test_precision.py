"""How long a row runs and how sure it is: precision, time limit, repetitions, the summary."""

import math
import os
import tempfile
import unittest

from xfer_testlib import failed, launch, launch_json, rows


def dump_lines(folder, rank):
    with open(os.path.join(folder, f"rank{rank}.txt"), encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


class StopRule(unittest.TestCase):
    def test_a_quiet_row_stops_on_precision_long_before_its_time_limit(self):
        # One visit, no floor: the stop rule of one timed loop alone. (With several visits the
        # stated interval also holds the spread between them, which no loop's precision bounds,
        # and a later visit times the first one's message count, precise or not.)
        proc, doc = launch_json(
            2,
            [
                "--xfer_sizes=8,4K",
                "--xfer_precision=50",
                "--xfer_max_time=60",
                "--xfer_visits=1",
                "--xfer_floor=0",
            ],
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for row in rows(doc):
            self.assertEqual(row["time_limited"], 0, row)
            self.assertLessEqual(row["ci95_pct"], 50, row)
            # Five samples are the minimum before precision may stop a row; a loose target is
            # met there, so the row ends after a handful of batches, not after a minute.
            self.assertLess(row["samples"], 50, row)
            self.assertEqual(row["iterations"], row["samples"] * row["batch"], row)
            self.assertNotIn("time-limited", row["label"])
        self.assertEqual(doc["context"]["xferbench"]["summary"]["time_limited"], 0)

    def test_a_noisy_row_stops_on_time_and_says_so(self):
        # Rank 0's batch times scaled by a uniform factor in [0.2, 1.8]: a spread no 0.1%
        # target can be reached with in 0.3 s.
        proc = launch(
            2,
            [
                "--xfer_sizes=8",
                "--xfer_test_noise=80",
                "--xfer_precision=0.1",
                "--xfer_max_time=0.3",
                "--benchmark_color=false",
            ],
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = [
            text
            for text in proc.stdout.splitlines()
            if text.startswith("mpi_host/mode:pingpong/bytes:8/")
        ][0]
        self.assertIn("time-limited", line)
        self.assertRegex(line, r"\u00b1\d+\.\d+%")
        self.assertIn("1 time-limited", proc.stdout)

        _, doc = launch_json(
            2,
            [
                "--xfer_sizes=8",
                "--xfer_test_noise=80",
                "--xfer_precision=0.1",
                "--xfer_max_time=0.3",
            ],
        )
        row = rows(doc)[0]
        self.assertEqual(row["time_limited"], 1)
        self.assertGreater(row["ci95_pct"], 0.1)
        self.assertIn("time-limited", row["label"])
        self.assertEqual(doc["context"]["xferbench"]["summary"]["time_limited"], 1)
        # The stated interval reflects the injected spread: a uniform factor of +-80% has a
        # standard deviation of 80/sqrt(3) = 46% of the mean (the machine's own hiccups can
        # only widen it).
        expected = 1.96 * 46.2 / math.sqrt(row["samples"])
        self.assertGreater(row["ci95_pct"], expected / 2, row)
        self.assertLessEqual(row["min_us"], row["median_us"])
        self.assertLessEqual(row["median_us"], row["p90_us"])
        self.assertLessEqual(row["p90_us"], row["p99_us"])
        self.assertLessEqual(row["p99_us"], row["max_us"])

    def test_ranks_run_the_same_batches_when_one_rank_is_slow(self):
        for slow_rank in ("0", "1"):
            with self.subTest(slow_rank=slow_rank), tempfile.TemporaryDirectory() as dump:
                proc = launch(
                    2,
                    [
                        "--xfer_sizes=8,64K",
                        "--xfer_test_noise=30",
                        "--xfer_max_time=0.2",
                        f"--xfer_test_slow_rank={slow_rank}",
                        f"--xfer_test_rank_dump={dump}",
                    ],
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                # A line per visit, with the messages it timed: the same on both ranks.
                self.assertEqual(dump_lines(dump, 0), dump_lines(dump, 1))
                self.assertEqual(len(dump_lines(dump, 0)), 6)  # 2 rows, 3 visits each


class Repetitions(unittest.TestCase):
    def test_every_repetition_gets_visits_of_its_own(self):
        with tempfile.TemporaryDirectory() as dump:
            proc = launch(
                2,
                [
                    "--xfer_sizes=8,1M",
                    "--benchmark_repetitions=3",
                    "--xfer_max_time=0.05",
                    f"--xfer_test_rank_dump={dump}",
                ],
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(dump_lines(dump, 0), dump_lines(dump, 1))
            # "NAME round:R repetition:K messages:M", one line per visit.
            visits = [line.split() for line in dump_lines(dump, 0)]
            self.assertEqual(
                sorted((name, rep, round_) for name, round_, rep, _ in visits),
                sorted(
                    (f"mpi_host/mode:pingpong/bytes:{size}", f"repetition:{rep}", f"round:{r}")
                    for size in (8, 1048576)
                    for rep in range(3)
                    for r in range(3)
                ),
            )
            # Every visit of a row times the message count of the row's first visit.
            for size in (8, 1048576):
                counts = {m for name, _, _, m in visits if name.endswith(f"bytes:{size}")}
                self.assertEqual(len(counts), 1, counts)

    def test_repetitions_repeat_the_first_calls_message_count(self):
        proc, doc = launch_json(
            2, ["--xfer_sizes=64K", "--benchmark_repetitions=3", "--xfer_max_time=0.1"]
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        counts = {row["iterations"] for row in rows(doc)}
        self.assertEqual(len(rows(doc)), 3)
        self.assertEqual(len(counts), 1, counts)
        aggregates = {r["aggregate_name"]: r for r in rows(doc, "aggregate")}
        self.assertIn("ci95_pct", aggregates["mean"])

    def test_a_corrupted_byte_fails_every_repetition(self):
        proc, doc = launch_json(
            2,
            [
                "--xfer_sizes=4K",
                "--benchmark_repetitions=2",
                "--xfer_max_time=0.05",
                "--xfer_test_corrupt=mpi_host",
            ],
        )
        self.assertEqual(proc.returncode, 1, proc.stderr)
        got = rows(doc)
        self.assertEqual(len(got), 2)
        for row in got:
            self.assertTrue(failed(row), row)
            message = row.get("error_message") or row.get("skip_message")
            self.assertIn("validation: 1 of 4096 bytes differ", message)


class Summary(unittest.TestCase):
    def test_the_run_closes_with_a_summary_on_the_console_and_in_the_file(self):
        proc = launch(2, ["--xfer_sizes=8,64K", "--xfer_max_time=0.1", "--benchmark_color=false"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        tail = proc.stdout[proc.stdout.index("summary") :]
        self.assertRegex(tail, r"mpi_host/mode:pingpong\s+\d+\.\d+ 64 KiB\s+\d+\.\d+ us 8 B")
        self.assertRegex(tail, r"rows: 2 run, 0 failed, \d time-limited")
        self.assertRegex(tail, r"wall time \d+\.\d s")

        proc, doc = launch_json(2, ["--xfer_sizes=8,64K", "--xfer_max_time=0.1"])
        summary = doc["context"]["xferbench"]["summary"]
        self.assertEqual(summary["rows"], 2)
        self.assertEqual(summary["failed"], 0)
        self.assertGreater(summary["wall_time_s"], 0)
        family = summary["families"][0]
        self.assertEqual(family["family"], "mpi_host/mode:pingpong")
        by_size = {int(r["name"].split("bytes:")[1].split("/")[0]): r for r in rows(doc)}
        self.assertEqual(family["peak_bytes"], 65536)
        self.assertAlmostEqual(family["peak_gbps"], by_size[65536]["GB/s"], places=6)
        self.assertEqual(family["min_latency_bytes"], 8)
        self.assertAlmostEqual(family["min_latency_us"], by_size[8]["latency_us"], places=6)

    def test_json_on_stdout_stays_one_document_with_the_summary_on_stderr(self):
        import json

        proc = launch(2, ["--xfer_sizes=8", "--xfer_max_time=0.05", "--benchmark_format=json"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)
        self.assertIn("summary", doc["context"]["xferbench"])
        self.assertIn("rows: 1 run", proc.stderr)


if __name__ == "__main__":
    unittest.main()
