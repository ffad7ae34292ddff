"""tools/ab's plan of a sitting: how many jobs a side and in what order (ABBA), the smallest
change it flags, and with --time-budget the jobs that fit, from what a pilot job cost."""

import dataclasses

from ..core import fields, files
from ..result import machines

SIDES = ("A", "B")
DEFAULT_JOBS = 6
# --time-budget: the most jobs a side (xferbench merges at most 64, as tools/run runs), and
# where in the budget the planned sitting ends: jobs up to 15% slower than the pilot's figures
# then end within 110% of it, and up to 10% faster after 85%. (A job's share of time is fixed
# when it starts, and a merge refuses more jobs than their share, so pairs cannot be added.)
BUDGET_MAX_JOBS = 64
BUDGET_AIM = 0.95
# One side's merge: 0.3-0.5 s for 3 to 5 jobs of the default selection on an H200
# (docs/results/2026-11-26-h200-five-short-jobs); more jobs, more files to read.
MERGE_S = 0.5
MERGE_S_PER_JOB = 0.05
# The smallest change flagged. A sitting compares A and B in alternating jobs, so the drift
# between sittings that tools/track's 3% guards against is not in it; at 3% a true 3% change
# would be flagged only about half the time (its estimate falls below 3% as often as above).
DEFAULT_THRESHOLD = 1.0


def abba(jobs):
    """The order of 2 x jobs: A B, B A, A B, ..."""
    return [label for k in range(jobs) for label in (SIDES if k % 2 == 0 else SIDES[::-1])]


@dataclasses.dataclass(frozen=True)
class JobCost:
    """What a job costs, from a pilot job that had a 1/pilot_jobs share of each row's time:
    a fixed part (launch, start-up, set-up and warm-up, pattern checks, tear-down: the pilot's
    wall time less its timed loops) and each row's timed loop, which never takes less than one
    sample however many jobs share the row."""

    pilot_jobs: int
    fixed_s: float
    timed_s: tuple  # per row: the pilot's seconds of timed loop
    sample_s: tuple  # per row: one of its samples' seconds

    def job_s(self, jobs):
        """One job of a sitting of `jobs` a side: a row's share of its time limit, and of its
        precision target, both go as 1 / jobs (support/run/runner.cpp), down to one sample."""
        share = self.pilot_jobs / jobs
        return self.fixed_s + sum(max(s, t * share) for t, s in zip(self.timed_s, self.sample_s))

    def sitting_s(self, jobs):
        """The jobs of both sides, then the two merges."""
        return 2 * jobs * self.job_s(jobs) + 2 * (MERGE_S + MERGE_S_PER_JOB * jobs)


VISIT_TIMES = (fields.WALL_S, fields.SETUP_S, fields.CHECK_S)  # a visit's; set-up holds its warm-up


def pilot_cost(path, wall, pilot_jobs):
    """A JobCost from a pilot job's result file (its visits' times) and wall seconds."""
    document = files.load_result(path)
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    timed, sample = [], []
    for visits in machines.mapping(xferbench.get(fields.VISITS)).values():
        for visit in visits if isinstance(visits, list) else []:
            seconds = [visit.get(k, 0) if isinstance(visit, dict) else None for k in VISIT_TIMES]
            if not all(isinstance(s, (int, float)) for s in seconds):
                continue
            loop = max(seconds[0] - seconds[1] - seconds[2], 0.0)
            samples = visit.get(fields.SAMPLES)
            timed.append(loop)
            sample.append(loop / samples if isinstance(samples, int) and samples > 1 else loop)
    fixed = max(wall - sum(timed), 0.0)
    return JobCost(pilot_jobs, fixed, tuple(timed), tuple(sample))


def plan_jobs(budget, spent, cost):
    """Jobs a side for a budget of which `spent` seconds (the pilots) are gone: the most, up to
    BUDGET_MAX_JOBS, whose sitting is predicted to end by BUDGET_AIM of the budget; 2 where
    only 2 end within it; None where 2 do not."""
    fitting = [
        jobs
        for jobs in range(2, BUDGET_MAX_JOBS + 1)
        if spent + cost.sitting_s(jobs) <= BUDGET_AIM * budget
    ]
    if fitting:
        return max(fitting)
    return 2 if spent + cost.sitting_s(2) <= budget else None
