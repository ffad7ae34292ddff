"""tools/track floor and this machine's file (format xferbench-floor/2): the history of merged
runs it keeps, the variance components it learns from them (tools/xfertools/machine/components.py),
and bad input, each refused with one line and exit status 2. The runs are synthetic merged
results whose components are planted: a run shift shared by a run's jobs, a job shift shared
by a job's rows, sampling noise within each visit, and known costs.

    python3 -m unittest discover -s tests/tools -p 'test_floors.py'
"""

import json
import math
import os
import random
import tempfile
import unittest

from scipy import stats

from toollib import iteration_row
from tracklib import track
from xfertools.machine import components, floors
from xfertools.machine import model as machine_model

FAMILY = "mpi_host/mode:pingpong"
OTHER = "mpi_host/mode:stream"
SIZES = [8 << i for i in range(8)]  # 8 B to 1 KiB: every row pools with 3 sizes either side
SAMPLES = 50
FIXED_S = 0.01  # a visit's set-up, warm-up and checks
TIMED_S = 0.04  # a visit's timed loop
JOB_S = 0.9  # a job's launch, start-up and tear-down beyond its visits


def context(jobs, world_size=2, revision="abc123", date="2026-11-28T10:00:00+00:00"):
    return {
        "date": date,
        "host_name": "node1",
        "num_cpus": 2,
        "xferbench": {
            "git_revision": revision,
            "world_size": world_size,
            "jobs": jobs,
            "mpi": {"library": "Open MPI v4.1.6", "cuda_aware": "no"},
            "cuda": None,
            "nccl": None,
            "incomplete": None,
            "plan": {"visits": 1, "jobs": jobs},
            "visits": {},
        },
    }


def merged_run(
    generator,
    run_shift=0.0,
    job_sd=0.03,
    sampling_sd=0.005,
    jobs=3,
    families=(FAMILY,),
    row_sd=0.0,
    **machine,
):
    """(a merged result document, each job's seconds) of one synthetic run: every row's ln time
    is its own + the run's shift + its job's shift (shared by the family's rows) + the row's
    own move in the job + sampling."""
    document = {"context": context(jobs, **machine), "benchmarks": []}
    visits = document["context"]["xferbench"]["visits"]
    t = stats.t.ppf(0.975, SAMPLES - 1)
    job_seconds = []
    for job in range(jobs):
        shifts = {f: generator.gauss(0, job_sd) for f in families}
        seconds = JOB_S
        for family in families:
            for size in SIZES:
                noise = generator.gauss(0, row_sd) + generator.gauss(0, sampling_sd)
                latency = math.exp(math.log(size + 10) + run_shift + shifts[family] + noise)
                visits.setdefault(f"{family}/bytes:{size}", []).append(
                    {
                        "round": 0,
                        "wall_s": TIMED_S + FIXED_S,
                        "setup_s": FIXED_S * 3 / 4,  # its warm-up included
                        "warm_s": FIXED_S / 4,
                        "check_s": FIXED_S / 4,
                        "latency_us": latency,
                        "samples": SAMPLES,
                        "ci95_pct": 100 * t * sampling_sd,
                        "time_limited": True,
                        "job": job,
                    }
                )
                seconds += TIMED_S + FIXED_S
        job_seconds.append(round(seconds, 3))
    for name, found in visits.items():
        mean = sum(v["latency_us"] for v in found) / len(found)
        document["benchmarks"].append(
            iteration_row(name + "/manual_time", mean, jobs=jobs, ci95_df=6.0, ci95_rows=4)
        )
    return document, job_seconds


def track_floor(folder, run, *extra):
    return track("floor", "--floors", folder, *extra, run)


class FloorFile(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.folder = os.path.join(self.dir, "floors")
        self.generator = random.Random(11)
        self.count = 0

    def write_run(self, document):
        self.count += 1
        path = os.path.join(self.dir, f"run-{self.count}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f)
        return path

    def add(self, *args, seconds=True, command=False, **kwargs):
        """A synthetic run written and added to the machine's file (by tools/track floor with
        `command`, else by the function it calls: quicker); returns the file's content."""
        document, job_seconds = merged_run(self.generator, *args, **kwargs)
        path = self.write_run(document)
        if not command:
            floors.write_floor(path, self.folder, job_seconds if seconds else None)
            return self.content()
        extra = ["--job-seconds", ",".join(map(str, job_seconds))] if seconds else []
        self.done = track_floor(self.folder, path, *extra)
        self.assertEqual(self.done.returncode, 0, self.done.stderr)
        return self.content()

    def content(self, name=None):
        names = sorted(n for n in os.listdir(self.folder) if n.endswith(".json"))
        with open(os.path.join(self.folder, name or names[-1]), encoding="utf-8") as f:
            return json.load(f)

    def assert_refused(self, done, *words):
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        for word in words:
            self.assertIn(word, lines[0])


class History(FloorFile):
    def test_each_run_is_added_and_a_plan_is_made_from_the_third(self):
        first = self.add(command=True)
        self.assertEqual(first["format"], "xferbench-floor/2")
        self.assertEqual(len(first["history"]), 1)
        self.assertIsNone(first["plan"])
        self.assertEqual(first["run_floors"], {})
        self.assertIn("1 run in its history; a plan is made from 3 runs", self.done.stdout)
        self.add()
        third = self.add(command=True)
        self.assertEqual(
            [e["file"] for e in third["history"]], ["run-1.json", "run-2.json", "run-3.json"]
        )
        self.assertEqual(third["plan"]["runs"], 3)
        self.assertEqual(sorted(third["run_floors"]), [FAMILY])
        # The run means' pooled df: K - 1 for a shift of the whole family, more where rows
        # move by themselves, never more than (K - 1) x the rows of a window (7 sizes).
        for _, _, df in third["run_floors"][FAMILY]:
            self.assertTrue(2 <= df <= 2 * 7, df)
        self.assertIn(
            f"3 runs in its history; next run: {third['plan']['jobs']} jobs", self.done.stdout
        )

    def test_at_most_ten_runs_are_kept_the_oldest_dropped(self):
        for _ in range(12):
            content = self.add()
        files = [e["file"] for e in content["history"]]
        self.assertEqual(files, [f"run-{n}.json" for n in range(3, 13)])
        self.assertEqual(content["plan"]["runs"], 10)
        for _, _, df in content["run_floors"][FAMILY]:
            self.assertTrue(9 <= df <= 9 * 7, df)

    def test_the_same_run_added_twice_is_kept_once(self):
        document, job_seconds = merged_run(self.generator)
        path = self.write_run(document)
        for _ in range(2):
            done = track_floor(self.folder, path, "--job-seconds", ",".join(map(str, job_seconds)))
            self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(len(self.content()["history"]), 1)

    def test_a_run_of_another_machine_is_not_mixed_in(self):
        for _ in range(3):
            mine = self.add()
        # Another machine (another rank count): a file of its own, this one untouched.
        self.add(world_size=4)
        self.assertEqual(len(os.listdir(self.folder)), 2)
        theirs = [self.content(n) for n in sorted(os.listdir(self.folder))]
        self.assertEqual(sorted(len(c["history"]) for c in theirs), [1, 3])
        kept = next(c for c in theirs if len(c["history"]) == 3)
        self.assertEqual(kept["history"], mine["history"])
        # A file at this machine's place whose match is another's: replaced, its history gone.
        name = next(
            n for n in os.listdir(self.folder) if self.content(n)["history"] == mine["history"]
        )
        with open(os.path.join(self.folder, name), "w", encoding="utf-8") as f:
            json.dump(dict(mine, match=dict(mine["match"], num_cpus=64)), f)
        after = self.add()
        self.assertEqual(len(after["history"]), 1)
        self.assertEqual(after["match"]["num_cpus"], 2)

    def test_a_floor_1_file_is_replaced_keeping_the_families_the_history_lacks(self):
        self.add()
        (name,) = os.listdir(self.folder)
        old = self.content(name)
        legacy = {
            "format": "xferbench-floor/1",
            "identity": old["identity"],
            "match": old["match"],
            "floors": {
                FAMILY: [[8, 99.0]],
                "host_staging/host:pageable/mode:sequential": [[8, 12.5]],
            },
        }
        with open(os.path.join(self.folder, name), "w", encoding="utf-8") as f:
            json.dump(legacy, f)
        content = self.add()
        self.assertEqual(len(content["history"]), 1)  # a /1 file has no history to keep
        self.assertEqual(
            content["floors"]["host_staging/host:pageable/mode:sequential"], [[8, 12.5]]
        )
        self.assertNotEqual(content["floors"][FAMILY][0], [8, 99.0])  # measured again
        self.assertEqual(len(content["floors"][FAMILY]), len(SIZES))

    def test_a_filtered_run_adds_its_rows_and_the_plan_covers_every_family(self):
        for _ in range(3):
            self.add(families=(FAMILY, OTHER))
        content = self.add(families=(OTHER,))
        self.assertEqual(sorted(content["plan"]["rows"]), [FAMILY, OTHER])
        for family, runs in ((FAMILY, 3), (OTHER, 4)):  # the runs that hold each
            for _, _, df in content["run_floors"][family]:
                self.assertTrue(runs - 1 <= df <= (runs - 1) * 7, (family, df))


class Components(FloorFile):
    def test_the_run_level_recovers_a_planted_run_shift_within_its_sampling_error(self):
        # A run shift of sd 5% shared by every job and row of a run, a job shift of 3%, 0.5%
        # sampling, 10 runs of 3 jobs: the run-level variance has 9 degrees of freedom, so
        # its estimate falls within chi-square's 95% range of the truth, and a history without
        # a run shift states far less.
        for _ in range(10):
            content = self.add(run_shift=self.generator.gauss(0, 0.05))
        low = 0.05 * math.sqrt(stats.chi2.ppf(0.025, 9) / 9) * 100
        high = 0.05 * math.sqrt(stats.chi2.ppf(0.975, 9) / 9) * 100
        for size, sd_pct, df in content["run_floors"][FAMILY]:
            self.assertTrue(9 <= df < 10.5, (size, df))
            self.assertTrue(low <= sd_pct <= high, (size, sd_pct, low, high))

    def test_without_a_run_shift_the_run_level_is_what_the_jobs_spread_explains(self):
        # Rows that move by 6% on their own from job to job: a run's mean of 3 jobs moves by
        # 6% / sqrt(3) = 3.5% from run to run, all of it explained by the jobs' spread, so the
        # run level left is near 0 (the window's rows average out the chance of 10 runs).
        for _ in range(10):
            content = self.add(run_shift=0.0, job_sd=0.0, row_sd=0.06)
        sds = sorted(p[1] for p in content["run_floors"][FAMILY])
        self.assertLess(sds[len(sds) // 2], 1.0)
        self.assertLess(sds[-1], 2.0)

    def test_the_floor_is_the_process_level_and_the_run_level(self):
        for _ in range(10):
            content = self.add(run_shift=self.generator.gauss(0, 0.05))
        rows = {(r.family, r.bytes): r for r in components.components(content["history"])}
        for size, pct in content["floors"][FAMILY]:
            r = rows[FAMILY, size]
            # Every run's visits were as long: the process level is the between-job variance
            # less the samples' own part, which a single run's visits show themselves.
            self.assertAlmostEqual(r.process, r.between - r.sampling, places=12)
            self.assertEqual(pct, machine_model.floor_pct(r.process, r.run_level))
            # s2B pooled over 10 runs (20 df): near the planted 3% job shift + 0.5% sampling.
            self.assertTrue(0.02 < math.sqrt(r.between) < 0.042, math.sqrt(r.between))
            self.assertAlmostEqual(math.sqrt(r.sampling), 0.005, places=4)
            self.assertAlmostEqual(r.a, 0.005**2 * TIMED_S, places=9)

    def test_costs_come_from_the_jobs_seconds(self):
        for _ in range(3):
            content = self.add()
        self.assertAlmostEqual(content["costs"]["job_s"], JOB_S, places=2)
        self.assertAlmostEqual(content["costs"]["visits_s"], len(SIZES) * FIXED_S, places=4)
        self.assertIn("median over 9 jobs", content["costs"]["job_s_from"])
        self.assertAlmostEqual(content["costs"]["df_per_job_df"], 3.0)  # ci95_df 6 / (3 - 1)

    def test_without_job_seconds_the_job_cost_is_assumed_and_says_so(self):
        content = self.add(seconds=False)
        self.assertIsNone(content["history"][0]["job_seconds"])
        self.assertIn("assumed", content["costs"]["job_s_from"])


class VisitLength(unittest.TestCase):
    """p and w of var_between = p + w / tau, from runs whose visits were of different lengths."""

    @staticmethod
    def runs(points, jobs=3, var_sampling=0.001**2):
        return [
            components.RunRow(
                run=run,
                jobs=jobs,
                mean_ln=0.0,
                var_between=var,
                var_sampling=var_sampling,
                timed_s=tau,
                fixed_s=0.01,
                sample_s=tau / 10,
            )
            for run, (tau, var) in enumerate(points)
        ]

    def test_short_visits_noisier_than_their_samples_are_told_from_the_process(self):
        # A 2% process level and visits whose own noise is 0.05^2 x 0.005 s / tau: 5% at 5 ms.
        p, w = 0.02**2, 0.05**2 * 0.005
        runs = self.runs([(tau, p + w / tau) for tau in (0.04, 0.04, 0.005, 0.0125)])
        fitted_p, fitted_w = components.fit_visit_length(runs, a=1e-8)
        self.assertAlmostEqual(fitted_p, p, places=12)
        self.assertAlmostEqual(fitted_w, w, places=12)

    def test_visits_all_of_one_length_cannot_tell_them_apart(self):
        runs = self.runs([(0.04, 0.03**2), (0.045, 0.02**2), (0.035, 0.025**2)])
        self.assertIsNone(components.fit_visit_length(runs, a=1e-8))

    def test_the_visits_own_part_is_never_below_what_their_samples_show(self):
        # Longer visits no quieter: the fit would give w = 0; the samples say a.
        a = 0.01**2 * 0.04
        runs = self.runs([(0.04, 0.03**2), (0.005, 0.03**2)])
        fitted_p, fitted_w = components.fit_visit_length(runs, a=a)
        self.assertEqual(fitted_w, a)
        self.assertGreater(fitted_p, 0)

    def test_the_process_level_is_never_negative(self):
        # All of the spread explained by the visits' length, and more: p is 0.
        runs = self.runs([(0.04, 0.001**2), (0.004, 0.05**2)])
        fitted_p, fitted_w = components.fit_visit_length(runs, a=1e-8)
        self.assertEqual(fitted_p, 0.0)
        self.assertGreater(fitted_w, 0)


class BadInput(FloorFile):
    def test_job_seconds_for_another_number_of_jobs(self):
        document, _ = merged_run(self.generator)
        done = track_floor(self.folder, self.write_run(document), "--job-seconds", "1,2")
        self.assert_refused(done, "--job-seconds", "2 value(s)", "3 jobs")
        self.assertFalse(os.path.exists(self.folder))

    def test_job_seconds_that_are_not_seconds(self):
        path = self.write_run(merged_run(self.generator)[0])
        for text in ("1,x,3", "1,-2,3", "", "nan,1,1"):
            self.assert_refused(
                track_floor(self.folder, path, "--job-seconds", text), "--job-seconds"
            )

    def test_a_budget_that_is_not_one_positive_number(self):
        path = self.write_run(merged_run(self.generator)[0])
        for text in ("0", "-5", "sixty", "60,70", "inf"):
            self.assert_refused(track_floor(self.folder, path, "--budget", text), "--budget")

    def test_an_incomplete_run(self):
        document, _ = merged_run(self.generator)
        document["context"]["xferbench"]["incomplete"] = {"reason": "interrupted"}
        done = track_floor(self.folder, self.write_run(document))
        self.assert_refused(done, "run-1.json", "incomplete")

    def test_a_run_without_visits(self):
        document, _ = merged_run(self.generator)
        document["context"]["xferbench"]["visits"] = {}
        self.assert_refused(
            track_floor(self.folder, self.write_run(document)), "run-1.json", "visits"
        )


if __name__ == "__main__":
    unittest.main()
