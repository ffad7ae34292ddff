"""Command-line values the commands share, as argparse types: a bad one is named in the usage
error (exit 2)."""

import argparse


def probability(text):
    """A number strictly between 0 and 1 (a false-discovery rate, a significance level)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {text!r}")
    return value
