#!/usr/bin/env python3
"""Plot xferbench result files (see docs/plot.md).

Curves:  plot.py RUN.json [RUN2.json ...] -o OUT.png|svg|pdf [--panels path]
         bandwidth and one-way latency against message size, one line per
         path and variant (a colour per path, a line style per mode or
         variant, a marker per pair or staging), several runs overlaid;
         --panels path gives each path its own pair of panels.
Matrix:  plot.py RUN.json --matrix [-o OUT.png] [--size 256MiB] [--variant V]
         GB/s per (source, destination) GPU from an all-pairs run, as a
         heatmap (-o) or as a text table (no -o, or --text); the text table
         needs only the standard library.
"""

import argparse
import contextlib
import json
import math
import os
import re
import sys
import textwrap
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xfer_files import (EXCHANGE_PATHS, LEGACY_MODE, LEGACY_STAGING,  # noqa: E402
                        MAX_NESTING, STAGED_PATH, canonical_name, nesting_depth,
                        read_regular_file)

EXIT_BAD_INPUT = 2
DEFAULT_VARIANT = "p2p:on/dir:uni"
DEFAULT_MATRIX_PATH = "memcpy_peer"
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
CORNER = "src\\dst"  # top-left cell of the text matrix
TIME_UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
BINARY_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
SIZE_SUFFIXES = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10,
                 "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}

# Theoretical link rates, GB/s (1e9 B/s) per direction; docs/plot.md says
# where each figure comes from.
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

# The exchange modes of the paths between ranks (xfer_files.EXCHANGE_PATHS, and
# mpi_staged after its staging: component), ping-pong first. host_staging's
# mode: component (mode:sequential, mode:pipelined) means staging.
EXCHANGE_MODES = (LEGACY_MODE, "mode:stream", "mode:bidir")
# Rows whose time is per message of a window (the inverse of throughput),
# not a latency: bandwidth chart only.
THROUGHPUT_MODES = {"mode:stream", "mode:bidir"}

# One colour per path, the same in every chart; other paths take the spare
# colours in name order. Grey stays for the reference lines.
PATH_COLORS = {"mpi_host": "#1f77b4", "mpi_cuda_aware": "#ff7f0e",
               "nccl_sendrecv": "#2ca02c", "mpi_staged": "#d62728",
               "memcpy_peer": "#9467bd", "host_staging": "#8c564b"}
SPARE_COLORS = ("#e377c2", "#bcbd22", "#17becf", "#393b79", "#8c6d31",
                "#637939", "#7b4173")
# Within a path: the line style is the exchange mode's (ping-pong solid,
# stream dashed, bidir dash-dot, the first three), or for paths without
# exchange modes one per variant; a marker per GPU pair or pair count and
# per variant beside the mode (mpi_staged's staging).
LINESTYLES = ("-", "--", "-.", ":", (0, (8, 2, 2, 2, 2, 2)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
# Overlaid runs: the same colour and style, told apart by marker fill and
# shade (< 0 darker, > 0 lighter).
RUN_FILLS = ("full", "none", "left", "bottom", "right", "top")
RUN_SHADES = (0.0, -0.35, 0.3, -0.55, 0.5, 0.15)
PANEL_CHOICES = ("none", "path")

MATPLOTLIB_HINT = (
    "matplotlib is needed to draw images, and {python} cannot import it "
    "({error}); install it: apt-get install python3-matplotlib (Debian, "
    "Ubuntu) or python3 -m pip install matplotlib; the text matrix "
    "(--matrix --text) works without it")
# Deeper than this is not a result file (xferbench's go 5 levels deep); it
# also keeps every later step clear of Python's recursion limit.
# Message sizes (bytes:N) and GPU indices (pair:AtoB) this tool reads: a
# longer number is no size or pair, so its row is no point of a series.
SIZE_DIGITS = 18        # up to an exabyte
MAX_MATRIX_GPUS = 256   # GPU indices 0..255 in the matrix
# A bandwidth or time beyond this is corrupt, not measured (1e100 GB/s, or
# us): left out like NaN, as no axis can hold it next to real values.
LARGEST_VALUE = 1e100
# Text drawn from a file (a row, host or GPU name) is cut to this many
# characters: a name of thousands would make an image wider than any.
LABEL_WIDTH = 100
# Every character str.splitlines() breaks at, written as an escape.
LINE_BREAKS = {ord(c): repr(c)[1:-1]
               for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


class InputError(Exception):
    """A problem with what the user gave us: one message, exit status 2."""


@dataclass
class Run:
    """One result file, reduced to what the charts need."""
    file: str
    label: str
    context: dict   # context.xferbench, {} when absent
    series: dict    # {series key: {size: (GB/s or None, latency us or None)}}
    failed: list    # 'name: message' of each failed row left out


# ---------------------------------------------------------------- loading

# A JSON string (kept as is) or a bare nan/inf token, as C++ streams print.
_NONFINITE_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|(-?)\b(nan|inf(?:inity)?)\b', re.IGNORECASE)


def _standard_nonfinite(match):
    if match.group(2) is None:
        return match.group(0)
    if match.group(2).lower() == "nan":
        return "NaN"
    return match.group(1) + "Infinity"


def parse_result_text(text):
    """json.loads that also takes nan, -nan, inf, NaN and Infinity."""
    return json.loads(_NONFINITE_TOKEN.sub(_standard_nonfinite, text))


def one_line(text):
    """text with its line breaks escaped: a message is one line on stderr,
    whatever file names and row names it quotes."""
    return str(text).translate(LINE_BREAKS)


def clip(text, width=LABEL_WIDTH):
    """text, cut to width characters with an ellipsis."""
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def load_result(path):
    """The result document in `path`; InputError if it is not one."""
    data = read_regular_file(path, path, InputError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: cannot read: not UTF-8 (byte {e.start}: "
                         f"{e.reason})") from None
    try:
        doc = parse_result_text(text)
    except ValueError as e:  # not JSON; or an integer past the digit limit
        raise InputError(f"{path}: not JSON ({str(e).split(';')[0]})") \
            from None
    except RecursionError:
        doc = nested = None
    else:
        nested = nesting_depth(doc) <= MAX_NESTING
    if not nested:
        raise InputError(f"{path}: nested more than {MAX_NESTING} levels "
                         "deep")
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"),
                                                   list):
        raise InputError(
            f"{path}: not an xferbench result (no 'benchmarks' list)")
    return without_surrogates(doc) if "\\u" in text else doc


def without_surrogates(value):
    """value with each lone surrogate (a JSON escape like \\ud800 that is
    half a character) written as that escape: no output can encode one."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item)
                for key, item in value.items()}
    return value


def mapping(value):
    """value if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def first_item(value):
    """The first element of a JSON array if it is an object, else {}."""
    return mapping(value[0]) if isinstance(value, list) and value else {}


def text_or_none(value):
    """A non-empty string, else None: labels are made of strings only."""
    return value if isinstance(value, str) and value else None


def xferbench_context(doc):
    return mapping(mapping(doc.get("context")).get("xferbench"))


# ---------------------------------------------------------------- rows

def split_name(name):
    """'PATH/VARIANT.../bytes:N/manual_time' -> ('PATH/VARIANT...', N);
    'mpi_host/bytes:8/...' (before modes) -> ('mpi_host/mode:pingpong', 8)."""
    kept, size = [], None
    for part in name.split("/"):
        if part == "manual_time":
            continue
        if re.fullmatch(rf"bytes:[0-9]{{1,{SIZE_DIGITS}}}", part):
            size = int(part[6:]) or None  # 0 bytes: no point on a log axis
        else:
            kept.append(part)
    return canonical_name("/".join(kept)), size


def is_failed(row):
    return bool(row.get("error_occurred") or row.get("skipped"))


def _finite(value):
    """value as a float if it is a finite number (not a bool), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:  # an integer beyond the largest float
            return None
        return value if math.isfinite(value) else None
    return None


def _plottable(value):
    """value if it is a number an axis can show (None, NaN, infinity and
    magnitudes beyond LARGEST_VALUE are not), else None."""
    return value if value is not None and abs(value) <= LARGEST_VALUE \
        else None


def row_bandwidth(row):
    """GB/s (1e9 B/s): the GB/s counter, else bytes_per_second."""
    gbps = _plottable(_finite(row.get("GB/s")))
    if gbps is None:
        bytes_per_second = _finite(row.get("bytes_per_second"))
        gbps = None if bytes_per_second is None \
            else _plottable(bytes_per_second / 1e9)
    return gbps


def row_latency(row):
    """One-way time in us: the latency_us counter, else real_time."""
    latency = _plottable(_finite(row.get("latency_us")))
    if latency is None:
        real_time = _finite(row.get("real_time"))
        unit = row.get("time_unit", "ns")
        scale = TIME_UNIT_TO_US.get(unit) if isinstance(unit, str) else None
        if real_time is not None and scale is not None and real_time > 0:
            latency = real_time * scale
            if not 0 < latency <= LARGEST_VALUE:  # 0 when it underflows
                latency = None
    return latency


def median_or_none(values):
    """The median (the middle two averaged without overflow), or None."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    low, high = values[middle - 1], values[middle]
    return low + (high - low) / 2


def describe_failure(row):
    message = row.get("error_message") or row.get("skip_message") or "failed"
    return one_line(f"{row.get('name')}: {message}")


def group_rows(doc):
    """Successful rows per (series, size): iteration rows, median rows;
    and the failed rows."""
    iterations, medians, failed = defaultdict(list), {}, []
    for row in doc["benchmarks"]:
        if not isinstance(row, dict):
            continue
        key, size = split_name(str(row.get("run_name") or row.get("name")))
        if size is None:
            continue
        if row.get("run_type") == "aggregate":
            if row.get("aggregate_name") == "median" and not is_failed(row):
                medians[(key, size)] = row
        elif is_failed(row):
            failed.append(describe_failure(row))
        else:
            iterations[(key, size)].append(row)
    return iterations, medians, failed


def series_points(doc):
    """{series key: {size: (GB/s, latency us)}} and the failed rows.

    With repetitions the point is the median of the iteration rows; the
    median aggregate row is used only where no iteration rows exist.
    """
    iterations, medians, failed = group_rows(doc)
    series = defaultdict(dict)
    for key_size in set(iterations) | set(medians):
        rows = iterations.get(key_size) or [medians[key_size]]
        gbps = median_or_none(row_bandwidth(r) for r in rows)
        latency = median_or_none(row_latency(r) for r in rows)
        if gbps is not None or latency is not None:
            key, size = key_size
            series[key][size] = (gbps, latency)
    return dict(series), failed


# ---------------------------------------------------------------- labels

def gpu_name(xferbench):
    """Rank 0's GPU model, with a count when the run saw several GPUs."""
    devices = mapping(xferbench.get("cuda")).get("devices")
    devices = [d for d in devices if isinstance(d, dict)] \
        if isinstance(devices, list) else []
    if not devices:
        return None
    index = first_item(xferbench.get("ranks")).get("gpu")
    device = next((d for d in devices if d.get("index") == index),
                  devices[0])
    name = text_or_none(device.get("name"))
    if name and len(devices) > 1 and all(d.get("name") == name
                                         for d in devices):
        return f"{len(devices)}x {name}"
    return name


def run_label(doc, path):
    """'host of rank 0, GPU name', falling back to host_name, file name."""
    xferbench = xferbench_context(doc)
    host = text_or_none(first_item(xferbench.get("ranks")).get("host"))
    host = host or text_or_none(mapping(doc.get("context")).get("host_name"))
    parts = [p for p in (host, gpu_name(xferbench)) if p]
    return clip(", ".join(parts) if parts else os.path.basename(path))


def unique_labels(labels, files):
    """Add the file name, then a number, to labels that are not unique."""
    counts = Counter(labels)
    labels = [f"{label} ({os.path.basename(file)})" if counts[label] > 1
              else label for label, file in zip(labels, files)]
    counts = Counter(labels)
    seen = Counter()
    unique = []
    for label in labels:
        seen[label] += 1
        unique.append(f"{label} #{seen[label]}" if counts[label] > 1
                      else label)
    return unique


def software_line(xferbench):
    """'xferbench 0.1.0 @3f9c2ab, CUDA 13.0, NCCL 2.28.3, Open MPI v4.1.6'."""
    parts = []
    if xferbench.get("harness_version"):
        revision = xferbench.get("git_revision")
        parts.append(f"xferbench {xferbench['harness_version']}"
                     + (f" @{revision}" if revision else ""))
    cuda = mapping(xferbench.get("cuda"))
    if cuda.get("runtime_version"):
        parts.append(f"CUDA {cuda['runtime_version']}")
    nccl = mapping(xferbench.get("nccl"))
    if nccl.get("version"):
        parts.append(f"NCCL {nccl['version']}")
    mpi = mapping(xferbench.get("mpi"))
    if mpi.get("library"):
        parts.append(str(mpi["library"]).split(",")[0])
    if xferbench.get("world_size"):
        parts.append(f"{xferbench['world_size']} rank(s)")
    return clip(", ".join(parts))


def load_runs(files):
    """Every file as a Run; InputError for one with nothing to plot."""
    docs = [load_result(f) for f in files]
    labels = unique_labels([run_label(d, f) for d, f in zip(docs, files)],
                           files)
    runs = []
    for doc, file, label in zip(docs, files, labels):
        series, failed = series_points(doc)
        if not series:
            raise InputError(
                f"{file}: no plottable rows (of {len(doc['benchmarks'])} "
                f"rows, {len(failed)} failed; a plottable row is named "
                "PATH[/VARIANT...]/bytes:N/manual_time and has a time)")
        runs.append(Run(file, label, xferbench_context(doc), series, failed))
    return runs


def legacy_key(key):
    """The name files from before modes gave a ping-pong series
    ('mpi_host/mode:pingpong' -> 'mpi_host', 'mpi_staged/host:pinned/
    staging:pipelined/mode:pingpong' -> 'mpi_staged/host:pinned/
    mode:pipelined'); None for other series."""
    parts = key.split("/")
    if parts[0] in EXCHANGE_PATHS and parts[1:2] == [EXCHANGE_MODES[0]]:
        return "/".join(parts[:1] + parts[2:])
    if parts[0] == STAGED_PATH:
        old_staging = {new: old for old, new in LEGACY_STAGING.items()}
        for i in range(1, len(parts) - 1):
            if parts[i] in old_staging and parts[i + 1] == EXCHANGE_MODES[0]:
                return "/".join(parts[:i] + [old_staging[parts[i]]]
                                + parts[i + 2:])
    return None


def filter_matches(pattern, key):
    """The key, or its older name, so '^mpi_host$' still selects it."""
    old = legacy_key(key)
    return bool(pattern.search(key) or (old and pattern.search(old)))


def filter_series(runs, pattern):
    for run in runs:
        run.series = {k: v for k, v in run.series.items()
                      if filter_matches(pattern, k)}
    if not any(run.series for run in runs):
        raise InputError(f"no series match --filter '{pattern.pattern}'")


# ---------------------------------------------------------------- sizes

def parse_size(text):
    """'256MiB', '256M', '268435456' or '1G' -> bytes (binary suffixes)."""
    match = re.fullmatch(r"\s*([0-9]{1,18})\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).lower() not in SIZE_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"bad size '{text}': give bytes (268435456) or a number with "
            "K/KiB, M/MiB or G/GiB (256MiB, 1G)")
    return int(match.group(1)) * SIZE_SUFFIXES[match.group(2).lower()]


def format_size(size):
    for unit_bytes, unit in BINARY_UNITS:
        if size >= unit_bytes:
            return f"{size / unit_bytes:g} {unit}"
    return f"{size:g} B"


# ---------------------------------------------------------------- references

def gpu_links(xferbench):
    """(NVLink generation, PCIe generation) of rank 0's GPU model."""
    name = gpu_name(xferbench) or ""
    for pattern, nvlink, pcie in GPU_LINKS:
        if pattern.search(name):
            return nvlink, pcie
    return None, None


def reference_lines(run):
    """[(GB/s, label)]: theoretical rates of the links this run's series use,
    drawn only where the context says which link and which GPU."""
    nvlink, pcie = gpu_links(run.context)
    pairs = mapping(run.context.get("cuda")).get("pairs")
    pairs = [p for p in pairs if isinstance(p, dict)] \
        if isinstance(pairs, list) else []
    paths = {key.split("/")[0] for key in run.series}
    lines = []
    if nvlink and paths & GPU_PEER_PATHS:
        counts = {p.get("nvlink_count") for p in pairs
                  if p.get("link") == "NVLink"
                  and type(p.get("nvlink_count")) is int}
        for count in sorted(c for c in counts if 0 < c < 1000):
            rate = count * NVLINK_GB_PER_LINK[nvlink]
            lines.append((rate, f"theoretical {nvlink} x{count}: "
                                f"{rate:g} GB/s per direction"))
    pcie_peer = paths & GPU_PEER_PATHS and (
        any(p.get("link") == "PCIe" for p in pairs)
        or any("p2p:off" in key.split("/") for key in run.series))
    if pcie and (paths & HOST_PATHS or pcie_peer):
        rate = PCIE_X16_GB[pcie]
        lines.append((rate, f"theoretical PCIe {pcie} x16: "
                            f"{rate:g} GB/s per direction"))
    return lines


# ---------------------------------------------------------------- matrix

@dataclass
class Matrix:
    label: str
    path: str
    variant: str
    size: int
    cells: list     # cells[src][dst]: GB/s or None

    def title(self):
        return f"{self.path} {self.variant} at {format_size(self.size)}"


def split_variant(spec):
    """'p2p:on/dir:uni' -> (memcpy_peer, ...); 'host_staging/...' too."""
    parts = [p for p in spec.split("/") if p]
    if parts and ":" not in parts[0]:
        return parts[0], parts[1:]
    return DEFAULT_MATRIX_PATH, parts


def pair_of(part):
    match = re.fullmatch(r"pair:([0-9]{1,9})to([0-9]{1,9})", part)
    return (int(match.group(1)), int(match.group(2))) if match else None


def pair_bandwidths(run, path, variant_parts):
    """{(src, dst): {size: GB/s}} for the series path/variant/pair:AtoB."""
    found = {}
    for key, points in run.series.items():
        parts = key.split("/")
        pairs = [pair_of(p) for p in parts if pair_of(p)]
        rest = [p for p in parts[1:] if not pair_of(p)]
        bandwidths = {size: gbps for size, (gbps, _) in points.items()
                      if gbps is not None}
        if parts[0] == path and len(pairs) == 1 and bandwidths \
                and sorted(rest) == sorted(variant_parts):
            found[pairs[0]] = bandwidths
    return found


def variants_present(run, path):
    keys = {"/".join(p for p in key.split("/")[1:] if not pair_of(p))
            for key in run.series
            if key.split("/")[0] == path and "/pair:" in key}
    return ", ".join(sorted(keys)) or "none"


def build_matrix(run, variant_spec, size):
    path, variant_parts = split_variant(variant_spec)
    variant = "/".join(variant_parts)
    pairs = pair_bandwidths(run, path, variant_parts)
    if not pairs:
        raise InputError(
            f"{run.file}: no {path} pair rows for variant '{variant}' "
            f"(variants present: {variants_present(run, path)})")
    sizes = sorted({s for points in pairs.values() for s in points})
    size = sizes[-1] if size is None else size
    if size not in sizes:
        present = ", ".join(format_size(s) for s in sizes)
        raise InputError(f"{run.file}: no {path} {variant} rows at "
                         f"{format_size(size)} (sizes present: {present})")
    count = 1 + max(max(pair) for pair in pairs)
    if count > MAX_MATRIX_GPUS:
        raise InputError(f"{run.file}: {path} pair rows name GPU {count - 1}"
                         f"; the matrix shows at most {MAX_MATRIX_GPUS} GPUs "
                         f"(0 to {MAX_MATRIX_GPUS - 1})")
    cells = [[pairs.get((src, dst), {}).get(size) for dst in range(count)]
             for src in range(count)]
    return Matrix(run.label, path, variant, size, cells)


def matrix_text(matrix):
    """A table like p2pBandwidthLatencyTest's: rows source, columns dest."""
    values = [f"{v:.2f}" for row in matrix.cells for v in row
              if v is not None]
    width = max(8, 2 + max(len(v) for v in values))
    lines = [f"{matrix.title()} ({matrix.size} B): GB/s, 1 GB = 1e9 B",
             f"run: {matrix.label}",
             "rows: source GPU, columns: destination GPU",
             f"{CORNER:>7}" + "".join(
                 f"{dst:>{width}}" for dst in range(len(matrix.cells)))]
    for src, row in enumerate(matrix.cells):
        lines.append(f"{src:>7}" + "".join(
            f"{'-' if v is None else format(v, '.2f'):>{width}}"
            for v in row))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- styles

@dataclass(frozen=True)
class Style:
    """How one series is drawn: colour from its path, line style from its
    mode or variant, marker from the rest (GPU pair, pair count, staging)."""
    color: str
    linestyle: object
    marker: str


def series_path(key):
    return key.split("/")[0]


def series_variant(key):
    """The key without its path ('mode:stream/pairs:2'); '' for none."""
    return "/".join(key.split("/")[1:])


def is_pair_part(part):
    return part.startswith(("pair:", "pairs:"))


def variant_parts(key):
    """(mode or variant, pair components) of a key, each '/'-joined."""
    parts = key.split("/")[1:]
    return ("/".join(p for p in parts if not is_pair_part(p)),
            "/".join(p for p in parts if is_pair_part(p)))


def is_throughput_only(key):
    """mode:stream and mode:bidir rows: their time is the time per message
    of a window (the inverse of throughput), not a latency."""
    return any(part in THROUGHPUT_MODES for part in key.split("/")[1:])


def natural_key(text):
    """'pairs:10' after 'pairs:2': runs of digits compare as numbers (by
    length without leading zeros, then digit by digit: no int() of a
    thousand digits)."""
    return [(len(t.lstrip("0")), t.lstrip("0"), t) if i % 2 else t
            for i, t in enumerate(re.split(r"([0-9]+)", text))]


def mode_rank(variant):
    """ping-pong, stream, bidir first, in that order; then the rest."""
    for part in variant.split("/"):
        if part in EXCHANGE_MODES:
            return EXCHANGE_MODES.index(part)
    return len(EXCHANGE_MODES)


def path_order(paths):
    """Known paths in a fixed order, then the others by name."""
    known = [p for p in PATH_COLORS if p in paths]
    return known + sorted(set(paths) - set(known))


def path_colors(paths):
    """{path: colour}: fixed for known paths, spare colours for others."""
    colors = {p: PATH_COLORS[p] for p in paths if p in PATH_COLORS}
    others = sorted(set(paths) - set(colors))
    colors.update({p: SPARE_COLORS[i % len(SPARE_COLORS)]
                   for i, p in enumerate(others)})
    return colors


def series_order(keys):
    """Keys by path, then mode (ping-pong, stream, bidir), then variant."""
    paths = path_order({series_path(k) for k in keys})

    def order(key):
        variant, pairs = variant_parts(key)
        return (paths.index(series_path(key)), mode_rank(variant),
                natural_key(variant), natural_key(pairs))
    return sorted(set(keys), key=order)


def line_and_marker_parts(key):
    """(what sets the line style, what sets the marker) of a key: its
    exchange mode and the rest ('mode:stream', 'host:pinned/staging:
    pipelined/pairs:2'), or for a key without an exchange mode its variant
    and its pair components."""
    variant, pairs = variant_parts(key)
    parts = variant.split("/")
    modes = [p for p in parts if p in EXCHANGE_MODES]
    if not modes:
        return variant, pairs
    rest = "/".join(p for p in parts if p not in EXCHANGE_MODES)
    return modes[0], "/".join(p for p in (rest, pairs) if p)


def series_styles(keys):
    """{key: Style} for all the keys of all the runs drawn together, so a
    series looks the same in every run. The line style is the exchange
    mode's, the same in every path (ping-pong solid, stream dashed, bidir
    dash-dot); within a path without exchange modes each variant has its own.
    Within a path each pair component, and each variant beside the mode
    (mpi_staged's staging), has its own marker (styles repeat only beyond 5
    variants or 12 markers in one path)."""
    colors = path_colors({series_path(k) for k in keys})
    by_path = defaultdict(list)
    for key in series_order(keys):
        by_path[series_path(key)].append(key)
    styles = {}
    for path, path_keys in by_path.items():
        parts = {key: line_and_marker_parts(key) for key in path_keys}
        variants = [v for v in dict.fromkeys(p[0] for p in parts.values())
                    if v not in EXCHANGE_MODES]
        markers = sorted({p[1] for p in parts.values()}, key=natural_key)
        for key, (line, marker) in parts.items():
            index = EXCHANGE_MODES.index(line) if line in EXCHANGE_MODES \
                else variants.index(line)
            styles[key] = Style(colors[path],
                                LINESTYLES[index % len(LINESTYLES)],
                                MARKERS[markers.index(marker) % len(MARKERS)])
    return styles


def shade(color, amount):
    """'#rrggbb' mixed with white (amount > 0) or black (amount < 0)."""
    channels = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    target = 255 if amount > 0 else 0
    mixed = [round(c + (target - c) * abs(amount)) for c in channels]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def run_look(index):
    """(marker fill style, shade) of the index-th run of an overlay."""
    return (RUN_FILLS[index % len(RUN_FILLS)],
            RUN_SHADES[index % len(RUN_SHADES)])


def line_kwargs(style, run_index, label="_nolegend_"):
    """Keyword arguments of Axes.plot for a series of the run_index-th run."""
    fill, amount = run_look(run_index)
    return dict(color=shade(style.color, amount), linestyle=style.linestyle,
                marker=style.marker, fillstyle=fill,
                markerfacecoloralt="white", markersize=4, linewidth=1.5,
                label=label)


# ---------------------------------------------------------------- layout

@dataclass
class Panel:
    """One column of the figure: a bandwidth axes over a latency axes."""
    title: str       # the path, or '' when all series share one column
    keys: list       # the series drawn in it, in legend order


def panel_layout(runs, panels="none"):
    """The columns of the curves figure: one for all series ('none'), or
    one per path ('path'), paths in a fixed order."""
    keys = series_order({key for run in runs for key in run.series})
    if panels == "none":
        return [Panel("", keys)]
    if panels != "path":
        raise ValueError(f"unknown panels {panels!r}")
    return [Panel(path, [k for k in keys if series_path(k) == path])
            for path in path_order({series_path(k) for k in keys})]


def legend_label(key, panel):
    """The full key in the shared axes; in a path's panel, the variant."""
    if not panel.title:
        return clip(key)
    return clip(series_variant(key) or key)


# ---------------------------------------------------------------- drawing

def import_pyplot():
    """pyplot on the headless Agg backend; InputError with a hint if absent."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError as e:
        raise InputError(MATPLOTLIB_HINT.format(python=sys.executable,
                                                error=e)) from None
    return pyplot


def format_size_axis(ax, sizes, most_labels=10):
    """log2 axis; labelled ticks (8 B, 64 B, ... 1 GiB), about most_labels."""
    from matplotlib.ticker import NullFormatter
    low = math.floor(math.log2(min(sizes)))
    high = math.ceil(math.log2(max(sizes)))
    exponents = range(low, high + 1)
    stride = max(1, math.ceil(len(exponents) / most_labels))
    major = [2 ** e for e in exponents if e % stride == 0] or [2 ** low]
    ax.set_xscale("log", base=2)
    ax.set_xlim(2 ** (low - 0.4), 2 ** (high + 0.4))
    ax.set_xticks(major)
    ax.set_xticklabels([format_size(s) for s in major])
    ax.set_xticks([2 ** e for e in exponents], minor=True)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size (KiB = 1024 B)")


def format_latency_axis(ax, has_lines=True):
    from matplotlib.ticker import FuncFormatter
    if has_lines:  # a log axis with nothing on it warns and means nothing
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(
            lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    else:
        ax.set_yticks([])
    ax.set_ylabel("one-way latency (us)")
    ax.set_title("One-way latency (lower is better)")


def draw_panel(ax_bw, ax_lat, runs, panel, styles):
    """Every run's series of the panel; stream and bidir series only on
    the bandwidth axes. The number of series left off latency."""
    left_off = set()
    for index, run in enumerate(runs):
        for key in [k for k in panel.keys if k in run.series]:
            points = sorted(run.series[key].items())
            kwargs = line_kwargs(styles[key], index, f"{key}  [{run.label}]")
            bw = [(s, g) for s, (g, _) in points if g is not None]
            lat = [(s, t) for s, (_, t) in points if t is not None and t > 0]
            if bw:
                ax_bw.plot(*zip(*bw), **kwargs)
            if lat and is_throughput_only(key):
                left_off.add(key)
            elif lat:
                ax_lat.plot(*zip(*lat), **kwargs)
    return len(left_off)


def note_left_off(ax, count, has_lines):
    """Say on the latency axes that stream/bidir series are not on it."""
    if not count:
        return
    text = (f"{count} stream/bidir series not shown:\ntheir time is per "
            "message of a window,\nnot a latency (see bandwidth)")
    # Latency rises to the right: the top left corner is free.
    where = dict(x=0.02, y=0.97, ha="left", va="top") if has_lines \
        else dict(x=0.5, y=0.5, ha="center", va="center")
    ax.text(s=text, transform=ax.transAxes, fontsize=7.5, color="0.3",
            **where)


def panel_references(runs, panel):
    """{label: GB/s} of the reference lines for the panel's series."""
    lines = {}
    for run in runs:
        view = replace(run, series={k: v for k, v in run.series.items()
                                    if k in panel.keys})
        lines.update({label: rate for rate, label in reference_lines(view)})
    return lines


def draw_references(ax, lines):
    """Horizontal lines; their handles, highest first."""
    dashes = ((0, (6, 3)), (0, (2, 2)), (0, (8, 2, 2, 2)))
    handles = []
    for i, (label, rate) in enumerate(sorted(lines.items(),
                                             key=lambda item: -item[1])):
        handles.append(ax.axhline(rate, color="0.35", linewidth=1.2,
                                  label=label,
                                  linestyle=dashes[i % len(dashes)]))
    return handles


def failed_note(runs):
    failed = [run for run in runs if run.failed]
    if not failed:
        return None
    total = sum(len(run.failed) for run in failed)
    where = "; ".join(f"{os.path.basename(r.file)}: {len(r.failed)}"
                      for r in failed)
    return clip(f"{total} failed row{'s' if total > 1 else ''} left out "
                f"({where})", 2 * LABEL_WIDTH)


def report_failures(runs):
    for run in runs:
        for failure_text in run.failed:
            print(one_line(f"plot.py: note: {run.file}: left out failed row "
                           f"{failure_text}"), file=sys.stderr)


def curves_title(runs):
    if len(runs) == 1:
        return f"xferbench: {runs[0].label}"
    return f"xferbench: {len(runs)} runs compared"


def label_axes(ax_bw, ax_lat, sizes, has_latency=True, path=""):
    for ax in (ax_bw, ax_lat):
        format_size_axis(ax, sizes, 5 if path else 10)
        ax.grid(True, which="major", alpha=0.45)
        ax.grid(True, which="minor", alpha=0.15)
    ax_bw.set_ylim(bottom=0)
    ax_bw.set_ylabel("bandwidth (GB/s, 1 GB = 1e9 B)")
    ax_bw.set_title("Bandwidth (higher is better)")
    format_latency_axis(ax_lat, has_latency)
    if path:
        ax_bw.set_title(f"{clip(path)}: bandwidth (higher is better)")
        ax_lat.set_title(f"{clip(path)}: latency (lower is better)")


def add_heading(fig, runs):
    """Title, one line per run (versions), and the failed-row note."""
    lines = [f"{run.label}: {software_line(run.context)}"
             for run in runs if software_line(run.context)]
    note = failed_note(runs)
    if note:
        report_failures(runs)
        lines.append(f"Note: {note}")
    # Placed above the axes; bbox_inches="tight" keeps it in the image.
    if lines:
        fig.text(0.5, 1.0, "\n".join(lines), ha="center", va="bottom",
                 fontsize=9, color="0.3")
    fig.suptitle(curves_title(runs), fontsize=14, fontweight="bold",
                 va="bottom", y=1.01 + 0.032 * len(lines))


def series_handles(panel, styles):
    """Legend entries of a panel's series, drawn as in the first run."""
    from matplotlib.lines import Line2D
    return [Line2D([], [], **line_kwargs(styles[key], 0,
                                         legend_label(key, panel)))
            for key in panel.keys]


def run_handles(runs):
    """Legend entries that tell overlaid runs apart (fill and shade)."""
    from matplotlib.lines import Line2D
    if len(runs) < 2:
        return []
    grey = Style("#505050", "-", "o")
    return [Line2D([], [], **line_kwargs(grey, index, f"run: {run.label}"))
            for index, run in enumerate(runs)]


def add_legend(fig, handles):
    """One legend below the panels."""
    if not handles:
        return
    count = len(handles)
    columns = 1 if count <= 4 else 2 if count <= 16 else 3
    fig.legend(handles=handles, loc="upper center", frameon=False,
               bbox_to_anchor=(0.5, 0.0), ncol=columns, fontsize=9)


def legend_columns(count):
    return 1 if count <= 8 else 2


def legend_height(count):
    """Inches a legend of count entries in legend_columns needs."""
    return 0.35 + 0.19 * math.ceil(count / legend_columns(count))


def split_axes(pyplot, layout, legend_counts):
    """A column per panel: bandwidth, latency, then a blank axes (axis off)
    tall enough for that column's legend."""
    spare = max(legend_height(n) for n in legend_counts)
    fig, axes = pyplot.subplots(
        3, len(layout), squeeze=False,
        figsize=(max(8.0, 4.4 * len(layout)), 7.6 + spare),
        gridspec_kw={"height_ratios": [3.8, 3.8, spare]})
    for ax in axes[2]:
        ax.axis("off")
    return fig, [tuple(axes[row][i] for row in range(3))
                 for i in range(len(layout))]


def build_curves_figure(pyplot, runs, with_references, panels="none"):
    """The curves figure: per panel column a bandwidth axes above a latency
    axes (one column, or one per path with panels='path', each with its own
    legend below), a colour per path, a line style per mode or variant, a
    marker per pair or staging, runs told apart by marker fill and shade;
    stream and bidir series on the bandwidth axes only."""
    layout = panel_layout(runs, panels)
    split = panels != "none"
    references = [panel_references(runs, panel) if with_references else {}
                  for panel in layout]
    if split:
        fig, columns = split_axes(pyplot, layout, [
            len(panel.keys) + len(lines)
            for panel, lines in zip(layout, references)])
    else:
        fig, (ax_bw, ax_lat) = pyplot.subplots(1, 2, figsize=(13, 5))
        columns = [(ax_bw, ax_lat, None)]
    styles = series_styles({key for run in runs for key in run.series})
    sizes = [size for run in runs for points in run.series.values()
             for size in points]
    shared_handles = []
    for panel, lines, (ax_bw, ax_lat, ax_key) in zip(layout, references,
                                                      columns):
        left_off = draw_panel(ax_bw, ax_lat, runs, panel, styles)
        has_latency = bool(ax_lat.get_lines())
        handles = series_handles(panel, styles) + draw_references(ax_bw,
                                                                  lines)
        label_axes(ax_bw, ax_lat, sizes, has_latency, panel.title)
        note_left_off(ax_lat, left_off, has_latency)
        if ax_key is None:
            shared_handles += handles
            continue
        ax_key.legend(handles=handles, loc="upper center", fontsize=7.5,
                      ncol=legend_columns(len(handles)), frameon=False,
                      title=clip(panel.title), title_fontsize=8)
        if ax_bw is not columns[0][0]:
            ax_bw.set_ylabel("")
            ax_lat.set_ylabel("")
    if with_references and not any(references):
        print("plot.py: note: no reference line: the context names no "
              "link rate this tool knows for these series", file=sys.stderr)
    add_heading(fig, runs)
    add_legend(fig, shared_handles + run_handles(runs))
    fig.tight_layout()
    return fig


def panel_axes(fig):
    """The axes that hold curves (not the blank ones under legends)."""
    return [ax for ax in fig.axes if ax.axison]


@contextlib.contextmanager
def text_as_written():
    """Labels drawn as the files write them: a '$' in a row or host name
    starts no formula, and a character the font lacks is drawn as a box
    without a warning for each."""
    import matplotlib
    settings = {"text.parse_math": False} \
        if "text.parse_math" in matplotlib.rcParams else {}
    with matplotlib.rc_context(settings), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from",
                                category=UserWarning)
        yield


def render_curves(runs, out, with_references, panels="none"):
    pyplot = import_pyplot()
    with text_as_written():
        fig = build_curves_figure(pyplot, runs, with_references, panels)
        save_figure(pyplot, fig, out)


def render_matrices(matrices, out):
    pyplot = import_pyplot()
    with text_as_written():
        fig = build_matrix_figure(pyplot, matrices)
        save_figure(pyplot, fig, out)


def build_matrix_figure(pyplot, matrices):
    """A heatmap per run, one colour scale."""
    count = len(matrices)
    fig, axes = pyplot.subplots(1, count, figsize=(1.5 + 5 * count, 5),
                                squeeze=False)
    values = [v for m in matrices for row in m.cells for v in row
              if v is not None]
    vmax = max(values)
    cmap = pyplot.get_cmap("viridis").copy()
    cmap.set_bad("0.88")
    for ax, matrix in zip(axes[0], matrices):
        # imshow masks NaN: absent cells take the colormap's "bad" grey.
        data = [[math.nan if v is None else v for v in row]
                for row in matrix.cells]
        image = ax.imshow(data, cmap=cmap, vmin=0, vmax=vmax)
        annotate_cells(ax, matrix.cells, vmax)
        ticks = range(len(matrix.cells))
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.set_xlabel("destination GPU")
        ax.set_ylabel("source GPU")
        label = "\n".join(textwrap.wrap(clip(matrix.label), 48))
        ax.set_title(f"{label}\n{clip(matrix.title())}", fontsize=10)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.85,
                 label="bandwidth (GB/s, 1 GB = 1e9 B)")
    fig.suptitle("xferbench: GPU pair bandwidth", fontsize=13,
                 fontweight="bold", va="bottom", y=1.0)
    return fig


def annotate_cells(ax, cells, vmax):
    for src, row in enumerate(cells):
        for dst, value in enumerate(row):
            text = "-" if value is None else f"{value:.1f}"
            dark = value is not None and value < 0.6 * vmax
            ax.text(dst, src, text, ha="center", va="center", fontsize=9,
                    color="white" if dark else "black")


def save_figure(pyplot, fig, out):
    try:
        fig.savefig(out, dpi=150, bbox_inches="tight")
    except OSError as e:
        raise InputError(f"{out}: cannot write: {e.strerror}") from None
    finally:
        pyplot.close(fig)


# ---------------------------------------------------------------- command

def regex(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"bad regex '{text}': {e}")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py", description="Plot xferbench result files: "
        "bandwidth and latency against message size, or the GPU pair "
        "matrix. See docs/plot.md.")
    parser.add_argument("runs", nargs="+", metavar="RUN.json",
                        help="xferbench --benchmark_out files")
    parser.add_argument("-o", "--output", metavar="OUT",
                        help="image to write (.png, .svg or .pdf); with "
                        "--matrix --text, the text file to write")
    parser.add_argument("--filter", type=regex, metavar="REGEX",
                        help="plot only series whose key matches (re.search)")
    parser.add_argument("--reference", action="store_true",
                        help="draw theoretical link rates the context knows")
    parser.add_argument("--panels", choices=PANEL_CHOICES, default="none",
                        help="curves: 'path' draws a bandwidth and a latency "
                        "panel per path instead of all series in one pair "
                        "(default: none)")
    parser.add_argument("--matrix", action="store_true",
                        help="GB/s per (source, destination) GPU pair")
    parser.add_argument("--text", action="store_true",
                        help="with --matrix: a text table, even with -o")
    parser.add_argument("--size", type=parse_size, metavar="SIZE",
                        help="matrix message size: 256MiB, 268435456, 1G "
                        "(default: the largest present)")
    parser.add_argument("--variant", default=DEFAULT_VARIANT,
                        metavar="[PATH/]VARIANT",
                        help=f"matrix variant (default {DEFAULT_VARIANT}; "
                        f"path {DEFAULT_MATRIX_PATH} unless given first)")
    return parser.parse_args(argv)


def check_image_name(out):
    if out is None:
        raise InputError("give the image to write with -o OUT.png|OUT.svg")
    if not out.lower().endswith(IMAGE_SUFFIXES):
        raise InputError(f"{out}: the image name must end in "
                         + ", ".join(IMAGE_SUFFIXES))


def run_matrix(args, runs):
    matrices = [build_matrix(run, args.variant, args.size) for run in runs]
    if args.text or args.output is None:
        text = "\n".join(matrix_text(m) for m in matrices)
        if args.output is None:
            sys.stdout.write(text)
        else:
            try:
                with open(args.output, "w", encoding="utf-8",
                          errors="backslashreplace") as f:
                    f.write(text)
            except OSError as e:
                raise InputError(
                    f"{args.output}: cannot write: {e.strerror}") from None
        return 0
    check_image_name(args.output)
    render_matrices(matrices, args.output)
    return 0


def run_curves(args, runs):
    check_image_name(args.output)
    if args.filter:
        filter_series(runs, args.filter)
    render_curves(runs, args.output, args.reference, args.panels)
    return 0


def main(argv=None):
    args = parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # labels on an ASCII-only stdout
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        runs = load_runs(args.runs)
        return run_matrix(args, runs) if args.matrix else run_curves(args,
                                                                     runs)
    except InputError as e:
        print(f"plot.py: {one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
