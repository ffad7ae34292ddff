"""The real github-action-benchmark (v1.22.0) takes xferbench's output: tools/track export's
custom JSON (tools customSmallerIsBetter and customBiggerIsBetter), and a plain result file
with repetitions (tool googlecpp; strict JSON, no bare NaN), and it alerts on a planted
slowdown. The action runs through ../shared/anchors/run-github-action-benchmark (relative to
the repository root; XFER_GAB_ANCHOR overrides the path), which builds it once with npm. The
build is kept in $XFER_GAB_CACHE (default ~/.cache/xferbench/github-action-benchmark).

The inputs are real runs of this repository's xferbench on a 2-core CPU machine,
tests/fixtures/track/: mpi_host at 4 sizes with --benchmark_repetitions=3, and the same with
--xfer_test_slowdown=mpi_host:200 (every time 3 times as long; the action alerts beyond 2x).

    python3 -m unittest discover -s tests/tools -p 'test_track_gab.py'
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import tracklib
from tracklib import ROOT, track

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "track")
BASE = os.path.join(FIXTURES, "mpi_host_repetitions.json")
SLOWER = os.path.join(FIXTURES, "mpi_host_repetitions_slowdown_200pct.json")
ANCHOR = os.environ.get("XFER_GAB_ANCHOR") or os.path.join(
    os.path.dirname(ROOT), "shared", "anchors", "run-github-action-benchmark"
)
CACHE = os.environ.get("XFER_GAB_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "xferbench", "github-action-benchmark"
)
HAVE_NODE = shutil.which("node") and shutil.which("npm")
ROWS = 4  # benchmarks in each fixture, 3 repetitions each


@unittest.skipUnless(HAVE_NODE, "needs node and npm (apt-get install nodejs npm)")
@unittest.skipUnless(os.path.isfile(ANCHOR), f"no github-action-benchmark runner at {ANCHOR}")
class GithubActionBenchmark(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        built = os.path.join(CACHE, ".action", "dist", "src", "index.js")
        if not os.path.isfile(built):  # the runner builds the action into its work folder
            done = subprocess.run(
                [ANCHOR, CACHE, BASE], capture_output=True, text=True, timeout=900
            )
            if not os.path.isfile(built):
                raise AssertionError(f"building the action failed: {done.stderr[-2000:]}")

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.work = os.path.join(self.dir, "action")
        os.makedirs(self.work)
        os.symlink(os.path.join(CACHE, ".action"), os.path.join(self.work, ".action"))
        self.commits = 0

    def action(self, result, tool):
        """One run of the action on result, as a new commit (its history: self.work/data.json)."""
        self.commits += 1
        commit = f"{self.commits:040x}"
        return subprocess.run(
            [ANCHOR, self.work, result, commit, f"INPUT_TOOL={tool}"],
            capture_output=True,
            text=True,
            timeout=300,
        )

    def entries(self):
        """The runs the action has stored, oldest first."""
        with open(os.path.join(self.work, "data.json"), encoding="utf-8") as f:
            return json.load(f)["entries"]["xferbench"]

    def summary(self):
        with open(os.path.join(self.work, "summary.md"), encoding="utf-8") as f:
            return f.read()

    def export(self, result, metric):
        out = os.path.join(self.dir, f"{metric}-{os.path.basename(result)}")
        done = track("export", "--format", "github", "--metric", metric, result, "-o", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        return out

    def assert_accepted_then_alerted(self, base, slower, tool, unit):
        first = self.action(base, tool)
        self.assertEqual(first.returncode, 0, first.stdout[-3000:] + first.stderr[-3000:])
        again = self.action(base, tool)  # the same numbers again: no alert
        self.assertEqual(again.returncode, 0, again.stdout[-3000:] + again.stderr[-3000:])
        alert = self.action(slower, tool)
        self.assertEqual(alert.returncode, 1, alert.stdout[-3000:] + alert.stderr[-3000:])
        stored = self.entries()
        self.assertEqual(len(stored), 3)  # the slower run was read, stored, and judged
        for entry in stored:
            self.assertEqual({b["unit"] for b in entry["benches"]}, {unit})
        return stored

    def assert_exports_taken(self, metric, tool, unit):
        """The metric's exports of both fixtures: accepted, then alerted on."""
        exports = (self.export(BASE, metric), self.export(SLOWER, metric))
        return self.assert_accepted_then_alerted(*exports, tool, unit)

    def test_the_fixtures_are_strict_json_with_repetitions(self):
        for path in (BASE, SLOWER):
            with open(path, encoding="utf-8") as f:
                document = tracklib.strict_json(f.read())
            names = [b["run_name"] for b in document["benchmarks"] if b["run_type"] == "iteration"]
            self.assertEqual(len(names), 3 * ROWS)
            self.assertEqual(len(set(names)), ROWS)
            self.assertIn("_cv", "".join(b["name"] for b in document["benchmarks"]))

    def test_googlecpp_reads_a_result_with_repetitions_and_alerts_on_the_planted_slowdown(self):
        stored = self.assert_accepted_then_alerted(BASE, SLOWER, "googlecpp", "us/iter")
        # Every repetition and the aggregates (mean, median, stddev, cv) of every row.
        self.assertEqual(len(stored[0]["benches"]), ROWS * (3 + 4))
        self.assertIn("mpi_host/mode:pingpong/bytes:1048576/manual_time", self.summary())

    def test_custom_smaller_is_better_takes_the_latency_export(self):
        stored = self.assert_exports_taken("latency", "customSmallerIsBetter", "us")
        benches = stored[0]["benches"]
        self.assertEqual(len(benches), ROWS)  # one per row: the mean of its repetitions
        self.assertTrue(all(b["range"].startswith("±") for b in benches))
        self.assertIn("mpi_host/mode:pingpong/bytes:1048576", self.summary())

    def test_custom_bigger_is_better_takes_the_bandwidth_export(self):
        stored = self.assert_exports_taken("bandwidth", "customBiggerIsBetter", "GB/s")
        slower, base = stored[2]["benches"], stored[0]["benches"]
        for before, after in zip(base, slower):
            self.assertLess(after["value"], before["value"] / 2)  # what the alert saw


if __name__ == "__main__":
    unittest.main()
