"""This machine's plan (--xfer_jobs=auto) and the spread between runs a merge adds.

With a floor file of format xferbench-floor/2 for this machine, --xfer_jobs=auto runs as many
jobs as its plan says and gives each row the plan lists its seconds (all jobs together), unless
--xfer_max_time is given; the merge of those jobs adds the file's run-level spread to the rows
it measured in the runs of the file's history as well (run_sd_pct, a wider ci95_pct: the
spread of the run means, this run's included, less what their jobs explain), and refuses jobs
whose rows were given other times. A malformed plan is refused with one line naming the file.
"""

import json
import math
import os
import shutil
import sys
import tempfile
import unittest

from xfer_testlib import failed, launch, rows

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from xfertools.machine import model as machine_model  # noqa: E402
from xfertools.result import machines  # noqa: E402

FAMILY = "mpi_host/mode:pingpong"
# --xfer_precision at its least keeps every row running until its time is up, so a row's timed
# seconds say what time it was given.
SETTINGS = [
    "--benchmark_filter=mpi_host",
    "--xfer_sizes=8,4K,64K",
    "--xfer_visits=1",
    "--xfer_precision=0.001",
]
PLAN_JOBS = 4
LONG_S = 0.5  # the plan's time for 64 KiB
TINY_S = 0.004  # ... and for 8 B; 4 KiB is not in the plan: --xfer_max_time's 0.1
RUN_SHIFT = 0.2  # the history's two runs: this run's mean of ln time +- this


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def machine_match(document):
    """What xferbench compares with a floor file's "match": the tools' one reading of it."""
    return machines.machine_match(document["context"])


def floor_file(match, plan, history=()):
    return {
        "format": "xferbench-floor/2",
        "identity": {},
        "match": match,
        "floors": {},
        "run_floors": {},
        "plan": plan,
        "history": list(history),
    }


def history_around(means):
    """Two earlier runs of 4 jobs whose means of ln time were `means` ({bytes: mean_ln}) +-
    RUN_SHIFT, their jobs agreeing exactly: history entries as tools/track floor writes them
    (8 B left out)."""
    return [
        {
            "jobs": 4,
            "rows": {
                FAMILY: [
                    [size, mean + shift, 0.0, None, 0.1, 0.01, 0.001, 1]
                    for size, mean in sorted(means.items())
                ]
            },
        }
        for shift in (RUN_SHIFT, -RUN_SHIFT)
    ]


PLAN = {
    "jobs": PLAN_JOBS,
    "rows": {FAMILY: [[65536, LONG_S], [8, TINY_S]]},
    "budget_s": 60,
    "predicted_wall_s": 30.5,
    "rule": "written by hand for this test",
}


def by_size(document):
    return {int(r["name"].split("bytes:")[1].split("/")[0]): r for r in rows(document)}


def timed_s(visit):
    return visit["wall_s"] - visit["setup_s"] - visit["check_s"]  # setup_s holds warm_s


class MachinePlan(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        probe = os.path.join(cls.tmp, "probe.json")
        proc = launch(2, SETTINGS + ["--xfer_sizes=8", "--benchmark_out=" + probe])
        if proc.returncode != 0:
            raise AssertionError(proc.stderr)
        cls.match = machine_match(load(probe))
        cls.floors = os.path.join(cls.tmp, "floors")
        os.makedirs(cls.floors)
        cls.file = os.path.join(cls.floors, "this-machine.json")
        with open(cls.file, "w", encoding="utf-8") as f:
            json.dump(floor_file(cls.match, PLAN), f)
        cls.jobs = []
        for job in range(PLAN_JOBS):
            out = os.path.join(cls.tmp, f"job-{job + 1}.json")
            proc = cls.run_job(out, ["--xfer_jobs=auto"])
            if proc.returncode != 0:
                raise AssertionError(proc.stderr)
            cls.jobs.append(out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    @classmethod
    def run_job(cls, out, extra, floors=None):
        env = {"XFER_FLOORS": floors or cls.floors}
        return launch(2, SETTINGS + list(extra) + ["--benchmark_out=" + out], env=env)

    def merge(self, files, extra=(), floors=None):
        out = os.path.join(self.tmp, "merged.json")
        if os.path.exists(out):
            os.remove(out)
        env = {"XFER_FLOORS": floors or self.floors}
        proc = launch(
            0, ["--xfer_merge=" + ",".join(files), "--benchmark_out=" + out] + list(extra), env=env
        )
        return proc, (load(out) if proc.returncode == 0 else None)

    def test_auto_runs_the_plans_jobs_and_gives_listed_rows_their_time(self):
        digests = set()
        timed = {8: [], 4096: [], 65536: []}
        for path in self.jobs:
            document = load(path)
            plan = document["context"]["xferbench"]["plan"]
            self.assertEqual(plan["jobs"], PLAN_JOBS)
            self.assertEqual(plan["source"], "machine")
            self.assertEqual(plan["file"], self.file)
            self.assertEqual((plan["budget_s"], plan["predicted_wall_s"]), (60, 30.5))
            self.assertEqual(plan["times"], "machine")
            digests.add(plan["times_digest"])
            for size, row in by_size(document).items():
                self.assertFalse(failed(row), row)
                (visit,) = document["context"]["xferbench"]["visits"][f"{FAMILY}/bytes:{size}"]
                timed[size].append(timed_s(visit))
        self.assertEqual(len(digests), 1, digests)
        # Each job times its share, 1/4 of the row's seconds, not the whole of them. About its
        # share: the ranks stop on the later one's clock, which may have started a few ms before
        # rank 0's (CI once saw 24.2 ms of a 25 ms share), and the last sample may run past it.
        for seconds in timed[65536]:
            self.assertGreaterEqual(seconds, LONG_S / PLAN_JOBS * 0.8, timed)
            self.assertLess(seconds, LONG_S / 2, timed)
        for seconds in timed[4096]:  # not in the plan: --xfer_max_time's 0.1 s
            self.assertGreaterEqual(seconds, 0.1 / PLAN_JOBS * 0.8, timed)
            self.assertLess(seconds, 0.1 / 2, timed)
        self.assertLess(sum(timed[8]), sum(timed[65536]) / 4, timed)

    def test_a_max_time_given_keeps_the_plans_jobs_but_not_its_times(self):
        out = os.path.join(self.tmp, "given.json")
        proc = self.run_job(out, ["--xfer_jobs=auto", "--xfer_max_time=0.04"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = load(out)["context"]["xferbench"]["plan"]
        self.assertEqual((plan["jobs"], plan["source"], plan["times"]), (4, "machine", "flag"))
        (visit,) = load(out)["context"]["xferbench"]["visits"][f"{FAMILY}/bytes:65536"]
        self.assertLess(timed_s(visit), LONG_S / PLAN_JOBS / 2)
        # A job of other row times is not a job of the same run: the merge refuses it.
        proc, _ = self.merge([self.jobs[0], out])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f"--xfer_merge: {out}: its rows were given other times than", proc.stderr)
        self.assertIn("times_digest", proc.stderr)

    def test_auto_without_a_plan_runs_three_jobs_of_the_flags_time(self):
        empty = os.path.join(self.tmp, "no-floors")
        os.makedirs(empty, exist_ok=True)
        out = os.path.join(self.tmp, "default.json")
        proc = self.run_job(out, ["--xfer_jobs=auto", "--xfer_sizes=8"], floors=empty)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = load(out)["context"]["xferbench"]["plan"]
        self.assertEqual(plan["jobs"], 3)
        self.assertEqual((plan["source"], plan["file"], plan["times"]), ("default", None, "flag"))
        self.assertIsNone(plan["budget_s"])

    def test_the_merge_adds_the_run_level_of_the_machines_runs_and_this_one(self):
        empty = os.path.join(self.tmp, "no-floors")
        os.makedirs(empty, exist_ok=True)
        proc, without = self.merge(self.jobs, floors=empty)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIsNone(without["context"]["xferbench"]["merged"]["interval"]["run_floors"])
        plain = by_size(without)
        # A history of two runs at this run's mean of 4 KiB and 64 KiB, one 20% above and one
        # 20% below (ln time): with this run between them, the run means spread by 20%.
        means = {}
        for size in (4096, 65536):
            logs = [math.log(by_size(load(path))[size]["latency_us"]) for path in self.jobs]
            means[size] = sum(logs) / len(logs)
        folder = os.path.join(self.tmp, "with-history")
        os.makedirs(folder, exist_ok=True)
        file = os.path.join(folder, "this-machine.json")
        with open(file, "w", encoding="utf-8") as f:
            json.dump(floor_file(self.match, PLAN, history_around(means)), f)
        proc, with_file = self.merge(self.jobs, floors=folder)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"spread between runs of this machine from {file}", proc.stderr)
        self.assertEqual(
            with_file["context"]["xferbench"]["merged"]["interval"]["run_floors"], file
        )

        wide = by_size(with_file)
        for size in (4096, 65536):
            row, alone = wide[size], plain[size]
            # Run means +0.2, -0.2, 0 (ln): variance 0.04, less the jobs' small part.
            self.assertTrue(15 <= row["run_sd_pct"] <= 20.01, row["run_sd_pct"])
            self.assertEqual(alone["run_sd_pct"], 0)
            self.assertGreater(row["ci95_pct"], alone["ci95_pct"])
            self.assertGreaterEqual(row["ci95_df"], 1)
            if alone["ci95_rows"] > 0:  # the jobs' spread made it (not their own samples)
                # Satterthwaite's df of the two parts, the run part's those of the run means
                # pooled over 4 KiB and 64 KiB (2 runs' worth at least).
                df_b = alone["ci95_df"]
                v_b = (alone["ci95_pct"] / 100 / machine_model.t95(df_b)) ** 2
                v_r = (row["run_sd_pct"] / 100) ** 2
                self.assertGreater(row["ci95_df"], min(df_b, 2) - 1e-9)
                half = machine_model.t95(row["ci95_df"]) * (v_b + v_r) ** 0.5 * 100
                # (xferbench's t quantiles are a table to three decimals)
                self.assertAlmostEqual(row["ci95_pct"] / half, 1, places=3)
        # 8 B is in no run of the history: as without it.
        self.assertEqual(wide[8]["run_sd_pct"], 0)
        self.assertEqual(wide[8]["ci95_pct"], plain[8]["ci95_pct"])

        # --xfer_floor=PCT: no run term, whatever files there are.
        proc, pct = self.merge(self.jobs, ["--xfer_floor=5"], floors=folder)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual({r["run_sd_pct"] for r in rows(pct)}, {0})
        self.assertEqual([r["ci95_pct"] for r in rows(pct)], [r["ci95_pct"] for r in rows(without)])

    def test_a_malformed_plan_of_this_machine_is_refused_with_one_line(self):
        bad = os.path.join(self.tmp, "bad-floors")
        os.makedirs(bad, exist_ok=True)
        path = os.path.join(bad, "this-machine.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(floor_file(self.match, dict(PLAN, jobs=2)), f)
        out = os.path.join(self.tmp, "refused.json")
        proc = self.run_job(out, ["--xfer_jobs=auto"], floors=bad)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        line = f"xferbench: --xfer_floor: {path}: plan.jobs is 2: expected a whole number from 3"
        self.assertEqual(proc.stderr.count(line), 1, proc.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
