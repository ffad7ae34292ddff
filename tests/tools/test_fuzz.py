"""Hostile input for tools/compare.py and tools/plot.py.

Run from this directory (ctest does):
    python3 -m unittest -v test_fuzz

Well over 1,000 malformed inputs per tool, made deterministically (a fixed
seed) by mutating real xferbench result documents: the fixtures in
tests/fixtures/compare and tests/fixtures/plot, and the H200 results in
docs/results/2026-11-23-h200-precision. The categories (CATEGORIES) are
truncated documents, wrong types, NaN and Infinity, huge numbers, duplicated
rows, non-UTF-8 bytes, deep nesting, empty benchmark lists, mismatched time
units, hostile names, a directory, FIFO or other non-regular file instead of
a file, and mixtures of these.

Every case must end within a bound with exit status 0, 1 or 2, write at most
one line of error to stderr (plot.py's "plot.py: note:" lines are not
errors), exactly one when the status is 2, and never a traceback. Most cases
run in-process through the tools' main(argv), with stdout a strict UTF-8
stream as a real one would be and a timer bounding each case; a smaller set
runs the tools as real processes with a timeout, to prove the exit status
and the shape of stderr end to end. The image cases draw only where this
interpreter has matplotlib; without it they must end in the one-line hint
(exit 3, or 2 for input refused before drawing).
"""

import contextlib
import copy
import importlib.util
import io
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import unittest
import warnings
from pathlib import Path

import toollib  # noqa: F401  (tools/ on sys.path)
from xfertools.compare import cli as compare
from xfertools.core import files
from xfertools.plot import cli as plot
from xfertools.result.rows import TIME_UNIT_TO_US

ROOT = Path(__file__).resolve().parents[2]
COMPARE_TOOL = ROOT / "tools" / "compare.py"
PLOT_TOOL = ROOT / "tools" / "plot.py"
COMPARE_FIXTURES = ROOT / "tests" / "fixtures" / "compare"
PLOT_FIXTURES = ROOT / "tests" / "fixtures" / "plot"
RESULTS = ROOT / "docs" / "results" / "2026-11-23-h200-precision"

SEED = 20261123
CASES_IN_PROCESS = 1100  # per tool
CASES_SUBPROCESS = 40  # per tool
IN_PROCESS_BOUND_S = 10  # per in-process case
SUBPROCESS_TIMEOUT_S = 20  # per subprocess case
# Image cases (slow where matplotlib draws them): at most this many.
MAX_DRAWN_IN_PROCESS = 60
MAX_DRAWN_SUBPROCESS = 3

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

CATEGORIES = (
    "truncated",
    "wrong_types",
    "non_finite",
    "huge_numbers",
    "duplicated_rows",
    "non_utf8",
    "deep_nesting",
    "empty",
    "time_units",
    "hostile_names",
    "not_a_file",
    "mixed",
)

# plot.py's notes on stderr (a failed row left out, no reference line) are
# not errors; every other stderr line is one.
NOTE_PREFIX = "plot.py: note: "


def read_document(path):
    """A seed document; the fixtures with nan/inf tokens need the tools'
    own reader (C++ stream spellings are not JSON)."""
    return files.parse_json_text(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------ seeds

# Pairs of real documents that compare with each other (so a mutation of
# one side reaches the statistics, not only the loader).
COMPARE_PAIRS = (
    (COMPARE_FIXTURES / "real_mpi_host_a.json", COMPARE_FIXTURES / "real_mpi_host_b.json"),
    (COMPARE_FIXTURES / "ci_single_base.json", COMPARE_FIXTURES / "ci_single_new.json"),
    (COMPARE_FIXTURES / "ci_single_base.json", COMPARE_FIXTURES / "ci_hostile_new.json"),
    (COMPARE_FIXTURES / "modes_legacy.json", COMPARE_FIXTURES / "modes_modern.json"),
    (
        COMPARE_FIXTURES / "xferbench_h200_node1.json",
        COMPARE_FIXTURES / "xferbench_aggregates_only.json",
    ),
    (COMPARE_FIXTURES / "gb_1.7.1_error_occurred.json", COMPARE_FIXTURES / "gb_1.8.3_skipped.json"),
    (COMPARE_FIXTURES / "nonfinite_tokens.json", COMPARE_FIXTURES / "nonfinite_tokens.json"),
    (RESULTS / "default-a.json", RESULTS / "default-b.json"),
    (RESULTS / "mpi_host-sweep-1.json", RESULTS / "mpi_host-sweep-2.json"),
    (RESULTS / "mpi_host-sweep-2.json", RESULTS / "mpi_host-sweep-3.json"),
    (RESULTS / "same-numbers-1.json", RESULTS / "same-numbers-2.json"),
    (RESULTS / "same-numbers-3.json", RESULTS / "same-numbers-1.json"),
)
PLOT_SEEDS = (
    PLOT_FIXTURES / "memcpy_peer_allpairs_4gpu.json",
    PLOT_FIXTURES / "mpi_host_sweep.json",
    PLOT_FIXTURES / "host_staging_failed_row.json",
    PLOT_FIXTURES / "exchange_modes_4rank.json",
    COMPARE_FIXTURES / "modes_legacy.json",
    COMPARE_FIXTURES / "xferbench_aggregates_only.json",
    RESULTS / "default-a.json",
    RESULTS / "mpi_host-sweep-1.json",
    RESULTS / "same-numbers-1.json",
)
ALL_PAIRS = PLOT_FIXTURES / "memcpy_peer_allpairs_4gpu.json"
# Not benchmark results at all, for the odd case.
OTHER_DOCUMENTS = (
    RESULTS / "crosscheck.json",
    COMPARE_FIXTURES / "no_benchmarks.json",
    COMPARE_FIXTURES / "not_json.json",
)
MAX_SEED_ROWS = 48  # large documents are cut to a slice of their rows


class Seeds:
    def __init__(self):
        self.docs = {}

    def get(self, path):
        if path not in self.docs:
            self.docs[path] = read_document(path)
        return self.docs[path]

    def sliced(self, rng, paths):
        """Copies of the documents, large ones cut to the same slice of rows
        (documents of a pair have their rows in the same order)."""
        docs = [copy.deepcopy(self.get(p)) for p in paths]
        longest = max(len(d["benchmarks"]) for d in docs)
        if longest > MAX_SEED_ROWS:
            start = rng.randrange(longest - MAX_SEED_ROWS)
            for doc in docs:
                doc["benchmarks"] = doc["benchmarks"][start : start + MAX_SEED_ROWS]
        return docs


# ------------------------------------------------------------ mutations


class Raw:
    """Text spliced into a document after json.dumps: tokens JSON itself
    cannot write (nan, 5000-digit integers, 100,000 levels of nesting)."""

    def __init__(self):
        self.tokens = {}

    def __call__(self, text):
        key = f"@@raw{len(self.tokens)}@@"
        self.tokens[key] = text
        return key

    def splice(self, text):
        for key, token in self.tokens.items():
            text = text.replace(json.dumps(key), token)
        return text


def serialise(rng, doc, raw, ensure_ascii=True):
    text = json.dumps(doc, indent=rng.choice((None, 1, 2)), ensure_ascii=ensure_ascii)
    return raw.splice(text)


ROW_FIELDS = (
    "name",
    "run_name",
    "run_type",
    "aggregate_name",
    "real_time",
    "cpu_time",
    "time_unit",
    "GB/s",
    "bytes_per_second",
    "latency_us",
    "ci95_pct",
    "time_limited",
    "error_occurred",
    "error_message",
    "skipped",
    "skip_message",
    "repetitions",
    "repetition_index",
    "iterations",
    "threads",
    "label",
    "pairs",
)
NUMERIC_ROW_FIELDS = (
    "real_time",
    "cpu_time",
    "GB/s",
    "bytes_per_second",
    "latency_us",
    "ci95_pct",
    "time_limited",
    "iterations",
    "repetitions",
    "repetition_index",
    "threads",
)
CONTEXT_PATHS = (
    ("context",),
    ("context", "xferbench"),
    ("context", "host_name"),
    ("context", "num_cpus"),
    ("context", "library_build_type"),
    ("context", "library_version"),
    ("context", "xferbench", "cuda"),
    ("context", "xferbench", "cuda", "devices"),
    ("context", "xferbench", "cuda", "devices", 0),
    ("context", "xferbench", "cuda", "devices", 0, "name"),
    ("context", "xferbench", "cuda", "devices", 0, "index"),
    ("context", "xferbench", "cuda", "pairs"),
    ("context", "xferbench", "cuda", "pairs", 0),
    ("context", "xferbench", "cuda", "pairs", 0, "link"),
    ("context", "xferbench", "cuda", "pairs", 0, "nvlink_count"),
    ("context", "xferbench", "cuda", "runtime_version"),
    ("context", "xferbench", "cuda", "driver_version"),
    ("context", "xferbench", "ranks"),
    ("context", "xferbench", "ranks", 0),
    ("context", "xferbench", "ranks", 0, "host"),
    ("context", "xferbench", "ranks", 0, "gpu"),
    ("context", "xferbench", "mpi"),
    ("context", "xferbench", "mpi", "library"),
    ("context", "xferbench", "mpi", "cuda_aware"),
    ("context", "xferbench", "nccl"),
    ("context", "xferbench", "nccl", "version"),
    ("context", "xferbench", "env"),
    ("context", "xferbench", "env", "X"),
    ("context", "xferbench", "skipped"),
    ("context", "xferbench", "skipped", 0),
    ("context", "xferbench", "world_size"),
    ("context", "xferbench", "harness_version"),
    ("context", "xferbench", "git_revision"),
    ("context", "xferbench", "benchmark_version"),
)
WRONG_VALUES = (
    None,
    True,
    False,
    0,
    -1,
    1,
    2.5,
    -2.5,
    "",
    "x",
    "12",
    "nan",
    [],
    [1],
    ["a"],
    [None],
    {},
    {"a": 1},
    {"name": "x"},
    [[]],
    [{}],
    {"": None},
)
NON_FINITE_TOKENS = (
    "NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "NAN",
    "INF",
    "-INFINITY",
)
HUGE_TOKENS = (
    "1e308",
    "1.7976931348623157e308",
    "-1e308",
    "1e400",
    "-1e400",
    "1e-400",
    "5e-324",
    "1e-320",
    "0",
    "-0.0",
    "123456789012345678901234567890",
    "1" + "0" * 400,
    "-1" + "0" * 400,
    "1" + "0" * 4300,
    "9" * 5000,
    "1e999999999",
    "-1e999999999",
    "0." + "0" * 5000 + "1",
)
HUGE_DIGITS = (
    "99999999999999999999",
    "1" + "0" * 30,
    "1" + "0" * 400,
    "7" * 4301,
    "0",
    "00",
    "0000000000000001",
)
HOSTILE_STRINGS = (
    "",
    " ",
    "/",
    "//",
    "a\nb",
    "line\r\nbreak",
    "\u2028",
    "tab\there",
    "$x$",
    "$\\frac{a}{$",
    "$$",
    "$\\undefined$",
    "\\",
    '"',
    "{}",
    "%s%d",
    "bytes:",
    "bytes:0",
    "bytes:-1",
    "bytes:1e3",
    "bytes:\u00b2",
    "bytes:\u0663",
    "bytes:\uff11",
    "pair:0to0",
    "pair:999999999to0",
    "pair:1to",
    "mode:",
    "mode:stream",
    "mode:pingpong",
    "p2p:on",
    "\x00",
    "\x1b[31mred\x1b[0m",
    "\ud800",
    "\udcff",
    "A" * 5000,
    "\u00b1\u00b5s",
    "\U0001f600",
    "mpi_host",
    "manual_time",
    "mpi_host/mode:pingpong/bytes:8/manual_time",
)
HOSTILE_NAMES = (
    "mpi_host/bytes:{n}/manual_time",
    "mpi_host/mode:stream/bytes:{n}",
    "memcpy_peer/p2p:on/dir:uni/pair:{n}to0/bytes:8/manual_time",
    "memcpy_peer/p2p:on/dir:uni/pair:0to{n}/bytes:1048576/manual_time",
    "nccl_sendrecv/bytes:{n}",
    "x/bytes:{n}/bytes:{n}",
)
TIME_UNITS = ("ns", "us", "ms", "s")
BAD_TIME_UNITS = (
    "",
    "US",
    "NS",
    "\u00b5s",
    "sec",
    "fortnight",
    "ns ",
    None,
    0,
    1.5,
    True,
    [],
    {},
    ["us"],
    {"unit": "us"},
    "nan",
)
BAD_BYTES = (
    b"\xff",
    b"\xfe",
    b"\xc3\x28",
    b"\xa0\xa1",
    b"\xe2\x28\xa1",
    b"\xf0\x28\x8c\xbc",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\x00",
    b"\xef\xbb\xbf",
)
DEPTHS = (64, 200, 999, 1000, 1500, 5000, 100000)


def rows_of(doc):
    rows = doc.get("benchmarks") if isinstance(doc, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def set_path(doc, path, value):
    """doc[path[0]][path[1]]... = value, making the levels that are not
    there (a list index past the end appends); nothing where a level on the
    way has another type."""
    node = doc
    for i, key in enumerate(path):
        last = i == len(path) - 1
        if isinstance(key, int):
            if not isinstance(node, list):
                return
            if key >= len(node):
                node.append({})
                key = len(node) - 1
        else:
            if not isinstance(node, dict):
                return
            if not last and not isinstance(node.get(key), (dict, list)):
                node[key] = [] if isinstance(path[i + 1], int) else {}
        if last:
            node[key] = value
        else:
            node = node[key]


def random_row(rng, doc):
    rows = rows_of(doc)
    return rng.choice(rows) if rows else None


def set_row_field(rng, doc, value, fields=ROW_FIELDS):
    row = random_row(rng, doc)
    if row is None:
        return "no row"
    field = rng.choice(fields)
    row[field] = value
    return f"{row.get('name')!r:.60}.{field}"


def set_context_field(rng, doc, value):
    path = rng.choice(CONTEXT_PATHS)
    set_path(doc, path, value)
    return ".".join(map(str, path))


def deep(rng, depth, closed=True):
    shape = rng.choice(("list", "dict", "mixed"))
    if shape == "list":
        opening, closing, core = "[" * depth, "]" * depth, "1"
    elif shape == "dict":
        opening, closing, core = '{"a":' * depth, "}" * depth, "1"
    else:
        opening = '[{"a":' * (depth // 2)
        closing = "}]" * (depth // 2)
        core = "[]"
    if not closed:
        closing = closing[: len(closing) // 2]
    return opening + core + closing


# Each mutation: (rng, doc, raw) -> (bytes, description). doc is a private
# copy of a real document.


def mutate_truncated(rng, doc, raw):
    text = serialise(rng, doc, raw)
    how = rng.choice(("random", "random", "end", "string", "bracket", "first"))
    if how == "end":
        cut = len(text) - rng.randint(1, 8)
    elif how == "string":
        quotes = [i for i, c in enumerate(text) if c == '"']
        cut = rng.choice(quotes) + rng.randint(1, 6)
    elif how == "bracket":
        opens = [i for i, c in enumerate(text) if c in "[{"]
        cut = rng.choice(opens) + 1
    elif how == "first":
        cut = rng.randint(0, 3)
    else:
        cut = rng.randrange(len(text))
    cut = max(0, min(cut, len(text) - 1))
    data = text[:cut].encode()
    if rng.random() < 0.2:  # truncated inside a multi-byte character
        data = text[:cut].encode() + "\u00b1".encode()[:1]
    return data, f"cut at {cut} of {len(text)} ({how})"


def mutate_wrong_types(rng, doc, raw):
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3, 5))):
        value = copy.deepcopy(rng.choice(WRONG_VALUES))
        where = rng.random()
        if where < 0.04:
            doc = copy.deepcopy(value)
            done.append(f"document = {value!r}")
            break
        if where < 0.10 and isinstance(doc, dict):
            doc["benchmarks"] = value
            done.append(f"benchmarks = {value!r}")
        elif where < 0.18 and rows_of(doc):
            rows = doc["benchmarks"]
            rows[rng.randrange(len(rows))] = value
            done.append(f"a row = {value!r}")
        elif where < 0.3:  # the same field of every row
            field = rng.choice(ROW_FIELDS)
            for row in rows_of(doc):
                row[field] = copy.deepcopy(value)
            done.append(f"every {field} = {value!r}")
        elif where < 0.65:
            done.append(f"{set_row_field(rng, doc, value)} = {value!r}")
        elif isinstance(doc, dict):
            done.append(f"{set_context_field(rng, doc, value)} = {value!r}")
    return serialise(rng, doc, raw).encode(), "; ".join(done)


def mutate_non_finite(rng, doc, raw):
    done = []
    if rng.random() < 0.2:  # every row at once
        field = rng.choice(NUMERIC_ROW_FIELDS)
        token = rng.choice(NON_FINITE_TOKENS)
        for row in rows_of(doc):
            row[field] = raw(token)
        done.append(f"every {field} = {token}")
    for _ in range(rng.randint(1, 4)):
        token = rng.choice(NON_FINITE_TOKENS)
        if rng.random() < 0.75:
            done.append(set_row_field(rng, doc, raw(token), NUMERIC_ROW_FIELDS) + f" = {token}")
        elif isinstance(doc, dict):
            done.append(set_context_field(rng, doc, raw(token)) + f" = {token}")
    return serialise(rng, doc, raw).encode(), "; ".join(done)


def mutate_huge_numbers(rng, doc, raw):
    done = []
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        token = rng.choice(HUGE_TOKENS)
        if choice < 0.55:
            described = set_row_field(rng, doc, raw(token), NUMERIC_ROW_FIELDS)
        elif choice < 0.8:
            row = random_row(rng, doc)
            if row is None:
                continue
            digits = rng.choice(HUGE_DIGITS)
            row["name"] = row["run_name"] = rng.choice(HOSTILE_NAMES).format(n=digits)
            described = f"name {row['name']:.60}"
            token = f"{len(digits)} digits"
        elif isinstance(doc, dict):
            described = set_context_field(rng, doc, raw(token))
        else:
            continue
        done.append(f"{described} = {token:.20}")
    if rng.random() < 0.15:  # every row's time
        token = rng.choice(HUGE_TOKENS)
        for row in rows_of(doc):
            row["real_time"] = raw(token)
        done.append(f"every real_time = {token:.20}")
    return serialise(rng, doc, raw).encode(), "; ".join(done)


def mutate_duplicated_rows(rng, doc, raw):
    rows = rows_of(doc)
    how = rng.choice(("repeat", "repeat", "double", "conflict", "keys", "benchmarks_key"))
    if not rows:
        how = "benchmarks_key"
    if how == "repeat":
        count = rng.choice((2, 10, 100, 1000, 3000))
        row = rng.choice(rows)
        at = rng.randrange(len(rows))
        doc["benchmarks"][at:at] = [copy.deepcopy(row) for _ in range(count)]
        return serialise(rng, doc, raw).encode(), f"{row.get('name')!r:.60} x{count}"
    if how == "double":
        times = rng.choice((2, 3, 10))
        doc["benchmarks"] = doc["benchmarks"] * times
        return serialise(rng, doc, raw).encode(), f"all rows x{times}"
    if how == "conflict":
        row = copy.deepcopy(rng.choice(rows))
        row.update(
            rng.choice(
                (
                    {"real_time": 1e-9},
                    {"real_time": 1e12},
                    {"time_unit": "s"},
                    {"error_occurred": True, "error_message": "dup"},
                    {"run_type": "aggregate", "aggregate_name": "median"},
                    {"repetitions": 0, "repetition_index": 99},
                )
            )
        )
        doc["benchmarks"].append(row)
        return serialise(rng, doc, raw).encode(), "a conflicting twin row"
    if how == "keys":  # one object holding a key twice
        row = rng.choice(rows)
        key = rng.choice(ROW_FIELDS)
        value = json.dumps(rng.choice(WRONG_VALUES))
        row["@@dup@@"] = 0
        text = serialise(rng, doc, raw)
        text = text.replace('"@@dup@@": 0', f'"{key}": {value}', 1)
        return text.encode(), f"key {key} twice"
    # "benchmarks" twice: the last one wins in Python's json.
    body = json.dumps(doc.get("benchmarks"))
    other = json.dumps(rng.choice(([], None, {}, rows[:1])))
    first, second = (body, other) if rng.random() < 0.5 else (other, body)
    text = (
        f'{{"context": {json.dumps(doc.get("context"))}, '
        f'"benchmarks": {first}, "benchmarks": {second}}}'
    )
    return text.encode(), "key benchmarks twice"


def mutate_non_utf8(rng, doc, raw):
    how = rng.choice(
        (
            "bytes",
            "bytes",
            "in_string",
            "latin1",
            "utf16",
            "bom",
            "surrogate_escape",
            "surrogate_raw",
            "control",
        )
    )
    if how in ("bytes", "in_string"):
        data = bytearray(serialise(rng, doc, raw).encode())
        done = []
        for _ in range(rng.randint(1, 5)):
            bad = rng.choice(BAD_BYTES)
            if how == "in_string":
                quotes = [i for i, b in enumerate(data) if b == ord('"')]
                at = rng.choice(quotes) + 1
            else:
                at = rng.randrange(len(data) + 1)
            data[at:at] = bad
            done.append(f"{bad!r}@{at}")
        return bytes(data), " ".join(done)
    if how == "latin1":
        text = "\u00b1\u00b5s caf\u00e9 \u00d7"
        set_row_field(rng, doc, text, ("label", "name", "error_message"))
        set_context_field(rng, doc, text)
        data = serialise(rng, doc, raw, ensure_ascii=False)
        return data.encode("latin-1", "replace"), "latin-1 document"
    if how == "utf16":
        encoding = rng.choice(("utf-16", "utf-16-le", "utf-32"))
        return serialise(rng, doc, raw).encode(encoding), encoding
    if how == "bom":
        return b"\xef\xbb\xbf" + serialise(rng, doc, raw).encode(), "BOM"
    value = rng.choice(("\ud800", "\udcff", "x\udc80y", "\ud83d"))
    fields = ("name", "run_name", "label", "error_message", "time_unit", "aggregate_name")
    done = [set_row_field(rng, doc, value, fields)]
    if rng.random() < 0.5:
        done.append(set_context_field(rng, doc, value))
    if how == "surrogate_raw":  # CESU-8 bytes, not UTF-8
        text = serialise(rng, doc, raw, ensure_ascii=False)
        return text.encode("utf-8", "surrogatepass"), f"raw surrogate in {done}"
    if how == "control":
        text = serialise(rng, doc, raw).replace(
            json.dumps(value)[1:-1], rng.choice(("\x00", "\x07", "\n"))
        )
        return text.encode(), f"raw control character in {done}"
    return serialise(rng, doc, raw).encode(), f"lone surrogate in {done}"


def mutate_deep_nesting(rng, doc, raw):
    depth = rng.choice(DEPTHS)
    closed = rng.random() < 0.85
    nested = deep(rng, depth, closed)
    where = rng.random()
    if where < 0.1:
        return nested.encode(), f"document nested {depth} (closed={closed})"
    token = raw(nested)
    if where < 0.25 and isinstance(doc, dict):
        doc["benchmarks"] = token
        described = "benchmarks"
    elif where < 0.4 and rows_of(doc):
        doc["benchmarks"].append(token)
        described = "a row"
    elif where < 0.7:
        described = set_row_field(rng, doc, token)
    else:
        described = set_context_field(rng, doc, token)
    return serialise(rng, doc, raw).encode(), f"{described} nested {depth} (closed={closed})"


def mutate_empty(rng, doc, raw):
    how = rng.choice(
        (
            "no_rows",
            "no_rows",
            "no_key",
            "empty_object",
            "empty_list",
            "empty_file",
            "whitespace",
            "null",
            "all_failed",
            "no_names",
            "stddev_only",
            "empty_rows",
            "no_sizes",
            "zero_times",
            "context_only",
            "other_document",
        )
    )
    rows = rows_of(doc)
    if how == "no_rows":
        doc["benchmarks"] = []
    elif how == "no_key":
        doc.pop("benchmarks", None)
    elif how == "empty_object":
        doc = {}
    elif how == "empty_list":
        doc = []
    elif how == "empty_file":
        return b"", how
    elif how == "whitespace":
        return b" \n\t\r\n", how
    elif how == "null":
        doc = None
    elif how == "other_document":
        path = rng.choice(OTHER_DOCUMENTS)
        return path.read_bytes(), f"{how} {path.name}"
    elif how == "all_failed":
        for row in rows:
            row.update(error_occurred=True, error_message="failed")
    elif how == "no_names":
        for row in rows:
            row.pop("name", None)
            row.pop("run_name", None)
    elif how == "stddev_only":
        for row in rows:
            row.update(run_type="aggregate", aggregate_name="stddev")
    elif how == "empty_rows":
        doc["benchmarks"] = [{} for _ in rows] or [{}]
    elif how == "no_sizes":
        for row in rows:
            name = "/".join(
                p for p in str(row.get("name")).split("/") if not p.startswith("bytes:")
            )
            row["name"] = row["run_name"] = name
    elif how == "zero_times":
        for row in rows:
            row.update(real_time=0, cpu_time=0)
            for key in ("GB/s", "bytes_per_second", "latency_us"):
                row.pop(key, None)
    else:
        doc = {"context": doc.get("context")}
    return serialise(rng, doc, raw).encode(), how


def mutate_time_units(rng, doc, raw):
    rows = rows_of(doc)
    how = rng.choice(("mixed", "mixed", "converted", "bad", "missing", "extreme"))
    for row in rows:
        if how == "mixed":  # same number, another unit: wildly off
            row["time_unit"] = rng.choice(TIME_UNITS)
        elif how == "converted":  # same time, written in another unit
            unit = rng.choice(TIME_UNITS)
            scale = TIME_UNIT_TO_US
            old = row.get("time_unit", "ns")
            if isinstance(old, str) and old in scale and isinstance(row.get("real_time"), float):
                row["real_time"] = row["real_time"] * scale[old] / scale[unit]
                row["time_unit"] = unit
        elif how == "bad" and rng.random() < 0.5:
            row["time_unit"] = copy.deepcopy(rng.choice(BAD_TIME_UNITS))
        elif how == "missing":
            row.pop("time_unit", None)
        elif how == "extreme":
            row["time_unit"] = rng.choice(("ns", "s"))
            row["real_time"] = rng.choice((1e-300, 5e-324, 1e305, 1.7e308))
            for key in ("latency_us", "GB/s", "bytes_per_second"):
                if rng.random() < 0.5:
                    row.pop(key, None)
    return serialise(rng, doc, raw).encode(), f"time units {how}"


def mutate_hostile_names(rng, doc, raw):
    done = []
    for _ in range(rng.randint(1, 4)):
        row = random_row(rng, doc)
        if row is None:
            break
        text = rng.choice(HOSTILE_STRINGS)
        how = rng.random()
        name = str(row.get("name"))
        if how < 0.4:  # a component of the name replaced
            parts = name.split("/")
            parts[rng.randrange(len(parts))] = text
            name = "/".join(parts)
        elif how < 0.6:
            name = rng.choice(HOSTILE_NAMES).format(n=text)
        elif how < 0.8:
            name = text
        else:
            field = rng.choice(
                ("error_message", "skip_message", "label", "aggregate_name", "run_type")
            )
            row[field] = text
            done.append(f"{field} = {text!r:.40}")
            continue
        row["name"] = name
        if rng.random() < 0.7:
            row["run_name"] = name
        done.append(f"name {name!r:.60}")
    if rng.random() < 0.4 and isinstance(doc, dict):
        text = rng.choice(HOSTILE_STRINGS)
        done.append(f"{set_context_field(rng, doc, text)} = {text!r:.40}")
    return serialise(rng, doc, raw).encode(), "; ".join(done)


NOT_A_FILE = (
    "directory",
    "fifo",
    "dev_null",
    "socket",
    "missing",
    "dangling_symlink",
    "symlink_to_directory",
    "trailing_slash",
    "non_utf8_name",
)


def mutate_mixed(rng, doc, raw):
    """Two or three document mutations, maybe then bytes ones."""
    done = []
    steps = rng.sample(
        (
            mutate_wrong_types,
            mutate_non_finite,
            mutate_huge_numbers,
            mutate_duplicated_rows,
            mutate_time_units,
            mutate_hostile_names,
            mutate_empty,
        ),
        rng.randint(2, 3),
    )
    data = None
    for step in steps:
        if data is not None:
            try:
                doc = files.parse_json_text(data.decode())
            except (ValueError, RecursionError):
                break
            if not isinstance(doc, dict):
                break
        data, described = step(rng, doc, raw)
        done.append(f"{step.__name__[7:]}: {described}")
    last = rng.random()
    if last < 0.2:
        cut = rng.randrange(len(data) + 1)
        data = data[:cut]
        done.append(f"cut at {cut}")
    elif last < 0.4:
        data = data[: len(data) // 2] + rng.choice(BAD_BYTES) + data[len(data) // 2 :]
        done.append("a bad byte")
    return data, " | ".join(done)


MUTATIONS = {
    "truncated": mutate_truncated,
    "wrong_types": mutate_wrong_types,
    "non_finite": mutate_non_finite,
    "huge_numbers": mutate_huge_numbers,
    "duplicated_rows": mutate_duplicated_rows,
    "non_utf8": mutate_non_utf8,
    "deep_nesting": mutate_deep_nesting,
    "empty": mutate_empty,
    "time_units": mutate_time_units,
    "hostile_names": mutate_hostile_names,
    "mixed": mutate_mixed,
}


# ------------------------------------------------------------ cases


class Input:
    """One input file of a case: bytes, or a kind of non-regular file."""

    def __init__(self, data=None, kind=None):
        self.data, self.kind = data, kind


class Case:
    def __init__(self, number, tool, category, inputs, options, described):
        self.number, self.tool, self.category = number, tool, category
        self.inputs = inputs  # {slot: Input}; slots fill the argv
        self.options = options  # argv template: slots as '{slot}'
        self.described = described
        self.draws = (
            any(o.endswith((".png", ".svg", ".pdf")) for o in options) and "--text" not in options
        )

    def __str__(self):
        return f"{self.tool} case {self.number} [{self.category}] {self.described}"


def mutated_input(rng, category, doc):
    raw = Raw()
    if category == "not_a_file":
        kind = rng.choice(NOT_A_FILE)
        if kind == "non_utf8_name":
            return Input(serialise(rng, doc, raw).encode(), kind), kind
        return Input(kind=kind), kind
    data, described = MUTATIONS[category](rng, doc, raw)
    return Input(data), described


def plain_input(rng, doc):
    return Input(serialise(rng, doc, Raw()).encode())


def compare_options(rng, slots):
    if len(slots) == 2 and rng.random() < 0.6:
        argv = ["{base}", "{new}"]
    else:
        bases = [s for s in slots if s.startswith("base")]
        news = [s for s in slots if s.startswith("new")]
        argv = ["--base", *[f"{{{s}}}" for s in bases], "--new", *[f"{{{s}}}" for s in news]]
    if rng.random() < 0.7:
        argv.append("--cross-machine")
    argv += ["--format", rng.choice(("text", "markdown", "json"))]
    argv += ["--metric", rng.choice(("time", "latency", "bandwidth"))]
    if rng.random() < 0.3:
        argv += ["--threshold", rng.choice(("0", "1", "50"))]
    if rng.random() < 0.15:
        argv += ["--alpha", rng.choice(("0.5", "0.001"))]
    if rng.random() < 0.1:
        argv += [
            "--filter",
            rng.choice(("mpi_host", "^mpi_host/bytes:", "bytes:8$", "nothing-matches")),
        ]
    return argv


def compare_case(rng, seeds, number, category):
    pair = COMPARE_PAIRS[number % len(COMPARE_PAIRS)]
    base_doc, new_doc = seeds.sliced(rng, pair)
    target = rng.choice(("base", "new", "new", "both"))
    inputs, described = {}, []
    for slot, doc in (("base", base_doc), ("new", new_doc)):
        if target in (slot, "both"):
            inputs[slot], what = mutated_input(rng, category, doc)
            described.append(f"{slot}: {what}")
        else:
            inputs[slot] = plain_input(rng, doc)
    slots = ["base", "new"]
    if rng.random() < 0.15:  # more files on a side, maybe the same twice
        slots = ["base", "base2", "new", "new2"]
        inputs["base2"] = inputs["base"] if rng.random() < 0.5 else plain_input(rng, base_doc)
        inputs["new2"] = inputs["new"] if rng.random() < 0.5 else plain_input(rng, new_doc)
    options = compare_options(rng, slots)
    described.append(f"{pair[0].name} vs {pair[1].name}")
    return Case(number, "compare", category, inputs, options, "; ".join(described))


def plot_options(rng, slots, matrix_seed):
    files = [f"{{{s}}}" for s in slots]
    mode = rng.random()
    if matrix_seed or mode < 0.3:
        argv = files + ["--matrix"]
        if rng.random() < 0.3:
            argv += ["--size", rng.choice(("256MiB", "1M", "8", "1G"))]
        if rng.random() < 0.2:
            argv += [
                "--variant",
                rng.choice(
                    (
                        "p2p:off/dir:uni",
                        "p2p:on/dir:bi",
                        "host_staging/host:pinned/mode:pipelined",
                        "x/y",
                    )
                ),
            ]
        where = rng.random()
        if where < 0.2:
            argv += ["--text", "-o", "{out}.txt"]
        elif where < 0.25:
            argv += ["-o", "{out}.png"]
        return argv
    # Curves: a .txt image name fails after loading, before drawing.
    argv = files + ["-o", "{out}." + rng.choice(("txt", "txt", "txt", "png", "svg"))]
    if rng.random() < 0.2:
        argv += ["--filter", rng.choice(("mpi_host", "^nothing$", "p2p:on", "^mpi_host$"))]
    if rng.random() < 0.3:
        argv.append("--reference")
    if rng.random() < 0.3:
        argv += ["--panels", "path"]
    return argv


def plot_case(rng, seeds, number, category):
    matrix_seed = rng.random() < 0.4
    seed = ALL_PAIRS if matrix_seed else PLOT_SEEDS[number % len(PLOT_SEEDS)]
    (doc,) = seeds.sliced(rng, [seed]) if not matrix_seed else [copy.deepcopy(seeds.get(seed))]
    inputs = {}
    inputs["run"], described = mutated_input(rng, category, doc)
    slots = ["run"]
    if rng.random() < 0.15:  # overlaid with another run (or itself)
        other_seed = rng.choice(PLOT_SEEDS)
        (other,) = seeds.sliced(rng, [other_seed])
        inputs["run2"] = inputs["run"] if rng.random() < 0.4 else plain_input(rng, other)
        slots = rng.choice((["run", "run2"], ["run2", "run"]))
    options = plot_options(rng, slots, matrix_seed)
    return Case(number, "plot", category, inputs, options, f"{seed.name}: {described}")


def generate(tool, count, first=0):
    """count cases of a tool, categories taken in turn, from one seed."""
    rng = random.Random(f"{SEED}-{tool}-{first}")
    seeds = Seeds()
    make = compare_case if tool == "compare" else plot_case
    cases = []
    for number in range(first, first + count):
        category = CATEGORIES[number % len(CATEGORIES)]
        cases.append(make(rng, seeds, number, category))
    return cases


def limit_drawing(cases, most):
    """At most `most` image cases; the others write a text name instead
    (they still load everything, then stop at the image name)."""
    drawn = 0
    for case in cases:
        if case.draws:
            drawn += 1
            if drawn > most:
                case.options = [
                    o.rsplit(".", 1)[0] + ".txt" if o.startswith("{out}") else o
                    for o in case.options
                ]
                case.draws = False
    return cases


# ------------------------------------------------------------ running


class Scratch:
    """Writes a case's inputs as files (and non-files) in a directory."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.fifo = self.directory / "fifo.json"
        os.mkfifo(self.fifo)
        self.dir = self.directory / "a_directory.json"
        self.dir.mkdir()
        self.socket_path = self.directory / "socket.json"
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.bind(str(self.socket_path))
        self.dangling = self.directory / "dangling.json"
        self.dangling.symlink_to(self.directory / "nowhere.json")
        self.to_dir = self.directory / "to_directory.json"
        self.to_dir.symlink_to(self.dir)
        self.regular = self.directory / "regular.json"
        self.regular.write_text('{"benchmarks": []}')

    def close(self):
        self.socket.close()

    def path(self, slot, number, value):
        kind = value.kind
        if kind is None:
            path = self.directory / f"c{number:04d}-{slot}.json"
            path.write_bytes(value.data)
            return str(path)
        if kind == "non_utf8_name":
            name = (
                os.fsencode(self.directory) + f"/c{number:04d}-{slot}-".encode() + b"\xff\xfe.json"
            )
            with open(name, "wb") as f:
                f.write(value.data)
            return os.fsdecode(name)
        return str(
            {
                "directory": self.dir,
                "fifo": self.fifo,
                "dev_null": Path(os.devnull),
                "socket": self.socket_path,
                "missing": self.directory / "missing.json",
                "dangling_symlink": self.dangling,
                "symlink_to_directory": self.to_dir,
            }.get(kind)
            or f"{self.regular}/"
        )  # trailing_slash: ENOTDIR

    def argv(self, case):
        paths = {slot: self.path(slot, case.number, value) for slot, value in case.inputs.items()}
        out = str(self.directory / f"c{case.number:04d}-out")
        return [o.replace("{out}", out).format(**paths) if "{" in o else o for o in case.options]

    def clean(self, case):
        for path in self.directory.glob(f"c{case.number:04d}-*"):
            path.unlink()


class Hang(BaseException):
    """Raised by the timer in an in-process case that runs too long."""


@contextlib.contextmanager
def time_bound(seconds):
    """Hang after `seconds` of wall time (main thread, Unix only)."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Outcome:
    def __init__(self, status, stdout, stderr, seconds):
        self.status, self.stdout, self.stderr = status, stdout, stderr
        self.seconds = seconds


def exit_status(code):
    """What a process exiting with SystemExit(code) returns."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def run_in_process(main, argv, bound=IN_PROCESS_BOUND_S):
    """main(argv) with stdout a strict UTF-8 stream (as a real one is) and
    stderr a backslashreplace one (as Python's is); a warning is a line on
    stderr; an exception that escapes main is a traceback."""
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    start = time.monotonic()
    crash = None
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        try:
            with time_bound(bound):
                status = main(argv)
        except SystemExit as error:
            status = exit_status(error.code)
        except (Exception, Hang):
            status = None
            crash = traceback.format_exc()
    for warning in caught:
        stderr.write(
            warnings.formatwarning(
                warning.message, warning.category, warning.filename, warning.lineno, ""
            )
        )
    try:
        stdout.flush()
        stderr.flush()
    except Exception:
        crash = (crash or "") + traceback.format_exc()
        status = None
    out = stdout.buffer.getvalue().decode("utf-8", "replace")
    err = stderr.buffer.getvalue().decode("utf-8", "replace")
    if crash:
        err += crash
    return Outcome(status, out, err, time.monotonic() - start)


def run_subprocess(tool, argv, cwd, env=None):
    start = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, str(tool), *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as expired:
        return Outcome(
            "timeout", expired.stdout or b"", expired.stderr or b"", time.monotonic() - start
        )
    return Outcome(
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace"),
        time.monotonic() - start,
    )


def error_lines(stderr):
    """stderr's non-empty lines that are not plot.py notes."""
    return [
        line for line in stderr.splitlines() if line.strip() and not line.startswith(NOTE_PREFIX)
    ]


# What a tool must say when given each kind of non-file.
REFUSALS = {
    "directory": "not a regular file (a directory)",
    "symlink_to_directory": "not a regular file (a directory)",
    "fifo": "not a regular file (a FIFO)",
    "socket": "not a regular file (a socket)",
    "dev_null": "not a regular file (a device)",
    "missing": "no such file",
    "dangling_symlink": "no such file",
    "trailing_slash": "cannot read",
}


def expectation(case):
    """(exit statuses, text in stderr, text in stdout) the case must show
    beyond the rules every case keeps, or None."""
    expect = getattr(case, "expect", None)
    if expect:
        return expect
    refused = [REFUSALS[v.kind] for v in case.inputs.values() if v.kind in REFUSALS]
    return ((2,), refused, None) if refused else None


def problems(case, outcome, fmt_json=False):
    """What is wrong with how a case ended; [] when nothing is."""
    found = []
    expect = expectation(case)
    if expect:
        statuses, in_stderr, in_stdout = expect
        if outcome.status not in statuses:
            found.append(f"exit status {outcome.status!r}, not {statuses}")
        if isinstance(in_stderr, str):
            in_stderr = [in_stderr]
        if in_stderr and not any(text.lower() in outcome.stderr.lower() for text in in_stderr):
            found.append(f"stderr says none of {in_stderr}")
        if in_stdout and in_stdout not in outcome.stdout:
            found.append(f"stdout lacks {in_stdout!r}")
    no_python_draws = case.draws and not HAVE_MATPLOTLIB  # exit 3 (docs/python.md)
    if outcome.status not in (0, 1, 2) + (3,) * no_python_draws:
        found.append(f"exit status {outcome.status!r}")
    if "Traceback" in outcome.stdout or "Traceback" in outcome.stderr:
        found.append("a traceback")
    errors = error_lines(outcome.stderr)
    if len(errors) > 1:
        found.append(f"{len(errors)} lines of error")
    if outcome.status == 2 and len(errors) != 1:
        found.append("exit 2 without its one line of error")
    if outcome.status in (0, 1) and errors:
        found.append(f"exit {outcome.status} with an error line")
    if case.tool == "plot" and outcome.status == 1:
        found.append("plot.py exits 1")
    if fmt_json and outcome.status in (0, 1):
        try:
            json.loads(outcome.stdout, parse_constant=lambda token: 1 / 0)
        except (ValueError, ZeroDivisionError):
            found.append("--format json wrote no strict JSON")
    if not found:
        return []
    return [
        f"{case}: {'; '.join(found)}\n  argv: {case.last_argv}\n"
        f"  stderr: {outcome.stderr[-1500:]!r}"
    ]


@unittest.skipUnless(
    hasattr(os, "mkfifo") and hasattr(socket, "AF_UNIX"), "needs FIFOs and Unix sockets (POSIX)"
)
class FuzzTestCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="xferbench-fuzz-")
        self.addCleanup(self.tmp.cleanup)
        self.scratch = Scratch(self.tmp.name)
        self.addCleanup(self.scratch.close)

    def report(self, failures, cases, seconds):
        self.assertFalse(
            failures,
            f"{len(failures)} of {len(cases)} cases "
            f"failed ({seconds:.1f} s):\n" + "\n".join(failures[:25]),
        )

    def run_cases(self, tool_module, cases):
        failures = []
        start = time.monotonic()
        for case in cases:
            case.last_argv = self.scratch.argv(case)
            outcome = run_in_process(tool_module.main, case.last_argv)
            failures += problems(case, outcome, self.json_format(case))
            if case.draws and HAVE_MATPLOTLIB:
                import matplotlib.pyplot

                matplotlib.pyplot.close("all")
            self.scratch.clean(case)
        self.report(failures, cases, time.monotonic() - start)

    def run_subprocess_cases(self, tool, cases, env=None):
        failures = []
        start = time.monotonic()
        for case in cases:
            case.last_argv = self.scratch.argv(case)
            outcome = run_subprocess(tool, case.last_argv, self.tmp.name, getattr(case, "env", env))
            if outcome.status == "timeout":
                failures.append(
                    f"{case}: did not end within {SUBPROCESS_TIMEOUT_S} s\n  argv: {case.last_argv}"
                )
                continue
            failures += problems(case, outcome, self.json_format(case))
            self.scratch.clean(case)
        self.report(failures, cases, time.monotonic() - start)

    @staticmethod
    def json_format(case):
        options = case.options
        return (
            case.tool == "compare"
            and "json" in options
            and options[options.index("json") - 1] == "--format"
        )


class GeneratorTest(unittest.TestCase):
    """The fuzzer makes what the issue asks for, the same every run."""

    def test_at_least_1000_cases_per_tool_in_every_category(self):
        for tool in ("compare", "plot"):
            with self.subTest(tool=tool):
                cases = generate(tool, CASES_IN_PROCESS)
                self.assertGreaterEqual(len(cases) + CASES_SUBPROCESS, 1000)
                counts = {c: 0 for c in CATEGORIES}
                for case in cases:
                    counts[case.category] += 1
                self.assertGreaterEqual(min(counts.values()), 50, counts)
                kinds = {value.kind for case in cases for value in case.inputs.values()}
                self.assertLessEqual({"directory", "fifo"}, kinds)

    def test_deterministic(self):
        first = generate("compare", 40)
        second = generate("compare", 40)
        self.assertEqual(
            [(c.described, c.options) for c in first], [(c.described, c.options) for c in second]
        )
        self.assertEqual(
            [v.data for c in first for v in c.inputs.values()],
            [v.data for c in second for v in c.inputs.values()],
        )


class CompareFuzzTest(FuzzTestCase):
    def test_in_process(self):
        self.run_cases(compare, generate("compare", CASES_IN_PROCESS))

    def test_subprocess(self):
        self.run_subprocess_cases(COMPARE_TOOL, subprocess_cases("compare"))


class PlotFuzzTest(FuzzTestCase):
    def test_in_process(self):
        cases = limit_drawing(generate("plot", CASES_IN_PROCESS), MAX_DRAWN_IN_PROCESS)
        self.run_cases(plot, cases)

    def test_subprocess(self):
        self.run_subprocess_cases(PLOT_TOOL, subprocess_cases("plot"))


def subprocess_cases(tool):
    """The end-to-end set: every kind of non-file as each argument, a file
    that is not UTF-8, a file name that is not, hostile text on an
    ASCII-only stdout; then generated cases of every category."""
    seeds = Seeds()
    rng = random.Random(f"{SEED}-{tool}-subprocess")
    cases = []
    kinds = (
        "directory",
        "fifo",
        "dev_null",
        "socket",
        "symlink_to_directory",
        "trailing_slash",
        "non_utf8_name",
    )
    if tool == "compare":
        docs = dict(zip(("base", "new"), seeds.sliced(rng, COMPARE_PAIRS[0])))
        layouts = [(slot, ["{base}", "{new}", "--cross-machine"]) for slot in ("base", "new")]
    else:
        docs = {"run": seeds.get(ALL_PAIRS), "ok": seeds.get(ALL_PAIRS)}
        layouts = [("run", ["{run}", "--matrix"]), ("run", ["{ok}", "{run}", "-o", "{out}.txt"])]

    def case(category, slot, data, kind, options, described, expect=None):
        inputs = {name: plain_input(rng, doc) for name, doc in docs.items()}
        inputs[slot] = Input(data, kind)
        made = Case(9000 + len(cases), tool, category, inputs, options, described)
        made.expect = expect
        cases.append(made)
        return made

    for kind in kinds:
        for slot, options in layouts:
            data = plain_input(rng, docs[slot]).data if kind == "non_utf8_name" else None
            case("not_a_file", slot, data, kind, options, f"{slot}: {kind}")
    slot, options = layouts[-1]
    text = plain_input(rng, docs[slot]).data
    middle = text.index(b'"name"')
    case(
        "non_utf8",
        slot,
        text[:middle] + b"\xff\xfe" + text[middle:],
        None,
        options,
        f"{slot}: bytes FF FE in a row",
        ((2,), "not UTF-8", None),
    )
    # A host name (in compare's context differences, in plot's run label)
    # that an ASCII stdout cannot print, and one with a lone surrogate.
    for host in ("caf\u00e9 \u00b1", "half \ud800 a character"):
        doc = copy.deepcopy(docs[slot])
        set_path(doc, ("context", "xferbench", "ranks", 0, "host"), host)
        set_path(doc, ("context", "host_name"), host)
        data = serialise(rng, doc, Raw()).encode()
        options = (
            ["{base}", "{new}", "--cross-machine"] if tool == "compare" else ["{run}", "--matrix"]
        )
        made = case(
            "hostile_names",
            slot,
            data,
            None,
            options,
            f"{slot}: host {host!r}, ASCII-only stdout",
            ((0, 1) if tool == "compare" else (0,), None, host.split()[0][:3]),
        )
        made.env = dict(os.environ, PYTHONIOENCODING="ascii")
    generated = generate(tool, 7 * CASES_SUBPROCESS, first=20000)[::7]
    cases += generated[: CASES_SUBPROCESS - len(cases)]
    return limit_drawing(cases, MAX_DRAWN_SUBPROCESS)


if __name__ == "__main__":
    unittest.main()
