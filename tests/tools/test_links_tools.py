"""The links in the other tools (docs/links.md): compare.py --cross-machine shows each family's
share of its own link on both machines beside the raw ratio, and plot.py --reference draws the
line rate of the links the run read itself."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from test_check_node import PIPE, SEQ, link_document

from toollib import TOOLS
from xfertools.plot import curves
from xfertools.result import machines


class LinkShares(unittest.TestCase):
    def write(self, tmp, name, document):
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f)
        return path

    def compare(self, base, new):
        with tempfile.TemporaryDirectory() as tmp:
            paths = [self.write(tmp, "base.json", base), self.write(tmp, "new.json", new)]
            return subprocess.run(
                [sys.executable, os.path.join(TOOLS, "compare.py"), *paths, "--cross-machine"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
            )

    def family_line(self, output, family):
        """The family's line in the cross-machine table (the one with the link shares)."""
        table = output[output.index("of link base/new") :]
        return next(line for line in table.splitlines() if line.startswith(family + " "))

    def test_cross_machine_shows_each_side_share_of_its_link(self):
        base = link_document({SEQ: 0.88, PIPE: 0.80})
        new = link_document({SEQ: 0.70, PIPE: 0.80}, machine="NVIDIA H100 80GB HBM3")
        result = self.compare(base, new)
        self.assertIn(result.returncode, (0, 1), result.stderr)
        self.assertIn("of link base/new", result.stdout)
        self.assertTrue(self.family_line(result.stdout, SEQ).endswith("88% / 70%"), result.stdout)
        self.assertTrue(self.family_line(result.stdout, PIPE).endswith("80% / 80%"))

    def test_a_side_without_links_shows_a_dash_and_no_links_no_column(self):
        base = link_document({SEQ: 0.88})
        new = link_document({SEQ: 0.70}, machine="NVIDIA H100 80GB HBM3")
        for row in new["benchmarks"]:
            del row["pct_of_link"]
        result = self.compare(base, new)
        self.assertTrue(self.family_line(result.stdout, SEQ).endswith("88% / -"), result.stdout)
        for row in base["benchmarks"]:
            del row["pct_of_link"]
        self.assertNotIn("of link", self.compare(base, new).stdout)

    def test_plot_reference_draws_the_links_the_run_read(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = self.write(tmp, "run.json", link_document({SEQ: 0.88, PIPE: 0.80}))
            (run,) = curves.load_runs([path])
        self.assertEqual(
            sorted(curves.reference_lines(run)),
            [
                (31.5, "link (PCIe, in turn): 31.5 GB/s per direction"),
                (63.0, "link (PCIe, at once): 63.0 GB/s per direction"),
            ],
        )

    def test_link_readings_stay_out_of_the_machine_identity(self):
        # A downtrained link is this run's state, not the machine's make-up: tools/track files
        # both runs under one identity, so the slow one is judged against the healthy ones.
        healthy = link_document({SEQ: 0.88})
        slow = link_document({SEQ: 0.30}, downtrained=["pcie:0000:00:06.0"])
        slow["context"]["xferbench"]["links"]["links"][0]["gbps"] = 7.9
        self.assertEqual(
            machines.machine_identity(healthy["context"]),
            machines.machine_identity(slow["context"]),
        )


if __name__ == "__main__":
    unittest.main()
