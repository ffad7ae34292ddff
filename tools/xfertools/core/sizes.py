"""Message sizes: '256MiB' to bytes and back. K, M and G are binary (KiB, MiB, GiB), as in
xferbench's --xfer_sizes; GB is refused, since it could mean 1e9 or 2^30."""

import re

BINARY_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
SUFFIXES = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
}


def parse_size(text):
    """'256MiB', '256M', '268435456', '1G', '64k' -> bytes; ValueError saying what is expected."""
    match = re.fullmatch(r"\s*([0-9]{1,18})\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).lower() not in SUFFIXES:
        raise ValueError(
            f"bad size '{text}': give bytes (268435456) or a number with "
            "K/KiB, M/MiB or G/GiB (256MiB, 1G)"
        )
    return int(match.group(1)) * SUFFIXES[match.group(2).lower()]


def parse_sizes(text):
    """A comma-separated list of sizes ('64M,256M,1G') -> [bytes]."""
    return [parse_size(item) for item in text.split(",")]


def format_size(size):
    """268435456 -> '256 MiB'; 8 -> '8 B'."""
    for unit_bytes, unit in BINARY_UNITS:
        if size >= unit_bytes:
            return f"{size / unit_bytes:g} {unit}"
    return f"{size:g} B"
