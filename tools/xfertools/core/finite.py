"""Finite numbers: whether a value read from a file is one, and figures made fit for strict
JSON (no NaN or infinity)."""

import math


def is_finite_number(value):
    """A finite int or float (not a bool; not an int too large for a float)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def finite_float_or_none(value):
    """value where it is a finite float, else None: a computed figure for strict JSON."""
    return value if isinstance(value, float) and math.isfinite(value) else None


def non_finite_as_none(value):
    """value with every NaN and infinity in it (in dicts, lists and tuples too) as None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: non_finite_as_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [non_finite_as_none(item) for item in value]
    return value
