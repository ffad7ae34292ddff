"""compare.py's judgement of two sets of runs: the sides, their machines, and the report. Rows
are matched by name. xferbench results are
judged family first, then rows, as tools/track judges (decide.py: false-discovery control and a
minimum effect): by their jobs where the sides hold three or more between them (each job one
process: replicates.py), else by the rows' stated ci95. Plain Google Benchmark files are judged
row by row on their repetitions, all from one process, with a Mann-Whitney U test and a
threshold. The report is a plain dict (schema xferbench-compare/1) that render.py prints."""

import argparse
import dataclasses

from ..core import files, stats
from ..node import links
from ..result import machines, rows
from . import families, judging, notes

SCHEMA = "xferbench-compare/1"
SMALL_MESSAGE_BYTES = 64 * 1024


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
        values["alpha"] = judging.DEFAULT_ALPHA[mode]
    if values.get("threshold") is None:
        values["threshold"] = judging.DEFAULT_THRESHOLD[mode]
    return argparse.Namespace(**values)


def build_report(base, new, options, identity=machines.machine_identity):
    """The report of new against base. options: metric, threshold (percent; None: the mode's
    default), alpha (None likewise), filter (a compiled pattern or None), cross_machine."""
    machine_match = compare_machines(base, new, options.cross_machine, identity)
    wanted = wanted_rows(base, new, options.filter)
    mode = judging.judging_mode(base, new)
    options = resolved(options, mode)
    judgement, families_judged, report_rows = judged_rows(base, new, wanted, mode, options)
    metric = judging.METRICS[options.metric]
    regressions = judging.regressions_of(report_rows, families_judged)
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
        "notes": notes.report_notes(base, new, report_rows, options),
        "regressions": regressions,
        "exit_status": 1 if regressions else 0,
    }
    if options.cross_machine:
        add_cross_machine(report, base, new, metric, options)
    return report


def wanted_rows(base, new, pattern):
    """The rows of either side that --filter keeps, in order; an error where the sides share
    none of them."""
    wanted = [
        n
        for n in dict.fromkeys(list(base.series) + list(new.series))
        if pattern is None or filter_matches(pattern, n, base, new)
    ]
    if not any(n in base.series and n in new.series for n in wanted):
        where = f" matching --filter {pattern.pattern!r}" if pattern else ""
        raise files.InputError(f"base and new have no benchmark rows in common{where}")
    return wanted


def judged_rows(base, new, wanted, mode, options):
    """(the family-first judgement or None, its families for the report, a report row per
    wanted row). By jobs or stated ci95 the families are judged first and each row within its
    family; by repetitions, each row on its own."""
    judgement, families_judged, judged, family_tests = None, [], {}, {}
    try:
        if mode != judging.REPETITIONS:
            judgement = judging.family_judgement(base, new, set(wanted), mode, options)
            families_judged = judging.family_rows(judgement)
            judged = {r.row: r for r in judgement.rows}
            family_tests = {f.family: f.test for f in judgement.families}
        report_rows = [
            judging.compare_row(
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
    if mode == judging.JOBS:
        for row in report_rows:
            for label, side in (("base", base), ("new", new)):
                if row[label]:
                    row[label]["n"] = judging.job_counts(side, row["name"])
    return judgement, families_judged, report_rows


def add_cross_machine(report, base, new, metric, options):
    """--cross-machine: each family's geomean ratio with its interval, its links' shares, and
    the two machines' labels."""
    report["families"] = families.family_ratios(
        report["rows"], metric.higher_is_better, options.threshold / 100
    )
    links.add_link_shares(report["families"], base.files, new.files)
    report["machine_labels"] = {
        "base": machine_label(base.contexts),
        "new": machine_label(new.contexts),
    }


def machine_label(contexts):
    """'host of rank 0, GPU model' of a side's runs, for the family table."""
    return machines.pool_values([machines.run_label(c, "machine unknown") for c in contexts])
