"""compare.py's judgement of two sets of runs, row by row: match rows by name, pool repetitions
per side, compare medians, and say with a Mann-Whitney U test (repetitions) or the rows'
stated uncertainty (single runs) whether a change beyond the threshold is real. The report is
a plain dict (schema xferbench-compare/1) that render.py prints."""

import dataclasses
import math

from . import families, files, links, machines, names, rows, stats
from .text import plural

SCHEMA = "xferbench-compare/1"
SMALL_MESSAGE_BYTES = 64 * 1024
STATUSES = ("faster", "slower", "same", "not significant", "new", "missing", "failed", "fixed")


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


def load_side(label, paths):
    side = Side(label, list(paths), [], {}, [])
    for path in paths:
        document = files.load_result(path, f"{label} file {path}")
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


def compare_machines(base, new, cross_machine):
    """'same', 'different' or 'unknown'; refuses 'different' unless asked."""
    base_identity = machines.pooled_identity(base.contexts)
    new_identity = machines.pooled_identity(new.contexts)
    if base_identity is None or new_identity is None:
        return "unknown"
    differing = [k for k in machines.IDENTITY_FIELDS if base_identity.get(k) != new_identity.get(k)]
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


def judge(name, base, new, options):
    metric = METRICS[options.metric]
    basis, base_values, new_values = judged_values(base, new, metric.name)
    change = stats.median(new_values) / stats.median(base_values) - 1
    if not (math.isfinite(change) and change > -1):
        raise files.InputError(
            f"{name}: base and new {basis} are too far apart to compare (medians "
            f"{stats.median(base_values):g} and {stats.median(new_values):g})"
        )
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


def compare_row(name, base, new, options):
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
        **stated_fields("base", base),
        **stated_fields("new", new),
        "base": summarise_series(base),
        "new": summarise_series(new),
    }
    if base is None or new is None:
        row["status"] = "new" if base is None else "missing"
    elif base.errors or new.errors:
        row.update(failure_status(base, new))
    else:
        row.update(judge(name, base, new, options))
    return row


def is_regression(row):
    return row["status"] == "slower" or row["failed_in"] == "new"


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
    limited = sum(map(is_time_limited, stated))
    if limited:
        notes.append(
            f"{plural(limited, 'row')} marked * under ±unc "
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


def report_notes(base, new, report_rows, options):
    return (
        identity_notes(base, new)
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


def build_report(base, new, options):
    """The report of new against base. options: metric, threshold (percent), alpha, filter (a
    compiled pattern or None), cross_machine."""
    machine_match = compare_machines(base, new, options.cross_machine)
    wanted = [
        n
        for n in dict.fromkeys(list(base.series) + list(new.series))
        if options.filter is None or filter_matches(options.filter, n, base, new)
    ]
    report_rows = [compare_row(n, base.series.get(n), new.series.get(n), options) for n in wanted]
    if not any(row["base"] and row["new"] for row in report_rows):
        where = f" matching --filter {options.filter.pattern!r}" if options.filter else ""
        raise files.InputError(f"base and new have no benchmark rows in common{where}")
    metric = METRICS[options.metric]
    regressions = [row["name"] for row in report_rows if is_regression(row)]
    report = {
        "schema": SCHEMA,
        "metric": {
            "name": metric.name,
            "unit": metric.unit,
            "higher_is_better": metric.higher_is_better,
        },
        "threshold_percent": options.threshold,
        "alpha": options.alpha,
        "machines": machine_match,
        "base": {"files": base.files},
        "new": {"files": new.files},
        "context_diff": context_diff(base, new),
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
