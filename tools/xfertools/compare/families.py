"""Per-family ratios of two runs: for each family (path and variant, names.family_of) the
geometric mean over the sizes both runs measured of new/base of the judging metric, with a 95%
interval. The interval is the wider of two figures (docs/compare.md says why):

  stated  the mean over sizes of the rows' combined stated uncertainty sqrt(ci95_base^2 +
          ci95_new^2); not divided by sqrt(sizes), since a family's rows shift together
          between runs and their errors do not average out;
  spread  Student's t interval of the mean log ratio over sizes: it widens when the ratio
          scatters from size to size, by noise or because it depends on size.
"""

import math
import statistics

from ..core import names, stats
from ..core.finite import is_finite_number


def family_ratios(report_rows, higher_is_better, threshold):
    """[{family, path, sizes, ratio, change, low, high, uncertainty_percent, uncertainty_from,
    stated_percent, spread_percent, min_ratio, max_ratio, status}] from report.compare_row rows,
    families in the order of their first row; threshold is the smallest change that counts
    (a fraction, 0.05 for 5%)."""
    grouped = {}
    for row in report_rows:
        if row["change"] is not None:
            grouped.setdefault(names.family_of(row["name"]), []).append(row)
    return [
        family_ratio(family, rows, higher_is_better, threshold) for family, rows in grouped.items()
    ]


def family_ratio(family, rows, higher_is_better, threshold):
    logs = [math.log1p(row["change"]) for row in rows]
    mean, spread = stats.mean_interval(logs)
    stated = [row["uncertainty_percent"] for row in rows]
    stated = math.log1p(statistics.fmean(stated) / 100) if None not in stated else None
    widths = {k: w for k, w in (("spread", spread), ("stated", stated)) if is_finite_number(w)}
    source = max(widths, key=widths.get, default=None)
    width = widths.get(source)
    return {
        "family": family,
        "path": names.path_of(family),
        "sizes": len(rows),
        "ratio": math.exp(mean),
        "change": math.expm1(mean),
        "low": None if width is None else bounded(math.exp, mean - width),
        "high": None if width is None else bounded(math.exp, mean + width),
        "uncertainty_percent": as_percent(width),
        "uncertainty_from": source,
        "stated_percent": as_percent(stated),
        "spread_percent": as_percent(spread),
        "min_ratio": math.exp(min(logs)),
        "max_ratio": math.exp(max(logs)),
        "status": family_status(mean, width, higher_is_better, threshold),
    }


def bounded(function, value):
    """function(value), or None where it overflows: no report holds an infinity."""
    try:
        result = function(value)
    except OverflowError:
        return None
    return result if math.isfinite(result) else None


def as_percent(log_width):
    """A half-width on log scale as the percentage it stands for (exp(w) - 1), or None."""
    return (
        bounded(lambda w: math.expm1(w) * 100, log_width) if is_finite_number(log_width) else None
    )


def family_status(mean, width, higher_is_better, threshold):
    """As a row is judged: 'same' when the change is within the threshold or the interval holds
    a ratio of 1, else 'faster' or 'slower' (by the threshold alone where no interval is known:
    one size, no stated uncertainty)."""
    if abs(math.expm1(mean)) <= threshold or (width is not None and abs(mean) <= width):
        return "same"
    worse = mean < 0 if higher_is_better else mean > 0
    return "slower" if worse else "faster"
