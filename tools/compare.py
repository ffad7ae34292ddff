#!/usr/bin/env python3
"""Compare two sets of xferbench (Google Benchmark JSON) results.

    compare.py BASE NEW
    compare.py --base A.json [B.json ...] --new C.json [D.json ...]

Rows are matched by name (a ping-pong row named before exchange modes
matches its mode:pingpong name), repetitions are pooled per side, medians are
compared and a two-sided Mann-Whitney U test says whether a change is real.
Single runs that state their uncertainty (counter ci95_pct) are judged by it.
Exit status: 0 no regression, 1 regression (the CI gate), 2 bad input.
See docs/compare.md.
"""

import argparse
import dataclasses
import functools
import json
import math
import os
import re
import statistics
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xfer_files import (LEGACY_MODE, MAX_NESTING, STAGED_PATH,  # noqa: E402
                        canonical_name, nesting_depth, read_regular_file)

PROG = 'compare.py'
SCHEMA = 'xferbench-compare/1'
SMALL_MESSAGE_BYTES = 64 * 1024
EXACT_TEST_MAX_N = 20
TIME_UNIT_TO_US = {'ns': 1e-3, 'us': 1.0, 'ms': 1e3, 's': 1e6}
STATUSES = ('faster', 'slower', 'same', 'not significant', 'new', 'missing',
            'failed', 'fixed')
# Deeper than this is not a result file (xferbench's go 5 levels deep); it
# also keeps every later step clear of Python's recursion limit.


class BadInput(Exception):
    """Input the tool cannot use: exit status 2, message on stderr."""


@dataclasses.dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool


METRICS = {
    'time': Metric('time', 'us', False),
    'latency': Metric('latency', 'us', False),
    'bandwidth': Metric('bandwidth', 'GB/s', True),
}


# ---------------------------------------------------------------- loading

@dataclasses.dataclass
class Sample:
    """One repetition of one benchmark (or one median aggregate row)."""
    time_us: float
    latency_us: float | None
    gbps: float | None
    ci95_pct: float | None = None      # stated 95% CI half-width, percent
    time_limited: bool | None = None   # None: the row does not say


@dataclasses.dataclass
class Series:
    """Everything one side holds for one benchmark, pooled over files."""
    samples: list = dataclasses.field(default_factory=list)
    errors: list = dataclasses.field(default_factory=list)
    aggregates_only: bool = False
    legacy_names: set = dataclasses.field(default_factory=set)  # as written

    def extend(self, other):
        self.samples += other.samples
        self.errors += other.errors
        self.aggregates_only |= other.aggregates_only
        self.legacy_names |= other.legacy_names


@dataclasses.dataclass
class Side:
    label: str
    files: list
    contexts: list
    series: dict
    aggregate_only_files: list
    # file: [(a name as that file wrote it, its current name)] of its rows
    # named as before exchange modes, in file order
    legacy_files: dict = dataclasses.field(default_factory=dict)


_NON_FINITE = re.compile(
    r'"(?:[^"\\]|\\.)*"|(-?)\b(nan|inf|infinity)\b', re.IGNORECASE)


def standardise_non_finite(text):
    """Rewrite nan/inf/-inf (as C++ streams print them) to JSON's NaN etc."""
    def replace(match):
        if match.group(2) is None:  # a string literal: leave it alone
            return match.group(0)
        if match.group(2).lower() == 'nan':
            return 'NaN'
        return match.group(1) + 'Infinity'
    return _NON_FINITE.sub(replace, text)


def parse_json_text(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        try:
            return json.loads(standardise_non_finite(text))
        except json.JSONDecodeError:
            raise error from None


def read_result_file(label, path):
    where = f'{label} file {path}'
    data = read_regular_file(where, path, BadInput)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise BadInput(f'{where}: cannot read: not UTF-8 (byte '
                       f'{error.start}: {error.reason})') from None
    try:
        document = parse_json_text(text)
    except json.JSONDecodeError as error:
        raise BadInput(f'{where}: not JSON (line {error.lineno}, column '
                       f'{error.colno}: {error.msg})') from None
    except ValueError as error:  # an integer past Python's digit limit
        raise BadInput(f'{where}: not JSON this tool can read '
                       f'({str(error).split(":")[0]})') from None
    except RecursionError:
        document = nested = None
    else:
        nested = nesting_depth(document) <= MAX_NESTING
    if not nested:
        raise BadInput(f'{where}: nested more than {MAX_NESTING} levels deep')
    check_benchmark_document(document, where)
    return document


def check_benchmark_document(document, where):
    if not isinstance(document, dict) or 'benchmarks' not in document:
        raise BadInput(f'{where}: not a benchmark result '
                       '(no "benchmarks" list)')
    rows = document['benchmarks']
    if not isinstance(rows, list) or not rows:
        raise BadInput(f'{where}: "benchmarks" holds no rows')
    if not all(isinstance(r, dict) and isinstance(r.get('name'), str)
               for r in rows):
        raise BadInput(f'{where}: a "benchmarks" row has no name')


def is_number(value):
    """A finite int or float (not a bool; not an int too large for a float)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def positive(value):
    return float(value) if is_number(value) and value > 0 else None


def shown(value, width=40):
    """repr(value), cut to width characters."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + '...'


def row_time_us(row):
    """real_time in microseconds: a positive finite number, else None."""
    real_time = positive(row.get('real_time'))
    if real_time is None:
        return None
    time_us = real_time * TIME_UNIT_TO_US[row.get('time_unit', 'ns')]
    return time_us if 0 < time_us < math.inf else None


def row_problem(row):
    """Why a row has no valid time (failed, skipped, bad value), or None."""
    if row.get('error_occurred') or row.get('skipped'):
        message = (row.get('error_message') or row.get('skip_message')
                   or 'failed')
        return message if isinstance(message, str) else shown(message)
    unit = row.get('time_unit', 'ns')
    if not isinstance(unit, str) or unit not in TIME_UNIT_TO_US:
        return f'unknown time_unit {shown(unit)}'
    if row_time_us(row) is None:
        if positive(row.get('real_time')) is not None:
            return (f'real_time {shown(row.get("real_time"))} {unit} is out '
                    'of range in microseconds')
        return f'no valid real_time ({shown(row.get("real_time"))})'
    return None


def stated_ci95(row):
    """The row's ci95_pct if it is a finite number >= 0, else None."""
    value = row.get('ci95_pct')
    return float(value) if is_number(value) and value >= 0 else None


def stated_time_limited(row):
    """True/False from a 1/0 time_limited counter; None if absent or odd."""
    value = row.get('time_limited')
    return bool(value) if is_number(value) and value in (0, 1) else None


def row_sample(row, stated=True):
    """One sample; stated=False ignores the row's own uncertainty counters
    (an aggregate row's ci95_pct is not the uncertainty of its value)."""
    gbps = positive(row.get('GB/s'))
    if gbps is None and positive(row.get('bytes_per_second')):
        gbps = positive(row['bytes_per_second'] / 1e9)
    sample = Sample(row_time_us(row), positive(row.get('latency_us')), gbps)
    if stated:
        sample.ci95_pct = stated_ci95(row)
        sample.time_limited = stated_time_limited(row)
    return sample


# ---------------------------------------------------------- normalising

_RUN_CONTROL = re.compile(
    r'manual_time|real_time|process_time|iterations:\d+|repeats:\d+'
    r'|threads:1|min_time:[0-9.e+-]+s?|min_warmup_time:[0-9.e+-]+s?')
# A size of more than 18 digits (an exabyte) is no size: the row is unsized.
_BYTES = re.compile(r'(?:^|/)bytes:(\d{1,18})(?:/|$)')


def normalise_name(name):
    """Drop run-control components so differently run rows still match."""
    return '/'.join(part for part in name.split('/')
                    if not _RUN_CONTROL.fullmatch(part))


def message_bytes(name):
    match = _BYTES.search(name)
    return int(match.group(1)) if match else None


def path_of(name):
    return name.split('/', 1)[0]


def is_aggregate(row):
    return row.get('run_type') == 'aggregate'


def written_name(row):
    """The normalised name of the benchmark a row belongs to, as written."""
    name = row.get('run_name')
    if not isinstance(name, str):
        name = row['name']
        suffix = f'_{row.get("aggregate_name")}'
        if is_aggregate(row) and name.endswith(suffix):
            name = name[:-len(suffix)]
    return normalise_name(name)


def benchmark_name(row):
    """The name a row is matched, shown and reported by: its written name,
    with mode:pingpong added where an older file left the mode out."""
    return canonical_name(written_name(row))


def preferred_aggregate(rows):
    """The median aggregate row (else the mean) of an aggregates-only run."""
    by_kind = {row.get('aggregate_name'): row for row in rows
               if isinstance(row.get('aggregate_name'), str)}
    for kind in ('median', 'mean'):
        if kind in by_kind:
            return [by_kind[kind]]
    return []


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
    """Series per benchmark; aggregates count only where no repetition does."""
    grouped, legacy = {}, {}
    for row in document['benchmarks']:
        name, written = benchmark_name(row), written_name(row)
        kinds = grouped.setdefault(name, ([], []))
        kinds[is_aggregate(row)].append(row)
        if written != name:
            legacy.setdefault(name, set()).add(written)
    result = {}
    for name, (repetitions, aggregates) in grouped.items():
        rows = repetitions or preferred_aggregate(aggregates)
        if rows:
            result[name] = series_from_rows(rows, not repetitions)
            result[name].legacy_names = legacy.get(name, set())
    return result


def load_side(label, paths):
    side = Side(label, list(paths), [], {}, [])
    for path in paths:
        document = read_result_file(label, path)
        context = document.get('context')
        side.contexts.append(context if isinstance(context, dict) else {})
        file_series = series_from_document(document)
        if any(s.aggregates_only for s in file_series.values()):
            side.aggregate_only_files.append(path)
        renamed = [(min(s.legacy_names), name)
                   for name, s in file_series.items() if s.legacy_names]
        if renamed:
            side.legacy_files[path] = renamed
        for name, series in file_series.items():
            side.series.setdefault(name, Series()).extend(series)
    return side


# -------------------------------------------------------------- context

IDENTITY_FIELDS = ('gpus', 'gpu_links', 'cuda_driver', 'cuda_runtime',
                   'nccl', 'mpi_library', 'mpi_cuda_aware', 'world_size',
                   'num_cpus')


def xferbench_context(context):
    xferbench = context.get('xferbench')
    if isinstance(xferbench, str):  # tolerate it stored as a JSON string
        try:
            xferbench = json.loads(xferbench)
        except (ValueError, RecursionError):
            return None
        if nesting_depth(xferbench) > MAX_NESTING:
            return None
    return xferbench if isinstance(xferbench, dict) else None


def mapping(value):
    """value if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def plain(value):
    """value with every NaN and infinity written as a string, so contexts
    compare equal to themselves and render as strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def describe_gpus(devices):
    if not isinstance(devices, list):
        return None
    counts = Counter(str(d.get('name')) for d in devices
                     if isinstance(d, dict))
    return ', '.join(f'{name} x{n}' for name, n in sorted(counts.items()))


def describe_links(pairs):
    if not isinstance(pairs, list):
        return None
    links = []
    for pair in (p for p in pairs if isinstance(p, dict)):
        text = f'{pair.get("src")}-{pair.get("dst")} {pair.get("link")}'
        if pair.get('nvlink_count'):
            text += f' x{pair["nvlink_count"]}'
        if pair.get('pcie_relation'):
            text += f' {pair["pcie_relation"]}'
        if pair.get('p2p') is False:
            text += ' no-p2p'
        links.append(text)
    return '; '.join(links)


def describe_hosts(ranks):
    if not isinstance(ranks, list):
        return None
    hosts = [str(r.get('host')) for r in ranks if isinstance(r, dict)]
    return ','.join(dict.fromkeys(hosts))


def describe_skipped(skipped):
    if not isinstance(skipped, list):
        return None
    return '; '.join(f'{s.get("path")} ({s.get("reason")})'
                     for s in skipped if isinstance(s, dict))


def machine_identity(context):
    """Hardware and software make-up, or None when the file does not say."""
    xferbench = xferbench_context(context)
    if xferbench is None:
        return None
    cuda = mapping(xferbench.get('cuda'))
    mpi = mapping(xferbench.get('mpi'))
    nccl = mapping(xferbench.get('nccl'))
    return plain({
        'gpus': describe_gpus(cuda.get('devices')),
        'gpu_links': describe_links(cuda.get('pairs')),
        'cuda_driver': cuda.get('driver_version'),
        'cuda_runtime': cuda.get('runtime_version'),
        'nccl': nccl.get('version'),
        'mpi_library': mpi.get('library'),
        'mpi_cuda_aware': mpi.get('cuda_aware'),
        'world_size': xferbench.get('world_size'),
        'num_cpus': context.get('num_cpus'),
    })


def run_facts(context):
    """Everything worth showing in a context diff (identity and the rest)."""
    xferbench = xferbench_context(context) or {}
    facts = machine_identity(context) or {'num_cpus': context.get('num_cpus')}
    facts.update({
        'hosts': describe_hosts(xferbench.get('ranks')),
        'host_name': context.get('host_name'),
        'library_build_type': context.get('library_build_type'),
        'benchmark_version': (xferbench.get('benchmark_version')
                              or context.get('library_version')),
        'harness_version': xferbench.get('harness_version'),
        'git_revision': xferbench.get('git_revision'),
        'skipped_paths': describe_skipped(xferbench.get('skipped')),
    })
    env = xferbench.get('env')
    for key, value in sorted(env.items() if isinstance(env, dict) else []):
        facts[f'env {key}'] = value
    return plain(facts)


def pool_values(values):
    """One value for a side: the value if its files agree, else all of them."""
    distinct = list(dict.fromkeys(json.dumps(v, sort_keys=True)
                                  for v in values))
    if len(distinct) == 1:
        return values[0]
    return ' | '.join(str(json.loads(v)) for v in distinct)


def pool_facts(fact_dicts):
    keys = list(dict.fromkeys(k for facts in fact_dicts for k in facts))
    return {k: pool_values([facts.get(k) for facts in fact_dicts])
            for k in keys}


def side_identity(side):
    identities = [machine_identity(c) for c in side.contexts]
    if any(identity is None for identity in identities):
        return None
    return pool_facts(identities)


def context_diff(base, new):
    base_facts = pool_facts([run_facts(c) for c in base.contexts])
    new_facts = pool_facts([run_facts(c) for c in new.contexts])
    keys = dict.fromkeys(list(base_facts) + list(new_facts))
    return [{'field': k, 'base': base_facts.get(k), 'new': new_facts.get(k),
             'identity': k in IDENTITY_FIELDS}
            for k in keys if base_facts.get(k) != new_facts.get(k)]


def compare_machines(base, new, cross_machine):
    """'same', 'different' or 'unknown'; refuses 'different' unless asked."""
    base_identity, new_identity = side_identity(base), side_identity(new)
    if base_identity is None or new_identity is None:
        return 'unknown'
    differing = [k for k in IDENTITY_FIELDS
                 if base_identity.get(k) != new_identity.get(k)]
    if differing and not cross_machine:
        details = '; '.join(f'{k}: {base_identity.get(k)!r} vs '
                            f'{new_identity.get(k)!r}' for k in differing)
        raise BadInput('base and new ran on different machines '
                       f'({details}); pass --cross-machine to compare them '
                       'as a machine comparison')
    return 'different' if differing else 'same'


# ----------------------------------------------------------- statistics

@dataclasses.dataclass(frozen=True)
class UTest:
    u: float       # U statistic of the first sample
    p: float       # two-sided p-value
    method: str    # 'exact' or 'normal'


def midranks(values):
    """Ranks 1..n (ties get their mean rank) and the size of each tie group."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    tie_sizes = []
    start = 0
    while start < len(order):
        end = start
        while (end + 1 < len(order)
               and values[order[end + 1]] == values[order[start]]):
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        tie_sizes.append(end - start + 1)
        start = end + 1
    return ranks, tie_sizes


@functools.lru_cache(maxsize=None)
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
        for u in range(i, size):                   # divided by (1 - q^i)
            counts[u] += counts[u - i]
    return tuple(counts)


def exact_p_value(u, n1, n2):
    smaller = round(min(u, n1 * n2 - u))
    counts = u_distribution(n1, n2)
    return min(1.0, 2 * sum(counts[:smaller + 1]) / math.comb(n1 + n2, n1))


def normal_p_value(u, n1, n2, tie_sizes):
    """Normal approximation with tie and continuity correction."""
    n = n1 + n2
    tie_term = sum(t ** 3 - t for t in tie_sizes) / (n * (n - 1))
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
        return UTest(u, exact_p_value(u, n1, n2), 'exact')
    return UTest(u, normal_p_value(u, n1, n2, tie_sizes), 'normal')


def smallest_p_value(n1, n2):
    """The best a two-sided U test can do: samples completely separated."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def repetitions_needed(alpha):
    """Repetitions per side for which p < alpha is possible at all."""
    n = 2
    while smallest_p_value(n, n) >= alpha:
        n += 1
    return n


def median(values):
    """statistics.median, without overflow: the mean of the two middle
    values of 1e308 and 1.5e308 is finite."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    low, high = ordered[middle - 1], ordered[middle]
    return low + (high - low) / 2


def geometric_mean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values))


# ------------------------------------------------------------- classify

def judged_values(base, new, metric):
    """The judged metric per sample, both sides on the same basis."""
    samples = base.samples + new.samples
    if metric == 'latency' and all(s.latency_us for s in samples):
        basis, value = 'latency_us', (lambda s: s.latency_us)
    elif metric == 'bandwidth' and all(s.gbps for s in samples):
        basis, value = 'GB/s', (lambda s: s.gbps)
    elif metric == 'bandwidth':  # same relative change as bytes / time
        basis, value = '1/real_time', (lambda s: 1 / s.time_us)
    else:
        basis, value = 'real_time', (lambda s: s.time_us)
    return (basis, [value(s) for s in base.samples],
            [value(s) for s in new.samples])


def significance(base_values, new_values, alpha):
    """A significance verdict and the U test behind it (None if none ran)."""
    n1, n2 = len(base_values), len(new_values)
    if min(n1, n2) < 2:
        return 'no repetitions', None
    test = mann_whitney_u(base_values, new_values)
    if smallest_p_value(n1, n2) >= alpha:
        return 'too few repetitions', test
    return ('significant' if test.p < alpha else 'not significant'), test


def single_ci95(series):
    """The stated ci95_pct of a side's only sample (None with repetitions)."""
    return series.samples[0].ci95_pct if len(series.samples) == 1 else None


def combined_uncertainty(base_ci, new_ci):
    """Relative 95% uncertainty, percent, of the ratio of two independent
    means: sqrt(base^2 + new^2). None unless both sides state one."""
    if base_ci is None or new_ci is None:
        return None
    combined = math.hypot(base_ci, new_ci)
    return combined if math.isfinite(combined) else None


def time_limited(series):
    """Whether any sample stopped at its time budget; None if none says."""
    flags = [s.time_limited for s in series.samples
             if s.time_limited is not None]
    return any(flags) if flags else None


def classify_change(change, higher_is_better, verdict, threshold,
                    uncertainty=None):
    """A change beyond the threshold (and beyond the stated uncertainty,
    where there is one) counts unless the test rejects it."""
    limit = threshold if uncertainty is None else max(threshold, uncertainty)
    if abs(change) <= limit:
        return 'same'
    if verdict == 'not significant':
        return 'not significant'
    worse = change < 0 if higher_is_better else change > 0
    return 'slower' if worse else 'faster'


def judge(name, base, new, options):
    metric = METRICS[options.metric]
    basis, base_values, new_values = judged_values(base, new, metric.name)
    change = median(new_values) / median(base_values) - 1
    if not (math.isfinite(change) and change > -1):
        raise BadInput(f'{name}: base and new {basis} are too far apart to '
                       f'compare (medians {median(base_values):g} and '
                       f'{median(new_values):g})')
    verdict, test = significance(base_values, new_values, options.alpha)
    # Only single runs (no U test possible) have a single_ci95 on both sides.
    uncertainty = combined_uncertainty(single_ci95(base), single_ci95(new))
    if uncertainty is not None:
        judged_by = 'uncertainty'
    elif verdict in ('significant', 'not significant'):
        judged_by = 'u-test'
    else:
        judged_by = 'threshold'
    return {
        'status': classify_change(
            change, metric.higher_is_better, verdict, options.threshold / 100,
            None if uncertainty is None else uncertainty / 100),
        'judged_by': judged_by,
        'uncertainty_percent': uncertainty,
        'judged_on': basis,
        'change': change,
        'p_value': test.p if test else None,
        'u': test.u if test else None,
        'significance': verdict,
    }


def failure_status(base, new):
    if base.errors and new.errors:
        return {'status': 'failed', 'failed_in': 'both'}
    if new.errors:
        return {'status': 'failed', 'failed_in': 'new'}
    return {'status': 'fixed', 'failed_in': 'base'}


def median_or_none(values):
    values = [v for v in values if v is not None]
    return median(values) if values else None


def summarise_series(series):
    if series is None:
        return None
    return {
        'n': len(series.samples),
        'failed': len(series.errors),
        'time_us': median_or_none([s.time_us for s in series.samples]),
        'latency_us': median_or_none([s.latency_us for s in series.samples]),
        'gbps': median_or_none([s.gbps for s in series.samples]),
        'errors': list(dict.fromkeys(series.errors)),
        'aggregates_only': series.aggregates_only,
    }


def stated_fields(side, series):
    if series is None:
        return {f'{side}_ci95_pct': None, f'{side}_time_limited': None}
    return {f'{side}_ci95_pct': single_ci95(series),
            f'{side}_time_limited': time_limited(series)}


def compare_row(name, base, new, options):
    row = {'name': name, 'path': path_of(name), 'bytes': message_bytes(name),
           'status': None, 'failed_in': None, 'judged_on': None,
           'change': None, 'p_value': None, 'u': None, 'significance': None,
           'judged_by': None, 'uncertainty_percent': None,
           **stated_fields('base', base), **stated_fields('new', new),
           'base': summarise_series(base), 'new': summarise_series(new)}
    if base is None or new is None:
        row['status'] = 'new' if base is None else 'missing'
    elif base.errors or new.errors:
        row.update(failure_status(base, new))
    else:
        row.update(judge(name, base, new, options))
    return row


def is_regression(row):
    return row['status'] == 'slower' or row['failed_in'] == 'new'


# ---------------------------------------------------------------- report

def size_class(size):
    if size is None:
        return 'unsized'
    return 'small' if size < SMALL_MESSAGE_BYTES else 'large'


def geomean_summary(rows):
    """Geometric-mean new/base ratio per path and message-size class."""
    ratios = {}
    for row in rows:
        if row['change'] is not None:
            key = (row['path'], size_class(row['bytes']))
            ratios.setdefault(key, []).append(1 + row['change'])
    summary = []
    for (path, size), values in ratios.items():
        ratio = geometric_mean(values)
        summary.append({'path': path, 'size_class': size,
                        'rows': len(values), 'ratio': ratio,
                        'change': ratio - 1})
    return summary


def count_rows(rows, **wanted):
    return sum(all(row[k] == v for k, v in wanted.items()) for row in rows)


def identity_notes(base, new):
    unknown = [f'{side.label} file {path}' for side in (base, new)
               for path, context in zip(side.files, side.contexts)
               if xferbench_context(context) is None]
    if not unknown:
        return []
    return ['Machine identity unknown (plain Google Benchmark JSON, no '
            f'context.xferbench): {", ".join(unknown)}; compared without '
            'checking that the machines match.']


def aggregate_notes(base, new):
    return [f'{side.label} file {path} holds only aggregate rows: each '
            'benchmark\'s median counts as one sample.'
            for side in (base, new) for path in side.aggregate_only_files]


def legacy_name_notes(base, new):
    """One note for the files whose rows are named as before exchange
    modes, with an example of each kind of renaming they needed."""
    files = [(side.label, path, renamed)
             for side in (base, new)
             for path, renamed in side.legacy_files.items()]
    if not files:
        return []
    listed = ', '.join(f'{label} file {path} ({plural(len(renamed), "row")})'
                       for label, path, renamed in files)
    renamed = [pair for _, _, pairs in files for pair in pairs]
    staged = [pair for pair in renamed if path_of(pair[0]) == STAGED_PATH]
    others = [pair for pair in renamed if path_of(pair[0]) != STAGED_PATH]
    shown = ' and '.join(f'{old} as {current}'
                         for old, current in others[:1] + staged[:1])
    return [f'Rows named as before exchange modes (they measured ping-pong) '
            f'in {listed}: matched and shown under their current names, with '
            f'{LEGACY_MODE}, e.g. {shown}.']


def significance_notes(rows, alpha):
    notes = []
    unknown = count_rows(rows, significance='no repetitions',
                         judged_by='threshold')
    if unknown:
        notes.append(f'Significance unknown for {plural(unknown, "row")}: no '
                     'repetitions to test; judged by the threshold only.')
    too_few = [r for r in rows if r['significance'] == 'too few repetitions']
    if too_few:
        n1, n2 = too_few[0]['base']['n'], too_few[0]['new']['n']
        notes.append(
            f'Too few repetitions for significance at alpha {alpha:g} in '
            f'{plural(len(too_few), "row")} (e.g. {n1} vs {n2}: the smallest '
            f'possible p is {smallest_p_value(n1, n2):.3f}); judged by the '
            f'threshold only. Use at least {repetitions_needed(alpha)} '
            'repetitions per side.')
    return notes


def is_time_limited(row):
    return bool(row['base_time_limited'] or row['new_time_limited'])


def uncertainty_notes(rows):
    stated = [r for r in rows if r['judged_by'] == 'uncertainty']
    if not stated:
        return []
    notes = [f'{plural(len(stated), "row")} without repetitions judged by '
             'the uncertainty the runs stated (ci95_pct): ±unc = '
             'sqrt(base^2 + new^2); a change counts only beyond both ±unc and '
             'the threshold.']
    limited = sum(map(is_time_limited, stated))
    if limited:
        notes.append(f'{plural(limited, "row")} marked * under ±unc '
                     f'{"was" if limited == 1 else "were"} time-limited: '
                     'stopped by the time budget before reaching the '
                     'requested precision; judged by the wider uncertainty '
                     'stated.')
    return notes


def basis_notes(rows, metric):
    fallback = {'bandwidth': ('1/real_time', 'no GB/s or bytes_per_second'),
                'latency': ('real_time', 'no latency_us counter')}
    if metric not in fallback:
        return []
    basis, missing = fallback[metric]
    count = count_rows(rows, judged_on=basis)
    if not count:
        return []
    return [f'{plural(count, "row")} with {missing} judged on {basis}.']


def report_notes(base, new, rows, options):
    return (identity_notes(base, new) + aggregate_notes(base, new)
            + legacy_name_notes(base, new)
            + significance_notes(rows, options.alpha)
            + uncertainty_notes(rows)
            + basis_notes(rows, options.metric))


def filter_matches(pattern, name, base, new):
    """--filter matches the shown name or a name a file wrote, so a filter
    written for older files (^mpi_host/bytes:) still selects their rows."""
    written = {name}
    for side in (base, new):
        if name in side.series:
            written |= side.series[name].legacy_names
    return any(pattern.search(n) for n in written)


def build_report(base, new, options):
    machines = compare_machines(base, new, options.cross_machine)
    names = [n for n in dict.fromkeys(list(base.series) + list(new.series))
             if options.filter is None
             or filter_matches(options.filter, n, base, new)]
    rows = [compare_row(n, base.series.get(n), new.series.get(n), options)
            for n in names]
    if not any(row['base'] and row['new'] for row in rows):
        where = f' matching --filter {options.filter.pattern!r}' \
            if options.filter else ''
        raise BadInput(f'base and new have no benchmark rows in common{where}')
    metric = METRICS[options.metric]
    regressions = [row['name'] for row in rows if is_regression(row)]
    return {
        'schema': SCHEMA,
        'metric': {'name': metric.name, 'unit': metric.unit,
                   'higher_is_better': metric.higher_is_better},
        'threshold_percent': options.threshold,
        'alpha': options.alpha,
        'machines': machines,
        'base': {'files': base.files},
        'new': {'files': new.files},
        'context_diff': context_diff(base, new),
        'rows': rows,
        'summary': geomean_summary(rows),
        'notes': report_notes(base, new, rows, options),
        'regressions': regressions,
        'exit_status': 1 if regressions else 0,
    }


# ---------------------------------------------------------------- render

def format_time(us):
    if us is None:
        return '-'
    for unit, scale in (('s', 1e6), ('ms', 1e3), ('us', 1.0)):
        if us >= scale:
            return f'{us / scale:.4g} {unit}'
    return f'{us * 1e3:.4g} ns'


def format_number(value, spec):
    return '-' if value is None else format(value, spec)


def format_change(change):
    return '-' if change is None else f'{change * 100:+.1f}%'


def format_uncertainty(row):
    if row['judged_by'] != 'uncertainty':
        return '-'
    mark = '*' if is_time_limited(row) else ''
    return f'{row["uncertainty_percent"]:.2f}%{mark}'


def format_count(side):
    return '-' if side is None else str(side['n'])


def format_status(row):
    if row['status'] == 'failed':
        return f'failed ({row["failed_in"]})'
    return row['status']


def format_fact(value):
    if value is None:
        return '-'
    return value if isinstance(value, str) else json.dumps(value)


def plural(count, word):
    return f'{count} {word}' + ('' if count == 1 else 's')


def verdict_line(report):
    regressions = report['regressions']
    threshold = f'{report["threshold_percent"]:g}%'
    compared = sum(row['change'] is not None for row in report['rows'])
    if not regressions:
        return (f'No regression beyond {threshold} '
                f'({plural(compared, "row")} compared).')
    return (f'{plural(len(regressions), "regression")} beyond {threshold}: '
            + ', '.join(regressions))


def machine_line(report):
    if report['machines'] != 'different':
        return []
    return ['MACHINE COMPARISON (--cross-machine): base and new ran on '
            'different machines; changes reflect the machines, not only the '
            'code.']


def any_stated(report):
    """Whether any row was judged by the uncertainty its runs stated."""
    return any(row['judged_by'] == 'uncertainty' for row in report['rows'])


def setup_line(report):
    metric = report['metric']
    direction = 'higher' if metric['higher_is_better'] else 'lower'
    stated = '; single runs by their stated uncertainty' \
        if any_stated(report) else ''
    return (f'Judged by {metric["name"]} ({direction} is better), threshold '
            f'{report["threshold_percent"]:g}%, two-sided Mann-Whitney U at '
            f'alpha {report["alpha"]:g}{stated}.')


def files_line(report):
    return (f'base: {", ".join(report["base"]["files"])}  |  '
            f'new: {", ".join(report["new"]["files"])}')


def rows_table(report):
    """The per-row table; the ±unc column only where a row was judged by
    its stated uncertainty, so older files render exactly as before."""
    stated = any_stated(report)
    headers = ['benchmark', 'n', 'base time', 'new time', 'base GB/s',
               'new GB/s', 'change'] + (['±unc'] if stated else []) + \
        ['p', 'status']
    body = []
    for row in report['rows']:
        base, new = row['base'] or {}, row['new'] or {}
        body.append([
            row['name'],
            f'{format_count(row["base"])}v{format_count(row["new"])}',
            format_time(base.get('time_us')), format_time(new.get('time_us')),
            format_number(base.get('gbps'), '.4g'),
            format_number(new.get('gbps'), '.4g'),
            format_change(row['change']),
        ] + ([format_uncertainty(row)] if stated else []) + [
            format_number(row['p_value'], '.3f'),
            format_status(row),
        ])
    return headers, body, 'lrrrrrr' + ('r' if stated else '') + 'rl'


def summary_table(report):
    metric = report['metric']['name']
    headers = ['path', 'size', 'rows', f'geomean new/base {metric}', 'change']
    body = [[s['path'], {'small': '< 64 KiB', 'large': '>= 64 KiB'}.get(
                s['size_class'], 'no size'),
             str(s['rows']), f'{s["ratio"]:.4f}', format_change(s['change'])]
            for s in report['summary']]
    return headers, body, 'llrrr'


def context_table(report):
    headers = ['field', 'base', 'new', 'machine identity']
    body = [[d['field'], format_fact(d['base']), format_fact(d['new']),
             'yes' if d['identity'] else '']
            for d in report['context_diff']]
    return headers, body, 'llll'


def failure_lines(report):
    lines = []
    for row in report['rows']:
        for side in ('base', 'new'):
            for message in (row[side] or {}).get('errors', []):
                lines.append(f'{row["name"]}: {side}: {message}')
    return lines


def text_table(headers, body, align):
    widths = [max(len(r[i]) for r in [headers] + body)
              for i in range(len(headers))]

    def line(cells):
        return '  '.join(c.ljust(w) if a == 'l' else c.rjust(w)
                         for c, w, a in zip(cells, widths, align)).rstrip()
    return [line(headers), line(['-' * w for w in widths])] + \
        [line(r) for r in body]


def markdown_table(headers, body, align):
    def escape(cell):
        return cell.replace('|', '\\|').replace('*', '\\*')
    rule = ['---:' if a == 'r' else ':---' for a in align]
    return ['| ' + ' | '.join(escape(c) for c in cells) + ' |'
            for cells in [headers, rule] + body]


def render_text(report):
    lines = machine_line(report) + [verdict_line(report), setup_line(report),
                                    files_line(report), '']
    lines += text_table(*rows_table(report))
    sections = [('Summary (rows on both sides):', summary_table(report)),
                ('Context differences:', context_table(report))]
    for title, (headers, body, align) in sections:
        if body:
            lines += ['', title] + text_table(headers, body, align)
    for title, items in (('Failures:', failure_lines(report)),
                         ('Notes:', report['notes'])):
        if items:
            lines += ['', title] + [f'- {item}' for item in items]
    return '\n'.join(lines) + '\n'


def render_markdown(report):
    title = 'machine comparison' if report['machines'] == 'different' \
        else 'compare'
    lines = [f'### xferbench {title}', '', f'**{verdict_line(report)}**', '']
    lines += [f'**{line}**\n' for line in machine_line(report)]
    lines += [setup_line(report), '', f'`{files_line(report)}`', '']
    lines += markdown_table(*rows_table(report))
    sections = [('Summary', summary_table(report)),
                ('Context differences', context_table(report))]
    for title, (headers, body, align) in sections:
        if body:
            lines += ['', f'#### {title}', ''] + \
                markdown_table(headers, body, align)
    for title, items in (('Failures', failure_lines(report)),
                         ('Notes', report['notes'])):
        if items:
            lines += ['', f'#### {title}', ''] + [f'- {i}' for i in items]
    return '\n'.join(lines) + '\n'


def render_json(report):
    return json.dumps(report, indent=2, allow_nan=False) + '\n'


RENDERERS = {'text': render_text, 'markdown': render_markdown,
             'json': render_json}


# ------------------------------------------------------------------- CLI

def percentage(text):
    try:
        value = float(text.rstrip('%'))
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a percentage: {text!r}')
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f'must be >= 0: {text!r}')
    return value


def probability(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a number: {text!r}')
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f'must be between 0 and 1: {text!r}')
    return value


def regex(text):
    try:
        return re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f'bad regular expression: {error}')


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        description='Compare xferbench / Google Benchmark JSON results.',
        epilog='exit status: 0 no regression, 1 regression, 2 bad input. '
               'See docs/compare.md.')
    parser.add_argument('files', nargs='*', metavar='BASE NEW',
                        help='one base and one new result file')
    parser.add_argument('--base', nargs='+', metavar='FILE',
                        help='base result files; their repetitions pool')
    parser.add_argument('--new', nargs='+', metavar='FILE',
                        help='new result files; their repetitions pool')
    parser.add_argument('--metric', choices=list(METRICS), default='time',
                        help='what judges a row (default: time, which every '
                             'row has)')
    parser.add_argument('--threshold', type=percentage, default=5.0,
                        metavar='PCT',
                        help='smallest change that counts, in percent '
                             '(default: 5)')
    parser.add_argument('--alpha', type=probability, default=0.05,
                        help='significance level of the U test '
                             '(default: 0.05)')
    parser.add_argument('--format', choices=list(RENDERERS), default='text',
                        help='output format (default: text)')
    parser.add_argument('--filter', type=regex, metavar='REGEX',
                        help='compare only rows whose name matches')
    parser.add_argument('--cross-machine', action='store_true',
                        help='allow base and new from different machines')
    return parser


def parse_args(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.files and (args.base or args.new):
        parser.error('give either BASE NEW or --base/--new, not both')
    if args.files:
        if len(args.files) != 2:
            parser.error('give exactly two files, BASE NEW '
                         '(pool more with --base ... --new ...)')
        args.base, args.new = [args.files[0]], [args.files[1]]
    elif not (args.base and args.new):
        parser.error('give BASE NEW, or both --base and --new')
    return args


# Every character str.splitlines() breaks at, written as an escape.
LINE_BREAKS = {ord(c): repr(c)[1:-1]
               for c in '\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029'}


def one_line(text):
    """text with its line breaks escaped: an error is one line on stderr,
    whatever file names and row names it quotes."""
    return text.translate(LINE_BREAKS)


def main(argv=None):
    args = parse_args(argv)
    if hasattr(sys.stdout, 'reconfigure'):  # '±' on an ASCII-only stdout
        sys.stdout.reconfigure(errors='backslashreplace')
    try:
        report = build_report(load_side('base', args.base),
                              load_side('new', args.new), args)
    except BadInput as error:
        print(f'{PROG}: error: {one_line(str(error))}', file=sys.stderr)
        return 2
    sys.stdout.write(RENDERERS[args.format](report))
    return report['exit_status']


if __name__ == '__main__':
    sys.exit(main())
