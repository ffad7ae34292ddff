"""tools/ab's plan without running anything: the ABBA order, and how many jobs a time budget
buys (xfertools/ab/plan.py), checked against jobs recorded on an H200. The sittings themselves are
tested in tests/integration/test_ab.py."""

import os
import statistics
import unittest

from toollib import TOOLS
from xfertools.ab import plan as ab_plan

FIXTURES = os.path.join(os.path.dirname(TOOLS), "tests", "fixtures", "ab")
# docs/results/2026-11-26-h200-five-short-jobs, one session on one H200, the default selection
# (308 rows). Jobs 1 and 2 of its default run (3 jobs, 0.1 s a row) are the pilots: job 2's
# visits in h200-second-job-of-3.json, both wall times from session.log.xz. Then seven runs of
# 5 jobs at --xfer_max_time=0.05 gave every row a tenth of the default run's time per job, as
# 10 jobs a side would (their precision target a little tighter): their 35 jobs' wall times,
# from the same log, in the order they ran.
PILOT_WALLS_S = (15.1, 13.8)
PILOT_JOBS = 3
TENTH_SHARE_WALLS_S = (
    [12.0, 11.8, 11.3, 11.1, 11.4, 11.3, 11.3, 11.8, 11.2, 11.3, 11.1, 10.6, 10.4, 10.5, 10.5]
    + [10.1, 9.6, 10.5, 11.5, 11.2, 10.7, 10.5, 10.8, 10.4, 10.7, 11.3, 12.1, 11.3, 11.2, 11.8]
    + [12.0, 11.3, 11.9, 11.8, 12.5]
)


def recorded_cost():
    path = os.path.join(FIXTURES, "h200-second-job-of-3.json")
    return ab_plan.pilot_cost(path, PILOT_WALLS_S[1], PILOT_JOBS)


def recorded_sitting_s(budget):
    """(jobs a side, seconds) of the sitting planned for `budget`, its jobs at the recorded
    jobs' pace: their mean wall time, scaled by the model from a tenth share to the plan's."""
    cost = recorded_cost()
    jobs = ab_plan.plan_jobs(budget, sum(PILOT_WALLS_S), cost)
    job = statistics.fmean(TENTH_SHARE_WALLS_S) * cost.job_s(jobs) / cost.job_s(10)
    merges = 2 * (ab_plan.MERGE_S + ab_plan.MERGE_S_PER_JOB * jobs)
    return jobs, sum(PILOT_WALLS_S) + 2 * jobs * job + merges


class OrderTest(unittest.TestCase):
    def test_sides_alternate_in_abba_blocks(self):
        self.assertEqual(ab_plan.abba(2), list("ABBA"))
        self.assertEqual(ab_plan.abba(3), list("ABBAAB"))
        self.assertEqual(ab_plan.abba(6).count("A"), 6)


class JobCostTest(unittest.TestCase):
    # A pilot of 2 jobs: 1 s fixed; two rows timed 1 s (samples of 0.1 s) and 0.2 s (one
    # sample of 0.2 s).
    cost = ab_plan.JobCost(pilot_jobs=2, fixed_s=1.0, timed_s=(1.0, 0.2), sample_s=(0.1, 0.2))

    def test_a_rows_share_shrinks_with_more_jobs(self):
        self.assertAlmostEqual(self.cost.job_s(2), 2.2)
        self.assertAlmostEqual(self.cost.job_s(4), 1.0 + 0.5 + 0.2)

    def test_no_row_costs_less_than_one_sample(self):
        self.assertAlmostEqual(self.cost.job_s(64), 1.0 + 0.1 + 0.2)

    def test_the_pilots_fixed_part_is_its_wall_less_its_timed_loops(self):
        cost = recorded_cost()
        self.assertEqual(len(cost.timed_s), 308)
        self.assertAlmostEqual(cost.fixed_s + sum(cost.timed_s), PILOT_WALLS_S[1])
        # One sample of every row: the least a job measures (6.05-6.52 s in this session).
        self.assertAlmostEqual(sum(cost.sample_s), 6.05, delta=0.1)


class RecordedBudgetTest(unittest.TestCase):
    """The planning rule against what jobs really cost on an H200."""

    def test_a_job_at_a_tenth_share_costs_about_what_the_recorded_jobs_took(self):
        predicted = recorded_cost().job_s(10)
        self.assertGreaterEqual(predicted, min(TENTH_SHARE_WALLS_S))
        self.assertLessEqual(predicted, max(TENTH_SHARE_WALLS_S))
        # The pilot's own start-up was its run's shortest: the jobs ran up to 13% longer.
        self.assertAlmostEqual(predicted / statistics.fmean(TENTH_SHARE_WALLS_S), 0.87, delta=0.02)

    def test_the_issues_budget_plans_19_jobs_a_side_not_32(self):
        # 420 s: 32 jobs a side were planned, and the sitting took about 13.5 minutes.
        self.assertEqual(recorded_sitting_s(420)[0], 19)

    def test_sittings_at_the_recorded_pace_land_in_85_to_110_percent(self):
        for budget in (150, 200, 300, 420, 600, 900):
            jobs, seconds = recorded_sitting_s(budget)
            with self.subTest(budget=budget, jobs=jobs, seconds=seconds):
                self.assertGreaterEqual(seconds, 0.85 * budget)
                self.assertLessEqual(seconds, 1.10 * budget)

    def test_two_jobs_a_side_that_do_not_fit_are_refused(self):
        cost = recorded_cost()
        # Pilots 28.9 s, then 4 jobs of 19.6 s (each with half of the rows' time): 108 s.
        least = sum(PILOT_WALLS_S) + cost.sitting_s(2)
        self.assertIsNone(ab_plan.plan_jobs(least - 1, sum(PILOT_WALLS_S), cost))
        self.assertEqual(ab_plan.plan_jobs(least + 1, sum(PILOT_WALLS_S), cost), 2)

    def test_a_large_budget_stops_at_the_most_jobs(self):
        cost = recorded_cost()
        self.assertEqual(ab_plan.plan_jobs(3600, sum(PILOT_WALLS_S), cost), ab_plan.BUDGET_MAX_JOBS)


if __name__ == "__main__":
    unittest.main()
