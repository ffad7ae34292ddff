"""What a history says about its runs: the judgement of a run against the earlier runs of its
identity (tools/track check), and the series the trend page draws (tools/track report): per
family its shift in each run and per row its ratio to the baseline, with the learned noise,
the threshold of the latest judgement and the change points over the whole history."""

import dataclasses
import math

from ..core import names, stats
from ..verdict import changepoint, decide, noise
from .judgement import Checked


def times(run):
    """row -> seconds of a history.Run, noise.FAILED for a failed row: what decide takes."""
    return {
        row: noise.FAILED if f.error else f.time_us * 1e-6
        for row, f in run.figures.items()
        if f.error or f.time_us
    }


def stated(run):
    """row -> stated ci95_pct of a history.Run, for the rows that state one."""
    return {row: f.ci95_pct for row, f in run.figures.items() if f.ci95_pct is not None}


@dataclasses.dataclass(frozen=True)
class Decision:
    """A judgement with the model and change points behind it."""

    checked: Checked
    model: object  # noise.NoiseModel
    changes: object  # changepoint.Changes over the earlier runs (None on the stated basis)
    window: int


def decide_run(run, file, key, earlier, window=changepoint.CAP):
    """Judge run against the last `window` of `earlier` (history.Run, oldest first, never run
    itself). Raises decide.NotJudgeable when there is nothing to judge by."""
    earlier = tuple(earlier[-window:])
    earlier_times = [times(r) for r in earlier]
    changes = None
    if noise.enough_history(len(earlier_times)):
        changes = changepoint.history_changes(earlier_times)
    model = decide.baseline_model(
        earlier_times, [stated(r) for r in earlier], window, changes=changes
    )
    new_stated = stated(run) if model.basis == "stated" else None
    judgement = decide.judge(times(run), model, new_stated)
    return Decision(Checked(judgement, run, file, key, earlier), model, changes, window)


@dataclasses.dataclass(frozen=True)
class RowSeries:
    row: str
    size: int | None
    ratios: tuple  # per run: log(time / baseline); None where the row failed or is absent
    failed: tuple  # per run: True where the row failed
    noise: float | None  # one sd of a run's log ratio when nothing changed (own and family's)
    changes: tuple  # changepoint.ChangePoint over the whole history (own effect)
    latest: object  # decide.RowJudgement of the latest run, or None


@dataclasses.dataclass(frozen=True)
class FamilySeries:
    family: str
    shifts: tuple  # per run: the family's weighted geomean log ratio (None: no row)
    band_start: int | None  # index of the first run of the latest baseline window
    noise: float | None  # one sd (log) of a run's family shift when nothing changed
    detectable: float | None  # log: the smallest slowdown the latest judgement would flag
    changes: tuple  # changepoint.ChangePoint over the whole history
    latest: object  # decide.FamilyJudgement of the latest run, or None
    rows: tuple  # RowSeries, by message size


@dataclasses.dataclass(frozen=True)
class Trend:
    key: str
    identity: dict
    runs: tuple  # history.Run, oldest first
    decision: Decision | None  # the latest run judged, or None
    why_not: str  # why there is no decision
    families: tuple  # FamilySeries, by path and variant


def log_pct(pct):
    """A percentage shift (expm1 of a log) back on log scale; None stays None."""
    return None if pct is None or not math.isfinite(pct) else math.log1p(pct / 100)


def log_ratio(value, baseline):
    """log(value / baseline) for a positive time, else None (failed, absent)."""
    value = noise.log_time(value)
    return None if math.isnan(value) else value - math.log(baseline)


def references(runs, model):
    """row -> baseline seconds: the model's where it has one, else the row's median."""
    out = {}
    for row in dict.fromkeys(row for run in runs for row in run):
        if model is not None and row in model.rows:
            out[row] = model.rows[row].baseline
            continue
        values = [run[row] for run in runs if not math.isnan(noise.log_time(run.get(row)))]
        if values:
            out[row] = stats.median(values)
    return out


def row_noise(model, row):
    """One sd of a row's log ratio to its baseline when nothing changed: its own and its
    family's noise (history basis), or its stated spread (stated basis)."""
    if model is None or row not in model.rows:
        return None
    own = model.rows[row]
    family = model.families.get(own.family)
    shared = family.predictive_sd() if model.basis == "history" and family else 0.0
    return math.hypot(own.predictive_sd(), shared)


def window_start(decision, family, runs):
    """Index into runs of the first run in the family's latest baseline window."""
    if decision is None:
        return None
    earlier = len(decision.checked.earlier)
    start = 0
    if decision.changes is not None:
        found = decision.changes.families.get(family, [])
        start = changepoint.baseline_window(earlier, found, decision.window)[0]
    return len(runs) - 1 - earlier + start


def trend(key, identity, runs, window=changepoint.CAP):
    """The Trend of an identity's runs (history.Run, oldest first)."""
    runs = tuple(runs)
    decision, why_not = None, ""
    if len(runs) < 2:
        why_not = "one run recorded: nothing to judge it by yet"
    else:
        try:
            decision = decide_run(runs[-1], runs[-1].source, key, runs[:-1], window)
        except decide.NotJudgeable as e:
            why_not = str(e)
    series_times = [times(r) for r in runs]
    model = decision.model if decision else None
    baseline = references(series_times, model)
    all_changes = changepoint.history_changes(series_times)
    latest = decision.checked.judgement if decision else None
    family_verdicts = {f.family: f for f in (latest.families if latest else ())}
    row_verdicts = {r.row: r for r in (latest.rows if latest else ())}

    grouped = {}
    for row in sorted(baseline, key=names.natural_key):
        grouped.setdefault(noise.family_of(row), []).append(row)
    families = []
    for family in sorted(grouped, key=names.natural_key):
        members = sorted(grouped[family], key=lambda r: names.message_bytes(r) or 0)
        series = []
        for row in members:
            ratios = tuple(log_ratio(t.get(row), baseline[row]) for t in series_times)
            series.append(
                RowSeries(
                    row,
                    names.message_bytes(row),
                    ratios,
                    tuple(t.get(row) == noise.FAILED for t in series_times),
                    row_noise(model, row),
                    tuple(all_changes.rows.get(row, ())),
                    row_verdicts.get(row),
                )
            )
        weights = [
            model.rows[s.row].weight
            if model is not None and s.row in model.rows and math.isfinite(model.rows[s.row].weight)
            else 1.0
            for s in series
        ]
        shifts = []
        for k in range(len(runs)):
            deviations = [math.nan if s.ratios[k] is None else s.ratios[k] for s in series]
            shift = noise.weighted_shift(deviations, weights)
            shifts.append(None if math.isnan(shift) else shift)
        judged = family_verdicts.get(family)
        test = judged.test if judged else None
        families.append(
            FamilySeries(
                family,
                tuple(shifts),
                window_start(decision, family, runs) if test else None,
                log_pct(test.noise_pct) if test else None,
                log_pct(test.detectable_pct) if test else None,
                tuple(all_changes.families.get(family, ())),
                judged,
                tuple(series),
            )
        )
    return Trend(key, identity, runs, decision, why_not, tuple(families))
