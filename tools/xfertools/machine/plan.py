"""A machine's plan for the default run: how many jobs, and each row's timed seconds, chosen from
the variance components and costs its own runs showed (components.py).

With J jobs and T_r seconds of timed loop for row r in all, the run's mean of the row varies by

    V_r = s2R_r + p_r / J + w_r / T_r

(run level, process level, the visits' own noise: J visits of T_r / J seconds each: the model
of model.py), and the
run costs J (c0 + sum c_r) + sum T_r seconds. For each J from MIN_JOBS up to one more than the
history has run (the model is trusted one step beyond what it was measured at: on a 2-core VM
visits of a few milliseconds turned out far noisier than longer ones), the plan gives every row
its least time (one sample a job), shares out what is left of the budget so as to minimise
sum w_r / T_r (Neyman allocation, T_r proportional to sqrt(w_r), each T_r capped where the row
stops on precision anyway), and predicts each row's ci95; it keeps the J with the smallest
median predicted ci95, or a smaller J within TIE of it (fewer jobs: less start-up, less to go
wrong).
"""

import dataclasses
import math
import statistics

from . import model as machine_model

MIN_JOBS, MAX_JOBS = 3, 16
DEFAULT_BUDGET_S = 60.0
MARGIN = 0.9  # of the budget the prediction may fill
OVERHEAD_S = 3.0  # tools/run around its jobs: the merge, the floor, starting each job's launcher
PRECISION_PCT = 1.0  # xferbench's default --xfer_precision
TIE = 0.02  # a smaller J within 2% of the best median is preferred
BISECTION_STEPS = 200
RULE = (
    f"J from {MIN_JOBS} to {MAX_JOBS}, at most one more than the history ran: each row its "
    "least time (one sample a job), the rest of "
    f"{MARGIN} x budget - {OVERHEAD_S:g} s - J x (c0 + sum c_r) given out in proportion to "
    "sqrt(w_r) (Neyman), capped where a row stops on precision; the J with the smallest median "
    f"predicted ci95, or a smaller one within {TIE:.0%} of it"
)


@dataclasses.dataclass(frozen=True)
class Costs:
    """What a run costs beyond its rows' timed loops, and what the merge's pooling gives."""

    job_s: float  # c0: a job's launch, start-up and tear-down
    df_per_job_df: float  # q: a merged row's t has q (J - 1) degrees of freedom
    budget_s: float = DEFAULT_BUDGET_S


@dataclasses.dataclass(frozen=True)
class Candidate:
    """The plan for one J: each row's seconds and predicted ci95 (percent)."""

    jobs: int
    seconds: list
    ci95_pct: list
    wall_s: float

    @property
    def median(self):
        return statistics.median(self.ci95_pct)


def precision_caps(rows):
    """Tprec_r: the total timed seconds at which a row stops on precision (the mean of J visits
    reaches PRECISION_PCT at T = a (196 / p)^2 whatever J); inf for rows whose samples showed
    no spread."""
    return [r.a * (196 / PRECISION_PCT) ** 2 if r.a > 0 else math.inf for r in rows]


def least_times(rows, jobs, caps):
    """Each row's least time: one sample in each job's visit. Not capped by Tprec: a visit never
    stops before its first sample (nor on precision before five), so a row whose precision cap
    is below one sample a job still costs one sample a job (on two H200s the capped least time
    gave a 1 GiB ping-pong 106 ms a job for a 413 ms sample: planned runs took 59-65 s for 54 s
    predicted)."""
    del caps  # the cap bounds the time given beyond the least, not the least itself
    return [jobs * r.sample_s for r in rows]


def fixed_cost_s(rows, jobs, costs):
    """What J jobs cost beside their timed loops: OVERHEAD_S + J (c0 + sum c_r)."""
    return OVERHEAD_S + jobs * (costs.job_s + sum(r.fixed_s for r in rows))


def time_left(rows, jobs, least, costs):
    """B: what is left of MARGIN x budget after the fixed costs and the least times (< 0: J
    does not fit)."""
    return MARGIN * costs.budget_s - fixed_cost_s(rows, jobs, costs) - sum(least)


def neyman_allocation(a, least, caps, extra):
    """Times T_r >= least minimising sum a_r / T_r with sum T_r = sum least + extra, each
    T_r <= caps: T_r = clip(lambda sqrt(a_r), least, caps), lambda found by bisection. Rows
    without sampling variance keep their least time; where every other row reaches its cap,
    the rest of `extra` is not spent."""
    weight = [math.sqrt(max(x, 0.0)) for x in a]
    total = sum(least) + extra
    most = [cap if w > 0 else low for w, low, cap in zip(weight, least, caps)]
    if sum(most) <= total:
        return most

    def given(multiplier):
        return [min(max(multiplier * w, low), cap) for w, low, cap in zip(weight, least, caps)]

    def spent(multiplier):
        return sum(given(multiplier))

    low, high = 0.0, 1.0
    while spent(high) < total:
        high *= 2
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if spent(middle) < total else (low, middle)
    return given(low)


def predicted_ci95(rows, jobs, seconds, df_per_job_df):
    """Each row's predicted ci95 (percent): t(0.975, floor(df)) x 100 sqrt(V_r), the job part
    with q (J - 1) degrees of freedom, the run part with K - 1, df never more than the job
    part's (as the merge states it: support/base/pooled.cpp, with_run_level)."""
    out = []
    for row, time in zip(rows, seconds):
        job_part = row.process / jobs + (row.visit / time if row.visit > 0 else 0.0)
        job_df = df_per_job_df * (jobs - 1)
        out.append(machine_model.interval(job_part, job_df, row.run_level or 0.0, row.run_df)[0])
    return out


def candidate(rows, jobs, costs, caps):
    """The plan for `jobs` jobs, or None where even the least times do not fit."""
    least = least_times(rows, jobs, caps)
    left = time_left(rows, jobs, least, costs)
    if left < 0:
        return None
    caps = [max(cap, low) for cap, low in zip(caps, least)]
    seconds = neyman_allocation([r.visit for r in rows], least, caps, left)
    wall = fixed_cost_s(rows, jobs, costs) + sum(seconds)
    return Candidate(jobs, seconds, predicted_ci95(rows, jobs, seconds, costs.df_per_job_df), wall)


def choose(candidates):
    """The candidate with the smallest median predicted ci95, or the one of fewest jobs within
    TIE of it."""
    best = min(c.median for c in candidates)
    return min((c for c in candidates if c.median <= best * (1 + TIE)), key=lambda c: c.jobs)


def candidates(rows, costs, most_jobs=MAX_JOBS):
    """The plans of every J up to most_jobs that fits, fewest jobs first."""
    caps = precision_caps(rows)
    top = max(MIN_JOBS, min(MAX_JOBS, most_jobs))
    found = (candidate(rows, jobs, costs, caps) for jobs in range(MIN_JOBS, top + 1))
    return [c for c in found if c is not None]


def percentile_90(values):
    """The 90th percentile, interpolated between the sorted values (numpy's default)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def seconds_for_flag(seconds):
    """A row's seconds as the file gives them: rounded up to 0.1 ms (never below its least)."""
    return max(math.ceil(float(seconds) * 1e4 - 1e-9), 1) / 1e4


def make_plan(rows, costs, runs, most_jobs=MAX_JOBS):
    """The "plan" member of the floor file from the history's `runs` rows' components
    (components.RowComponents), at most most_jobs jobs, or None where no J fits the budget."""
    rows = list(rows)
    fitting = candidates(rows, costs, most_jobs)
    if not rows or not fitting:
        return None
    chosen = choose(fitting)
    times, by_family = {}, {}
    for row, seconds, ci95 in zip(rows, chosen.seconds, chosen.ci95_pct):
        times.setdefault(row.family, []).append([row.bytes, seconds_for_flag(seconds)])
        by_family.setdefault(row.family, []).append(ci95)
    return {
        "jobs": chosen.jobs,
        "rows": dict(sorted(times.items())),
        "budget_s": costs.budget_s,
        "predicted_wall_s": round(chosen.wall_s, 1),
        "predicted_ci95_pct": {
            "median": round(chosen.median, 2),
            "p90": round(percentile_90(chosen.ci95_pct), 2),
            "families": {f: round(statistics.median(v), 2) for f, v in sorted(by_family.items())},
        },
        "runs": runs,
        "rule": RULE,
    }
