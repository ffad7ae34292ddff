"""How much a row's time moves between runs of one build, learned from a history of runs.

Plain data in, plain data out: a run is a mapping row name -> seconds (lower is better), with
FAILED for a row that failed; a row the run lacks is missing. Everything is on log time, so a
shift is a ratio. The model, per family (a path and variant: the row name without bytes:N):

    log t[run, row] = mu[row] + f[run, family] + e[run, row]

mu is the row's baseline, f the family's shared shift in that run (the whole family moving
together, as host-memory paths do between processes), e the row's own residual. The fit is
robust where a bad run would bias the baseline (mu is a median over runs) and plain where a
spread estimate could hide noise (spreads are root mean squares), so that a run whose family
or row once jumped makes the gate less sensitive, never trigger-happy. docs/tracking.md says
more.
"""

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

FAILED = "failed"
MIN_RUNS = 3  # earlier runs needed to learn noise; with fewer, rows' stated ci95 is used
Z95 = 1.959963984540054
MEDIAN_VARIANCE = math.pi / 2  # a median of n normal values varies pi/2 times a mean's
MIN_SIGMA = 1e-4  # 0.01%: no time is known better, and it keeps weights finite
WEIGHT_FLOOR = 0.5  # no row weighs more than one with half its family's typical noise
FIT_ROUNDS = 8

_SIZE = re.compile(r"(^|/)bytes:[^/]*")


def family_of(row):
    """The family of a row: its name without the bytes:N component (path and variant)."""
    return _SIZE.sub("", row).strip("/")


def log_time(value):
    """log seconds of a run's value; NaN for FAILED, None, or anything not a positive time."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return math.log(value) if math.isfinite(value) and value > 0 else math.nan


def stated_sigma(ci95_pct):
    """One standard deviation on log time from a stated relative 95% half-width in percent."""
    if isinstance(ci95_pct, bool) or not isinstance(ci95_pct, (int, float)):
        return math.nan
    if not math.isfinite(ci95_pct) or ci95_pct < 0:
        return math.nan
    return math.log1p(ci95_pct / 100) / Z95


def enough_history(earlier_runs, min_runs=MIN_RUNS):
    """Whether noise can be learned from this many earlier runs (else: the stated fallback)."""
    return earlier_runs >= min_runs


@dataclass(frozen=True)
class Table:
    """Runs x rows of log times (NaN where failed, missing or outside the row's window)."""

    rows: tuple
    families: tuple  # family names, in first-seen order
    family: tuple  # per row: index into families
    values: np.ndarray  # shape (runs, rows)


def table(runs, rows=None, starts=None, family_of=family_of):
    """The log-time table of runs. rows: which rows (default: every row any run has);
    starts: row -> index of the first run to use (earlier runs count as missing)."""
    if rows is None:
        rows = sorted({row for run in runs for row in run})
    rows = tuple(rows)
    names = [family_of(row) for row in rows]
    families = tuple(dict.fromkeys(names))
    index = {name: i for i, name in enumerate(families)}
    values = np.full((len(runs), len(rows)), np.nan)
    for k, run in enumerate(runs):
        for j, row in enumerate(rows):
            values[k, j] = log_time(run.get(row))
    for j, row in enumerate(rows):
        start = (starts or {}).get(row, 0)
        values[:start, j] = np.nan
    return Table(rows, families, tuple(index[name] for name in names), values)


def weighted_shift(deviations, weights):
    """A family's shift in one run: the weighted mean of its rows' log deviations, over the rows
    that have one (NaN if none). Weights favour rows that move less on their own."""
    deviations = np.asarray(deviations, dtype=float)
    weights = np.asarray(weights, dtype=float)
    present = ~np.isnan(deviations)
    if not present.any():
        return math.nan
    return float(np.sum(deviations[present] * weights[present]) / np.sum(weights[present]))


def row_weights(sigmas):
    """Weights of a family's rows for its shift: 1/sigma^2, with sigma floored at half the
    family's median so that no single steady row decides the family alone."""
    sigmas = np.asarray(sigmas, dtype=float)
    known = sigmas[np.isfinite(sigmas)]
    if known.size == 0:
        return np.ones_like(sigmas)
    floor = max(MIN_SIGMA, WEIGHT_FLOOR * float(np.median(known)))
    sigmas = np.where(np.isfinite(sigmas), np.maximum(sigmas, floor), float(np.median(known)))
    return 1.0 / sigmas**2


@dataclass(frozen=True)
class Fit:
    """The model fitted to a table: baselines, per-run family shifts, residuals, row spreads."""

    table: Table
    mu: np.ndarray  # per row: baseline log time (NaN: no value)
    shifts: np.ndarray  # (runs, families): f, centred on its median over runs
    residuals: np.ndarray  # (runs, rows): e
    sigma: np.ndarray  # per row: RMS of e over its runs (NaN under 2 values)
    weights: np.ndarray  # per row: weight in its family's shift


def _rms(values, ddof):
    values = values[~np.isnan(values)]
    if values.size <= ddof:
        return math.nan
    return math.sqrt(float(np.sum(values**2)) / (values.size - ddof))


def _family_shifts(tab, mu, weights):
    """Per run and family: weighted_shift of the rows' deviations from their baselines,
    centred on the family's median over runs."""
    deviations = tab.values - mu
    shifts = np.full((tab.values.shape[0], len(tab.families)), np.nan)
    family = np.asarray(tab.family)
    for j in range(len(tab.families)):
        cols = family == j
        present = ~np.isnan(deviations[:, cols])
        total = np.sum(np.where(present, deviations[:, cols], 0) * weights[cols], axis=1)
        weight = np.sum(present * weights[cols], axis=1)
        shifts[:, j] = np.where(weight > 0, total / np.where(weight > 0, weight, 1), np.nan)
        if np.isfinite(shifts[:, j]).any():
            shifts[:, j] -= np.nanmedian(shifts[:, j])
    return shifts


def fit(tab):
    """Fit the model to a Table: alternately the rows' baselines (median over runs of the time
    less the family shift) and the families' shifts (weighted mean over rows of the time less
    the baseline), then the rows' spreads and weights, twice."""
    values = tab.values
    family = np.asarray(tab.family)
    weights = np.ones(len(tab.rows))
    shifts = np.zeros((values.shape[0], len(tab.families)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # medians of rows without any value
        for round_ in range(2):
            for _ in range(FIT_ROUNDS):
                mu = np.nanmedian(values - np.nan_to_num(shifts[:, family]), axis=0)
                shifts = _family_shifts(tab, mu, weights)
            mu = np.nanmedian(values - np.nan_to_num(shifts[:, family]), axis=0)
            residuals = values - mu - shifts[:, family]
            sigma = np.array([_rms(residuals[:, j], 1) for j in range(len(tab.rows))])
            if round_ == 0:
                for j in range(len(tab.families)):
                    cols = family == j
                    weights[cols] = row_weights(sigma[cols])
    return Fit(tab, mu, shifts, residuals, sigma, weights)


@dataclass(frozen=True)
class RowNoise:
    """What a row's time does between runs when nothing changed."""

    row: str
    family: str
    basis: str  # 'history': learned from earlier runs; 'stated': their stated ci95 only
    runs: int  # earlier values it comes from
    baseline: float  # seconds: the row's expected time in a run whose family did not shift
    sigma: float  # log time, one run's own movement (stated basis: the baseline's uncertainty)
    df: float  # degrees of freedom of sigma (inf when stated)
    weight: float  # the row's weight in its family's shift

    def predictive_sd(self, new_sigma=0.0):
        """SD of a new run's row effect under no change. history: the learned spread, widened
        for the baseline's own error; stated: baseline and new run's stated spreads combined."""
        if self.basis == "stated":
            return math.hypot(self.sigma, new_sigma)
        return self.sigma * math.sqrt(1 + MEDIAN_VARIANCE / self.runs)


@dataclass(frozen=True)
class FamilyNoise:
    """What a family's shared shift does between runs when nothing changed."""

    family: str
    basis: str
    runs: int  # earlier runs with a shift of this family
    rows: tuple  # the family's rows that have a baseline
    sigma: float  # log time: spread of the shift over runs (NaN when stated: not known)
    df: float
    shifts: tuple  # per earlier run: the family's shift (log; NaN where it had no rows)

    def predictive_sd(self):
        """SD of a new run's family shift under no change (history basis only)."""
        return self.sigma * math.sqrt(1 + MEDIAN_VARIANCE / self.runs)


@dataclass(frozen=True)
class NoiseModel:
    basis: str  # 'history' or 'stated'
    runs: int  # earlier runs the noise comes from (within the baseline windows)
    families: dict  # family -> FamilyNoise
    rows: dict  # row -> RowNoise (rows with a usable baseline only)
    thin: dict  # row -> how many earlier values it had, for rows too thin to judge


def _check_stated(history, stated):
    if stated is not None and len(stated) != len(history):
        raise ValueError(
            f"stated: one mapping row -> ci95_pct per earlier run expected, "
            f"got {len(stated)} for {len(history)} runs"
        )


def _median_stated(stated, rows, runs_used):
    """Per row: the median stated sigma over the runs it uses (NaN where none stated)."""
    out = {}
    for row, used in zip(rows, runs_used):
        sigmas = [stated_sigma((stated[k] or {}).get(row)) for k in used] if stated else []
        sigmas = [s for s in sigmas if not math.isnan(s)]
        out[row] = float(np.median(sigmas)) if sigmas else math.nan
    return out


def learn_noise(history, starts=None, stated=None, family_of=family_of, min_runs=MIN_RUNS):
    """The noise model learned from earlier runs (oldest first). starts: row -> first run index
    to use (the baseline window, e.g. from changepoint.baseline_starts); stated: per run, a
    mapping row -> ci95_pct, used as a floor (a row never moves less between runs than within
    one). Rows with fewer than min_runs values in their window are left out, counted in thin."""
    if not enough_history(len(history), min_runs):
        raise ValueError(f"{len(history)} earlier runs; noise needs {min_runs} (use stated_noise)")
    _check_stated(history, stated)
    tab = table(history, starts=starts, family_of=family_of)
    model_fit = fit(tab)
    values = tab.values
    counts = np.sum(~np.isnan(values), axis=0)
    used = [np.flatnonzero(~np.isnan(values[:, j])) for j in range(len(tab.rows))]
    floors = _median_stated(stated, tab.rows, used)
    rows, thin = {}, {}
    family = np.asarray(tab.family)
    for j, row in enumerate(tab.rows):
        if counts[j] < min_runs:
            thin[row] = int(counts[j])
            continue
        cols = (family == tab.family[j]) & (counts >= min_runs)
        share = model_fit.weights[j] / np.sum(model_fit.weights[cols])
        sigma = max(model_fit.sigma[j], MIN_SIGMA)
        if not math.isnan(floors[row]):
            sigma = max(sigma, floors[row])
        rows[row] = RowNoise(
            row,
            tab.families[tab.family[j]],
            "history",
            int(counts[j]),
            math.exp(model_fit.mu[j]),
            sigma,
            max(1.0, (counts[j] - 1) * (1 - share)),
            float(model_fit.weights[j]),
        )
    families = {}
    for i, name in enumerate(tab.families):
        shifts = model_fit.shifts[:, i]
        runs = int(np.sum(~np.isnan(shifts)))
        members = tuple(r for r in tab.rows if r in rows and rows[r].family == name)
        if runs < min_runs or not members:
            continue
        sigma = max(_rms(shifts, 1), MIN_SIGMA)
        families[name] = FamilyNoise(
            name, "history", runs, members, sigma, runs - 1, tuple(float(s) for s in shifts)
        )
    used_runs = int(np.sum(np.any(~np.isnan(values), axis=1)))
    return NoiseModel("history", used_runs, families, rows, thin)


def stated_noise(history, stated, family_of=family_of):
    """The fallback model for fewer than MIN_RUNS earlier runs: each row's baseline is the
    geometric mean of its earlier times and its uncertainty comes from their stated ci95_pct
    only. Such spreads are within-run: they do not see how a family moves between processes."""
    _check_stated(history, stated)
    tab = table(history, family_of=family_of)
    rows, thin = {}, {}
    for j, row in enumerate(tab.rows):
        present = np.flatnonzero(~np.isnan(tab.values[:, j]))
        sigmas = [stated_sigma((stated[k] or {}).get(row)) for k in present]
        if present.size == 0 or any(math.isnan(s) for s in sigmas):
            thin[row] = int(present.size)
            continue
        sigma = math.sqrt(sum(s * s for s in sigmas)) / present.size
        baseline = math.exp(float(np.mean(tab.values[present, j])))
        rows[row] = RowNoise(
            row,
            tab.families[tab.family[j]],
            "stated",
            int(present.size),
            baseline,
            max(sigma, MIN_SIGMA),
            math.inf,
            math.nan,
        )
    families = {}
    for name in tab.families:
        members = tuple(r for r in tab.rows if r in rows and rows[r].family == name)
        if members:
            families[name] = FamilyNoise(
                name, "stated", len(history), members, math.nan, math.inf, ()
            )
    return NoiseModel("stated", len(history), families, rows, thin)
