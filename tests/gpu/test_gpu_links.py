"""Each GPU row as a share of its link (docs/links.md), on a machine with GPUs (ctest label "gpu").

A host_staging row carries link_gbps and pct_of_link, within 100%, and the context names its link
once; with the machine's own answers recorded (--xfer_dump_links) and edited to a PCIe Gen1 x1
link, the same rows read as downtrained and every row above that link's line rate is an error,
not a result. On two GPUs that NVML joins by NVLink (through NVSwitch too), the peer copies
and the CUDA-aware MPI and NCCL rows between them carry their share of NVLink, and no row is
charged to a PCIe link its bytes do not cross. Without a GPU every test skips.

Run by hand: XFERBENCH=build/xferbench python3 -m unittest -v test_gpu_links
"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpu_copy_paths import XFERBENCH, iteration_rows, launch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from xfer_testlib import no_gpu  # noqa: E402

ROWS = [
    "--benchmark_filter=host_staging/host:pinned/mode:(sequential|pipelined)/pair:0to",
    "--xfer_sizes=1M,64M",
    "--benchmark_min_time=0.01",
]


def links_of(document):
    return document["context"]["xferbench"].get("links") or {}


def edit_to_gen1_x1(directory):
    """The recorded PCIe links read 2.5 GT/s x1 (an edited capture, as a downtrained link)."""
    nvml = os.path.join(directory, "nvml.txt")
    if os.path.exists(nvml):
        with open(nvml, encoding="utf-8") as f:
            text = f.read()
        for key in ("pcie_gen_current", "pcie_width_current"):
            text = "\n".join(
                " ".join(key + "=1" if w.startswith(key + "=") else w for w in line.split(" "))
                for line in text.splitlines()
            )
        with open(nvml, "w", encoding="utf-8") as f:
            f.write("# EDITED by test_gpu_links: current PCIe links set to Gen1 x1\n" + text + "\n")
    for root, _, files in os.walk(os.path.join(directory, "sys")):
        for name, value in (("current_link_speed", "2.5 GT/s PCIe"), ("current_link_width", "1")):
            if name in files and os.path.basename(root).count(":") == 2:
                with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                    f.write(value + "\n")


class TestLinks(unittest.TestCase):
    def run_rows(self, extra=()):
        proc, doc = launch(ROWS + list(extra))
        if doc is None or not iteration_rows(doc, "host_staging"):
            raise no_gpu("no host_staging rows here: " + proc.stderr[-300:])
        return proc, doc

    def test_rows_carry_their_share_of_the_link(self):
        proc, doc = self.run_rows()
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        links = links_of(doc)
        pcie = [link for link in links.get("links", []) if link["kind"] == "PCIe"]
        self.assertTrue(pcie, links)
        self.assertEqual(len({link["id"] for link in pcie}), len(pcie))  # each named once
        for row in iteration_rows(doc, "host_staging"):
            self.assertIn("link_gbps", row, row["name"])
            self.assertGreater(row["pct_of_link"], 0, row["name"])
            self.assertLessEqual(row["pct_of_link"], 100, row["name"])
            self.assertAlmostEqual(row["pct_of_link"], row["GB/s"] / row["link_gbps"] * 100, 3)
        self.assertIn("link PCIe Gen", proc.stderr)

    def test_edited_slow_link_is_downtrained_and_rows_above_it_are_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            recorded = os.path.join(tmp, "links")
            dump = subprocess.run(
                [XFERBENCH, "--xfer_dump_links=" + recorded],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            self.assertEqual(dump.returncode, 0, dump.stderr[-2000:])
            edit_to_gen1_x1(recorded)
            proc, doc = self.run_rows(["--xfer_test_links=" + recorded])
        self.assertEqual(proc.returncode, 1, proc.stderr[-2000:])
        self.assertIn("downtrained: pcie:", proc.stderr)
        self.assertTrue(links_of(doc)["downtrained"])
        rows = iteration_rows(doc, "host_staging")
        failed = [r for r in rows if r.get("error_occurred") or r.get("skipped")]
        self.assertEqual(len(failed), len(rows), [r["name"] for r in rows])
        for row in failed:
            message = row.get("error_message", "")
            self.assertIn("an error in the measurement or in the peak", message)
            self.assertNotIn("GB/s", row)  # not printed as a result


class TestTwoGpuLinks(unittest.TestCase):
    """Two GPUs joined by NVLink: every row between them is an NVLink row with a share."""

    def nvlink_or_skip(self, doc, what):
        links = links_of(doc)
        nvlink = [link for link in links.get("links", []) if link["kind"] == "NVLink"]
        if not nvlink:
            raise unittest.SkipTest(f"no NVLink link between two GPUs here ({what})")
        return links, nvlink

    def check_rows(self, doc, rows, links):
        self.assertTrue(rows)
        for row in rows:
            name = row["name"].split("/bytes:")[0]
            route = links["routes"].get(name, {}).get("links", [])
            self.assertTrue(route and all(r.startswith("nvlink:") for r in route), (name, route))
            self.assertGreater(row["pct_of_link"], 0, row["name"])
            self.assertLessEqual(row["pct_of_link"], 100, row["name"])

    def test_peer_copies_cross_nvlink_with_a_share(self):
        proc, doc = launch(
            ["--benchmark_filter=memcpy_peer/p2p:on/", "--xfer_sizes=64M", "--xfer_max_time=0.2"]
        )
        if doc is None:
            raise no_gpu("no result here: " + proc.stderr[-300:])
        skipped = {s["path"]: s["reason"] for s in doc["context"]["xferbench"]["skipped"]}
        if "memcpy_peer" in skipped:  # one GPU: test_gpu_copy_paths checks the reason
            raise unittest.SkipTest("memcpy_peer skipped: " + skipped["memcpy_peer"])
        links, nvlink = self.nvlink_or_skip(doc, "memcpy_peer")
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        self.check_rows(doc, iteration_rows(doc, "memcpy_peer"), links)
        self.assertIn("link NVLink x", proc.stderr)
        self.assertGreater(nvlink[0]["gbps"], 0, nvlink[0])

    def test_mpi_and_nccl_ranks_on_two_gpus_cross_nvlink_with_a_share(self):
        proc, doc = launch(
            [
                "--benchmark_filter=^(mpi_cuda_aware|nccl_sendrecv)/mode:pingpong/",
                "--xfer_sizes=64M",
                "--xfer_max_time=0.2",
            ],
            ranks=2,
        )
        if doc is None:
            raise no_gpu("no result: " + proc.stderr[-300:])
        gpus = {r.get("pci_bus_id") for r in doc["context"]["xferbench"].get("ranks", [])}
        if len(gpus - {None}) < 2:
            raise unittest.SkipTest("the two ranks do not have two GPUs here")
        links, _ = self.nvlink_or_skip(doc, "2 ranks")
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        rows = iteration_rows(doc, "mpi_cuda_aware") + iteration_rows(doc, "nccl_sendrecv")
        self.check_rows(doc, rows, links)


if __name__ == "__main__":
    unittest.main()
