"""ce_copy, sm_copy and pointer_chase on a machine with GPUs (ctest label "gpu").

Every variant the machine allows produces rows whose GB/s is the bytes the row says it moved
over its time (both directions for dir:bi and peer:bi), whose share is of the link it crosses
(PCIe for host copies, the GPU's memory for dir:local, NVLink or PCIe for peer copies; none for
the pointer chase, a latency), and whose validation fails loudly when a byte is flipped. What
the machine does not allow (peers with one GPU) is skipped with a reason. The default run holds
only the few rows copies_plan.hpp names. Without a GPU every test skips.

Run by hand: XFERBENCH=build/xferbench python3 -m unittest -v test_gpu_copies
"""

import re
import unittest

import test_gpu_copy_paths as base

PATHS = ("ce_copy", "sm_copy", "pointer_chase")
SIZES = [4096, (1 << 20) + 7, 64 << 20]  # + 7: the kernel's tail loop
ALL = [
    "--xfer_sizes=" + ",".join(str(s) for s in SIZES),
    "--benchmark_min_time=0.01",
    "--benchmark_filter=^(ce_copy|sm_copy|pointer_chase)/",
]


def setUpModule():
    base.setUpModule()


def rows_of(document):
    return [r for r in base.iteration_rows(document) if r["name"].split("/")[0] in PATHS]


def directions(name):
    return 2 if re.search(r"/(dir|peer):bi/", name) else 1


class Copies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc, cls.doc = base.launch(ALL)
        if cls.doc is None:
            raise AssertionError("no result file:\n" + cls.proc.stderr)
        cls.devices = len(cls.doc["context"]["xferbench"]["cuda"]["devices"])

    def test_run_succeeds_and_every_row_validates(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-4000:])
        rows = rows_of(self.doc)
        self.assertTrue(rows)
        for row in rows:
            self.assertFalse(base.failed(row), base.message(row))

    def test_every_family_has_its_sizes(self):
        seen = {}
        for row in rows_of(self.doc):
            name, size = base.family(row)
            seen.setdefault(name, set()).add(size)
        for name, sizes in seen.items():
            want = {8} if name.startswith("pointer_chase/") else set(SIZES)
            self.assertEqual(sizes, want, name)
        for family in (
            "ce_copy/host:pinned/dir:h2d/gpu:0",
            "ce_copy/host:pinned/dir:d2h/gpu:0",
            "ce_copy/host:pinned/dir:bi/gpu:0",
            "ce_copy/host:pageable/dir:h2d/gpu:0",
            "ce_copy/dir:local/gpu:0",
            "sm_copy/host:mapped/dir:h2d/gpu:0",
            "sm_copy/host:mapped/dir:bi/gpu:0",
            "sm_copy/dir:local/gpu:0",
            "pointer_chase/host:mapped/span:2MiB/gpu:0",
        ):
            self.assertIn(family, seen)

    def test_gbps_counts_the_bytes_of_each_direction(self):
        for row in rows_of(self.doc):
            name, size = base.family(row)
            with self.subTest(row=row["name"]):
                expected = directions(name) * size / (row["latency_us"] * 1e-6) / 1e9
                self.assertAlmostEqual(row["GB/s"], expected, delta=expected * 1e-3)

    def test_each_share_is_of_the_link_crossed(self):
        routes = self.doc["context"]["xferbench"]["links"]["routes"]
        kinds = {
            link["id"]: link["kind"] for link in self.doc["context"]["xferbench"]["links"]["links"]
        }
        for row in rows_of(self.doc):
            name, _ = base.family(row)
            route = [kinds.get(i) for i in routes.get(name, {}).get("links", [])]
            with self.subTest(family=name):
                if name.startswith("pointer_chase/"):
                    self.assertNotIn("pct_of_link", row)
                elif "/dir:local/" in name:
                    self.assertEqual(route, ["memory"])
                elif "/host:" in name:
                    self.assertEqual(route, ["PCIe"])
                if "pct_of_link" in row:
                    self.assertLess(row["pct_of_link"], 100)
                    self.assertGreater(row["pct_of_link"], 0)

    def test_pointer_chase_times_one_load(self):
        for row in rows_of(self.doc):
            if row["name"].startswith("pointer_chase/"):
                self.assertGreater(row["batch"], 1000, row["name"])
                self.assertGreater(row["latency_us"], 0.05, row["name"])  # not a cache hit
                self.assertLess(row["latency_us"], 100, row["name"])

    def test_one_gpu_skips_the_peer_variants_with_a_reason(self):
        if self.devices >= 2:
            names = {base.family(r)[0] for r in rows_of(self.doc)}
            self.assertIn("sm_copy/peer:write/pair:0to1", names)
            self.skipTest("two or more GPUs here")
        reasons = base.skipped(self.doc)
        self.assertIn("needs 2 GPUs", reasons["sm_copy/peer"])
        self.assertIn("needs 2 GPUs", reasons["pointer_chase/peer"])


class DefaultRun(unittest.TestCase):
    def test_without_a_filter_only_the_default_rows_run(self):
        proc, doc = base.launch(
            ["--xfer_sizes=4096,8,268435456", "--benchmark_min_time=0.01", "--xfer_visits=1"]
        )
        self.assertIsNotNone(doc, proc.stderr)
        names = sorted(r["name"].rsplit("/manual_time", 1)[0] for r in rows_of(doc))
        self.assertEqual(
            names,
            [
                "ce_copy/host:pinned/dir:d2h/gpu:0/bytes:4096",
                "ce_copy/host:pinned/dir:h2d/gpu:0/bytes:4096",
                "sm_copy/dir:local/gpu:0/bytes:268435456",
            ],
        )


class Corruption(unittest.TestCase):
    def test_a_flipped_byte_fails_every_row_of_the_path(self):
        for path in PATHS:
            with self.subTest(path=path):
                proc, doc = base.launch(
                    [
                        "--xfer_sizes=1048583",
                        "--benchmark_min_time=0.01",
                        f"--benchmark_filter=^{path}/.*gpu:0/",
                        "--xfer_test_corrupt=" + path,
                    ]
                )
                self.assertIsNotNone(doc, proc.stderr)
                self.assertNotEqual(proc.returncode, 0)
                rows = rows_of(doc)
                self.assertTrue(rows)
                for row in rows:
                    self.assertTrue(base.failed(row), row["name"])
                    self.assertIn("validation", base.message(row))


if __name__ == "__main__":
    unittest.main()
