"""The GPU paths on a machine without a GPU: skipped, with a reason, and not a failure.

ce_copy, sm_copy, pointer_chase, mpi_staged, mpi_cuda_aware and nccl_sendrecv cannot run without
a GPU (or in a build without CUDA/NCCL). A user must see why, on the console and in the JSON
(context.xferbench.skipped), and the run must still succeed when another path ran; a run that
selected only paths skipped here measured nothing and exits 1. --xfer_require turns the skip
into a failure. What MPI says about CUDA-awareness is recorded even so. On a machine with a GPU
these tests skip themselves (tests/gpu covers it).
"""

import unittest

from xfer_testlib import QUICK, launch_json, rows

GPU_PATHS = (
    "ce_copy",
    "sm_copy",
    "pointer_chase",
    "mpi_staged",
    "mpi_cuda_aware",
    "nccl_sendrecv",
)
# Reasons a GPU path gives on a machine (or in a build) without GPUs, or with a driver older
# than the CUDA it was built with.
NO_GPU_WORDS = ("no GPU", "NVIDIA driver", "built without CUDA", "built without NCCL")


def skipped(document):
    return {s["path"]: s["reason"] for s in document["context"]["xferbench"]["skipped"]}


class WithoutGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc, cls.doc = launch_json(2, QUICK)
        if cls.doc is None:
            raise AssertionError("no result file: " + cls.proc.stderr)
        reasons = skipped(cls.doc)
        if any(p not in reasons for p in GPU_PATHS):
            raise unittest.SkipTest("a GPU path runs here: this machine has a GPU")
        cls.reasons = reasons
        cls.built_with_cuda = not any("built without CUDA" in reasons[p] for p in GPU_PATHS)

    def test_run_succeeds_with_other_paths_unaffected(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        names = [r["name"] for r in rows(self.doc)]
        self.assertIn("mpi_host/mode:pingpong/bytes:8/manual_time", names)
        for name in names:
            self.assertFalse(name.startswith(GPU_PATHS), name)

    def test_each_path_says_why_in_the_json(self):
        for path in GPU_PATHS:
            with self.subTest(path=path):
                reason = self.reasons[path]
                self.assertTrue(any(w in reason for w in NO_GPU_WORDS), reason)
                # The CUDA runtime's words for "no driver" name a version mismatch instead.
                self.assertNotIn("driver version is insufficient", reason)

    def test_each_path_says_why_on_the_console(self):
        for path in GPU_PATHS:
            with self.subTest(path=path):
                self.assertIn(f"skipped {path}: {self.reasons[path]}", self.proc.stderr)

    def test_mpi_cuda_awareness_is_recorded_even_when_skipped(self):
        if not self.built_with_cuda:
            self.skipTest("built without CUDA: mpi_cuda_aware is a stub")
        mpi = self.doc["context"]["xferbench"]["mpi"]
        self.assertIn(mpi["cuda_aware"], ("yes", "no", "unknown"))
        self.assertIsInstance(mpi["cuda_aware_source"], str)
        self.assertTrue(mpi["cuda_aware_source"])

    def test_nccl_version_is_recorded_when_built_with_nccl(self):
        if "built without" in self.reasons["nccl_sendrecv"]:
            self.skipTest("built without NCCL")
        nccl = self.doc["context"]["xferbench"]["nccl"]
        self.assertRegex(nccl["version"], r"^\d+\.\d+\.\d+$")


class Flags(unittest.TestCase):
    def test_required_gpu_path_that_is_skipped_fails_the_run(self):
        proc, doc = launch_json(2, QUICK + ["--xfer_require=mpi_staged"])
        if doc is not None and "mpi_staged" not in skipped(doc):
            self.skipTest("mpi_staged runs here: this machine has a GPU")
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("required path mpi_staged was skipped", proc.stderr)

    def test_forcing_cuda_awareness_is_recorded_with_what_mpi_said(self):
        for mode, answer, words in (
            ("yes", "yes", "forced by --xfer_cuda_aware=yes"),
            ("no", "no", "disabled by --xfer_cuda_aware=no"),
        ):
            with self.subTest(mode=mode):
                proc, doc = launch_json(
                    2,
                    QUICK
                    + [
                        f"--xfer_cuda_aware={mode}",
                        "--benchmark_filter=mpi_host/mode:pingpong/bytes:8",
                    ],
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                reasons = skipped(doc)
                if "mpi_cuda_aware" not in reasons:
                    self.skipTest("mpi_cuda_aware runs here: this machine has a GPU")
                if "built without CUDA" in reasons["mpi_cuda_aware"]:
                    self.skipTest("built without CUDA: mpi_cuda_aware is a stub")
                mpi = doc["context"]["xferbench"]["mpi"]
                self.assertEqual(mpi["cuda_aware"], answer)
                self.assertIn(words, mpi["cuda_aware_source"])
                self.assertIn("the library says", mpi["cuda_aware_source"])

    def test_selecting_only_gpu_paths_measures_nothing_and_fails_saying_why(self):
        # A CI job that meant to measure the GPU paths on a machine without one must not pass.
        proc, doc = launch_json(2, QUICK + ["--benchmark_filter=mpi_staged|nccl_sendrecv"])
        if doc is not None and rows(doc):
            self.skipTest("a GPU path runs here: this machine has a GPU")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("skipped mpi_staged: ", proc.stderr)
        self.assertIn(
            "xferbench: nothing was measured: --benchmark_filter=mpi_staged|nccl_sendrecv "
            "selects only paths skipped here",
            proc.stderr,
        )
        self.assertEqual(rows(doc), [])  # the file still says why (context.xferbench.skipped)
        self.assertIn("mpi_staged", skipped(doc))


class OtherWorldSizes(unittest.TestCase):
    def test_one_rank_skips_each_path_with_its_reason(self):
        proc, doc = launch_json(0, QUICK)
        # Every path skipped: the reasons are there, and the run fails for measuring nothing.
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("xferbench: nothing was measured: no path can run here", proc.stderr)
        reasons = skipped(doc)
        for path in GPU_PATHS:
            with self.subTest(path=path):
                reason = reasons[path]
                self.assertTrue(
                    "needs 2 ranks" in reason or any(w in reason for w in NO_GPU_WORDS), reason
                )
                self.assertIn(f"skipped {path}: ", proc.stderr)
        self.assertEqual(rows(doc), [])

    def test_three_ranks_skip_together_and_succeed(self):
        proc, doc = launch_json(3, QUICK + ["--benchmark_filter=mpi_host/mode:pingpong/bytes:8"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        reasons = skipped(doc)
        if any(p not in reasons for p in GPU_PATHS):
            self.skipTest("a GPU path runs here: this machine has a GPU")
        self.assertEqual(len(rows(doc)), 1)
        for path in GPU_PATHS:
            self.assertEqual(proc.stderr.count(f"skipped {path}: "), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
