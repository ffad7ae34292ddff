"""plot.py's runs: each result file as series of points (per family, per message size: GB/s and
one-way latency), with its label, failed rows, filters and theoretical reference lines."""

import dataclasses
import os
import re
from collections import Counter

from ..core import fields, files, names, stats
from ..core.files import InputError
from ..core.text import one_line
from ..node import links
from ..result import machines, rows

# A bandwidth or time beyond this is corrupt, not measured (1e100 GB/s, or us): left out like
# NaN, as no axis can hold it next to real values.
LARGEST_VALUE = 1e100

# Theoretical link rates, GB/s (1e9 B/s) per direction; docs/plot.md says where each figure
# comes from.
NVLINK_GB_PER_LINK = {"NVLink3": 25.0, "NVLink4": 25.0, "NVLink5": 50.0}
PCIE_X16_GB = {"Gen4": 31.5, "Gen5": 63.0}  # 16/32 GT/s x16, 128b/130b
GPU_LINKS = (  # GPU model -> (NVLink generation, PCIe generation to host)
    (re.compile(r"\bA100\b"), "NVLink3", "Gen4"),
    (re.compile(r"\bH100\b"), "NVLink4", "Gen5"),
    (re.compile(r"\bH200\b"), "NVLink4", "Gen5"),
    (re.compile(r"\bB200\b"), "NVLink5", None),
)
GPU_PEER_PATHS = {"memcpy_peer", "mpi_cuda_aware", "nccl_sendrecv"}
HOST_PATHS = {"host_staging", "mpi_staged"}


@dataclasses.dataclass
class Run:
    """One result file, reduced to what the charts need."""

    file: str
    label: str
    context: dict  # context.xferbench, {} when absent
    series: dict  # {family: {size: (GB/s or None, latency us or None)}}
    failed: list  # 'name: message' of each failed row left out
    intervals: dict = dataclasses.field(default_factory=dict)  # {family: {size: ci95 %}}


def plottable(value):
    """value if an axis can show it next to real values (not None, not beyond LARGEST_VALUE)."""
    return value if value is not None and value <= LARGEST_VALUE else None


def point(counted):
    """(GB/s, one-way latency in us) of a size: medians over its rows; latency is the
    latency_us counter, else real_time."""
    gbps = stats.median_or_none(plottable(rows.row_gbps(r)) for r in counted)
    latency = stats.median_or_none(
        plottable(rows.positive(r.get(fields.LATENCY_US))) or plottable(rows.row_time_us(r))
        for r in counted
    )
    return gbps, latency


def interval(group, measured):
    """The relative 95% half-width (percent) of a size's time, or None: one row's stated
    ci95_pct; with repetitions, that of their mean from their spread (rows.series_figure); none
    for an aggregate row, whose ci95_pct is not that of its value."""
    if not measured:
        return None
    return rows.series_figure(rows.series_from_rows(measured, not group.repetitions)).ci95_pct


def series_points(document):
    """{family: {size: (GB/s, latency us)}}, the failed rows ('name: message') and
    {family: {size: ci95 percent}} of the points whose rows state or show one.

    With repetitions the point is the median of the repetition rows; the median aggregate row
    (else the mean) is used only where a benchmark has no repetition rows.
    """
    series, failed, intervals = {}, [], {}
    for name, group in rows.grouped_rows(document).items():
        counted = group.counted()
        failed += [
            one_line(f"{r['name']}: {rows.failure_message(r)}")
            for r in counted
            if rows.is_failed(r)
        ]
        size = names.message_bytes(name)
        measured = [r for r in counted if not rows.is_failed(r)]
        gbps, latency = point(measured)
        if size and (gbps is not None or latency is not None):
            family = names.family_of(name)
            series.setdefault(family, {})[size] = (gbps, latency)
            ci95 = interval(group, measured)
            if ci95 is not None:
                intervals.setdefault(family, {})[size] = ci95
    return series, failed, intervals


def unique_labels(labels, paths):
    """Add the file name, then a number, to labels that are not unique."""
    counts = Counter(labels)
    labels = [
        f"{label} ({os.path.basename(path)})" if counts[label] > 1 else label
        for label, path in zip(labels, paths)
    ]
    counts = Counter(labels)
    seen = Counter()
    unique = []
    for label in labels:
        seen[label] += 1
        unique.append(f"{label} #{seen[label]}" if counts[label] > 1 else label)
    return unique


def load_runs(paths):
    """Every file as a Run; InputError for one with nothing to plot."""
    documents = [files.load_result(p) for p in paths]
    contexts = [machines.context_of(d) for d in documents]
    labels = unique_labels(
        [machines.run_label(c, os.path.basename(p)) for c, p in zip(contexts, paths)], paths
    )
    runs = []
    for document, context, path, label in zip(documents, contexts, paths, labels):
        series, failed, intervals = series_points(document)
        if not series:
            raise InputError(
                f"{path}: no plottable rows (of {len(document['benchmarks'])} rows, "
                f"{len(failed)} failed; a plottable row is named "
                "PATH[/VARIANT...]/bytes:N/manual_time and has a time)"
            )
        xferbench = machines.xferbench_context(context) or {}
        runs.append(Run(path, label, xferbench, series, failed, intervals))
    return runs


def filter_matches(pattern, family):
    """The family, or its older name, so '^mpi_host$' still selects mpi_host/mode:pingpong."""
    old = names.legacy_family(family)
    return bool(pattern.search(family) or (old and pattern.search(old)))


def filter_series(runs, pattern):
    for run in runs:
        run.series = {k: v for k, v in run.series.items() if filter_matches(pattern, k)}
        run.intervals = {k: v for k, v in run.intervals.items() if k in run.series}
    if not any(run.series for run in runs):
        raise InputError(f"no series match --filter '{pattern.pattern}'")


def gpu_links(xferbench):
    """(NVLink generation, PCIe generation) of rank 0's GPU model."""
    name = machines.gpu_name(xferbench) or ""
    for pattern, nvlink, pcie in GPU_LINKS:
        if pattern.search(name):
            return nvlink, pcie
    return None, None


def reference_lines(run):
    """[(GB/s, label)]: theoretical rates of the links this run's series use, drawn only where
    the context says which link and which GPU; the links the run read itself where it did."""
    if measured := links.route_lines(run.context, run.series):
        return measured
    nvlink, pcie = gpu_links(run.context)
    pairs = machines.mapping(run.context.get("cuda")).get("pairs")
    pairs = [p for p in pairs if isinstance(p, dict)] if isinstance(pairs, list) else []
    paths = {names.path_of(key) for key in run.series}
    lines = []
    if nvlink and paths & GPU_PEER_PATHS:
        counts = {
            p.get("nvlink_count")
            for p in pairs
            if p.get("link") == "NVLink" and type(p.get("nvlink_count")) is int
        }
        for count in sorted(c for c in counts if 0 < c < 1000):
            rate = count * NVLINK_GB_PER_LINK[nvlink]
            lines.append((rate, f"theoretical {nvlink} x{count}: {rate:g} GB/s per direction"))
    pcie_peer = paths & GPU_PEER_PATHS and (
        any(p.get("link") == "PCIe" for p in pairs)
        or any("p2p:off" in key.split("/") for key in run.series)
    )
    if pcie and (paths & HOST_PATHS or pcie_peer):
        rate = PCIE_X16_GB[pcie]
        lines.append((rate, f"theoretical PCIe {pcie} x16: {rate:g} GB/s per direction"))
    return lines
