"""Modes and pairs: stream and bidir windows, many pairs at once, and what the context says."""

import unittest

from xfer_testlib import failed, launch, launch_json, rows


def by_name(document):
    return {r["name"]: r for r in rows(document)}


def message(row):
    return row.get("error_message") or row.get("skip_message") or ""


class Modes(unittest.TestCase):
    def test_stream_and_bidir_rows_report_sustained_bandwidth(self):
        proc, doc = launch_json(
            2, ["--xfer_sizes=8,64K", "--xfer_modes=all", "--xfer_window=16", "--xfer_max_time=0.1"]
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = by_name(doc)
        for size in (8, 65536):
            for mode in ("pingpong", "stream", "bidir"):
                row = got[f"mpi_host/mode:{mode}/bytes:{size}/manual_time"]
                self.assertFalse(failed(row), message(row))
                directions = 2 if mode == "bidir" else 1
                self.assertAlmostEqual(
                    row["GB/s"],
                    directions * size / (row["real_time"] * 1e-6) / 1e9,
                    delta=row["GB/s"] * 1e-3,
                )
                if mode != "pingpong":
                    # A sample is whole windows of 16 messages.
                    self.assertEqual(row["batch"] % 16, 0)
                    self.assertEqual(row["iterations"], row["batch"] * row["samples"])
        # The summary gives no latency for stream rows: their time is 1 / throughput.
        families = {f["family"]: f for f in doc["context"]["xferbench"]["summary"]["families"]}
        self.assertIsNone(families["mpi_host/mode:stream"]["min_latency_us"])
        self.assertIsNotNone(families["mpi_host/mode:pingpong"]["min_latency_us"])

    def test_the_default_is_ping_pong_and_the_filter_picks_modes(self):
        proc, doc = launch_json(2, ["--xfer_sizes=8", "--xfer_max_time=0.05"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(list(by_name(doc)), ["mpi_host/mode:pingpong/bytes:8/manual_time"])
        proc, doc = launch_json(
            2,
            [
                "--xfer_sizes=8",
                "--xfer_modes=all",
                "--xfer_max_time=0.05",
                "--benchmark_filter=mode:bidir",
            ],
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(list(by_name(doc)), ["mpi_host/mode:bidir/bytes:8/manual_time"])

    def test_a_filter_for_a_mode_runs_its_rows_without_xfer_modes(self):
        # The filter can only mean stream rows: they run, though --xfer_modes defaults to
        # ping-pong. A filter that matches ping-pong rows as well keeps the default.
        for flt, modes in (
            ("mpi_host/mode:stream", ["stream"]),
            ("mode:(stream|bidir)/bytes:8/", ["stream", "bidir"]),
            ("mpi_host", ["pingpong"]),
            ("bytes:8/", ["pingpong"]),
        ):
            with self.subTest(filter=flt):
                proc, doc = launch_json(
                    2, ["--xfer_sizes=8,64K", "--xfer_max_time=0.05", "--benchmark_filter=" + flt]
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                got = list(by_name(doc))
                self.assertEqual(
                    sorted({name.split("/")[1] for name in got}), sorted(f"mode:{m}" for m in modes)
                )
                for row in rows(doc):
                    self.assertFalse(failed(row), message(row))

    def test_acks_in_the_buffers_name_their_stream_rows_and_still_validate(self):
        # --xfer_ack=buffers: osu_bw's acknowledgement, through the message buffers. Only the
        # stream rows change (and say so in their name); a corrupted byte is still caught.
        args = ["--xfer_sizes=1,4K", "--xfer_modes=all", "--xfer_window=8", "--xfer_ack=buffers"]
        proc, doc = launch_json(2, args + ["--xfer_max_time=0.05"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            sorted({name.rsplit("/bytes:", 1)[0] for name in by_name(doc)}),
            ["mpi_host/mode:bidir", "mpi_host/mode:pingpong", "mpi_host/mode:stream/ack:buffers"],
        )
        for row in rows(doc):
            self.assertFalse(failed(row), message(row))
        proc, doc = launch_json(
            2,
            args + ["--xfer_max_time=0.05", "--xfer_modes=stream", "--xfer_test_corrupt=mpi_host"],
        )
        self.assertEqual(proc.returncode, 1, proc.stderr)
        row = by_name(doc)["mpi_host/mode:stream/ack:buffers/bytes:4096/manual_time"]
        self.assertIn("validation: 1 of 4096 bytes differ", message(row))

    def test_a_corrupted_byte_in_a_window_names_its_slot(self):
        proc, doc = launch_json(
            2,
            [
                "--xfer_sizes=4K",
                "--xfer_modes=stream,bidir",
                "--xfer_window=8",
                "--xfer_max_time=0.05",
                "--xfer_test_corrupt=mpi_host",
            ],
        )
        self.assertEqual(proc.returncode, 1, proc.stderr)
        for mode in ("stream", "bidir"):
            row = by_name(doc)[f"mpi_host/mode:{mode}/bytes:4096/manual_time"]
            self.assertTrue(failed(row))
            self.assertIn("rank 1", message(row))
            self.assertIn("validation: 1 of 4096 bytes differ", message(row))
            self.assertIn("in slot 0 of 8", message(row))


class Pairs(unittest.TestCase):
    def test_four_ranks_in_halves_run_two_pairs_at_once(self):
        proc, doc = launch_json(
            4,
            [
                "--xfer_sizes=8,64K",
                "--xfer_pairs=halves",
                "--xfer_modes=pingpong,stream",
                "--xfer_max_time=0.1",
            ],
            timeout=300,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ctx = doc["context"]["xferbench"]
        self.assertEqual([p["ranks"] for p in ctx["pairs"]], [[0, 2], [1, 3]])
        self.assertEqual([p["inter_node"] for p in ctx["pairs"]], [False, False])
        for mode in ("pingpong", "stream"):
            row = by_name(doc)[f"mpi_host/mode:{mode}/pairs:2/bytes:65536/manual_time"]
            self.assertFalse(failed(row), message(row))
            self.assertEqual(row["pairs"], 2)
            self.assertLessEqual(row["pair_gbps_min"], row["pair_gbps_max"] * (1 + 1e-9))
            # Aggregate: both pairs' bytes over the slowest pair's time.
            self.assertAlmostEqual(row["GB/s"], 2 * row["pair_gbps_min"], delta=row["GB/s"] * 1e-6)
        self.assertIn("rank pairs: 0:2 (intra-node), 1:3 (intra-node)", proc.stderr)

    def test_bad_pairs_stop_every_rank_with_the_flag_named(self):
        cases = [
            (3, "--xfer_pairs=halves", "needs an even number of ranks (world size is 3)"),
            (2, "--xfer_pairs=0:5", "rank 5 is out of range (world size is 2)"),
            (3, "--xfer_pairs=0:1,1:2", "rank 1 is in two pairs"),
            (2, "--xfer_pairs=0-1", "expected 0:1 (the default), halves, or rank pairs"),
        ]
        for ranks, flag, expected in cases:
            with self.subTest(flag=flag):
                proc = launch(ranks, ["--xfer_sizes=8", flag], timeout=120)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("--xfer_pairs", proc.stderr)
                self.assertIn(expected, proc.stderr)
                self.assertEqual(proc.stderr.count(expected), 1, proc.stderr)

    def test_bad_modes_and_windows_are_usage_errors(self):
        for flag, expected in (
            ("--xfer_modes=sideways", "unknown mode 'sideways'"),
            ("--xfer_window=0", "--xfer_window='0'"),
            ("--xfer_gpu_map=a", "--xfer_gpu_map='a'"),
            ("--xfer_ack=device", "--xfer_ack='device': expected host or buffers"),
        ):
            with self.subTest(flag=flag):
                proc = launch(2, ["--xfer_sizes=8", flag], timeout=120)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(expected, proc.stderr)


if __name__ == "__main__":
    unittest.main()
