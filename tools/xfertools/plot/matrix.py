"""plot.py's GPU pair matrix: GB/s per (source, destination) GPU of an all-pairs run at one
size, and its text table (like p2pBandwidthLatencyTest's)."""

import dataclasses
import re

from ..core.files import InputError
from ..core.sizes import format_size

DEFAULT_VARIANT = "p2p:on/dir:uni"
DEFAULT_PATH = "memcpy_peer"
CORNER = "src\\dst"  # top-left cell of the text matrix
MAX_GPUS = 256  # GPU indices 0..255 in the matrix


@dataclasses.dataclass
class Matrix:
    label: str
    path: str
    variant: str
    size: int
    cells: list  # cells[src][dst]: GB/s or None

    def title(self):
        return f"{self.path} {self.variant} at {format_size(self.size)}"


def split_variant(spec):
    """'p2p:on/dir:uni' -> (memcpy_peer, [...]); 'host_staging/...' names its path."""
    parts = [p for p in spec.split("/") if p]
    if parts and ":" not in parts[0]:
        return parts[0], parts[1:]
    return DEFAULT_PATH, parts


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
        bandwidths = {size: gbps for size, (gbps, _) in points.items() if gbps is not None}
        if (
            parts[0] == path
            and len(pairs) == 1
            and bandwidths
            and sorted(rest) == sorted(variant_parts)
        ):
            found[pairs[0]] = bandwidths
    return found


def variants_present(run, path):
    keys = {
        "/".join(p for p in key.split("/")[1:] if not pair_of(p))
        for key in run.series
        if key.split("/")[0] == path and "/pair:" in key
    }
    return ", ".join(sorted(keys)) or "none"


def build_matrix(run, variant_spec, size):
    """The matrix of a curves.Run at size (None: the largest present); InputError naming what
    the run has where it lacks the variant or size."""
    path, variant_parts = split_variant(variant_spec)
    variant = "/".join(variant_parts)
    pairs = pair_bandwidths(run, path, variant_parts)
    if not pairs:
        raise InputError(
            f"{run.file}: no {path} pair rows for variant '{variant}' "
            f"(variants present: {variants_present(run, path)})"
        )
    sizes = sorted({s for points in pairs.values() for s in points})
    size = sizes[-1] if size is None else size
    if size not in sizes:
        present = ", ".join(format_size(s) for s in sizes)
        raise InputError(
            f"{run.file}: no {path} {variant} rows at {format_size(size)} "
            f"(sizes present: {present})"
        )
    count = 1 + max(max(pair) for pair in pairs)
    if count > MAX_GPUS:
        raise InputError(
            f"{run.file}: {path} pair rows name GPU {count - 1}; the matrix shows at most "
            f"{MAX_GPUS} GPUs (0 to {MAX_GPUS - 1})"
        )
    cells = [[pairs.get((src, dst), {}).get(size) for dst in range(count)] for src in range(count)]
    return Matrix(run.label, path, variant, size, cells)


def matrix_text(matrix):
    """A table like p2pBandwidthLatencyTest's: rows source, columns destination."""
    values = [f"{v:.2f}" for row in matrix.cells for v in row if v is not None]
    width = max(8, 2 + max(len(v) for v in values))
    lines = [
        f"{matrix.title()} ({matrix.size} B): GB/s, 1 GB = 1e9 B",
        f"run: {matrix.label}",
        "rows: source GPU, columns: destination GPU",
        f"{CORNER:>7}" + "".join(f"{dst:>{width}}" for dst in range(len(matrix.cells))),
    ]
    for src, row in enumerate(matrix.cells):
        lines.append(
            f"{src:>7}" + "".join(f"{'-' if v is None else format(v, '.2f'):>{width}}" for v in row)
        )
    return "\n".join(lines) + "\n"
