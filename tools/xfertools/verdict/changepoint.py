"""Where a series of runs changed level: E-divisive means with a permutation test.

E-divisive (Matteson and James, 2014) splits a series where the energy distance between the
part before and the part after is largest; a split counts only if shuffling the values (which
destroys any order) rarely gives as large a distance. Each confirmed split is searched again
on both sides (binary segmentation), so a series can hold several changes. The method assumes
no distribution, which suits run times (skewed, sometimes bimodal). The shuffles come from a
fixed seed: the same series always gives the same answer.

The baseline of a decision restarts after the last confirmed change of a row or its family,
and holds at most the last `cap` runs.
"""

import math
from dataclasses import dataclass

import numpy as np

from . import noise
from .noise import family_of

ALPHA = 0.001  # a split is confirmed when at most 0.1% of shuffles do as well
MIN_SIZE = 3  # runs on each side of a change: a baseline after one has at least 3
PERMUTATIONS = 999
SEED = 20261123
CAP = 30  # runs in a baseline at most
CHUNK = 50  # shuffles per batch; a split that cannot pass any more stops early


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first run of the new level (index into the series given)
    p_value: float  # share of shuffles that split as well (an upper bound when it stopped early)
    change_pct: float  # median after over median before, as % (series of log times)
    before: int  # runs in the segment before it (up to the previous change)
    after: int  # runs in the segment after it (up to the next change)


def energy_profile(values, min_size=MIN_SIZE):
    """E-divisive's statistic Q for every split of each row of `values` (shape (k, n)):
    Q[k, t] compares values[k, :t] with values[k, t:]; splits leaving fewer than min_size
    values on a side are -inf."""
    values = np.atleast_2d(values)
    count, n = values.shape
    distance = np.abs(values[:, :, None] - values[:, None, :])
    # Sums over the first t runs: of their distances to every run, and among themselves.
    to_all = np.zeros((count, n + 1))
    to_all[:, 1:] = distance.sum(axis=2).cumsum(axis=1)
    among = np.zeros((count, n + 1))
    among[:, 1:] = 2 * np.tril(distance, -1).sum(axis=2).cumsum(axis=1)
    q = np.full((count, n + 1), -np.inf)
    t = np.arange(min_size, n - min_size + 1)
    if t.size == 0:
        return q
    m = n - t
    block = among[:, t]  # twice the distances within the part before t
    across = to_all[:, t] - block  # between the parts
    after = to_all[:, n][:, None] - 2 * to_all[:, t] + block  # twice those within after t
    energy = 2 * across / (t * m) - block / (t * (t - 1)) - after / (m * (m - 1))
    q[:, t] = t * m / n * energy
    return q


def _best_split(values, min_size):
    q = energy_profile(values, min_size)[0]
    split = int(np.argmax(q))
    return split, float(q[split])


def _split_p_value(values, observed, min_size, permutations, alpha, rng):
    """Share of shuffles whose best split is at least `observed`; stops once it cannot reach
    alpha (then the share so far, which is then above alpha)."""
    allowed = math.floor(alpha * (permutations + 1) + 1e-9) - 1  # exceedances a split may have
    exceeded = done = 0
    while done < permutations:
        batch = min(CHUNK, permutations - done)
        shuffled = rng.permuted(np.tile(values, (batch, 1)), axis=1)
        best = energy_profile(shuffled, min_size).max(axis=1)
        exceeded += int(np.sum(best >= observed - 1e-12 * abs(observed)))
        done += batch
        if exceeded > allowed:
            break
    return (1 + exceeded) / (1 + done)


def change_points(series, alpha=ALPHA, min_size=MIN_SIZE, permutations=PERMUTATIONS, seed=SEED):
    """The confirmed changes of a series (NaN values are skipped), earliest first. Indexes
    refer to `series` as given."""
    series = np.asarray(series, dtype=float)
    where = np.flatnonzero(~np.isnan(series))
    values = series[where]
    rng = np.random.default_rng(seed)
    splits, pending = [], [(0, values.size)]
    while pending:
        start, stop = pending.pop()
        if stop - start < 2 * min_size:
            continue
        segment = values[start:stop]
        split, observed = _best_split(segment, min_size)
        if not observed > 0:
            continue
        p = _split_p_value(segment, observed, min_size, permutations, alpha, rng)
        if p <= alpha:
            splits.append((start + split, p))
            pending += [(start + split, stop), (start, start + split)]
    splits.sort()
    bounds = [0] + [s for s, _ in splits] + [values.size]
    found = []
    for i, (split, p) in enumerate(splits):
        before, after = values[bounds[i] : split], values[split : bounds[i + 2]]
        change = math.expm1(float(np.median(after) - np.median(before))) * 100
        found.append(ChangePoint(int(where[split]), p, change, before.size, after.size))
    return found


def baseline_window(length, changes=(), cap=CAP):
    """(start, stop) of the runs a decision uses out of `length` earlier runs: those after the
    last change, and no more than the last `cap`."""
    start = max([length - cap, 0] + [c.index for c in changes])
    return start, length


@dataclass(frozen=True)
class Changes:
    families: dict  # family -> [ChangePoint] over its shift series
    rows: dict  # row -> [ChangePoint] over its series beyond its family's shift
    family_series: dict  # family -> per-run shift (log), what the changes were found in
    row_series: dict  # row -> per-run effect beyond the family (log)


def history_changes(history, family_of=family_of, **options):
    """Change points of each family's shift and each row's own effect over the runs of
    `history` (oldest first). options: alpha, min_size, permutations, seed."""
    fitted = noise.fit(noise.table(history, family_of=family_of))
    tab = fitted.table
    family_series = {name: fitted.shifts[:, i] for i, name in enumerate(tab.families)}
    row_series = {row: fitted.residuals[:, j] for j, row in enumerate(tab.rows)}
    return Changes(
        {name: change_points(s, **options) for name, s in family_series.items()},
        {row: change_points(s, **options) for row, s in row_series.items()},
        {name: tuple(float(v) for v in s) for name, s in family_series.items()},
        {row: tuple(float(v) for v in s) for row, s in row_series.items()},
    )


def baseline_starts(history, changes, cap=CAP, family_of=family_of):
    """Per row: the index of the first earlier run its baseline uses, after the last change of
    the row or of its family, within the last `cap` runs."""
    starts = {}
    for row in sorted({row for run in history for row in run}):
        found = changes.families.get(family_of(row), []) + changes.rows.get(row, [])
        starts[row] = baseline_window(len(history), found, cap)[0]
    return starts
