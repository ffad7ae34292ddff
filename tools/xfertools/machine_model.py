"""The machine file's statistical model, written once: what one run's mean of a row varies by,

    ln time = mu_r + R (per run) + P (per job) + W (within a job's visit),

so that with J jobs and T seconds of timed loop in all the run's mean varies by

    V = s2R + p / J + w / T,

its 95% interval t(0.975, floor(df)) x 100 sqrt(V), df Satterthwaite's over the job part
(q (J - 1) degrees of freedom) and the run part (K - 1), never more than the job part's. This
is what the merge states (support/base/pooled.cpp, with_run_level), what the plan predicts
(plan.py), and what the floor file's numbers are made of (floors.py): the floor a single
process adds, 1.96 x 100 sqrt(p + s2R) rounded up to 0.1%, and the run-level sd, 100 sqrt(s2R)
rounded up to 0.01%. components.py learns p, w and s2R from a machine's runs. The cases both
languages are tested against: tests/fixtures/machine-file/cases.json."""

import functools
import math

from . import stats
from .finite import is_finite_number

# support/base/pooled.hpp kPoolSizeFactor: rows of a family this near in size move alike, and pool.
POOL_SIZE_FACTOR = 8


def pools_with(size, other):
    """Whether rows of one family of these sizes pool: within POOL_SIZE_FACTOR of each other."""
    return other <= size * POOL_SIZE_FACTOR and size <= other * POOL_SIZE_FACTOR


def pool_window(sizes, size):
    """The sizes of a family's rows that pool with `size`."""
    return [s for s in sizes if pools_with(size, s)]


def sampling_variance(ci95_pct, samples):
    """Variance of ln of a visit's mean from its own samples: (ci95 / t(0.975, n - 1))^2; None
    with fewer than 2 samples (a lone sample states no spread) or no finite ci95."""
    if not isinstance(samples, (int, float)) or samples < 2 or not is_finite_number(ci95_pct):
        return None
    return (ci95_pct / 100 / stats.t_quantile(0.975, samples - 1)) ** 2


@functools.cache
def t95(df):
    """Student's t quantile at 0.975 for whole degrees of freedom (at least 1)."""
    return stats.t_quantile(0.975, max(int(df), 1))


def satterthwaite_df(job_part, job_df, run_part, run_df):
    """Degrees of freedom of the sum of two variance estimates (job part, run part)."""
    terms = job_part**2 / job_df + (run_part**2 / max(run_df, 1) if run_df > 0 else 0)
    return (job_part + run_part) ** 2 / terms if terms > 0 else job_df


def interval(job_part, job_df, run_part, run_df):
    """(ci95 percent, df) of a mean whose variance is job_part (job_df degrees of freedom) plus
    run_part (run_df; 0: none known): df never more than the job part's."""
    df = min(job_df, satterthwaite_df(job_part, job_df, run_part, run_df))
    return t95(math.floor(df)) * 100 * math.sqrt(job_part + run_part), df


def with_run_level(ci95_pct, df, run_sd_pct, run_df):
    """A merged row's (ci95 percent, df) with the machine's run level added, from the interval
    its jobs gave (support/base/pooled.cpp, with_run_level): unchanged without a run level or a
    between-job part."""
    if not run_df > 0 or not run_sd_pct > 0 or not df > 0:
        return ci95_pct, df
    job_part = (ci95_pct / 100 / t95(math.floor(df))) ** 2
    return interval(job_part, df, (run_sd_pct / 100) ** 2, run_df)


def round_up(value, step):
    return math.ceil(round(value / step, 9)) * step


def floor_pct(process, run_level):
    """The floor a new process in another run adds to a row (the file's "floors"): 1.96 x 100
    sqrt(p + s2R), rounded up to 0.1%."""
    return round(round_up(196 * math.sqrt(process + (run_level or 0.0)), 0.1), 1)


def run_sd_pct(run_level):
    """The run-level sd of ln time in percent (the file's "run_floors"), rounded up to 0.01%."""
    return round(round_up(100 * math.sqrt(run_level), 0.01), 2)
