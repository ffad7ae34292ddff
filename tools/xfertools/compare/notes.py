"""The notes under compare.py's report: what a reader must know of how its rows were read and
judged (unknown machines, aggregate-only files, legacy names, significance, uncertainty, time
limits, the basis of a metric, rows left unjudged)."""

from ..core import fields, names, stats
from ..core.text import plural
from ..result import machines
from .judging import STATED, count_rows, is_time_limited


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
        "bandwidth": (
            f"1/{fields.REAL_TIME}",
            f"no {fields.GBPS} or {fields.BYTES_PER_SECOND}",
        ),
        "latency": (fields.REAL_TIME, f"no {fields.LATENCY_US} counter"),
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
