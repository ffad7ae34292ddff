"""Two sets of jobs judged against each other: the replicates of an xferbench result are its
MPI jobs (separate processes), never the visits or repetitions inside one process, which do
not see how a process as a whole lands (docs/reproducibility.md).

A file merged from jobs (tools/run, tools/ab) records every job's visits of every row in
context.xferbench.visits, each tagged with its job; a job's figure for a row is the mean of its
visits' one-way times, as the merge computes it. A file of one job is one replicate.

The two sets are compared the way tools/track compares a run with its history (decide.py):
per family first, its shift (noise.fit's per-job family shift) between the sets against how
that shift moves from job to job within a set; then per row, what it did beyond its family
against its own job-to-job residual, with Benjamini-Hochberg false-discovery control and
track's minimum effect. Both spreads are pooled within the sets, so a set of one job can be
judged against a set of several: a two-sample t test with n_a + n_b - 2 degrees of freedom,
and from 10 jobs a side Yuen's, on 10% trimmed means (a process that lands in another mode
moves a trimmed mean little and its spread not at all). Two runs also differ by the drift
between them, which their jobs cannot show: the minimum effect (3%) is what guards against it
(tools/track learns it from a history; tools/ab has none, A and B sharing one sitting).
"""

import math
import statistics
from dataclasses import dataclass

import numpy as np

from ..core import fields
from ..result import machines, rows
from ..verdict import decide, noise

# Lowest total of jobs for a between-job spread: one degree of freedom at least.
MIN_JOBS = 3


@dataclass(frozen=True)
class Jobs:
    """The per-job figures of one side: one mapping row -> seconds (noise.FAILED for a failed
    row) per job, in the order they ran, and where each came from."""

    runs: tuple
    sources: tuple  # per job: 'FILE' or 'FILE job K'


def job_times(document, where):
    """The jobs of one loaded result document: [(label, {row: seconds or FAILED})]. A merged
    file gives one per job it merged, from its visits; any other xferbench file gives one,
    from its rows (the mean of its repetitions: one process)."""
    figures = rows.figures_from_document(document)
    failed = {name for name, f in figures.items() if f.error}
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    visits = xferbench.get(fields.VISITS)
    merged = machines.mapping(xferbench.get("merged"))
    count = merged.get("jobs")
    if isinstance(visits, dict) and isinstance(count, int) and count > 1:
        by_job = [{} for _ in range(count)]
        for written, entries in visits.items():
            name = rows.names.canonical_name(rows.names.normalise_name(str(written)))
            for visit in entries if isinstance(entries, list) else []:
                job, latency = machines.mapping(visit).get(fields.JOB), visit.get(fields.LATENCY_US)
                if isinstance(job, int) and 0 <= job < count and rows.positive(latency):
                    by_job[job].setdefault(name, []).append(latency * 1e-6)
        out = []
        for job, times in enumerate(by_job):
            figure = {name: statistics.fmean(t) for name, t in times.items()}
            figure.update({name: noise.FAILED for name in failed})
            out.append((f"{where} job {job + 1}", figure))
        return out
    figure = {
        name: noise.FAILED if f.error else f.time_us * 1e-6
        for name, f in figures.items()
        if f.error or f.time_us
    }
    return [(where, figure)]


def side_jobs(documents):
    """Jobs of a side from [(file, loaded document)]."""
    pairs = [pair for path, document in documents for pair in job_times(document, path)]
    return Jobs(tuple(p[1] for p in pairs), tuple(p[0] for p in pairs))


def has_jobs(a, b):
    """Whether two sides hold enough jobs for a between-job comparison."""
    n_a, n_b = len(a.runs), len(b.runs)
    return min(n_a, n_b) >= 1 and n_a + n_b >= MIN_JOBS


# Each side's lowest and highest tenth of jobs are trimmed (Yuen's test): on a 2-core VM one
# MPI process in sixteen landed in another mode and read 50-70% faster at every size, and one
# such job made a family's interval +-10-20% where the others moved by 2-3%.
TRIM = 0.1


def _trimmed(values):
    """(trimmed mean, winsorized sum of squares, jobs left) of one side's values: the lowest
    and highest floor(TRIM n) trimmed for the mean and set to their nearest kept neighbour for
    the spread. With 9 or fewer values nothing is trimmed: the mean and its sum of squares."""
    ordered = np.sort(values)
    n = ordered.size
    g = int(TRIM * n)
    kept = ordered[g : n - g]
    winsorized = np.clip(ordered, kept[0], kept[-1])
    return float(kept.mean()), float(np.sum((winsorized - winsorized.mean()) ** 2)), kept.size


def _pooled(values_a, values_b):
    """(trimmed mean b - trimmed mean a, sd of that difference, df): Yuen's two-sample test
    with the winsorized spread pooled within the sets (with 9 or fewer jobs a side, Student's
    pooled t test); NaN values are left out. None when there is no spread to learn."""
    a = values_a[~np.isnan(values_a)]
    b = values_b[~np.isnan(values_b)]
    if min(a.size, b.size) < 1 or a.size + b.size - 2 < 1:
        return None
    (mean_a, squares_a, h_a), (mean_b, squares_b, h_b) = _trimmed(a), _trimmed(b)
    df = h_a + h_b - 2
    sd = math.sqrt((squares_a + squares_b) / df) * math.sqrt(1 / h_a + 1 / h_b)
    return mean_b - mean_a, max(sd, noise.MIN_SIGMA), df


def _unjudged(row, family, a, b):
    """A row that cannot be tested, by its status: failed, missing or unjudged."""
    in_a, in_b = (any(row in r for r in side.runs) for side in (a, b))
    failed_a, failed_b = (any(r.get(row) == noise.FAILED for r in side.runs) for side in (a, b))
    if not in_b:
        return decide.reported_row(row, family, decide.MISSING, "absent from the new jobs")
    if failed_b:
        note = decide.BROKEN if in_a and not failed_a else "failed"
        return decide.reported_row(row, family, decide.FAILED, note)
    why = "failed in the base jobs" if failed_a else "not in every job"
    return decide.reported_row(row, family, decide.UNJUDGED, why)


def judge(a, b, alpha=decide.ALPHA, min_effect=decide.MIN_EFFECT, family_of=noise.family_of):
    """decide.Judgement of side b's jobs against side a's (Jobs; a is the base)."""
    runs = list(a.runs) + list(b.runs)
    n_a = len(a.runs)
    table = noise.table(runs, family_of=family_of)
    model = noise.fit(table)
    family = np.asarray(table.family)
    candidates, reported, tests = [], [], {}
    for j, row in enumerate(table.rows):
        name = table.families[table.family[j]]
        values = table.values[:, j]
        whole = _pooled(values[:n_a], values[n_a:])
        own = _pooled(model.residuals[:n_a, j], model.residuals[n_a:, j])
        if whole is None or own is None or np.isnan(values).any():
            reported.append(_unjudged(row, name, a, b))
            continue
        share = model.weights[j] / np.sum(model.weights[family == table.family[j]])
        df = max(1.0, own[2] * (1 - share))
        candidates.append(
            decide.Candidate(row, name, whole[0], own[1], float(model.weights[j]), len(runs), df)
        )
    for i, name in enumerate(table.families):
        if any(c.family == name for c in candidates):
            shift = _pooled(model.shifts[:n_a, i], model.shifts[n_a:, i])
            tests[name] = (shift[0], shift[1], shift[2], len(runs))
    note = (
        f"{n_a} base and {len(b.runs)} new jobs (separate processes): each family's shift "
        "between the sets against how it moves from job to job, each row's own movement "
        "beyond its family likewise"
    )
    return decide.decide_tests(
        tests, candidates, reported, ("jobs", len(runs), note), alpha, min_effect
    )


def interval_pct(test, confidence=0.95):
    """The two-sided interval half-width of a decide.Shift's shift, in percent (log scale
    back to a ratio)."""
    from scipy import special

    t = -float(special.stdtrit(test.df, (1 - confidence) / 2))
    return math.expm1(t * math.log1p(test.noise_pct / 100)) * 100


def whole_interval_pct(row_test, family_test, confidence=0.95):
    """The interval half-width (percent) of a row's whole change where it was judged beyond
    its family: its own noise and its family's together."""
    from scipy import special

    sd = math.hypot(math.log1p(row_test.noise_pct / 100), math.log1p(family_test.noise_pct / 100))
    t = -float(special.stdtrit(min(row_test.df, family_test.df), (1 - confidence) / 2))
    return math.expm1(t * sd) * 100
