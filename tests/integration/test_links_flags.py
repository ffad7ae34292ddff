"""The links' flags on a machine without a GPU (docs/links.md): recorded answers that cannot be
read, or a directory that cannot be written, are refused with one line and status 2 on every
rank; a recording of a machine without GPUs records none; a run whose rows cross no known link
(mpi_host within a node) carries no share, only the links context."""

import os
import tempfile
import unittest

from xfer_testlib import launch, launch_json, rows

FIXTURES = os.path.join(os.environ.get("XFER_SOURCE_DIR", "../.."), "tests", "fixtures", "links")
QUICK = ["--benchmark_filter=mpi_host/mode:pingpong", "--xfer_sizes=1K,1M"]


class LinkFlags(unittest.TestCase):
    def test_unreadable_recordings_are_refused_once_with_status_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "nvml.txt"), "w", encoding="utf-8") as f:
                f.write("gpu 0000:00:06.0 pcie_gen_current=five\n")
            for where, fragment in (
                ("/nonexistent/links", "not a directory of recorded link answers"),
                (tmp, "nvml.txt line 1: 'pcie_gen_current=five' is not key=number"),
            ):
                proc = launch(2, QUICK + ["--xfer_test_links=" + where], timeout=120)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertEqual(proc.stderr.count("xferbench: --xfer_test_links:"), 1, proc.stderr)
                self.assertIn(fragment, proc.stderr)

    def test_dump_links_refuses_a_directory_it_cannot_write(self):
        proc = launch(0, ["--xfer_dump_links=/proc/links"], timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--xfer_dump_links=/proc/links: /proc/links: cannot create", proc.stderr)

    def test_dump_links_without_a_gpu_records_none(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = launch(0, ["--xfer_dump_links=" + tmp], timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("for 0 GPU(s)", proc.stderr)

    def test_rows_over_no_known_link_carry_no_share(self):
        proc, document = launch_json(
            2, QUICK + ["--xfer_test_links=" + os.path.join(FIXTURES, "h200-vm")]
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        links = document["context"]["xferbench"]["links"]
        self.assertEqual((links["nvml"], links["links"], links["routes"]), (True, [], {}))
        for row in rows(document):
            self.assertNotIn("link_gbps", row)
            self.assertNotIn("pct_of_link", row)
        self.assertEqual(links["downtrained"], [])


if __name__ == "__main__":
    unittest.main()
