"""mpi_staged, mpi_cuda_aware and nccl_sendrecv on a machine with GPUs, two ranks and more.

Each path that can run here must produce a validated row per size with its bandwidth and
latency, the run must say which rank took which GPU, and a byte flipped on purpose
(--xfer_test_corrupt) must fail the rows and the run. mpi_cuda_aware runs only with a
CUDA-aware MPI (tools/build-cuda-aware-mpi); otherwise it must be skipped with the reason.
Skips itself where no GPU is visible (tests/integration covers that case).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from xfer_testlib import failed, launch, launch_json, no_gpu, rows  # noqa: E402

SIZES = (8, 65536, 4194304)
FAST = ["--xfer_sizes=" + ",".join(str(s) for s in SIZES), "--benchmark_min_time=0.01"]
FAMILIES = {
    "mpi_staged": [
        "mpi_staged/host:pinned/staging:sequential/mode:pingpong",
        "mpi_staged/host:pageable/staging:sequential/mode:pingpong",
        "mpi_staged/host:pinned/staging:pipelined/mode:pingpong",
    ],
    "mpi_cuda_aware": ["mpi_cuda_aware/mode:pingpong"],
    "nccl_sendrecv": ["nccl_sendrecv/mode:pingpong"],
}
FILTER = "--benchmark_filter=^(mpi_staged|mpi_cuda_aware|nccl_sendrecv)/"


def skipped(document):
    return {s["path"]: s["reason"] for s in document["context"]["xferbench"]["skipped"]}


def gpu_missing(proc):
    """Why the GPU paths cannot run here ("" if they can): no GPU, or a build without CUDA."""
    for line in proc.stderr.splitlines():
        if line.startswith("skipped mpi_staged: ") and (
            "no GPU" in line or "NVIDIA driver" in line or "built without CUDA" in line
        ):
            return line
    return ""


def message(row):
    return row.get("error_message") or row.get("skip_message") or ""


class TwoRanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc, cls.doc = launch_json(2, FAST + [FILTER], timeout=600)
        if gpu_missing(cls.proc):
            raise no_gpu(gpu_missing(cls.proc))
        if cls.doc is None:
            raise AssertionError("no result file: " + cls.proc.stderr)
        cls.reasons = skipped(cls.doc)
        cls.running = [p for p in FAMILIES if p not in cls.reasons]

    def test_run_succeeds(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertIn("mpi_staged", self.running, self.reasons)

    def test_every_runnable_family_has_a_validated_row_per_size(self):
        got = {r["name"]: r for r in rows(self.doc)}
        for path in self.running:
            for family in FAMILIES[path]:
                for size in SIZES:
                    name = f"{family}/bytes:{size}/manual_time"
                    with self.subTest(row=name):
                        self.assertIn(name, got)
                        row = got[name]
                        self.assertFalse(failed(row), message(row))
                        self.assertGreater(row["GB/s"], 0)
                        self.assertAlmostEqual(
                            row["GB/s"],
                            size / (row["real_time"] * 1e-6) / 1e9,
                            delta=row["GB/s"] * 1e-3,
                        )
                        self.assertAlmostEqual(
                            row["latency_us"], row["real_time"], delta=row["real_time"] * 1e-6
                        )
                        self.assertEqual(row["iterations"] % int(row["batch"]), 0)

    def test_paths_that_cannot_run_say_why(self):
        for path in FAMILIES:
            if path in self.running:
                continue
            with self.subTest(path=path):
                self.assertTrue(self.reasons[path])
                self.assertIn(f"skipped {path}: {self.reasons[path]}", self.proc.stderr)

    def test_mpi_cuda_aware_runs_exactly_when_mpi_says_it_is_cuda_aware(self):
        mpi = self.doc["context"]["xferbench"]["mpi"]
        self.assertIn(mpi["cuda_aware"], ("yes", "no", "unknown"))
        self.assertTrue(mpi["cuda_aware_source"])
        if mpi["cuda_aware"] == "yes":
            self.assertIn("mpi_cuda_aware", self.running)
        elif mpi["cuda_aware"] == "no":
            self.assertIn("this MPI is not CUDA-aware", self.reasons["mpi_cuda_aware"])
        else:
            self.assertIn("--xfer_cuda_aware=yes", self.reasons["mpi_cuda_aware"])

    def test_each_rank_has_a_gpu_in_the_context_and_on_screen(self):
        ranks = self.doc["context"]["xferbench"]["ranks"]
        self.assertEqual([r["rank"] for r in ranks], [0, 1])
        for r in ranks:
            self.assertIsInstance(r["gpu"], int)
        self.assertIn("ranks and GPUs", self.proc.stderr)
        self.assertIn("rank 1 @ ", self.proc.stderr)

    def test_nccl_version_is_recorded(self):
        if "built without NCCL" in self.reasons.get("nccl_sendrecv", ""):
            raise no_gpu("built without NCCL")
        self.assertRegex(self.doc["context"]["xferbench"]["nccl"]["version"], r"^\d+\.\d+\.\d+$")


class Corruption(unittest.TestCase):
    def test_a_flipped_byte_fails_the_rows_and_the_run(self):
        probe, doc = launch_json(2, ["--xfer_sizes=8", "--benchmark_min_time=0.01", FILTER])
        if gpu_missing(probe):
            raise no_gpu(gpu_missing(probe))
        self.assertIsNotNone(doc, probe.stderr)
        reasons = skipped(doc)
        for path in FAMILIES:
            if path in reasons:
                continue
            with self.subTest(path=path):
                proc, doc = launch_json(
                    2, FAST + [FILTER, f"--xfer_test_corrupt={path}"], timeout=600
                )
                self.assertNotEqual(proc.returncode, 0, proc.stderr)
                by_name = {r["name"]: r for r in rows(doc)}
                for family in FAMILIES[path]:
                    for size in SIZES:
                        row = by_name[f"{family}/bytes:{size}/manual_time"]
                        self.assertTrue(failed(row), row)
                        self.assertIn(f"{family}/bytes:{size}", message(row))
                        self.assertIn(f"validation: 1 of {size} bytes differ", message(row))
                # Only the named path fails: the others still validate.
                for other in FAMILIES:
                    if other == path or other in reasons:
                        continue
                    for family in FAMILIES[other]:
                        row = by_name[f"{family}/bytes:8/manual_time"]
                        self.assertFalse(failed(row), message(row))
                self.assertIn("row(s) failed", proc.stderr)


class MoreRanks(unittest.TestCase):
    def test_three_ranks_run_or_skip_with_a_reason(self):
        proc, doc = launch_json(
            3, ["--xfer_sizes=8,65536", "--benchmark_min_time=0.01", FILTER], timeout=600
        )
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        reasons = skipped(doc)
        names = {r["name"] for r in rows(doc)}
        # Ranks beyond 1 only agree: mpi_staged runs with any number of ranks.
        self.assertIn(
            "mpi_staged/host:pinned/staging:sequential/mode:pingpong/bytes:8/manual_time", names
        )
        # NCCL needs a GPU per rank: with fewer GPUs than ranks on a host it must say so.
        gpus = [(r["host"], r["gpu"]) for r in doc["context"]["xferbench"]["ranks"]]
        if "built without NCCL" in reasons.get("nccl_sendrecv", ""):
            return
        if len(set(gpus)) < len(gpus):
            self.assertIn("share GPU", reasons["nccl_sendrecv"])
        else:
            self.assertIn("nccl_sendrecv/mode:pingpong/bytes:8/manual_time", names)
        for r in rows(doc):
            self.assertFalse(failed(r), message(r))


class Modes(unittest.TestCase):
    """mode:stream and mode:bidir on device buffers: every window validated, slot by slot."""

    ARGS = [
        "--xfer_sizes=8,65536,4194304",
        "--xfer_modes=all",
        "--xfer_max_time=0.05",
        "--benchmark_filter=^(mpi_cuda_aware|nccl_sendrecv)/",
    ]

    def test_every_mode_runs_and_validates(self):
        proc, doc = launch_json(2, self.ARGS, timeout=600)
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        reasons = skipped(doc) if doc else {}
        if "mpi_cuda_aware" in reasons and "nccl_sendrecv" in reasons:
            # One GPU and an MPI that is not CUDA-aware: nothing here to run (exit 1 says so).
            self.assertIn("selects only paths skipped here", proc.stderr)
            self.skipTest(
                f"mpi_cuda_aware: {reasons['mpi_cuda_aware']}; nccl_sendrecv: "
                f"{reasons['nccl_sendrecv']}"
            )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for path in ("mpi_cuda_aware", "nccl_sendrecv"):
            if path in reasons:
                continue
            for mode in ("pingpong", "stream", "bidir"):
                for size in (8, 65536, 4194304):
                    name = f"{path}/mode:{mode}/bytes:{size}/manual_time"
                    row = [r for r in rows(doc) if r["name"] == name]
                    self.assertEqual(len(row), 1, name)
                    self.assertFalse(failed(row[0]), message(row[0]))
                    directions = 2 if mode == "bidir" else 1
                    self.assertAlmostEqual(
                        row[0]["GB/s"],
                        directions * size / (row[0]["real_time"] * 1e-6) / 1e9,
                        delta=row[0]["GB/s"] * 1e-3,
                    )

    def test_a_corrupted_byte_fails_every_mode(self):
        proc, doc = launch_json(2, self.ARGS + ["--xfer_test_corrupt=mpi_cuda_aware"], timeout=600)
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        if "mpi_cuda_aware" in skipped(doc):
            self.skipTest(skipped(doc)["mpi_cuda_aware"])
        self.assertEqual(proc.returncode, 1, proc.stderr)
        bad = [r for r in rows(doc) if r["name"].startswith("mpi_cuda_aware/") and failed(r)]
        self.assertEqual(len(bad), 9, [r["name"] for r in rows(doc)])
        for r in bad:
            self.assertIn("validation: 1 of", message(r))


class StagedModes(unittest.TestCase):
    """mpi_staged's pipelined staging in mode:stream and mode:bidir (a window as one sequence of
    chunks; both directions stepped at once); the sequential variants stay ping-pong only.
    Sizes: one chunk, and several chunks per message (4 MiB: 8 chunks of 512 KiB)."""

    PIPELINED = "mpi_staged/host:pinned/staging:pipelined"
    SIZES = (8, 65536, 4194304)
    ARGS = [
        "--xfer_sizes=8,65536,4194304",
        "--xfer_modes=all",
        "--xfer_max_time=0.05",
        "--benchmark_filter=^mpi_staged/",
    ]

    def check_rows(self, doc, modes, pairs=1):
        suffix = f"/pairs:{pairs}" if pairs > 1 else ""
        for mode in modes:
            for size in self.SIZES:
                name = f"{self.PIPELINED}/mode:{mode}{suffix}/bytes:{size}/manual_time"
                row = [r for r in rows(doc) if r["name"] == name]
                self.assertEqual(len(row), 1, name)
                self.assertFalse(failed(row[0]), message(row[0]))
                moved = (2 if mode == "bidir" else 1) * pairs * size  # GB/s: all of it
                self.assertAlmostEqual(
                    row[0]["GB/s"],
                    moved / (row[0]["real_time"] * 1e-6) / 1e9,
                    delta=row[0]["GB/s"] * 1e-3,
                )

    def test_every_mode_runs_and_validates(self):
        proc, doc = launch_json(2, self.ARGS, timeout=600)
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.check_rows(doc, ("pingpong", "stream", "bidir"))
        names = [r["name"] for r in rows(doc)]
        self.assertFalse(
            [
                n
                for n in names
                if "staging:sequential/mode:stream" in n or "staging:sequential/mode:bidir" in n
            ],
            names,
        )
        self.assertEqual(len(names), 5 * len(self.SIZES), names)

    def test_a_corrupted_byte_fails_every_mode(self):
        proc, doc = launch_json(2, self.ARGS + ["--xfer_test_corrupt=mpi_staged"], timeout=600)
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        bad = [r for r in rows(doc) if r["name"].startswith("mpi_staged/") and failed(r)]
        self.assertEqual(len(bad), 5 * len(self.SIZES), [r["name"] for r in rows(doc)])
        for r in bad:
            self.assertIn("validation: 1 of", message(r))

    def test_two_pairs_stream_and_bidir_at_once(self):
        proc, doc = launch_json(
            4,
            [
                "--xfer_sizes=8,65536,4194304",
                "--xfer_modes=stream,bidir",
                "--xfer_pairs=halves",
                "--xfer_max_time=0.05",
                "--benchmark_filter=^mpi_staged/",
            ],
            timeout=600,
        )
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.check_rows(doc, ("stream", "bidir"), pairs=2)
        self.assertEqual(len(rows(doc)), 2 * len(self.SIZES), [r["name"] for r in rows(doc)])
        for r in rows(doc):
            self.assertLessEqual(r["pair_gbps_min"], r["pair_gbps_max"])


class Console(unittest.TestCase):
    def test_console_table_has_the_gpu_rows_once(self):
        proc = launch(
            2, ["--xfer_sizes=8", "--benchmark_min_time=0.01", FILTER, "--benchmark_color=false"]
        )
        if gpu_missing(proc):
            raise no_gpu(gpu_missing(proc))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stdout.count("mpi_staged/host:pinned/staging:pipelined/mode:pingpong/bytes:8"),
            1,
            proc.stdout,
        )
        self.assertIn("GB/s=", proc.stdout)


if __name__ == "__main__":
    unittest.main()
