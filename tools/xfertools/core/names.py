"""Row names: what a row is matched by, its family (path and variant) and its message size.

A row name is PATH[/VARIANT...]/bytes:N plus run-control parts Google Benchmark adds
(manual_time, iterations:N, ...). Rows named as before exchange modes existed are read under
their current names (canonical_name), so an older file and one from now match row by row.
"""

import re

# Paths between ranks whose rows name an exchange mode (mode:pingpong, mode:stream, mode:bidir).
# Files from before modes existed name their ping-pong rows without one: mpi_host/bytes:8
# measured what mpi_host/mode:pingpong/bytes:8 measures.
EXCHANGE_PATHS = ("mpi_host", "mpi_cuda_aware", "nccl_sendrecv")
LEGACY_MODE = "mode:pingpong"
# The exchange modes, ping-pong first. host_staging's mode: components (mode:sequential,
# mode:pipelined) mean staging, not an exchange mode.
EXCHANGE_MODES = (LEGACY_MODE, "mode:stream", "mode:bidir")
# Rows whose time is per message of a window (the inverse of throughput), not a latency.
THROUGHPUT_MODES = {"mode:stream", "mode:bidir"}
# mpi_staged named its staging mode: until it gained exchange modes; now staging: is followed
# by the exchange mode, and those rows measured ping-pong:
# mpi_staged/host:pinned/mode:pipelined/bytes:8 is
# mpi_staged/host:pinned/staging:pipelined/mode:pingpong/bytes:8.
STAGED_PATH = "mpi_staged"
LEGACY_STAGING = {"mode:sequential": "staging:sequential", "mode:pipelined": "staging:pipelined"}

_RUN_CONTROL = re.compile(
    r"manual_time|real_time|process_time|iterations:\d+|repeats:\d+"
    r"|threads:1|min_time:[0-9.e+-]+s?|min_warmup_time:[0-9.e+-]+s?"
)
# A size of more than 18 digits (an exabyte) is no size: the row is unsized.
_BYTES = re.compile(r"bytes:([0-9]{1,18})")


def normalise_name(name):
    """The name without run-control components, so differently run rows still match."""
    return "/".join(part for part in name.split("/") if not _RUN_CONTROL.fullmatch(part))


def canonical_name(name):
    """The current name of a row name (or a family, without bytes:N): an exchange path's name
    without a mode component gains mode:pingpong right after the path, and in an mpi_staged name
    without a staging: component, mode:sequential or mode:pipelined becomes staging:sequential
    or staging:pipelined followed by mode:pingpong."""
    parts = name.split("/")
    if parts[0] == STAGED_PATH and not any(part.startswith("staging:") for part in parts[1:]):
        return "/".join(
            f"{LEGACY_STAGING[part]}/{LEGACY_MODE}" if i and part in LEGACY_STAGING else part
            for i, part in enumerate(parts)
        )
    if parts[0] in EXCHANGE_PATHS and not any(part.startswith("mode:") for part in parts[1:]):
        parts.insert(1, LEGACY_MODE)
    return "/".join(parts)


def legacy_family(family):
    """The name files from before modes gave a ping-pong family ('mpi_host/mode:pingpong' ->
    'mpi_host', 'mpi_staged/host:pinned/staging:pipelined/mode:pingpong' ->
    'mpi_staged/host:pinned/mode:pipelined'); None for other families."""
    parts = family.split("/")
    if parts[0] in EXCHANGE_PATHS and parts[1:2] == [LEGACY_MODE]:
        return "/".join(parts[:1] + parts[2:])
    if parts[0] == STAGED_PATH:
        old_staging = {new: old for old, new in LEGACY_STAGING.items()}
        for i in range(1, len(parts) - 1):
            if parts[i] in old_staging and parts[i + 1] == LEGACY_MODE:
                return "/".join(parts[:i] + [old_staging[parts[i]]] + parts[i + 2 :])
    return None


def message_bytes(name):
    """N of the name's bytes:N component, or None (no such component, or over 18 digits)."""
    for part in name.split("/"):
        match = _BYTES.fullmatch(part)
        if match:
            return int(match.group(1))
    return None


def family_of(name):
    """The family of a row name: its name without bytes:N (path and variant, pair included)."""
    return "/".join(part for part in name.split("/") if not _BYTES.fullmatch(part))


def path_of(name):
    """The path: the first component of a name or family."""
    return name.split("/", 1)[0]


def variant_of(family):
    """The family without its path ('mode:stream/pairs:2'); '' for none."""
    return "/".join(family.split("/")[1:])


def is_throughput_only(family):
    """mode:stream and mode:bidir rows: their time is the time per message of a window (the
    inverse of throughput), not a latency."""
    return any(part in THROUGHPUT_MODES for part in family.split("/")[1:])


def natural_key(text):
    """'pairs:10' after 'pairs:2': runs of digits compare as numbers (by length without leading
    zeros, then digit by digit: no int() of a thousand digits)."""
    return [
        (len(t.lstrip("0")), t.lstrip("0"), t) if i % 2 else t
        for i, t in enumerate(re.split(r"([0-9]+)", text))
    ]
