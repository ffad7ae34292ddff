"""memcpy_peer and host_staging on a machine with GPUs (ctest label "gpu").

Every variant the machine allows produces rows with bandwidth and latency; what it does not
allow is skipped with a reason; a flipped byte (--xfer_test_corrupt) fails the rows of that path
and the run; the context and the console describe the GPUs. Without a GPU every test skips.

ctest sets XFERBENCH (the binary) and XFER_MPIRUN (launcher prefix ending in the rank-count
flag). Run by hand: XFERBENCH=build/xferbench python3 -m unittest -v test_gpu_copy_paths
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from xfer_testlib import no_gpu  # noqa: E402

XFERBENCH = os.environ.get("XFERBENCH", "xferbench")
MPIRUN = shlex.split(os.environ.get("XFER_MPIRUN", "mpirun --oversubscribe -np"))
SIZES = [8, 4096, 1 << 20, 64 << 20]
# Plain seconds: Google Benchmark 1.7 reads a number, 1.8 also takes it (as seconds).
QUICK = ["--xfer_sizes=" + ",".join(str(s) for s in SIZES), "--benchmark_min_time=0.01"]
PATHS = ("memcpy_peer", "host_staging")


def launch(args, ranks=0, timeout=600):
    """Runs xferbench (under the launcher when ranks > 0); returns (process, document)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        command = [XFERBENCH] if ranks == 0 else MPIRUN + [str(ranks), XFERBENCH]
        command += list(args) + ["--benchmark_out=" + out]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=env,
            check=False,
        )
        document = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        return proc, document


def iteration_rows(document, path=None):
    return [
        r
        for r in document["benchmarks"]
        if r.get("run_type", "iteration") == "iteration"
        and (path is None or r["name"].split("/")[0] == path)
    ]


def failed(row):
    return bool(row.get("error_occurred")) or row.get("skipped") is True


def message(row):
    return row.get("error_message") or row.get("skip_message") or ""


def family(row):
    """'memcpy_peer/p2p:on/dir:uni/pair:0to1/bytes:8/manual_time' -> (family, 8)."""
    match = re.match(r"^(.*)/bytes:(\d+)(/manual_time)?$", row["name"])
    return match.group(1), int(match.group(2))


def skipped(document):
    return {s["path"]: s["reason"] for s in document["context"]["xferbench"]["skipped"]}


def expected_families(cuda):
    """The families xferbench should run with the default pair (0:1), from the context."""
    count = len(cuda["devices"])
    staging_pair = "pair:0to1" if count >= 2 else "pair:0to0"
    staging = [
        f"host_staging/{v}/{staging_pair}"
        for v in (
            "host:pinned/mode:sequential",
            "host:pinned/mode:pipelined",
            "host:pageable/mode:sequential",
            "host:pageable/mode:pipelined",
            "host:pinned/mode:sequential/timing:latency",
            "host:pageable/mode:sequential/timing:latency",
        )
    ]
    peer = []
    if count >= 2:
        pair = next(p for p in cuda["pairs"] if p["src"] == 0 and p["dst"] == 1)
        variants = ["p2p:off/dir:uni", "p2p:off/dir:bi", "p2p:off/dir:uni/timing:latency"]
        if pair["p2p"]:
            variants += ["p2p:on/dir:uni", "p2p:on/dir:uni/timing:latency"]
            if pair["p2p_reverse"]:
                variants.append("p2p:on/dir:bi")
        peer = [f"memcpy_peer/{v}/pair:0to1" for v in variants]
    return set(staging + peer)


DEVICES = None  # GPUs xferbench sees, found once by setUpModule


def setUpModule():
    global DEVICES
    proc, doc = launch(
        [
            "--xfer_sizes=8",
            "--benchmark_min_time=0.01",
            "--benchmark_filter=host_staging/host:pinned/mode:sequential/pair",
        ]
    )
    if doc is None:
        raise AssertionError("no result file:\n" + proc.stderr)
    cuda = doc["context"]["xferbench"]["cuda"]
    DEVICES = len(cuda["devices"]) if cuda else 0
    if DEVICES == 0:
        raise no_gpu("no GPU here: " + skipped(doc).get("host_staging", "?"))


class GpuMachine(unittest.TestCase):
    """One ordinary run, shared by the tests that only read it."""

    @classmethod
    def setUpClass(cls):
        cls.proc, cls.doc = launch(QUICK)
        if cls.doc is None:
            raise AssertionError("no result file:\n" + cls.proc.stderr)
        cls.cuda = cls.doc["context"]["xferbench"]["cuda"]

    def test_run_succeeds(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-4000:])

    def test_every_variant_has_a_row_per_size_with_bandwidth_and_latency(self):
        seen = {}
        for row in iteration_rows(self.doc):
            name, size = family(row)
            if not name.startswith(PATHS):
                continue
            with self.subTest(row=row["name"]):
                self.assertFalse(failed(row), message(row))
                self.assertGreater(row["GB/s"], 0)
                self.assertGreater(row["latency_us"], 0)
                self.assertGreaterEqual(row["batch"], 1)
                self.assertGreater(row["bytes_per_second"], 0)
            seen.setdefault(name, set()).add(size)
        self.assertEqual(set(seen), expected_families(self.cuda))
        for name, sizes in seen.items():
            self.assertEqual(sizes, set(SIZES), name)

    def test_counters_agree_with_the_time(self):
        for row in iteration_rows(self.doc):
            name, size = family(row)
            if not name.startswith(PATHS) or failed(row):
                continue
            directions = 2 if "/dir:bi/" in name + "/" else 1
            with self.subTest(row=row["name"]):
                self.assertAlmostEqual(
                    row["latency_us"], row["real_time"], delta=row["real_time"] * 1e-4
                )
                expected = directions * size / (row["latency_us"] * 1e-6) / 1e9
                self.assertAlmostEqual(row["GB/s"], expected, delta=expected * 1e-3)

    def test_latency_rows_time_one_copy(self):
        latency = [r for r in iteration_rows(self.doc) if "/timing:latency/" in r["name"]]
        self.assertTrue(latency)
        for row in latency:
            self.assertEqual(row["batch"], 1, row["name"])

    def test_small_bandwidth_rows_are_batched(self):
        for row in iteration_rows(self.doc):
            name, size = family(row)
            if name.startswith(PATHS) and size == 8 and "timing:latency" not in name:
                self.assertGreater(row["batch"], 1, row["name"])

    def test_context_describes_the_gpus(self):
        self.assertRegex(self.cuda["runtime_version"], r"^\d+\.\d+$")
        self.assertRegex(self.cuda["driver_version"], r"^\d+\.\d+$")
        for device in self.cuda["devices"]:
            self.assertIsInstance(device["name"], str)
            self.assertRegex(device["uuid"], r"^GPU-[0-9a-f]{8}-")
            self.assertRegex(device["pci_bus_id"], r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:")
            self.assertGreater(device["memory_bytes"], 1 << 30)
        if len(self.cuda["devices"]) >= 2:
            pair = next(p for p in self.cuda["pairs"] if p["src"] == 0 and p["dst"] == 1)
            self.assertIn(pair["link"], ("NVLink", "PCIe", "unknown"))
            self.assertIsInstance(pair["p2p"], bool)
            if pair["link"] == "NVLink":
                self.assertGreater(pair["nvlink_count"], 0)

    def test_console_shows_the_topology_table_before_results(self):
        self.assertIn("GPU topology", self.proc.stderr)
        self.assertRegex(self.proc.stderr, r"GPU0\s+X")
        if len(self.cuda["devices"]) >= 2:
            self.assertRegex(self.proc.stderr, r"GPU1\s+\S+\s+X")

    def test_one_gpu_skips_memcpy_peer_with_a_reason(self):
        if len(self.cuda["devices"]) >= 2:
            self.skipTest("two or more GPUs here")
        self.assertIn("needs 2 GPUs", skipped(self.doc)["memcpy_peer"])

    def test_pinned_pipelined_beats_pageable_sequential_at_64_mib(self):
        def gbps(prefix):
            for row in iteration_rows(self.doc, "host_staging"):
                name, size = family(row)
                if name.startswith(prefix) and size == 64 << 20:
                    return row["GB/s"]
            self.fail("no row " + prefix)

        self.assertGreater(
            gbps("host_staging/host:pinned/mode:pipelined/"),
            gbps("host_staging/host:pageable/mode:sequential/"),
        )


class Corruption(unittest.TestCase):
    """--xfer_test_corrupt=PATH flips one received byte: that path's rows fail, loudly."""

    def check(self, path):
        proc, doc = launch(
            [
                "--xfer_sizes=4096,1048576",
                "--benchmark_min_time=0.01",
                "--xfer_test_corrupt=" + path,
            ]
        )
        self.assertIsNotNone(doc, proc.stderr)
        if path in skipped(doc):
            self.skipTest(f"{path} skipped here: {skipped(doc)[path]}")
        self.assertNotEqual(proc.returncode, 0, proc.stderr[-4000:])
        rows = iteration_rows(doc, path)
        self.assertTrue(rows)
        for row in rows:
            with self.subTest(row=row["name"]):
                self.assertTrue(failed(row), row)
                text = message(row)
                self.assertIn("validation: 1 of", text)
                self.assertIn("bytes:", text)  # the row names the size
                self.assertIn("GPU ", text)  # and the devices
        other = [
            r
            for r in iteration_rows(doc)
            if r["name"].split("/")[0] in PATHS and r["name"].split("/")[0] != path
        ]
        for row in other:
            self.assertFalse(failed(row), message(row))
        self.assertIn("row(s) failed", proc.stderr)

    def test_memcpy_peer(self):
        self.check("memcpy_peer")

    def test_host_staging(self):
        self.check("host_staging")


class PairsAndRanks(unittest.TestCase):
    def test_all_pairs_run_every_ordered_pair(self):
        if DEVICES < 2:
            self.skipTest("needs 2 GPUs")
        proc, doc = launch(
            [
                "--xfer_sizes=1048576",
                "--benchmark_min_time=0.01",
                "--xfer_gpus=all",
                "--benchmark_filter=/dir:uni/pair|mode:sequential/pair",
            ]
        )
        self.assertIsNotNone(doc, proc.stderr)
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
        pairs = {
            re.search(r"pair:(\d+)to(\d+)", r["name"]).groups()
            for r in iteration_rows(doc, "memcpy_peer")
        }
        n = DEVICES
        self.assertEqual(pairs, {(str(a), str(b)) for a in range(n) for b in range(n) if a != b})

    def test_two_ranks_agree_and_rank_zero_copies(self):
        proc, doc = launch(
            [
                "--xfer_sizes=8,1048576",
                "--benchmark_min_time=0.01",
                "--benchmark_filter=memcpy_peer|host_staging",
            ],
            ranks=2,
        )
        self.assertIsNotNone(doc, proc.stderr)
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
        rows = iteration_rows(doc)
        self.assertTrue(rows)
        for row in rows:
            self.assertFalse(failed(row), message(row))
        self.assertEqual(proc.stderr.count("GPU topology"), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
