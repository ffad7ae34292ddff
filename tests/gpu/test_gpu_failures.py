"""Failures of CUDA and NCCL on a machine with GPUs (ctest label "gpu"), made on purpose with
the test-only fail point --xfer_test_fail=CALL[@BYTES][#RANK] (support/base/failpoint.hpp).

What a user must see: a CUDA error in a row names the call, the GPU and the size, fails that
row on every rank, and the run goes on; an allocation that cannot be had says what was asked
for; a GPU that cannot be used (at start, or after a fault) ends the run with a message instead
of failing row after row or hanging; a failure that leaves a peer waiting for a message ends the
job within the watchdog's grace; an NCCL error aborts the communicator and the next row gets a
new one. Without a GPU every test skips (fails under XFER_EXPECT_GPU=1).
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpu_copy_paths import (  # noqa: E402
    failed,
    iteration_rows,
    launch,
    message,
    no_gpu,
    skipped,
)

QUICK = ["--benchmark_min_time=0.01", "--xfer_max_time=0.05"]
PINNED_COPY = "--benchmark_filter=^host_staging/host:pinned/mode:sequential/pair:[0-9]to[0-9]/"
STAGED = "--benchmark_filter=^mpi_staged/host:pinned/.*sequential"
# One visit per row, rows in their own order: a test of which rows a stopped run kept must know
# what ran before the failure (with several visits the early rounds run in a shuffled order).
ONE_PASS = "--xfer_visits=1"


def rows_by_size(document):
    return {int(r["name"].split("bytes:")[1].split("/")[0]): r for r in iteration_rows(document)}


def require_gpu(proc, document):
    """A skip (a failure under XFER_EXPECT_GPU=1) when no GPU row ran at all."""
    if document is None or not iteration_rows(document):
        raise no_gpu("no GPU row ran: " + (proc.stdout + proc.stderr)[-400:])


class FailureTest(unittest.TestCase):
    def run_failing(self, args, ranks=0, path=None):
        """Runs with a fail point where a row must fail and the run end with exit 1; returns
        (process, document, rows by message size). A skip where `path` cannot run here."""
        proc, doc = launch(list(args) + QUICK, ranks=ranks, timeout=300)
        if path and doc is not None and path in skipped(doc):
            raise unittest.SkipTest(f"{path} skipped here: {skipped(doc)[path]}")
        require_gpu(proc, doc)
        self.assertEqual(proc.returncode, 1, proc.stderr[-2000:])
        return proc, doc, rows_by_size(doc)


class CudaErrors(FailureTest):
    def test_a_failed_copy_names_the_call_the_gpu_and_the_size_and_the_run_goes_on(self):
        proc, _, rows = self.run_failing(
            [PINNED_COPY, "--xfer_sizes=4K,1MiB,4MiB", "--xfer_test_fail=cudaMemcpyAsync@1MiB"]
        )
        self.assertEqual(sorted(rows), [4096, 1 << 20, 4 << 20])
        self.assertFalse(failed(rows[4096]), message(rows[4096]))
        self.assertFalse(failed(rows[4 << 20]), message(rows[4 << 20]))
        text = message(rows[1 << 20])
        self.assertTrue(failed(rows[1 << 20]))
        for fragment in ("cudaMemcpyAsync(", "cudaErrorInvalidValue", "GPU 0", "1 MiB"):
            self.assertIn(fragment, text)
        self.assertIn("1 row(s) failed", proc.stderr)

    def test_device_memory_that_cannot_be_had_fails_the_row_saying_what_was_asked(self):
        _, _, rows = self.run_failing(
            [PINNED_COPY, "--xfer_sizes=4K,1MiB,4MiB", "--xfer_test_fail=cudaMalloc@1MiB"]
        )
        self.assertFalse(failed(rows[4 << 20]), message(rows[4 << 20]))
        self.assertIn("cannot allocate 1 MiB of device memory on GPU 0", message(rows[1 << 20]))
        self.assertIn("cudaErrorMemoryAllocation", message(rows[1 << 20]))

    def test_pinned_memory_that_one_rank_cannot_have_fails_the_row_on_every_rank(self):
        _, _, rows = self.run_failing(
            [STAGED, "--xfer_sizes=4K,1MiB,4MiB", "--xfer_test_fail=cudaHostRegister@1MiB#1"],
            ranks=2,
        )
        self.assertFalse(failed(rows[4096]), message(rows[4096]))
        self.assertFalse(failed(rows[4 << 20]), message(rows[4 << 20]))
        text = message(rows[1 << 20])
        self.assertIn("rank 1", text)
        self.assertIn("cannot allocate 1 MiB of pinned host memory", text)


class UnusableGpu(FailureTest):
    def test_a_rank_whose_gpu_cannot_be_used_ends_the_run_before_any_row(self):
        started = time.monotonic()
        proc, doc = launch(
            ["--benchmark_filter=mpi_staged", "--xfer_sizes=4K", "--xfer_test_fail=cudaSetDevice#1"]
            + QUICK,
            ranks=2,
            timeout=300,
        )
        if any(f"skipped mpi_staged: {w}" in proc.stderr for w in ("no GPU", "the NVIDIA driver")):
            raise no_gpu("no GPU or no NVIDIA driver")
        self.assertEqual(proc.returncode, 2, proc.stderr[-2000:])
        self.assertLess(time.monotonic() - started, 120)
        self.assertIn("rank 1: the GPU of this rank", proc.stderr)
        self.assertIn("cudaErrorDevicesUnavailable", proc.stderr)
        self.assertEqual(proc.stderr.count("cannot be used"), 1, proc.stderr)  # rank 0 alone
        self.assertNotIn("mpi_staged/", proc.stdout)

    def test_a_gpu_fault_ends_the_run_after_its_row_keeping_the_rows_before(self):
        proc, doc, rows = self.run_failing(
            [PINNED_COPY, "--xfer_sizes=4K,64K,1MiB", "--xfer_test_fail=fault@64K", ONE_PASS]
        )
        self.assertEqual(sorted(rows), [4096, 65536])  # the 1 MiB row never ran
        self.assertFalse(failed(rows[4096]), message(rows[4096]))
        self.assertTrue(failed(rows[65536]))
        incomplete = doc["context"]["xferbench"]["incomplete"]
        self.assertIn("cannot be used any more", incomplete["reason"])
        self.assertIn("stopped before its last row", proc.stderr)

    def test_a_gpu_fault_on_one_rank_ends_the_run_on_every_rank(self):
        _, doc, rows = self.run_failing(
            [STAGED, "--xfer_sizes=4K,64K,1MiB", "--xfer_test_fail=fault@64K#1", ONE_PASS],
            ranks=2,
        )
        self.assertEqual(sorted(rows), [4096, 65536])
        self.assertIn("rank 1", message(rows[65536]))
        self.assertIn("rank 1: GPU", doc["context"]["xferbench"]["incomplete"]["reason"])

    def test_a_failure_that_leaves_the_peer_waiting_ends_the_job_within_the_grace(self):
        # Rank 1 fails between receiving the ping and sending the pong: rank 0 waits in MPI_Recv
        # for a message that will never come, and MPI cannot cancel it.
        started = time.monotonic()
        proc, doc = launch(
            [STAGED, "--xfer_sizes=4K,64K", "--xfer_test_fail=cudaMemcpyAsync@64K#1", ONE_PASS]
            + QUICK,
            ranks=2,
            timeout=300,
        )
        require_gpu(proc, doc)
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(time.monotonic() - started, 90)
        self.assertIn("did not answer within 15 s", proc.stderr)
        self.assertIn("cudaMemcpyAsync(", proc.stderr)
        rows = rows_by_size(doc)
        self.assertEqual(sorted(rows), [4096])  # what was measured before is kept
        self.assertIn("incomplete", doc["context"]["xferbench"])


class NcclErrors(FailureTest):
    def test_an_nccl_error_fails_the_row_and_the_next_row_gets_a_new_communicator(self):
        # One GPU: NCCL needs a GPU of its own per rank, and the skip says so.
        _, _, rows = self.run_failing(
            [
                "--benchmark_filter=nccl_sendrecv/mode:pingpong",
                "--xfer_sizes=4K,64K,1MiB",
                "--xfer_test_fail=ncclSend@64K#1",
            ],
            ranks=2,
            path="nccl_sendrecv",
        )
        self.assertFalse(failed(rows[4096]), message(rows[4096]))
        self.assertTrue(failed(rows[65536]))
        self.assertIn("ncclSend(", message(rows[65536]))
        self.assertFalse(failed(rows[1 << 20]), message(rows[1 << 20]))


if __name__ == "__main__":
    unittest.main()
