"""Statistics the tools share (standard library only): medians that do not overflow, the
geometric mean, the two-sided Mann-Whitney U test, and Student's t for intervals of a mean."""

import dataclasses
import functools
import math
import statistics

EXACT_TEST_MAX_N = 20


def median(values):
    """statistics.median, without overflow: the mean of the two middle values of 1e308 and
    1.5e308 is finite."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    low, high = ordered[middle - 1], ordered[middle]
    return low + (high - low) / 2


def median_or_none(values):
    """The median of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    return median(values) if values else None


def geometric_mean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values))


def combined_uncertainty(first, second):
    """Relative 95% uncertainty, percent, of the ratio of two independent means:
    sqrt(first^2 + second^2). None unless both are given."""
    if first is None or second is None:
        return None
    combined = math.hypot(first, second)
    return combined if math.isfinite(combined) else None


# ------------------------------------------------------------------ Mann-Whitney U


@dataclasses.dataclass(frozen=True)
class UTest:
    u: float  # U statistic of the first sample
    p: float  # two-sided p-value
    method: str  # 'exact' or 'normal'


def midranks(values):
    """Ranks 1..n (ties get their mean rank) and the size of each tie group."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    tie_sizes = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        tie_sizes.append(end - start + 1)
        start = end + 1
    return ranks, tie_sizes


@functools.cache
def u_distribution(n1, n2):
    """How many of the C(n1+n2, n1) orderings give U = 0, 1, ..., n1*n2.

    These are the coefficients of the Gaussian binomial [n1+n2, n1]_q =
    prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), worked mod q^(n1*n2+1).
    """
    size = n1 * n2 + 1
    counts = [1] + [0] * (size - 1)
    for i in range(1, n1 + 1):
        for u in range(size - 1, n2 + i - 1, -1):  # times (1 - q^(n2+i))
            counts[u] -= counts[u - n2 - i]
        for u in range(i, size):  # divided by (1 - q^i)
            counts[u] += counts[u - i]
    return tuple(counts)


def exact_p_value(u, n1, n2):
    smaller = round(min(u, n1 * n2 - u))
    counts = u_distribution(n1, n2)
    return min(1.0, 2 * sum(counts[: smaller + 1]) / math.comb(n1 + n2, n1))


def normal_p_value(u, n1, n2, tie_sizes):
    """Normal approximation with tie and continuity correction."""
    n = n1 + n2
    tie_term = sum(t**3 - t for t in tie_sizes) / (n * (n - 1))
    variance = n1 * n2 / 12 * ((n + 1) - tie_term)
    if variance <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def mann_whitney_u(first, second):
    """Two-sided Mann-Whitney U test; exact for small samples without ties."""
    n1, n2 = len(first), len(second)
    ranks, tie_sizes = midranks(list(first) + list(second))
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    if max(tie_sizes) == 1 and max(n1, n2) <= EXACT_TEST_MAX_N:
        return UTest(u, exact_p_value(u, n1, n2), "exact")
    return UTest(u, normal_p_value(u, n1, n2, tie_sizes), "normal")


def smallest_p_value(n1, n2):
    """The best a two-sided U test can do: samples completely separated."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def repetitions_needed(alpha):
    """Repetitions per side for which p < alpha is possible at all."""
    n = 2
    while smallest_p_value(n, n) >= alpha:
        n += 1
    return n


# ------------------------------------------------------------------ Student t


def t_within(t, df):
    """P(|T| <= t) for Student's t with df degrees of freedom (a whole number >= 1), by the
    closed forms for odd and even df (Abramowitz and Stegun 26.7.3, 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:
        term, total = math.cos(theta), 0.0
        for k in range(1, (df - 1) // 2 + 1):
            total += term
            term *= 2 * k / (2 * k + 1) * cos2
        return 2 / math.pi * (theta + math.sin(theta) * total)
    term, total = 1.0, 0.0
    for k in range(1, df // 2 + 1):
        total += term
        term *= (2 * k - 1) / (2 * k) * cos2
    return math.sin(theta) * total


def t_quantile(probability, df):
    """The t with P(T <= t) = probability (0.5 < probability < 1), by bisection."""
    within = 2 * probability - 1
    low, high = 0.0, 1.0
    while t_within(high, df) < within:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if t_within(middle, df) < within:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def mean_interval(values, confidence=0.95):
    """(mean, half-width of its two-sided Student t interval); the half-width is None for
    fewer than two values."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    quantile = t_quantile((1 + confidence) / 2, len(values) - 1)
    return mean, quantile * statistics.stdev(values) / math.sqrt(len(values))
