"""A run in the formats the trackers users already run take, per row its latency and its
bandwidth with the range its stated ci95_pct gives (the mean over repetitions, and their
spread, where the run has repetitions). Failed rows are left out: a tracker would take a
missing number for zero, and the next good run for an infinite improvement.

bencher  Bencher Metric Format: {row: {"latency": {value, lower_value, upper_value} in ns,
         "bandwidth": {...} in GB/s}}; Bencher's built-in latency measure is in ns.
github   github-action-benchmark's custom JSON, one metric per file: a list of {name, unit,
         value, range, extra}; latency (us) for tool customSmallerIsBetter, bandwidth (GB/s)
         for customBiggerIsBetter.
"""

import json

from ..core.text import plural

FORMATS = ("bencher", "github")
METRICS = {
    "latency": ("us", "customSmallerIsBetter"),
    "bandwidth": ("GB/s", "customBiggerIsBetter"),
}


def latency_us(figure):
    return figure.latency_us if figure.latency_us is not None else figure.time_us


def bounds(value, ci95_pct, higher_is_better):
    """(lower, upper) of a row's value from its time's relative 95% half-width c: time within
    (1 - c, 1 + c) of its mean, bandwidth within 1 / (1 + c) and 1 / (1 - c); a bound that
    does not exist (c of 100% or more) is None."""
    if ci95_pct is None:
        return None, None
    c = ci95_pct / 100
    if higher_is_better:
        return value / (1 + c), (value / (1 - c) if c < 1 else None)
    return max(0.0, value * (1 - c)), value * (1 + c)


def metric_value(figure, metric):
    return figure.gbps if metric == "bandwidth" else latency_us(figure)


def bencher_measure(figure, metric, scale):
    value = metric_value(figure, metric)
    if value is None:
        return None
    lower, upper = bounds(value, figure.ci95_pct, metric == "bandwidth")
    measure = {"value": value * scale}
    if lower is not None:
        measure["lower_value"] = lower * scale
    if upper is not None:
        measure["upper_value"] = upper * scale
    return measure


def to_bencher(figures):
    """BMF of the successful rows: latency in ns, bandwidth in GB/s."""
    document = {}
    for row, figure in figures.items():
        measures = {
            metric: bencher_measure(figure, metric, scale)
            for metric, scale in (("latency", 1e3), ("bandwidth", 1.0))
        }
        document[row] = {k: v for k, v in measures.items() if v is not None}
    return document


def github_entry(row, figure, metric):
    value = metric_value(figure, metric)
    if value is None:
        return None
    entry = {"name": row, "unit": METRICS[metric][0], "value": value}
    if figure.ci95_pct is not None:
        entry["range"] = f"±{figure.ci95_pct:.2g}%"
    basis = "one run" if figure.repetitions == 1 else f"{figure.repetitions} repetitions"
    entry["extra"] = f"mean of {basis}; range: 95% interval of the mean"
    return entry


def to_github(figures, metric):
    """github-action-benchmark's custom JSON of one metric for the successful rows."""
    entries = (github_entry(row, figure, metric) for row, figure in figures.items())
    return [entry for entry in entries if entry is not None]


def export(figures, fmt, metric="latency"):
    """(strict JSON text, notes for stderr) of a run's figures (row name -> rows.Figure)."""
    failed = [row for row, figure in figures.items() if figure.error]
    good = {row: figure for row, figure in figures.items() if not figure.error}
    document = to_bencher(good) if fmt == "bencher" else to_github(good, metric)
    notes = []
    if failed:
        shown = ", ".join(failed[:3]) + (", ..." if len(failed) > 3 else "")
        notes.append(f"left out {plural(len(failed), 'failed row')}: {shown}")
    return json.dumps(document, indent=1, allow_nan=False) + "\n", notes
