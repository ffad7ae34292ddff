"""compare.py's judgement of two sets of runs. Rows are matched by name. xferbench results are
judged family first, then rows, as tools/track judges (decide.py: false-discovery control and a
minimum effect): by their jobs where the sides hold three or more between them (each job one
process: replicates.py), else by the rows' stated ci95. Plain Google Benchmark files are judged
row by row on their repetitions, all from one process, with a Mann-Whitney U test and a
threshold. The report is a plain dict (schema xferbench-compare/1) that render.py prints."""

import argparse
import dataclasses
import math

from . import families, files, links, machines, names, rows, stats
from .text import plural

SCHEMA = "xferbench-compare/1"
SMALL_MESSAGE_BYTES = 64 * 1024
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


@dataclasses.dataclass
class Side:
    label: str
    files: list
    contexts: list
    series: dict  # {benchmark name: rows.Series}, pooled over the side's files
    aggregate_only_files: list
    # file: [(a name as that file wrote it, its current name)] of its rows named as before
    # exchange modes, in file order
    legacy_files: dict = dataclasses.field(default_factory=dict)
    documents: list = dataclasses.field(default_factory=list)  # [(file, loaded document)]
    jobs: object = None  # replicates.Jobs of xferbench results, once judged so


def load_side(label, paths, loaded=None):
    """A side from its result files (loaded: {file: document} already read, e.g. the sides of
    a tools/ab document)."""
    side = Side(label, list(paths), [], {}, [])
    for path in paths:
        document = (loaded or {}).get(path) or files.load_result(path, f"{label} file {path}")
        side.documents.append((path, document))
        side.contexts.append(machines.context_of(document))
        file_series = rows.series_from_document(document)
        if any(s.aggregates_only for s in file_series.values()):
            side.aggregate_only_files.append(path)
        renamed = [(min(s.legacy_names), name) for name, s in file_series.items() if s.legacy_names]
        if renamed:
            side.legacy_files[path] = renamed
        for name, series in file_series.items():
            side.series.setdefault(name, rows.Series()).extend(series)
    return side


# ------------------------------------------------------------------ machines


def context_diff(base, new):
    base_facts = machines.pool_facts([machines.run_facts(c) for c in base.contexts])
    new_facts = machines.pool_facts([machines.run_facts(c) for c in new.contexts])
    keys = dict.fromkeys(list(base_facts) + list(new_facts))
    return [
        {
            "field": k,
            "base": base_facts.get(k),
            "new": new_facts.get(k),
            "identity": k in machines.IDENTITY_FIELDS,
        }
        for k in keys
        if base_facts.get(k) != new_facts.get(k)
    ]


def compare_machines(base, new, cross_machine, identity=machines.machine_identity):
    """'same', 'different' or 'unknown'; refuses 'different' unless asked. identity: what must
    agree (tools/ab: machines.hardware_identity, since software is what it compares)."""
    base_identity = machines.pooled_identity(base.contexts, identity)
    new_identity = machines.pooled_identity(new.contexts, identity)
    if base_identity is None or new_identity is None:
        return "unknown"
    keys = dict.fromkeys(list(base_identity) + list(new_identity))
    differing = [k for k in keys if base_identity.get(k) != new_identity.get(k)]
    if differing and not cross_machine:
        details = "; ".join(
            f"{k}: {base_identity.get(k)!r} vs {new_identity.get(k)!r}" for k in differing
        )
        raise files.InputError(
            f"base and new ran on different machines ({details}); pass --cross-machine to "
            "compare them as a machine comparison"
        )
    return "different" if differing else "same"


# ------------------------------------------------------------------ one row


def judged_values(base, new, metric):
    """The judged metric per sample, both sides on the same basis."""
    samples = base.samples + new.samples
    if metric == "latency" and all(s.latency_us for s in samples):
        basis, value = "latency_us", (lambda s: s.latency_us)
    elif metric == "bandwidth" and all(s.gbps for s in samples):
        basis, value = "GB/s", (lambda s: s.gbps)
    elif metric == "bandwidth":  # same relative change as bytes / time
        basis, value = "1/real_time", (lambda s: 1 / s.time_us)
    else:
        basis, value = "real_time", (lambda s: s.time_us)
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
    from . import decide, replicates

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


def finite(value):
    """value where it is a finite number, else None: the report is strict JSON."""
    return value if isinstance(value, float) and math.isfinite(value) else None


def judged_fields(judged, family_test, mode, metric):
    """A report row's judgement from a decide.RowJudgement of a row both sides ran (and its
    family's decide.Shift): the 95% interval is that of its whole change. The judgement is on
    time; with metric bandwidth the change shown is that of bytes over time."""
    from . import decide, replicates

    if judged is None or judged.status != decide.JUDGED:
        return {"status": "unjudged", "judged_by": mode, "note": judged.note if judged else ""}
    if judged.relative_to == "family" and family_test is not None:
        interval = replicates.whole_interval_pct(judged.test, family_test)
    else:
        interval = replicates.interval_pct(judged.test)
    return {
        "status": VERDICT_STATUS[judged.verdict],
        "judged_by": mode,
        "judged_on": "1/real_time" if metric == "bandwidth" else "real_time",
        "change": finite(
            1 / (1 + judged.change_pct / 100) - 1
            if metric == "bandwidth"
            else judged.change_pct / 100
        ),
        "p_value": finite(judged.test.p_value),
        "significance": "significant" if judged.verdict != decide.NO_CHANGE else None,
        "uncertainty_percent": finite(interval),
        "relative_to": judged.relative_to,
        "detectable_percent": finite(judged.test.detectable_pct),
    }


def family_rows(judgement):
    """The report's families: each judged family's change, its 95% interval and the smallest
    slowdown it could have shown."""
    from . import decide, replicates

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
                "change_percent": finite(test.shift_pct) if test else None,
                "ci95_percent": finite(replicates.interval_pct(test)) if test else None,
                "noise_percent": finite(test.noise_pct) if test else None,
                "detectable_percent": finite(test.detectable_pct) if test else None,
                "p_value": finite(test.p_value) if test else None,
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
        "latency_us": stats.median_or_none([s.latency_us for s in series.samples]),
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


# ------------------------------------------------------------------ summary and notes


def size_class(size):
    if size is None:
        return "unsized"
    return "small" if size < SMALL_MESSAGE_BYTES else "large"


def geomean_summary(report_rows):
    """Geometric-mean new/base ratio per path and message-size class."""
    ratios = {}
    for row in report_rows:
        if row["change"] is not None:
            key = (row["path"], size_class(row["bytes"]))
            ratios.setdefault(key, []).append(1 + row["change"])
    summary = []
    for (path, size), values in ratios.items():
        ratio = stats.geometric_mean(values)
        summary.append(
            {
                "path": path,
                "size_class": size,
                "rows": len(values),
                "ratio": ratio,
                "change": ratio - 1,
            }
        )
    return summary


def count_rows(report_rows, **wanted):
    return sum(all(row[k] == v for k, v in wanted.items()) for row in report_rows)


def identity_notes(base, new):
    unknown = [
        f"{side.label} file {path}"
        for side in (base, new)
        for path, context in zip(side.files, side.contexts)
        if machines.xferbench_context(context) is None
    ]
    if not unknown:
        return []
    return [
        "Machine identity unknown (plain Google Benchmark JSON, no context.xferbench): "
        f"{', '.join(unknown)}; compared without checking that the machines match."
    ]


def aggregate_notes(base, new):
    return [
        f"{side.label} file {path} holds only aggregate rows: each benchmark's median counts "
        "as one sample."
        for side in (base, new)
        for path in side.aggregate_only_files
    ]


def legacy_name_notes(base, new):
    """One note for the files whose rows are named as before exchange modes, with an example of
    each kind of renaming they needed."""
    renamed_files = [
        (side.label, path, renamed)
        for side in (base, new)
        for path, renamed in side.legacy_files.items()
    ]
    if not renamed_files:
        return []
    listed = ", ".join(
        f"{label} file {path} ({plural(len(renamed), 'row')})"
        for label, path, renamed in renamed_files
    )
    renamed = [pair for _, _, pairs in renamed_files for pair in pairs]
    staged = [pair for pair in renamed if names.path_of(pair[0]) == names.STAGED_PATH]
    others = [pair for pair in renamed if names.path_of(pair[0]) != names.STAGED_PATH]
    examples = " and ".join(f"{old} as {current}" for old, current in others[:1] + staged[:1])
    return [
        f"Rows named as before exchange modes (they measured ping-pong) in {listed}: matched "
        f"and shown under their current names, with {names.LEGACY_MODE}, e.g. {examples}."
    ]


def significance_notes(report_rows, alpha):
    notes = []
    unknown = count_rows(report_rows, significance="no repetitions", judged_by="threshold")
    if unknown:
        notes.append(
            f"Significance unknown for {plural(unknown, 'row')}: no repetitions to test; "
            "judged by the threshold only."
        )
    too_few = [r for r in report_rows if r["significance"] == "too few repetitions"]
    if too_few:
        n1, n2 = too_few[0]["base"]["n"], too_few[0]["new"]["n"]
        notes.append(
            f"Too few repetitions for significance at alpha {alpha:g} in "
            f"{plural(len(too_few), 'row')} (e.g. {n1} vs {n2}: the smallest possible p is "
            f"{stats.smallest_p_value(n1, n2):.3f}); judged by the threshold only. Use at "
            f"least {stats.repetitions_needed(alpha)} repetitions per side."
        )
    return notes


def uncertainty_notes(report_rows):
    stated = [r for r in report_rows if r["judged_by"] == "uncertainty"]
    if not stated:
        return []
    notes = [
        f"{plural(len(stated), 'row')} without repetitions judged by the uncertainty the runs "
        "stated (ci95_pct): ±unc = sqrt(base^2 + new^2); a change counts only beyond both "
        "±unc and the threshold."
    ]
    return notes + time_limited_notes(stated, "±unc")


def time_limited_notes(judged, column):
    limited = sum(map(is_time_limited, judged))
    notes = []
    if limited:
        notes.append(
            f"{plural(limited, 'row')} marked * under {column} "
            f"{'was' if limited == 1 else 'were'} time-limited: stopped by the time budget "
            "before reaching the requested precision; judged by the wider uncertainty stated."
        )
    return notes


def basis_notes(report_rows, metric):
    fallback = {
        "bandwidth": ("1/real_time", "no GB/s or bytes_per_second"),
        "latency": ("real_time", "no latency_us counter"),
    }
    if metric not in fallback:
        return []
    basis, missing = fallback[metric]
    count = count_rows(report_rows, judged_on=basis)
    if not count:
        return []
    return [f"{plural(count, 'row')} with {missing} judged on {basis}."]


def stated_notes(report_rows):
    """Time-limited rows of xferbench results judged by their stated ci95."""
    return time_limited_notes([r for r in report_rows if r["judged_by"] == STATED], "±95%")


def unjudged_notes(report_rows):
    unjudged = [r for r in report_rows if r["status"] == "unjudged"]
    if not unjudged:
        return []
    reasons = "; ".join(dict.fromkeys(r["note"] or "no judgement" for r in unjudged))
    return [f"{plural(len(unjudged), 'row')} on both sides not judged: {reasons}."]


def report_notes(base, new, report_rows, options):
    return (
        identity_notes(base, new)
        + unjudged_notes(report_rows)
        + stated_notes(report_rows)
        + aggregate_notes(base, new)
        + legacy_name_notes(base, new)
        + significance_notes(report_rows, options.alpha)
        + uncertainty_notes(report_rows)
        + basis_notes(report_rows, options.metric)
    )


def filter_matches(pattern, name, base, new):
    """--filter matches the shown name or a name a file wrote, so a filter written for older
    files (^mpi_host/bytes:) still selects their rows."""
    written = {name}
    for side in (base, new):
        if name in side.series:
            written |= side.series[name].legacy_names
    return any(pattern.search(n) for n in written)


def resolved(options, mode):
    """options with alpha and threshold set to the mode's defaults where not given."""
    values = dict(vars(options))
    if values.get("alpha") is None:
        values["alpha"] = DEFAULT_ALPHA[mode]
    if values.get("threshold") is None:
        values["threshold"] = DEFAULT_THRESHOLD[mode]
    return argparse.Namespace(**values)


def build_report(base, new, options, identity=machines.machine_identity):
    """The report of new against base. options: metric, threshold (percent; None: the mode's
    default), alpha (None likewise), filter (a compiled pattern or None), cross_machine."""
    machine_match = compare_machines(base, new, options.cross_machine, identity)
    wanted = [
        n
        for n in dict.fromkeys(list(base.series) + list(new.series))
        if options.filter is None or filter_matches(options.filter, n, base, new)
    ]
    if not any(n in base.series and n in new.series for n in wanted):
        where = f" matching --filter {options.filter.pattern!r}" if options.filter else ""
        raise files.InputError(f"base and new have no benchmark rows in common{where}")
    mode = judging_mode(base, new)
    options = resolved(options, mode)
    judgement, families_judged, judged, family_tests = None, [], {}, {}
    try:
        if mode != REPETITIONS:
            judgement = family_judgement(base, new, set(wanted), mode, options)
            families_judged = family_rows(judgement)
            judged = {r.row: r for r in judgement.rows}
            family_tests = {f.family: f.test for f in judgement.families}
        report_rows = [
            compare_row(
                n,
                base.series.get(n),
                new.series.get(n),
                options,
                judged.get(n),
                mode,
                family_tests.get(judged[n].family) if n in judged else None,
            )
            for n in wanted
        ]
    except (OverflowError, ZeroDivisionError):
        raise files.InputError(
            "base and new times are too far apart to compare (a ratio beyond floating point)"
        ) from None
    if mode == JOBS:
        for row in report_rows:
            for label, side in (("base", base), ("new", new)):
                if row[label]:
                    row[label]["n"] = job_counts(side, row["name"])
    metric = METRICS[options.metric]
    regressions = regressions_of(report_rows, families_judged)
    report = {
        "schema": SCHEMA,
        "judged_by": mode,
        "metric": {
            "name": metric.name,
            "unit": metric.unit,
            "higher_is_better": metric.higher_is_better,
        },
        "threshold_percent": options.threshold,
        "alpha": options.alpha,
        "machines": machine_match,
        "base": {"files": base.files, "jobs": len(base.jobs.runs) if judgement else None},
        "new": {"files": new.files, "jobs": len(new.jobs.runs) if judgement else None},
        "context_diff": context_diff(base, new),
        "families_judged": families_judged,
        "judgement_note": judgement.note if judgement else None,
        "rows": report_rows,
        "summary": geomean_summary(report_rows),
        "notes": report_notes(base, new, report_rows, options),
        "regressions": regressions,
        "exit_status": 1 if regressions else 0,
    }
    if options.cross_machine:
        report["families"] = families.family_ratios(
            report_rows, metric.higher_is_better, options.threshold / 100
        )
        links.add_link_shares(report["families"], base.files, new.files)
        report["machine_labels"] = {
            "base": machine_label(base.contexts),
            "new": machine_label(new.contexts),
        }
    return report


def machine_label(contexts):
    """'host of rank 0, GPU model' of a side's runs, for the family table."""
    return machines.pool_values([machines.run_label(c, "machine unknown") for c in contexts])
