"""This machine's floor (--xfer_floor=auto, the default): a run merged from 3 jobs writes it
(tools/track floor), a single-process run on the same machine finds it among other machines'
files and adds it to its rows, the built-in floor stays for families and sizes it does not
hold, and a floor file of another machine given by name is refused with one line. Three runs
make a history from which the file states the run level and a plan for the next run."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from xfer_testlib import launch, rows

SOURCE = os.environ.get("XFER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TRACK = os.path.join(SOURCE, "tools", "track")
SETTINGS = ["--benchmark_filter=mpi_host", "--xfer_sizes=8,4K", "--xfer_max_time=0.02"]


def track_floor(folder, run, *extra):
    """tools/track floor --floors folder [extra] run, as tools/run calls it."""
    return subprocess.run(
        [sys.executable, TRACK, "floor", "--floors", folder, *extra, run],
        capture_output=True,
        text=True,
        check=False,
    )


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class MachineFloor(unittest.TestCase):
    def merged_run(self, tmp, name="merged"):
        """A run of 3 jobs merged, as tools/run makes it; returns its file and each job's wall
        seconds."""
        files, seconds = [], []
        for job in range(3):
            out = os.path.join(tmp, f"{name}-job{job}.json")
            args = SETTINGS + ["--xfer_jobs=3", "--xfer_visits=1", "--benchmark_out=" + out]
            start = time.monotonic()
            proc = launch(2, args)
            seconds.append(round(time.monotonic() - start, 1))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            files.append(out)
        merged = os.path.join(tmp, f"{name}.json")
        proc = launch(0, ["--xfer_merge=" + ",".join(files), "--benchmark_out=" + merged])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.job_seconds = seconds
        return merged

    def write_floor(self, merged, folder):
        proc = track_floor(folder, merged)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (name,) = [n for n in os.listdir(folder) if n.endswith(".json")]
        return os.path.join(folder, name)

    def single_run(self, tmp, extra=(), env=None):
        out = os.path.join(tmp, "single.json")
        proc = launch(
            2, SETTINGS + ["--xfer_sizes=8,4K,16M", "--benchmark_out=" + out] + list(extra), env=env
        )
        return proc, (load(out) if proc.returncode == 0 else None)

    def test_a_merged_run_writes_the_floor_a_single_run_then_uses(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "floors")
            path = self.write_floor(self.merged_run(tmp), folder)
            floor = load(path)
            self.assertEqual(floor["format"], "xferbench-floor/2")
            self.assertEqual(len(floor["history"]), 1)
            self.assertIsNone(floor["plan"])  # from 3 runs on
            points = dict(map(tuple, floor["floors"]["mpi_host/mode:pingpong"]))
            self.assertEqual(sorted(points), [8, 4096])
            # Another machine's file beside it (a different rank count) is passed over.
            other = dict(floor, match=dict(floor["match"], world_size=64))
            with open(os.path.join(folder, "aaa-other-machine.json"), "w", encoding="utf-8") as f:
                json.dump(other, f)

            proc, document = self.single_run(tmp, env={"XFER_FLOORS": folder})
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn(f"floor of this machine from {path}", proc.stderr)
            by_size = {int(r["name"].split("bytes:")[1].split("/")[0]): r for r in rows(document)}
            self.assertAlmostEqual(by_size[8]["floor_pct"], points[8], places=6)
            self.assertAlmostEqual(by_size[4096]["floor_pct"], points[4096], places=6)
            # 16 MiB is far from any size measured: the built-in floor of mpi_host (8%).
            self.assertEqual(by_size[16 << 20]["floor_pct"], 8)
            record = document["context"]["xferbench"]["floor"]
            self.assertEqual(record["file"], path)
            self.assertEqual(
                record["families"],
                {"mpi_host/mode:pingpong": {"machine": [8, 4096], "built-in": [16 << 20]}},
            )

            # Without a floor file for it, the built-in floor, and the context says so.
            proc, document = self.single_run(tmp, env={"XFER_FLOORS": os.path.join(tmp, "none")})
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual({r["floor_pct"] for r in rows(document)}, {8})
            record = document["context"]["xferbench"]["floor"]
            self.assertIsNone(record["file"])
            self.assertEqual(
                record["families"]["mpi_host/mode:pingpong"], {"built-in": [8, 4096, 16 << 20]}
            )

            # A floor file given by name that is another machine's: refused, one line, exit 2.
            other_path = os.path.join(folder, "aaa-other-machine.json")
            proc, _ = self.single_run(tmp, ["--xfer_floor=" + other_path])
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(
                proc.stderr.count("xferbench: --xfer_floor: " + other_path), 1, proc.stderr
            )
            self.assertIn("measured on another machine", proc.stderr)

    def test_three_runs_make_a_history_a_run_level_and_a_plan(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "floors")
            for run in range(3):
                merged = self.merged_run(tmp, f"run{run}")
                seconds = ",".join(map(str, self.job_seconds))
                proc = track_floor(folder, merged, "--job-seconds", seconds, "--budget", "30")
                self.assertEqual(proc.returncode, 0, proc.stderr)
            (name,) = os.listdir(folder)
            path = os.path.join(folder, name)
            floor = load(path)
            self.assertEqual(
                [e["file"] for e in floor["history"]], [f"run{n}.json" for n in range(3)]
            )
            self.assertEqual([len(e["job_seconds"]) for e in floor["history"]], [3, 3, 3])
            family = "mpi_host/mode:pingpong"
            self.assertEqual([p[0] for p in floor["run_floors"][family]], [8, 4096])
            self.assertEqual({p[2] for p in floor["run_floors"][family]}, {2})  # 3 runs
            # The floor holds the run level: never below 1.96 x its sd.
            run_sd = dict((p[0], p[1]) for p in floor["run_floors"][family])
            for size, pct in floor["floors"][family]:
                self.assertGreaterEqual(pct, 1.96 * run_sd[size] - 0.1)
            plan = floor["plan"]
            self.assertTrue(3 <= plan["jobs"] <= 16, plan)
            self.assertEqual([p[0] for p in plan["rows"][family]], [8, 4096])
            self.assertEqual(plan["budget_s"], 30)
            self.assertLessEqual(plan["predicted_wall_s"], 0.9 * 30)
            # A job costs more than its visits: launching 2 ranks, start-up, tear-down.
            self.assertGreater(floor["costs"]["job_s"], 0)
            self.assertIn(f"3 runs in its history; next run: {plan['jobs']} jobs", proc.stdout)
            self.assertIn(path, proc.stdout)

    def test_a_run_of_one_job_writes_no_floor(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "one.json")
            self.assertEqual(launch(2, SETTINGS + ["--benchmark_out=" + out]).returncode, 0)
            proc = track_floor(tmp, out)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("a floor needs a run merged from 3 or more", proc.stderr)


if __name__ == "__main__":
    unittest.main()
