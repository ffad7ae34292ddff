"""Where a machine's variance lives, learned from its own merged runs (docs/reproducibility.md,
"This machine's floor"): a history entry per run, and per row the components of the model

    ln time = mu_r + R (per run) + P (per job) + W (within a job's visit)

that the floor file and the plan are made from (floors.py, plan.py). W is the visit's own
noise, which shrinks as the visit gets longer: its samples' spread, and more (on a 2-core VM a
visit of a few milliseconds moves by far more than its samples say). So one job's figure varies
by p + w / tau for visits of tau seconds: where the history holds runs of different visit
lengths, p and w are fitted to them (least squares, w at least the samples' own part a);
else w is a and p the rest.

A history entry is made from a merged result's context.xferbench.visits (each visit carries its
job): per row, over its jobs, the mean and sample variance of ln latency, the sampling variance
of one job's figure (from its ci95_pct and sample count), and the seconds it timed, spent
around the timed loop, and spent on one sample. Components pool those over the runs that hold
a row, then over its family's rows within machine_model.POOL_SIZE_FACTOR in size, as the merge
pools.
"""

import dataclasses
import math
import os
import statistics

from ..core import fields, files, names
from ..core.finite import is_finite_number
from ..result import machines
from . import history
from . import model as machine_model

MIN_RUNS_FOR_RUN_LEVEL = machine_model.RUN_LEVEL_RUNS  # a run level needs this many runs' means
# A row's history fields, in the order a history entry lists them after its bytes.
ROW_FIELDS = (
    "mean_ln",
    "var_between",
    "var_sampling",
    "timed_s",
    "fixed_s",
    "sample_s",
    "stopped_on_precision",
)
SIGNIFICANT = 7  # digits kept in the file: far below any row's noise


# ------------------------------------------------------------------ one run's entry


@dataclasses.dataclass(frozen=True)
class JobFigure:
    """One job's measurement of one row (the mean of its visits where it had several)."""

    latency_us: float
    var_sampling: float | None  # variance of ln(latency) from the visit's own samples
    timed_s: float
    fixed_s: float  # set-up, warm-up and pattern checks
    samples: int
    time_limited: bool


def measured(visit):
    """True for a visit of repetition 0 that measured (xferbench omits "repetition" there)."""
    return (
        isinstance(visit, dict)
        and not visit.get(fields.REPETITION)
        and "error" not in visit
        and is_finite_number(visit.get(fields.LATENCY_US))
        and visit[fields.LATENCY_US] > 0
        and is_finite_number(visit.get(fields.WALL_S))
    )


def job_figure(visits):
    """A job's figure of a row from its measured visits (usually one)."""
    # What a visit spends beside its timing: set-up (its warm-up included) and checks.
    fixed = [
        sum(v[k] for k in (fields.SETUP_S, fields.CHECK_S) if is_finite_number(v.get(k)))
        for v in visits
    ]
    variances = [
        machine_model.sampling_variance(v.get(fields.CI95_PCT), v.get(fields.SAMPLES))
        for v in visits
    ]
    return JobFigure(
        latency_us=statistics.fmean(v[fields.LATENCY_US] for v in visits),
        var_sampling=None
        if None in variances
        else statistics.fmean(variances) / len(visits),  # of the mean of the visits
        timed_s=sum(v[fields.WALL_S] for v in visits) - sum(fixed),
        fixed_s=sum(fixed),
        samples=sum(int(v.get(fields.SAMPLES) or 0) for v in visits),
        time_limited=any(v.get(fields.TIME_LIMITED) for v in visits),
    )


def jobs_of_row(visits):
    """{job: JobFigure} of a row's visits in a merged result."""
    by_job = {}
    for visit in visits if isinstance(visits, list) else []:
        if measured(visit):
            by_job.setdefault(visit.get("job", 0), []).append(visit)
    return {job: job_figure(found) for job, found in by_job.items()}


def row_entry(jobs):
    """[mean_ln, var_between, var_sampling, timed_s, fixed_s, sample_s, stopped_on_precision]
    of a row from its jobs' figures; None with fewer than 2 jobs (no spread between jobs)."""
    if len(jobs) < 2:
        return None
    logs = [math.log(j.latency_us) for j in jobs]
    sampled = [j.var_sampling for j in jobs if j.var_sampling is not None]
    return [
        statistics.fmean(logs),
        statistics.variance(logs),
        statistics.fmean(sampled) if sampled else None,
        max(0.0, statistics.fmean(j.timed_s for j in jobs)),
        statistics.fmean(j.fixed_s for j in jobs),
        statistics.fmean(max(0.0, j.timed_s) / max(j.samples, 1) for j in jobs),
        0 if any(j.time_limited for j in jobs) else 1,
    ]


def rounded(value):
    return value if not isinstance(value, float) else float(f"{value:.{SIGNIFICANT}g}")


def pooled_df_per_job_df(document):
    """The run's median over merged rows of ci95_df / (jobs - 1): how many jobs' worth of
    degrees of freedom the merge's pooling gave a row; None where no row states it."""
    ratios = []
    for row in document.get(fields.BENCHMARKS, []):
        if not isinstance(row, dict) or row.get(fields.RUN_TYPE, "iteration") != "iteration":
            continue
        df, jobs, pooled = row.get(fields.CI95_DF), row.get(fields.JOBS), row.get(fields.CI95_ROWS)
        if (
            is_finite_number(df)
            and df > 0
            and is_finite_number(jobs)
            and jobs >= 2
            and is_finite_number(pooled)
            and pooled
        ):
            ratios.append(df / (jobs - 1))
    return rounded(statistics.median(ratios)) if ratios else None


def run_entry(document, source, job_seconds=None):
    """The history entry of a merged run (InputError naming `source` where it is none)."""
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    visits = xferbench.get(fields.VISITS)
    if not isinstance(visits, dict) or not visits:
        raise files.InputError(
            f"{source}: no visits recorded (context.xferbench.visits); made by an xferbench "
            "before visits were recorded?"
        )
    rows, visit_seconds = {}, {}
    for name, records in sorted(visits.items()):
        size = names.message_bytes(name)
        if size is None:
            continue
        for record in records if isinstance(records, list) else []:
            if isinstance(record, dict) and is_finite_number(record.get(fields.WALL_S)):
                job = record.get("job", 0)
                visit_seconds[job] = visit_seconds.get(job, 0.0) + record[fields.WALL_S]
        entry = row_entry(list(jobs_of_row(records).values()))
        if entry is not None:
            family = names.family_of(names.normalise_name(name))
            rows.setdefault(family, []).append([size] + [rounded(v) for v in entry])
    if not rows:
        raise files.InputError(f"{source}: no row was measured by 2 or more of its jobs")
    return {
        "file": os.path.basename(source),
        "digest": history.document_digest(document),
        "git_revision": xferbench.get("git_revision"),
        "jobs": xferbench.get(fields.JOBS),
        "job_seconds": list(job_seconds) if job_seconds else None,
        "visit_seconds": [rounded(visit_seconds[j]) for j in sorted(visit_seconds)],
        "pooled_df_per_job_df": pooled_df_per_job_df(document),
        "rows": {family: sorted(found) for family, found in sorted(rows.items())},
    }


# ------------------------------------------------------------------ components of a history


@dataclasses.dataclass(frozen=True)
class RunRow:
    """One run's figures of one row (a history entry's row, with its run's job count and its
    index in the history)."""

    run: int
    jobs: int
    mean_ln: float
    var_between: float
    var_sampling: float | None
    timed_s: float
    fixed_s: float
    sample_s: float


@dataclasses.dataclass(frozen=True)
class RowComponents:
    """A row's variance components (of ln time) and costs, from the runs that hold it."""

    family: str
    bytes: int
    runs: int  # K: history runs that hold the row
    between: float  # s2B: one job's figure between jobs, pooled over runs and the window
    sampling: float  # s2W: the part of it a job's own samples explain
    process: float  # p: the part a process adds, however long its visits
    a: float  # sampling variance x timed seconds of one job's visit
    run_level: float | None  # s2R, from MIN_RUNS_FOR_RUN_LEVEL runs on; else None
    fixed_s: float  # c_r: a visit's set-up, warm-up and checks
    sample_s: float  # s_r: one sample
    w: float | None = None  # the visit's own variance x its seconds (>= a); None: a
    run_df: float = 0  # the run level's degrees of freedom (0: none)

    @property
    def visit(self):
        """w: what a visit of tau seconds adds to a job's figure is w / tau."""
        return self.a if self.w is None else max(self.w, self.a)


def run_rows(entries):
    """{(family, bytes): [RunRow, ...]} over the history's entries, oldest first."""
    found = {}
    for run, entry in enumerate(entries):
        jobs = entry.get("jobs")
        if not isinstance(jobs, int):
            continue
        for family, points in machines.mapping(entry.get("rows")).items():
            for point in points:
                if len(point) != len(ROW_FIELDS) + 1:
                    continue
                values = dict(zip(ROW_FIELDS, point[1:]))
                found.setdefault((family, int(point[0])), []).append(
                    # stopped_on_precision stays in the file for people to read; the plan caps
                    # every row where it would stop on precision (plan.precision_caps).
                    RunRow(run=run, jobs=jobs, **{k: values[k] for k in ROW_FIELDS[:-1]})
                )
    return found


def df_weighted(pairs):
    """sum (J - 1) v / sum (J - 1) over (jobs, variance) pairs; None for none."""
    pairs = [(jobs, value) for jobs, value in pairs if value is not None and jobs >= 2]
    weight = sum(jobs - 1 for jobs, _ in pairs)
    return sum((jobs - 1) * value for jobs, value in pairs) / weight if weight else None


def row_run_level(by_size, sizes, size):
    """(s2R, df) of the row of `size` (machine_model.run_level_of): its runs' means and those of
    its family's rows within POOL_SIZE_FACTOR measured in all of the same runs; (None, 0)
    with fewer than MIN_RUNS_FOR_RUN_LEVEL runs. by_size: {size: [RunRow, ...]}."""
    runs = [r.run for r in by_size[size]]
    if len(runs) < MIN_RUNS_FOR_RUN_LEVEL:
        return None, 0
    window = []
    for near in machine_model.pool_window(sizes, size):
        by_run = {r.run: r for r in by_size[near]}
        if all(run in by_run for run in runs):
            window.append(
                [(by_run[run].mean_ln, by_run[run].var_between / by_run[run].jobs) for run in runs]
            )
    return machine_model.run_level_of(window)


# Visit lengths that differ by less than this factor cannot tell p from w / tau.
MIN_LENGTH_RATIO = 1.5


def fit_visit_length(runs, a):
    """(p, w) of var_between = p + w / tau over the runs (weights J - 1), tau the run's timed
    seconds per visit; w >= a, p >= 0. None where the runs' visit lengths are too alike to
    tell p from w / tau."""
    points = [
        (r.jobs - 1, 1 / r.timed_s, r.var_between)
        for r in runs
        if r.jobs >= 2 and r.timed_s > 0 and r.var_between is not None
    ]
    if len(points) < 2:
        return None
    xs = [x for _, x, _ in points]
    if max(xs) < MIN_LENGTH_RATIO * min(xs):
        return None
    total = sum(k for k, _, _ in points)
    mean_x = sum(k * x for k, x, _ in points) / total
    mean_y = sum(k * y for k, _, y in points) / total
    sxx = sum(k * (x - mean_x) ** 2 for k, x, _ in points)
    w = sum(k * (x - mean_x) * (y - mean_y) for k, x, y in points) / sxx
    p = mean_y - w * mean_x
    if w < a:
        w = a
        p = mean_y - a * mean_x
    if p < 0:
        p = 0.0
        w = max(a, sum(k * x * y for k, x, y in points) / sum(k * x * x for k, x, _ in points))
    return max(p, 0.0), w


def window_mean(values, sizes):
    """Mean of values[s] over sizes, leaving out None; None if none."""
    found = [values[s] for s in sizes if values.get(s) is not None]
    return statistics.fmean(found) if found else None


def components(entries):
    """[RowComponents] of every row in the history `entries`, by family and size."""
    by_row = run_rows(entries)
    families = {}
    for family, size in by_row:
        families.setdefault(family, []).append(size)
    out = []
    for family, sizes in sorted(families.items()):
        pooled = {s: df_weighted((r.jobs, r.var_between) for r in by_row[family, s]) for s in sizes}
        sampled = {
            s: df_weighted((r.jobs, r.var_sampling) for r in by_row[family, s]) for s in sizes
        }
        by_size = {s: by_row[family, s] for s in sizes}
        a_of = {s: sampling_product(by_row[family, s]) for s in sizes}
        fitted = {s: fit_visit_length(by_row[family, s], a_of[s]) for s in sizes}
        for size in sorted(sizes):
            runs = by_row[family, size]
            near = machine_model.pool_window(sizes, size)
            between = window_mean(pooled, near)
            sampling = window_mean(sampled, near) or 0.0
            run_level, run_df = row_run_level(by_size, sizes, size)
            fits = [fitted[s] for s in near if fitted[s] is not None]
            process = statistics.fmean(p for p, _ in fits) if fits else max(0.0, between - sampling)
            out.append(
                RowComponents(
                    family=family,
                    bytes=size,
                    runs=len(runs),
                    between=between,
                    sampling=sampling,
                    process=process,
                    a=a_of[size],
                    w=statistics.fmean(w for _, w in fits) if fits else None,
                    run_level=run_level,
                    run_df=run_df,
                    fixed_s=statistics.fmean(r.fixed_s for r in runs),
                    sample_s=statistics.fmean(r.sample_s for r in runs),
                )
            )
    return out


def sampling_product(runs):
    """a: the mean over runs of a job's sampling variance x its visit's timed seconds."""
    products = [r.var_sampling * r.timed_s for r in runs if r.var_sampling is not None]
    return statistics.fmean(products) if products else 0.0


def job_cost(entries):
    """c0: the median over the history's jobs of (the job's seconds as tools/run measured
    them - the seconds of its visits); None where no entry has job seconds."""
    overheads = []
    for entry in entries:
        seconds, visits = entry.get("job_seconds"), entry.get("visit_seconds")
        if isinstance(seconds, list) and isinstance(visits, list) and len(seconds) == len(visits):
            overheads += [s - v for s, v in zip(seconds, visits)]
    return statistics.median(overheads) if overheads else None


def pooled_df_ratio(entries):
    """q: the median over runs of their pooled_df_per_job_df; None where none states it."""
    found = [e.get("pooled_df_per_job_df") for e in entries]
    found = [q for q in found if is_finite_number(q) and q > 0]
    return statistics.median(found) if found else None
