"""Synthetic histories of runs, for tests of the decision, the change points and the trend page.

A history is families of rows over message sizes, like a default run's. Each row has its own
noise between runs (1-10% by default) and each family shifts as a whole from run to run (a
host-memory path does that between processes); optional steps plant real changes. Every draw
comes from one seed, so a history is the same wherever it is made.
"""

import math
from dataclasses import dataclass

import numpy as np

from .noise import FAILED

PATHS = ("host_staging", "mpi_host", "mpi_staged", "mpi_cuda_aware", "memcpy_peer", "nccl_sendrecv")
SIZES = tuple(8 << i for i in range(28))  # 8 B .. 1 GiB, the default sweep


@dataclass(frozen=True)
class Step:
    """A planted change: from run `at` on, rows of `family` (all, or those in `rows`) take
    `factor` times as long (1.10: 10% slower)."""

    family: str
    at: int
    factor: float
    rows: tuple = ()


@dataclass(frozen=True)
class History:
    runs: list  # per run: row -> seconds (or FAILED)
    stated: list  # per run: row -> ci95_pct
    base: dict  # row -> seconds without noise or steps
    row_noise: dict  # row -> sigma of its own movement (log)
    family_noise: dict  # family -> sigma of its shared shift (log)
    steps: tuple = ()


def family_names(count):
    """Names like real families: a path and a variant."""
    return [f"{PATHS[i % len(PATHS)]}/variant:{i // len(PATHS)}" for i in range(count)]


def _log_uniform(rng, low, high):
    return low if low == high else math.exp(rng.uniform(math.log(low), math.log(high)))


def _latency_and_bandwidth(rng):
    return rng.uniform(0.5e-6, 20e-6), rng.uniform(5e9, 500e9)


def history(
    runs=30,
    families=10,
    rows=(8, 28),
    row_noise=(0.01, 0.10),
    family_noise=(0.005, 0.02),
    steps=(),
    failed=0.0,
    seed=0,
):
    """A synthetic history: `runs` runs of `families` families of rows[0]..rows[1] sizes each.
    Each row's noise sigma is drawn log-uniformly from row_noise, each family's shift sigma
    uniformly from family_noise; `failed` is the chance that a row fails in a run."""
    rng = np.random.default_rng(seed)
    names = family_names(families)
    base, row_sigma, family_sigma, stated_ratio = {}, {}, {}, {}
    for name in names:
        family_sigma[name] = rng.uniform(*family_noise)
        latency, bandwidth = _latency_and_bandwidth(rng)
        count = int(rng.integers(rows[0], rows[1] + 1))
        for size in SIZES[:count]:
            row = f"{name}/bytes:{size}"
            base[row] = latency + size / bandwidth
            row_sigma[row] = _log_uniform(rng, *row_noise)
            # A run states less than rows move between runs, as real runs did.
            stated_ratio[row] = rng.uniform(0.3, 1.0)
    out_runs, out_stated = [], []
    for k in range(runs):
        shifts = {name: rng.normal(0, family_sigma[name]) for name in names}
        run, stated = {}, {}
        for row, seconds in base.items():
            name = row.rsplit("/", 1)[0]
            factor = math.prod(
                s.factor
                for s in steps
                if s.family == name and k >= s.at and (not s.rows or row in s.rows)
            )
            value = seconds * factor * math.exp(shifts[name] + rng.normal(0, row_sigma[row]))
            run[row] = FAILED if rng.random() < failed else value
            stated[row] = 100 * 1.96 * row_sigma[row] * stated_ratio[row]
        out_runs.append(run)
        out_stated.append(stated)
    return History(out_runs, out_stated, base, row_sigma, family_sigma, tuple(steps))


def one_family(runs, shift_sd, row_sd, rows=12, seed=1, steps=()):
    """A history of one family of `rows` sizes whose rows move together by shift_sd and alone
    by row_sd (log), each exactly so."""
    return history(
        runs=runs,
        families=1,
        rows=(rows, rows),
        row_noise=(row_sd, row_sd),
        family_noise=(shift_sd, shift_sd),
        steps=steps,
        seed=seed,
    )
