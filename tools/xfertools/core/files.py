"""Reading result files safely, and writing files atomically (standard library only).

A result file may be anything a user passes: a directory, a FIFO with no writer (opening it for
reading would wait forever), a device, a document nested a million levels deep, C++ stream
spellings of NaN. load_result refuses what is not a result document with one line of text,
before it can hang or crash a tool.
"""

import json
import os
import re
import stat

from . import fields

MAX_NESTING = 100  # lists and objects: xferbench's own documents nest 6 deep

FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)

# A JSON string (kept as is) or a bare nan/inf token as C++ streams print it.
_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?)\b(nan|inf|infinity)\b', re.IGNORECASE)


class InputError(Exception):
    """Input a tool cannot use: one line for stderr, exit status 2."""


def nesting_depth(value, limit=MAX_NESTING):
    """How deep lists and objects nest in value, counting to limit + 1 (no recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return depth
            deepest = max(deepest, depth)
            items = value.values() if isinstance(value, dict) else value
            pending.extend((item, depth + 1) for item in items)
    return deepest


def file_kind(mode):
    return next((kind for test, kind in FILE_KINDS if test(mode)), "not a regular file")


def read_regular_file(where, path):
    """The bytes of the regular file at path. Anything else is refused before it is opened, and
    again after (O_NONBLOCK: the open never waits), with InputError('WHERE: ...')."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with open(fd, "rb") as stream:
                mode = os.fstat(stream.fileno()).st_mode
                if stat.S_ISREG(mode):
                    return stream.read()
    except FileNotFoundError:
        raise InputError(f"{where}: no such file") from None
    except (OSError, ValueError) as e:
        raise InputError(f"{where}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    raise InputError(f"{where}: not a regular file ({file_kind(mode)})")


def standardise_non_finite(text):
    """nan, -nan, inf, -inf (as C++ streams print them) rewritten as JSON's NaN and Infinity."""

    def replace(match):
        if match.group(2) is None:  # a string literal: left alone
            return match.group(0)
        if match.group(2).lower() == "nan":
            return "NaN"
        return match.group(1) + "Infinity"

    return _NON_FINITE.sub(replace, text)


def parse_json_text(text):
    """json.loads that also takes nan, -nan, inf; errors point into the text as written."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        try:
            return json.loads(standardise_non_finite(text))
        except json.JSONDecodeError:
            raise error from None


def without_surrogates(value):
    """value with each lone surrogate (a JSON escape like \\ud800 that is half a character)
    written as that escape: no output can encode one."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    return value


def decode_json(where, data):
    """The JSON document in data (bytes); InputError naming where for anything else."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{where}: cannot read: not UTF-8 (byte {error.start}: {error.reason})"
        ) from None
    try:
        document = parse_json_text(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{where}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    except ValueError as error:  # an integer past Python's digit limit
        raise InputError(
            f"{where}: not JSON this tool can read ({str(error).split(':')[0]})"
        ) from None
    except RecursionError:
        document = nested = None
    else:
        nested = nesting_depth(document) <= MAX_NESTING
    if not nested:
        raise InputError(f"{where}: nested more than {MAX_NESTING} levels deep")
    return without_surrogates(document) if "\\u" in text else document


def check_result_document(where, document):
    if not isinstance(document, dict) or not isinstance(document.get(fields.BENCHMARKS), list):
        raise InputError(f"{where}: not a benchmark result (no 'benchmarks' list)")
    rows = document[fields.BENCHMARKS]
    if not rows:
        raise InputError(f"{where}: 'benchmarks' holds no rows")
    if not all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in rows):
        raise InputError(f"{where}: a 'benchmarks' row has no name")


def load_result(path, where=None):
    """The result document (Google Benchmark JSON, a non-empty 'benchmarks' list of named rows)
    in the file at path; InputError, its message starting with where (default: the path),
    for anything else."""
    where = path if where is None else where
    document = decode_json(where, read_regular_file(where, path))
    check_result_document(where, document)
    return document


def write_atomically(where, path, text):
    """Write text to path so that a reader sees the old file or the new one, never half of
    one (a temporary file beside it, then a rename); InputError naming where if it cannot."""
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except OSError as e:
        raise InputError(f"{where}: cannot write {path}: {e.strerror or e}") from None
    finally:
        if os.path.lexists(temporary):
            os.remove(temporary)


def fleet_object(document):
    """The fleet object of a result document (xferbench --xfer_fleet): context.xferbench.fleet,
    where xferbench writes it, or a top-level "fleet" (a bare object, or a document made by
    hand); None if neither. Standard library only: plot.py asks before it needs numpy."""
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("fleet"), dict):
        return document["fleet"]
    context = document.get("context")
    xferbench = context.get("xferbench") if isinstance(context, dict) else None
    found = xferbench.get("fleet") if isinstance(xferbench, dict) else None
    return found if isinstance(found, dict) else None
