"""The plan of a machine's default run (tools/xfertools/machine/plan.py) on variance components
whose right answer is known by hand: where the variance is between processes, as many jobs as fit;
where it is sampling, few jobs and the time to the noisiest rows; where it is the run level, more
jobs buy nothing; never a prediction over the budget, never a row past its precision cap.

    python3 -m unittest discover -s tests/tools -p 'test_plan.py'
"""

import math
import random
import unittest

from scipy import stats

import toollib  # noqa: F401  (tools/ on sys.path)
from xfertools.machine import plan
from xfertools.machine.components import RowComponents

FAMILY = "mpi_host/mode:pingpong"


def row(
    size=8,
    process=0.0,
    a=0.0,
    run_level=None,
    runs=5,
    fixed_s=0.2,
    sample_s=0.001,
    family=FAMILY,
    w=None,
    run_df=None,
):
    """A row's components: variances of ln time (process: s2P, a: sampling variance x timed
    seconds, run_level: s2R, known over run_df degrees of freedom: runs - 1 unless given) and
    costs in seconds."""
    return RowComponents(
        family=family,
        bytes=size,
        runs=runs,
        between=process + a,
        sampling=a,
        process=process,
        a=a,
        run_level=run_level,
        fixed_s=fixed_s,
        sample_s=sample_s,
        w=w,
        run_df=(runs - 1 if run_df is None else run_df) if run_level is not None else 0,
    )


def costs(job_s=3.0, q=7.0, budget_s=60.0):
    return plan.Costs(job_s=job_s, df_per_job_df=q, budget_s=budget_s)


def wall(rows, made, job_s):
    """The run's seconds as plan.py's cost model counts them, from the plan as written."""
    seconds = sum(s for points in made["rows"].values() for _, s in points)
    per_job = job_s + sum(r.fixed_s for r in rows)
    return plan.OVERHEAD_S + made["jobs"] * per_job + seconds


class Jobs(unittest.TestCase):
    def test_process_level_rows_get_as_many_jobs_as_fit(self):
        # 10 rows, each job 3 s + 10 x 0.2 s = 5 s plus 0.01 s of least samples: of
        # 0.9 x 60 - 3 = 51 s, 10 jobs fit (51.0 s) and 11 do not (56.1 s). The variance is
        # s2P / J, so more jobs are always narrower: 10.
        rows = [row(8 << i, process=0.05**2, a=1e-9) for i in range(10)]
        made = plan.make_plan(rows, costs(), runs=5)
        self.assertEqual(made["jobs"], 10)
        self.assertLessEqual(made["predicted_wall_s"], 0.9 * 60)

    def test_no_more_than_one_job_beyond_what_the_history_ran(self):
        # The same rows would take 10 jobs; a history of 3-job runs is trusted for 4.
        rows = [row(8 << i, process=0.05**2, a=1e-9) for i in range(10)]
        made = plan.make_plan(rows, costs(), runs=5, most_jobs=4)
        self.assertEqual(made["jobs"], 4)

    def test_rows_whose_short_visits_are_noisy_get_no_more_jobs(self):
        # Each job costs 5 s of start-up and set-up, and the visits' own noise (w, five times
        # what their samples show, a) falls only with the time timed (w / T): more jobs take
        # that time away and add nothing. (a puts the precision cap, 7.7 s a row, out of reach.)
        rows = [row(8 << i, process=1e-6, a=2e-4, w=1e-3) for i in range(10)]
        made = plan.make_plan(rows, costs(), runs=5)
        self.assertEqual(made["jobs"], 3)

    def test_a_bigger_budget_buys_more_jobs_for_process_level_rows(self):
        rows = [row(8 << i, process=0.05**2, a=1e-9) for i in range(10)]
        made = plan.make_plan(rows, costs(budget_s=80.0), runs=5)
        # (0.9 x 80 - 3) / 5.01 = 13.8: 13 jobs.
        self.assertEqual(made["jobs"], 13)
        self.assertEqual(made["budget_s"], 80.0)

    def test_sampling_rows_get_few_jobs_and_the_time(self):
        # No spread between processes: V = a / T, so each job's 5 s of start-up and set-up is
        # time taken from the timed loops. 3 jobs leave 51 - 15 = 36 s to time, 4 leave 31 s.
        rows = [row(8 << i, a=1e-3) for i in range(10)]
        made = plan.make_plan(rows, costs(), runs=5)
        self.assertEqual(made["jobs"], 3)
        timed = sum(s for _, s in made["rows"][FAMILY])
        self.assertAlmostEqual(timed, 51 - 3 * 5.0, delta=0.01)

    def test_the_noisier_row_gets_the_time_in_proportion_to_its_sampling_sd(self):
        # Neyman: T proportional to sqrt(a); a 4x the variance gets 2x the time.
        rows = [row(8, a=4e-3), row(16, a=1e-3)] + [row(8 << i, a=1e-3) for i in range(2, 10)]
        made = plan.make_plan(rows, costs(), runs=5)
        times = dict(map(tuple, made["rows"][FAMILY]))
        self.assertAlmostEqual(times[8] / times[16], 2.0, places=2)

    def test_a_row_without_sampling_noise_keeps_its_least_time(self):
        rows = [row(8, a=0.0, process=0.01, sample_s=0.002), row(16, a=1e-3)]
        made = plan.make_plan(rows, costs(job_s=1.0), runs=5)
        times = dict(map(tuple, made["rows"][FAMILY]))
        self.assertAlmostEqual(times[8], made["jobs"] * 0.002, places=4)  # one sample a job

    def test_when_the_run_level_dominates_more_jobs_buy_nothing_and_3_are_kept(self):
        # s2R = (10%)^2 over 9 degrees of freedom swamps s2P / J = (1%)^2 / J: every J is within
        # 2% of the best, and the fewest jobs win the tie.
        rows = [row(8 << i, process=0.01**2, a=1e-7, run_level=0.1**2, runs=10) for i in range(10)]
        made = plan.make_plan(rows, costs(job_s=0.5), runs=10)
        self.assertEqual(made["jobs"], 3)
        per_jobs = {c.jobs: c.median for c in plan.candidates(rows, costs(job_s=0.5))}
        self.assertLess(min(per_jobs.values()), per_jobs[3])  # strictly best elsewhere...
        self.assertLessEqual(per_jobs[3], min(per_jobs.values()) * 1.02)  # ...but within 2%

    def test_no_plan_where_three_jobs_do_not_fit(self):
        rows = [row(8 << i, process=0.01) for i in range(10)]
        self.assertIsNone(plan.make_plan(rows, costs(job_s=20.0), runs=5))  # 3 x 22 s > 51 s


class Budget(unittest.TestCase):
    def test_the_prediction_never_exceeds_the_budget(self):
        generator = random.Random(7)
        checked = 0
        for _ in range(60):
            rows = [
                row(
                    8 << i,
                    process=generator.uniform(0, 0.1) ** 2,
                    a=generator.uniform(0, 0.05) ** 2 * generator.choice([0, 1, 1]),
                    run_level=generator.choice([None, generator.uniform(0, 0.05) ** 2]),
                    fixed_s=generator.uniform(0.001, 0.05),
                    sample_s=generator.choice([1e-4, 1e-3, 0.05, 0.3]),
                )
                for i in range(generator.randint(1, 60))
            ]
            job_s = generator.uniform(0.3, 3.0)
            budget = generator.uniform(20, 200)
            made = plan.make_plan(rows, costs(job_s=job_s, q=2.0, budget_s=budget), runs=4)
            if made is None:
                continue
            checked += 1
            self.assertLessEqual(made["predicted_wall_s"], 0.9 * budget + 0.05)
            # The row times as written (rounded up to 0.1 ms) still fit.
            self.assertLessEqual(wall(rows, made, job_s), 0.9 * budget + 0.01 * len(rows))
            self.assertTrue(plan.MIN_JOBS <= made["jobs"] <= plan.MAX_JOBS)
        self.assertGreater(checked, 30)

    def test_rows_that_stop_on_precision_get_no_more_than_their_cap(self):
        # a = 1e-7 (0.03% sd over a second): 1% is reached at T = a x 196^2 = 3.8 ms.
        capped = [row(8 << i, a=1e-7) for i in range(5)]
        free = [row(8 << i, a=1e-3, family="mpi_host/mode:stream") for i in range(5)]
        made = plan.make_plan(capped + free, costs(), runs=5)
        cap = 1e-7 * 196**2
        for _, seconds in made["rows"][FAMILY]:
            self.assertLessEqual(seconds, cap + 1e-4)
            self.assertGreater(seconds, 0.9 * cap)  # the budget is plenty: they reach it

    def test_a_row_capped_below_one_sample_a_job_still_costs_one_sample_a_job(self):
        # A 1 GiB ping-pong on two H200s: a 413 ms sample, so precise (a = 1e-6) that its cap
        # is 38 ms in all. A visit never stops before its first sample, so each of the J jobs
        # spends 413 ms on it: the plan gives it that, and counts it in the run's time (it
        # gave 106 ms a job, and planned runs took 59-65 s for 54 s predicted).
        big = row(1 << 30, a=1e-6, sample_s=0.413)
        others = [row(8 << i, a=1e-3, family="mpi_host/mode:stream") for i in range(5)]
        made = plan.make_plan([big, *others], costs(), runs=5)
        [(_, seconds)] = made["rows"][FAMILY]
        self.assertGreaterEqual(seconds, made["jobs"] * 0.413)
        self.assertLessEqual(wall([big, *others], made, 3.0), 0.9 * 60 + 1e-6)

    def test_time_that_no_row_can_use_is_left_unspent(self):
        # Every row stops on precision within 3.8 ms: the run is shorter than the budget.
        rows = [row(8 << i, a=1e-7, process=0.01**2) for i in range(5)]
        made = plan.make_plan(rows, costs(job_s=1.0), runs=5)
        self.assertLess(made["predicted_wall_s"], 0.9 * 60 - 1)


class Interval(unittest.TestCase):
    def test_the_run_part_adds_with_satterthwaite_degrees_of_freedom(self):
        # Job part s2P / J = 0.0005 / 5 = 1e-4 with q (J - 1) = 2.5 x 4 = 10 degrees of
        # freedom, run part 1e-4 with K - 1 = 2: df = (2e-4)^2 / (1e-8 / 10 + 1e-8 / 2) = 6.67,
        # so ci95 = t(0.975, 6) x 100 sqrt(2e-4) = 2.447 x 1.414 = 3.46%.
        rows = [row(8, process=5e-4, a=0.0, run_level=1e-4, runs=3)]
        ci95 = plan.predicted_ci95(rows, 5, [1.0], 2.5)[0]
        self.assertAlmostEqual(ci95, stats.t.ppf(0.975, 6) * 100 * math.sqrt(2e-4), places=6)
        self.assertAlmostEqual(ci95, 3.461, places=2)

    def test_an_added_run_part_never_narrows_the_job_parts_interval(self):
        # As the merge states it (support/base/pooled.cpp, with_run_level): a job part of 2 df
        # (1e-4, t(0.975, 2) x 1% = 4.30%) and a run part of 2 df give Satterthwaite's 4 df,
        # t(0.975, 4) x 100 sqrt(2e-4) = 3.93%, narrower than the job part alone: 4.30% stands.
        rows = [row(8, process=5e-4, a=0.0, run_level=1e-4, runs=3)]
        ci95 = plan.predicted_ci95(rows, 5, [1.0], 0.5)[0]
        self.assertAlmostEqual(ci95, stats.t.ppf(0.975, 2) * 100 * math.sqrt(1e-4), places=6)
        # With a run part of many df the sum's interval is wider and stands.
        rows = [row(8, process=5e-4, a=0.0, run_level=1e-3, run_df=40)]
        ci95 = plan.predicted_ci95(rows, 5, [1.0], 0.5)[0]
        self.assertGreater(ci95, stats.t.ppf(0.975, 2) * 100 * math.sqrt(1e-4))

    def test_a_run_level_known_from_fewer_runs_widens_the_interval(self):
        few = row(8, process=1e-4, run_level=1e-4, runs=3)
        many = row(8, process=1e-4, run_level=1e-4, runs=10)
        wide, narrow = plan.predicted_ci95([few, many], 5, [1.0, 1.0], 2.0)
        self.assertGreater(wide, narrow * 1.1)

    def test_the_plan_records_what_it_predicts(self):
        rows = [row(8 << i, process=0.05**2, a=1e-4) for i in range(5)]
        rows += [
            row(8 << i, process=0.01**2, a=1e-4, family="mpi_host/mode:stream") for i in range(5)
        ]
        made = plan.make_plan(rows, costs(), runs=4)
        predicted = made["predicted_ci95_pct"]
        self.assertEqual(set(predicted["families"]), {FAMILY, "mpi_host/mode:stream"})
        self.assertGreater(
            predicted["families"][FAMILY], predicted["families"]["mpi_host/mode:stream"]
        )
        self.assertLessEqual(predicted["median"], predicted["p90"])
        self.assertEqual(made["runs"], 4)
        self.assertEqual(sorted(made["rows"]), sorted(predicted["families"]))


if __name__ == "__main__":
    unittest.main()
