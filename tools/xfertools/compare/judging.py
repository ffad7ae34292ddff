"""compare.py's judgement of one row of two sides, and the ways of judging: by the jobs of
xferbench results or their stated ci95 (decide.py's family-first judgement, taken into the row),
or by one process's repetitions (plain Google Benchmark files: a Mann-Whitney U test and a
threshold). report.py builds the whole report from these rows."""

import dataclasses
import math

from ..core import fields, files, names, stats
from ..core.finite import finite_float_or_none
from ..result import machines

STATUSES = (
    "faster",
    "slower",
    "same",
    "not significant",
    "unjudged",
    "new",
    "missing",
    "failed",
    "fixed",
)
# How rows are judged: by the jobs of xferbench results, by their stated ci95 (one job a side),
# or by one process's repetitions (plain Google Benchmark files).
JOBS, STATED, REPETITIONS = "jobs", "stated", "repetitions"
# Defaults per way of judging: tools/track's false-discovery rate and minimum effect for
# xferbench results; the U test's level and a 5% threshold for repetitions.
DEFAULT_ALPHA = {JOBS: 0.01, STATED: 0.01, REPETITIONS: 0.05}
DEFAULT_THRESHOLD = {JOBS: 3.0, STATED: 3.0, REPETITIONS: 5.0}


@dataclasses.dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool


METRICS = {
    "time": Metric("time", "us", False),
    "latency": Metric("latency", "us", False),
    "bandwidth": Metric("bandwidth", "GB/s", True),
}


def judged_values(base, new, metric):
    """The judged metric per sample, both sides on the same basis."""
    samples = base.samples + new.samples
    if metric == "latency" and all(s.latency_us for s in samples):
        basis, value = fields.LATENCY_US, (lambda s: s.latency_us)
    elif metric == "bandwidth" and all(s.gbps for s in samples):
        basis, value = fields.GBPS, (lambda s: s.gbps)
    elif metric == "bandwidth":  # same relative change as bytes / time
        basis, value = f"1/{fields.REAL_TIME}", (lambda s: 1 / s.time_us)
    else:
        basis, value = fields.REAL_TIME, (lambda s: s.time_us)
    return basis, [value(s) for s in base.samples], [value(s) for s in new.samples]


def significance(base_values, new_values, alpha):
    """A significance verdict and the U test behind it (None if none ran)."""
    n1, n2 = len(base_values), len(new_values)
    if min(n1, n2) < 2:
        return "no repetitions", None
    test = stats.mann_whitney_u(base_values, new_values)
    if stats.smallest_p_value(n1, n2) >= alpha:
        return "too few repetitions", test
    return ("significant" if test.p < alpha else "not significant"), test


def single_ci95(series):
    """The stated ci95_pct of a side's only sample (None with repetitions)."""
    return series.samples[0].ci95_pct if len(series.samples) == 1 else None


def time_limited(series):
    """Whether any sample stopped at its time budget; None if none says."""
    flags = [s.time_limited for s in series.samples if s.time_limited is not None]
    return any(flags) if flags else None


def classify_change(change, higher_is_better, verdict, threshold, uncertainty=None):
    """A change beyond the threshold (and beyond the stated uncertainty, where there is one)
    counts unless the test rejects it."""
    limit = threshold if uncertainty is None else max(threshold, uncertainty)
    if abs(change) <= limit:
        return "same"
    if verdict == "not significant":
        return "not significant"
    worse = change < 0 if higher_is_better else change > 0
    return "slower" if worse else "faster"


def median_change(name, base, new, metric):
    """(basis, change of the medians, base values, new values); InputError where the ratio of
    the medians is no finite number."""
    basis, base_values, new_values = judged_values(base, new, metric)
    change = stats.median(new_values) / stats.median(base_values) - 1
    if not (math.isfinite(change) and change > -1):
        raise files.InputError(
            f"{name}: base and new {basis} are too far apart to compare (medians "
            f"{stats.median(base_values):g} and {stats.median(new_values):g})"
        )
    return basis, change, base_values, new_values


def judge(name, base, new, options):
    metric = METRICS[options.metric]
    basis, change, base_values, new_values = median_change(name, base, new, metric.name)
    verdict, test = significance(base_values, new_values, options.alpha)
    # Only single runs (no U test possible) have a single_ci95 on both sides.
    uncertainty = stats.combined_uncertainty(single_ci95(base), single_ci95(new))
    if uncertainty is not None:
        judged_by = "uncertainty"
    elif verdict in ("significant", "not significant"):
        judged_by = "u-test"
    else:
        judged_by = "threshold"
    return {
        "status": classify_change(
            change,
            metric.higher_is_better,
            verdict,
            options.threshold / 100,
            None if uncertainty is None else uncertainty / 100,
        ),
        "judged_by": judged_by,
        "uncertainty_percent": uncertainty,
        "judged_on": basis,
        "change": change,
        "p_value": test.p if test else None,
        "u": test.u if test else None,
        "significance": verdict,
    }


# ------------------------------------------------------------------ xferbench results
# decide and replicates need numpy and scipy: imported where used, so that plain Google
# Benchmark files are compared with the standard library alone.


def judging_mode(base, new):
    """JOBS, STATED or REPETITIONS (module docstring)."""
    contexts = base.contexts + new.contexts
    if not all(machines.xferbench_context(c) is not None for c in contexts):
        return REPETITIONS
    from . import replicates

    base.jobs = replicates.side_jobs(base.documents)
    new.jobs = replicates.side_jobs(new.documents)
    return JOBS if replicates.has_jobs(base.jobs, new.jobs) else STATED


def kept(jobs, wanted):
    """jobs (replicates.Jobs) with only the rows in wanted."""
    from . import replicates

    return replicates.Jobs(
        tuple({k: v for k, v in run.items() if k in wanted} for run in jobs.runs), jobs.sources
    )


def stated_figures(side, wanted):
    """{row: ci95_pct} of a side's one file, for the rows in wanted whose every sample states
    one: the median over its repetitions, not narrowed by their number (repetitions in one
    process share its own error)."""
    out = {}
    for name in wanted:
        series = side.series.get(name)
        stated = [s.ci95_pct for s in series.samples] if series and not series.errors else []
        if stated and None not in stated:
            out[name] = stats.median(stated)
    return out


def family_judgement(base, new, wanted, mode, options):
    """decide.Judgement of new against base, family first, then rows."""
    from ..verdict import decide
    from . import replicates

    alpha, min_effect = options.alpha, options.threshold / 100
    a, b = kept(base.jobs, wanted), kept(new.jobs, wanted)
    if mode == JOBS:
        return replicates.judge(a, b, alpha, min_effect)
    return decide.check(
        list(a.runs),
        b.runs[0],
        [stated_figures(base, wanted)],
        stated_figures(new, wanted),
        alpha=alpha,
        min_effect=min_effect,
    )


VERDICT_STATUS = {"regression": "slower", "improvement": "faster", "no change": "same"}


def judged_fields(judged, family_test, mode, metric):
    """A report row's judgement from a decide.RowJudgement of a row both sides ran (and its
    family's decide.Shift): the 95% interval is that of its whole change. The judgement is on
    time; with metric bandwidth the change shown is that of bytes over time."""
    from ..verdict import decide
    from . import replicates

    if judged is None or judged.status != decide.JUDGED:
        return {"status": "unjudged", "judged_by": mode, "note": judged.note if judged else ""}
    if judged.relative_to == "family" and family_test is not None:
        interval = replicates.whole_interval_pct(judged.test, family_test)
    else:
        interval = replicates.interval_pct(judged.test)
    return {
        "status": VERDICT_STATUS[judged.verdict],
        "judged_by": mode,
        "judged_on": f"1/{fields.REAL_TIME}" if metric == "bandwidth" else fields.REAL_TIME,
        "change": finite_float_or_none(
            1 / (1 + judged.change_pct / 100) - 1
            if metric == "bandwidth"
            else judged.change_pct / 100
        ),
        "p_value": finite_float_or_none(judged.test.p_value),
        "significance": "significant" if judged.verdict != decide.NO_CHANGE else None,
        "uncertainty_percent": finite_float_or_none(interval),
        "relative_to": judged.relative_to,
        "detectable_percent": finite_float_or_none(judged.test.detectable_pct),
    }


def family_rows(judgement):
    """The report's families: each judged family's change, its 95% interval and the smallest
    slowdown it could have shown."""
    from ..verdict import decide
    from . import replicates

    out = []
    for f in judgement.families:
        test = f.test
        out.append(
            {
                "family": f.family,
                "status": VERDICT_STATUS.get(f.verdict, f.status)
                if f.status == decide.JUDGED
                else f.status,
                "rows": f.rows_judged,
                "change_percent": finite_float_or_none(test.shift_pct) if test else None,
                "ci95_percent": finite_float_or_none(replicates.interval_pct(test))
                if test
                else None,
                "noise_percent": finite_float_or_none(test.noise_pct) if test else None,
                "detectable_percent": finite_float_or_none(test.detectable_pct) if test else None,
                "p_value": finite_float_or_none(test.p_value) if test else None,
                "df": test.df if test and math.isfinite(test.df) else None,
            }
        )
    return out


def job_counts(side, name):
    """How many of a side's jobs have a time for the row."""
    return sum(isinstance(run.get(name), float) for run in side.jobs.runs)


def failure_status(base, new):
    if base.errors and new.errors:
        return {"status": "failed", "failed_in": "both"}
    if new.errors:
        return {"status": "failed", "failed_in": "new"}
    return {"status": "fixed", "failed_in": "base"}


def summarise_series(series):
    if series is None:
        return None
    return {
        "n": len(series.samples),
        "failed": len(series.errors),
        "time_us": stats.median_or_none([s.time_us for s in series.samples]),
        fields.LATENCY_US: stats.median_or_none([s.latency_us for s in series.samples]),
        "gbps": stats.median_or_none([s.gbps for s in series.samples]),
        "errors": list(dict.fromkeys(series.errors)),
        "aggregates_only": series.aggregates_only,
    }


def stated_fields(side, series):
    if series is None:
        return {f"{side}_ci95_pct": None, f"{side}_time_limited": None}
    return {f"{side}_ci95_pct": single_ci95(series), f"{side}_time_limited": time_limited(series)}


def compare_row(name, base, new, options, judged=None, mode=REPETITIONS, family_test=None):
    """One row of the report; judged: its decide.RowJudgement where the sides were judged as
    xferbench results (mode JOBS or STATED)."""
    row = {
        "name": name,
        "path": names.path_of(name),
        "bytes": names.message_bytes(name),
        "status": None,
        "failed_in": None,
        "judged_on": None,
        "change": None,
        "p_value": None,
        "u": None,
        "significance": None,
        "judged_by": None,
        "uncertainty_percent": None,
        "relative_to": None,
        "detectable_percent": None,
        "note": None,
        **stated_fields("base", base),
        **stated_fields("new", new),
        "base": summarise_series(base),
        "new": summarise_series(new),
    }
    if base is None or new is None:
        row["status"] = "new" if base is None else "missing"
    elif base.errors or new.errors:
        row.update(failure_status(base, new))
    elif mode == REPETITIONS:
        row.update(judge(name, base, new, options))
    else:
        row["change"] = median_change(name, base, new, options.metric)[1]
        row.update(judged_fields(judged, family_test, mode, options.metric))
    return row


def is_regression(row):
    return row["status"] == "slower" or row["failed_in"] == "new"


def regressions_of(report_rows, families_judged):
    """Names of what fails the gate: families judged slower, then rows."""
    slower = [f["family"] for f in families_judged if f["status"] == "slower"]
    return slower + [row["name"] for row in report_rows if is_regression(row)]


def is_time_limited(row):
    return bool(row["base_time_limited"] or row["new_time_limited"])


def count_rows(report_rows, **wanted):
    return sum(all(row[k] == v for k, v in wanted.items()) for row in report_rows)
