"""The robust statistics the fleet's host model (model.py) and its topology terms (topology.py)
share: Tukey's biweight constant, the MAD, and a log effect as a percentage with its interval."""

import math

import numpy as np

TUKEY_C = 4.685  # the biweight's tuning constant: 95% efficiency at normal errors
MAD_SCALE = 1.4826  # the MAD of normal errors times this is their standard deviation


def mad(values):
    """The scaled median absolute deviation of the finite values (nan where none is)."""
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan")
    med = np.median(values)
    return float(MAD_SCALE * np.median(np.abs(values - med)))


def percent_interval(log_effect, se):
    """(+effect %, +- half-width % of its 95% interval) of a log effect."""
    low, high = log_effect - 1.96 * se, log_effect + 1.96 * se
    return 100 * math.expm1(log_effect), 100 * (math.exp(high) - math.exp(low)) / 2
