"""The figures of a result document's rows: per benchmark its samples (one per repetition, or
the median aggregate of an aggregates-only run), its failures, and the names it was written
under. Values that are not positive finite numbers count as absent, never as numbers."""

import dataclasses
import math
import statistics

from ..core import fields, names, stats
from ..core.finite import is_finite_number

TIME_UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


@dataclasses.dataclass
class Sample:
    """One repetition of one benchmark (or one aggregate row)."""

    time_us: float | None  # real_time in microseconds
    latency_us: float | None  # the latency_us counter
    gbps: float | None  # the GB/s counter, else bytes_per_second / 1e9
    ci95_pct: float | None = None  # stated 95% CI half-width of the mean, percent
    time_limited: bool | None = None  # None: the row does not say


@dataclasses.dataclass
class Series:
    """Everything one side holds for one benchmark, pooled over files."""

    samples: list = dataclasses.field(default_factory=list)
    errors: list = dataclasses.field(default_factory=list)  # why each failed row failed
    aggregates_only: bool = False
    legacy_names: set = dataclasses.field(default_factory=set)  # older names, as written

    def extend(self, other):
        self.samples += other.samples
        self.errors += other.errors
        self.aggregates_only |= other.aggregates_only
        self.legacy_names |= other.legacy_names


@dataclasses.dataclass
class Group:
    """The rows of one benchmark in one document, as written."""

    repetitions: list = dataclasses.field(default_factory=list)  # run_type iteration
    aggregates: list = dataclasses.field(default_factory=list)  # mean, median, stddev, cv
    written: set = dataclasses.field(default_factory=set)  # normalised names as written

    def counted(self):
        """The rows that count: the repetitions, else the median aggregate (else the mean)."""
        if self.repetitions:
            return self.repetitions
        by_kind = {
            row.get(fields.AGGREGATE_NAME): row
            for row in self.aggregates
            if isinstance(row.get(fields.AGGREGATE_NAME), str)
        }
        return next(([by_kind[kind]] for kind in ("median", "mean") if kind in by_kind), [])


def positive(value):
    return float(value) if is_finite_number(value) and value > 0 else None


def shown(value, width=40):
    """repr(value), cut to width characters."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def is_aggregate(row):
    return row.get(fields.RUN_TYPE) == "aggregate"


def is_failed(row):
    """Failed or skipped: error_occurred (Google Benchmark 1.7.x) or skipped (1.8.x)."""
    return bool(row.get(fields.ERROR_OCCURRED) or row.get(fields.SKIPPED))


def failure_message(row):
    message = row.get(fields.ERROR_MESSAGE) or row.get(fields.SKIP_MESSAGE) or "failed"
    return message if isinstance(message, str) else shown(message)


def row_time_us(row):
    """real_time in microseconds: a positive finite number, else None."""
    real_time = positive(row.get(fields.REAL_TIME))
    unit = row.get(fields.TIME_UNIT, "ns")
    if real_time is None or not isinstance(unit, str) or unit not in TIME_UNIT_TO_US:
        return None
    time_us = real_time * TIME_UNIT_TO_US[unit]
    return time_us if 0 < time_us < math.inf else None


def row_problem(row):
    """Why a row has no valid time (failed, skipped, bad value), or None."""
    if is_failed(row):
        return failure_message(row)
    unit = row.get(fields.TIME_UNIT, "ns")
    if not isinstance(unit, str) or unit not in TIME_UNIT_TO_US:
        return f"unknown time_unit {shown(unit)}"
    if row_time_us(row) is None:
        if positive(row.get(fields.REAL_TIME)) is not None:
            return f"real_time {shown(row.get('real_time'))} {unit} is out of range in microseconds"
        return f"no valid real_time ({shown(row.get('real_time'))})"
    return None


def row_gbps(row):
    """GB/s (1e9 B/s): the GB/s counter, else bytes_per_second / 1e9."""
    gbps = positive(row.get(fields.GBPS))
    if gbps is None and positive(row.get(fields.BYTES_PER_SECOND)):
        gbps = positive(row[fields.BYTES_PER_SECOND] / 1e9)
    return gbps


def stated_ci95(row):
    """The row's ci95_pct if it is a finite number >= 0, else None."""
    value = row.get(fields.CI95_PCT)
    return float(value) if is_finite_number(value) and value >= 0 else None


def stated_time_limited(row):
    """True/False from a 1/0 time_limited counter; None if absent or odd."""
    value = row.get(fields.TIME_LIMITED)
    return bool(value) if is_finite_number(value) and value in (0, 1) else None


def row_sample(row, stated=True):
    """One sample; stated=False ignores the row's own uncertainty counters (an aggregate row's
    ci95_pct is not the uncertainty of its value)."""
    sample = Sample(row_time_us(row), positive(row.get(fields.LATENCY_US)), row_gbps(row))
    if stated:
        sample.ci95_pct = stated_ci95(row)
        sample.time_limited = stated_time_limited(row)
    return sample


def written_name(row):
    """The normalised name of the benchmark a row belongs to, as written."""
    name = row.get("run_name")
    if not isinstance(name, str):
        name = str(row.get("name"))
        suffix = f"_{row.get('aggregate_name')}"
        if is_aggregate(row) and name.endswith(suffix):
            name = name[: -len(suffix)]
    return names.normalise_name(name)


def benchmark_name(row):
    """The name a row is matched, shown and reported by: its written name, under its current
    name where an older file named it otherwise (names.canonical_name)."""
    return names.canonical_name(written_name(row))


def grouped_rows(document):
    """{benchmark name: Group} of a loaded result document, in file order."""
    groups = {}
    for row in document[fields.BENCHMARKS]:
        written = written_name(row)
        group = groups.setdefault(names.canonical_name(written), Group())
        (group.aggregates if is_aggregate(row) else group.repetitions).append(row)
        group.written.add(written)
    return groups


def series_from_rows(rows, aggregates_only):
    series = Series(aggregates_only=aggregates_only)
    for row in rows:
        problem = row_problem(row)
        if problem:
            series.errors.append(problem)
        else:
            series.samples.append(row_sample(row, not aggregates_only))
    return series


def series_from_document(document):
    """{benchmark name: Series} of a loaded result document: each benchmark's repetitions, or
    where it has none its median aggregate (else mean) as one sample."""
    result = {}
    for name, group in grouped_rows(document).items():
        rows = group.counted()
        if rows:
            result[name] = series_from_rows(rows, not group.repetitions)
            result[name].legacy_names = group.written - {name}
    return result


@dataclasses.dataclass(frozen=True)
class Figure:
    """One benchmark of one run as a tracker keeps it: the mean over its repetitions (one
    repetition: the row itself) and the uncertainty of that mean, or why it failed."""

    time_us: float | None
    latency_us: float | None
    gbps: float | None
    ci95_pct: float | None  # relative 95% half-width of time_us, percent; None: not stated
    repetitions: int
    error: str | None = None  # a failed benchmark: why (its first failure); no figures then


def mean_or_none(values):
    """The mean, or None unless every value is given."""
    return statistics.fmean(values) if values and None not in values else None


def repetitions_ci95(times):
    """The relative 95% half-width (percent) of the mean of several repetitions' times, from
    their spread (Student's t)."""
    mean, half_width = stats.mean_interval(times)
    return None if half_width is None else 100 * half_width / mean


def series_figure(series):
    """The Figure of a Series: failed if any repetition failed (a tracker must not average a
    failure away); one sample as stated; several: their mean and the spread between them."""
    if series.errors or not series.samples:
        return Figure(
            None, None, None, None, len(series.samples), (series.errors or ["no rows"])[0]
        )
    samples = series.samples
    if len(samples) == 1:
        s = samples[0]
        return Figure(s.time_us, s.latency_us, s.gbps, s.ci95_pct, 1)
    times = [s.time_us for s in samples]
    return Figure(
        statistics.fmean(times),
        mean_or_none([s.latency_us for s in samples]),
        mean_or_none([s.gbps for s in samples]),
        repetitions_ci95(times),
        len(samples),
    )


def figures_from_document(document):
    """{benchmark name: Figure} of a loaded result document, in file order."""
    return {name: series_figure(s) for name, s in series_from_document(document).items()}
