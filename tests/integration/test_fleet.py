"""--xfer_fleet on one machine: every pair of the ranks in rounds of disjoint pairs, each pair's
own time in context.xferbench.fleet, the rounds the judge (tools/xfertools/fleet/model.py) rebuilds
from the recorded relabel; a re-test file measured; bad files refused naming the file; a run
stopped by SIGINT keeps the rounds it measured. (The multi-host verdicts: test_multihost_fleet.)
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from xfer_testlib import MPIRUN, OPENMPI_AS_ROOT, XFERBENCH, launch, rows

sys.path.insert(
    0, os.path.join(os.environ.get("XFER_SOURCE_DIR", os.path.join("..", "..")), "tools")
)
from xfertools.fleet import model as fleet  # noqa: E402

QUICK = ["--benchmark_filter=mpi_host", "--xfer_sizes=8,64K", "--xfer_max_time=0.02"]
INTERRUPTED = 130


def fleet_of(document):
    return document["context"]["xferbench"]["fleet"]


def run(ranks, args, tmp, name="fleet.json"):
    out = os.path.join(tmp, name)
    proc = launch(ranks, list(args) + ["--benchmark_out=" + out], timeout=240)
    document = None
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            document = json.load(f)
    return proc, document, out


class EveryPair(unittest.TestCase):
    def test_five_ranks_two_passes_measure_every_pair_in_each(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc, document, _ = run(5, ["--xfer_fleet=2", "--xfer_seed=4242"] + QUICK, tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            f = fleet_of(document)
            self.assertEqual((f["format"], f["ranks"], f["seed"]), ("xferbench-fleet/1", 5, 4242))
            walls = f["rounds"].pop("wall_s")
            self.assertEqual(f["rounds"], {"planned": 10, "measured": 10})  # 5 rounds a pass
            self.assertEqual(len(walls), 10)
            self.assertTrue(all(0 < w < 30 for w in walls), walls)
            self.assertIsNone(f["incomplete"])
            self.assertEqual(len(f["series"]), 4)  # 2 sizes x 2 passes
            for s in f["series"]:
                self.assertEqual(s["family"], "mpi_host/mode:pingpong")
                self.assertEqual(len(s["time_us"]), 10)  # every unordered pair of 5
                self.assertTrue(all(t is not None and t > 0 for t in s["time_us"]), s)
                # the rounds the judge rebuilds from the recorded relabel are those measured
                relabel = f["passes"][s["pass"]]["relabel"]
                matrix = fleet.round_matrix(5, relabel)
                expected = [int(matrix[a, b]) for a in range(5) for b in range(a + 1, 5)]
                self.assertEqual(s["round_of"], expected)
            # the second pass plays other positions (other pairs share a round)
            self.assertNotEqual(f["passes"][0]["relabel"], f["passes"][1]["relabel"])
            # an ordinary result too: one row per series, the median pair's figure
            names = sorted(r["name"] for r in rows(document))
            self.assertEqual(
                names,
                [
                    "mpi_host/mode:pingpong/fleet:median/bytes:65536/manual_time",
                    "mpi_host/mode:pingpong/fleet:median/bytes:8/manual_time",
                ],
            )
            by_size = {8: [], 65536: []}
            for s in f["series"]:
                by_size[s["bytes"]] += s["time_us"]
            for row in rows(document):
                size = 8 if "bytes:8/" in row["name"] else 65536
                self.assertGreaterEqual(row["latency_us"], min(by_size[size]) * 0.999)
                self.assertLessEqual(row["latency_us"], max(by_size[size]) * 1.001)
            self.assertIn("judge it with: tools/fleet judge", proc.stderr)

    def test_the_judge_reads_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc, document, _ = run(4, ["--xfer_fleet=1"] + QUICK, tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            series = fleet.from_result(fleet_of(document))
            self.assertEqual(len(series), 2)
            for s in series:
                verdict = fleet.judge(s)
                # one machine is one host: nothing can be told apart, nothing is named
                self.assertEqual(verdict["hosts"], [])
                self.assertEqual(verdict["links"], [])
                self.assertIn("none named", verdict["lines"][0])

    def test_a_rounds_file_measures_only_its_pairs(self):
        with tempfile.TemporaryDirectory() as tmp:
            rounds = os.path.join(tmp, "rounds.json")
            with open(rounds, "w", encoding="utf-8") as f:
                json.dump(
                    {
                        "format": "xferbench-fleet-rounds/1",
                        "ranks": 4,
                        "rounds": [[[0, 3], [1, 2]], [[2, 0]]],
                        "why": "a test",
                    },
                    f,
                )
            proc, document, _ = run(4, ["--xfer_fleet_rounds=" + rounds] + QUICK, tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            f = fleet_of(document)
            self.assertEqual(f["series"], [])
            self.assertEqual((f["rounds"]["planned"], f["rounds"]["measured"]), (2, 2))
            got = {(r["bytes"], r["round"]): r for r in f["retests"]}
            self.assertEqual(sorted(got), [(8, 0), (8, 1), (65536, 0), (65536, 1)])
            self.assertEqual(got[(8, 0)]["pairs"], [[0, 3], [1, 2]])
            self.assertEqual(got[(8, 1)]["pairs"], [[0, 2]])  # a < b, as the judge keys them
            self.assertTrue(all(t > 0 for r in f["retests"] for t in r["time_us"]))

    def test_bad_rounds_files_are_refused_naming_the_file(self):
        cases = {
            "garbled": ("{not json", "not JSON"),
            "format": ('{"format": "other"}', 'expected a "format": "xferbench-fleet-rounds/1"'),
            "ranks": (
                '{"format": "xferbench-fleet-rounds/1", "ranks": 8, "rounds": [[[0, 1]]]}',
                "written for 8 ranks; this run has 2",
            ),
            "range": (
                '{"format": "xferbench-fleet-rounds/1", "ranks": 2, "rounds": [[[0, 5]]]}',
                "is not a pair of two ranks from 0 to 1",
            ),
            "twice": (
                '{"format": "xferbench-fleet-rounds/1", "ranks": 2, "rounds": [[[0, 1], [1, 0]]]}',
                "has a rank in two pairs",
            ),
        }
        with tempfile.TemporaryDirectory() as tmp:
            for name, (text, said) in cases.items():
                path = os.path.join(tmp, name + ".json")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                proc = launch(2, ["--xfer_fleet_rounds=" + path] + QUICK)
                self.assertEqual(proc.returncode, 2, (name, proc.stderr))
                self.assertIn(f"--xfer_fleet_rounds={path}: ", proc.stderr, name)
                self.assertIn(said, proc.stderr, name)
            missing = os.path.join(tmp, "missing.json")
            proc = launch(2, ["--xfer_fleet_rounds=" + missing] + QUICK)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(f"--xfer_fleet_rounds={missing}: cannot read it", proc.stderr)

    def test_a_fleet_of_one_rank_measures_nothing_and_says_why(self):
        proc = launch(1, ["--xfer_fleet=1"] + QUICK)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(
            "nothing was measured: --xfer_fleet measures paths between ranks", proc.stderr
        )


class Interrupted(unittest.TestCase):
    def test_sigint_keeps_the_rounds_measured(self):
        """Ten rounds of about 0.6 s each; SIGINT to the launcher once one is in the file."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "fleet.json")
            slow = [
                "--benchmark_filter=mpi_host",
                "--xfer_sizes=8",
                "--xfer_precision=0.001",
                "--xfer_max_time=0.6",
                "--xfer_fleet=2",
                "--benchmark_out=" + out,
            ]
            proc = subprocess.Popen(
                MPIRUN + ["5", XFERBENCH] + slow,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(OPENMPI_AS_ROOT, **os.environ),
            )
            try:
                deadline = time.monotonic() + 120
                while not os.path.exists(out) and proc.poll() is None:
                    self.assertLess(time.monotonic(), deadline, "no round was written")
                    time.sleep(0.05)
                proc.send_signal(signal.SIGINT)
                _, stderr = proc.communicate(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
            self.assertNotEqual(proc.returncode, 0, stderr)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
            f = fleet_of(document)
            measured = f["rounds"]["measured"]
            self.assertGreaterEqual(measured, 1, stderr)
            self.assertLess(measured, 10, stderr)
            self.assertIn(f"measured {measured} of 10 rounds", f["incomplete"])
            self.assertIsNotNone(document["context"]["xferbench"]["incomplete"])
            timed = [t for s in f["series"] for t in s["time_us"] if t is not None]
            self.assertEqual(len(timed), measured * 2)  # two pairs a round of 5 ranks
            self.assertEqual(sorted(os.listdir(tmp)), ["fleet.json"])


if __name__ == "__main__":
    unittest.main()
