"""The machine file's statistical model, written once: what one run's mean of a row varies by,

    ln time = mu_r + R (per run) + P (per job) + W (within a job's visit),

so that with J jobs and T seconds of timed loop in all the run's mean varies by

    V = s2R + p / J + w / T,

its 95% interval t(0.975, floor(df)) x 100 sqrt(V), df Satterthwaite's over the job part
(q (J - 1) degrees of freedom) and the run part (pooled over the rows near in size, as the
jobs are: run_level_of), never narrower than the job part's alone. This
is what the merge states (support/base/pooled.cpp, with_run_level), what the plan predicts
(plan.py), and what the floor file's numbers are made of (floors.py): the floor a single
process adds, 1.96 x 100 sqrt(p + s2R) rounded up to 0.1%, and the run-level sd, 100 sqrt(s2R)
rounded up to 0.01%. components.py learns p, w and s2R from a machine's runs. The cases both
languages are tested against: tests/fixtures/machine-file/cases.json."""

import functools
import math

from ..core import stats
from ..core.finite import is_finite_number

# support/base/pooled.hpp kPoolSizeFactor: rows of a family this near in size move alike, and pool.
POOL_SIZE_FACTOR = 8
# support/base/pooled.hpp kRunLevelRuns: a run level is known from the means of this many runs.
RUN_LEVEL_RUNS = 3


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
    run_part (run_df; 0: none known), with Satterthwaite's df; where that is narrower than the
    job part's alone (a run part of many df lowers the t quantile), the job part's alone."""
    own = t95(math.floor(job_df)) * 100 * math.sqrt(job_part), job_df
    if not run_df > 0 or not run_part > 0:
        return own
    df = satterthwaite_df(job_part, job_df, run_part, run_df)
    half = t95(math.floor(df)) * 100 * math.sqrt(job_part + run_part)
    return own if half < own[0] else (half, df)


def with_run_level(ci95_pct, df, run_sd_pct, run_df):
    """A merged row's (ci95 percent, df) with the machine's run level added, from the interval
    its jobs gave (support/base/pooled.cpp, with_run_level): unchanged without a run level or a
    between-job part."""
    if not run_df > 0 or not run_sd_pct > 0 or not df > 0:
        return ci95_pct, df
    job_part = (ci95_pct / 100 / t95(math.floor(df))) ** 2
    return interval(job_part, df, (run_sd_pct / 100) ** 2, run_df)


def pool_of_logs(window):
    """(variance, df) of one column's figure over a window of rows (window[row][column], ln
    time; columns are jobs or runs): a two-way analysis of variance, a column's shift shared by
    the rows and each row's own move, the variance their sum and its degrees of freedom
    Satterthwaite's, counting the shared shift's n - 1 once (support/base/pooled.cpp)."""
    k, n = len(window), len(window[0])
    row_mean = [sum(row) / n for row in window]
    column_mean = [sum(row[j] for row in window) / k for j in range(n)]
    grand = sum(row_mean) / k
    ss_column = k * sum((m - grand) ** 2 for m in column_mean)
    ss_rest = sum(
        (window[i][j] - row_mean[i] - column_mean[j] + grand) ** 2
        for i in range(k)
        for j in range(n)
    )
    df_column, df_rest = n - 1, (n - 1) * (k - 1)
    variance = (ss_column + ss_rest) / (k * df_column)
    if k == 1:
        return variance, df_column
    shared = ss_column / df_column / k
    own = ss_rest / df_rest * (k - 1) / k
    if shared + own <= 0:
        return variance, df_column + df_rest
    return variance, (shared + own) ** 2 / (shared**2 / df_column + own**2 / df_rest)


def run_level_of(window):
    """(s2R, df) of a window of rows measured by the same runs (window[row][run] = (mean_ln,
    explained): a run's mean of ln time and the variance of it its jobs explain): the run
    means' variance pooled over the rows as the jobs' is, less the mean explained part, at
    least 0, with the pooled variance's degrees of freedom; (None, 0) below RUN_LEVEL_RUNS runs
    (support/base/pooled.cpp, run_level_of)."""
    if not window or len(window[0]) < RUN_LEVEL_RUNS:
        return None, 0
    variance, df = pool_of_logs([[mean for mean, _ in row] for row in window])
    explained = sum(e for row in window for _, e in row) / (len(window) * len(window[0]))
    return max(0.0, variance - explained), df


def round_up(value, step):
    return math.ceil(round(value / step, 9)) * step


def floor_pct(process, run_level):
    """The floor a new process in another run adds to a row (the file's "floors"): 1.96 x 100
    sqrt(p + s2R), rounded up to 0.1%."""
    return round(round_up(196 * math.sqrt(process + (run_level or 0.0)), 0.1), 1)


def run_sd_pct(run_level):
    """The run-level sd of ln time in percent (the file's "run_floors"), rounded up to 0.01%."""
    return round(round_up(100 * math.sqrt(run_level), 0.01), 2)
