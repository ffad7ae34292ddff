"""Plot xferbench result files (see docs/plot.md).

Curves:  plot.py RUN.json [RUN2.json ...] -o OUT.png|svg|pdf [--panels auto|path|none]
         bandwidth and one-way latency against message size, one line per path and variant
         (a colour per path, a line style per mode or variant, a marker per pair or staging),
         several runs overlaid; each path its own pair of panels where the runs hold more than
         one path (--panels none: every path in one pair of panels).
Matrix:  plot.py RUN.json --matrix [-o OUT.png] [--size 256MiB] [--variant V]
         GB/s per (source, destination) GPU from an all-pairs run, as a heatmap (-o) or as a
         text table (no -o, or --text); the text table needs only the standard library.
Fleet:   plot.py FLEET.json --fleet -o OUT.png [--verdict VERDICT.json]
         a fleet run's (xferbench --xfer_fleet) host-by-host heatmap per series, each pair's
         time against the fleet's median pair; with tools/fleet judge --json's verdict, the
         slow and suspect hosts and links outlined. A fleet run's result (its rows are only
         each series' median pair) is drawn so without --fleet.

Exit status: 0 drawn, 2 bad input, 3 no Python with matplotlib (see docs/python.md).
"""

import argparse
import os
import re
import sys

from ..core import files, interpreter, sizes
from ..core.files import InputError
from ..core.text import one_line
from . import curves, draw, matrix, styles

EXIT_BAD_INPUT = 2


def regex(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"bad regex '{text}': {e}") from None


def size(text):
    try:
        return sizes.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py",
        description="Plot xferbench result files: bandwidth and latency against message size, "
        "or the GPU pair matrix. See docs/plot.md.",
    )
    parser.add_argument(
        "runs", nargs="+", metavar="RUN.json", help="xferbench --benchmark_out files"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="image to write (.png, .svg or .pdf); with --matrix --text, the text file to write",
    )
    parser.add_argument(
        "--filter",
        type=regex,
        metavar="REGEX",
        help="plot only series whose key matches (re.search)",
    )
    parser.add_argument(
        "--reference", action="store_true", help="draw theoretical link rates the context knows"
    )
    parser.add_argument(
        "--panels",
        choices=styles.PANEL_CHOICES,
        default="auto",
        help="curves: 'path' draws a bandwidth and a latency panel per path, 'none' every "
        "series in one pair; 'auto' (the default) is 'path' where the runs hold more than one "
        "path",
    )
    parser.add_argument(
        "--bandwidth-axis",
        choices=draw.BANDWIDTH_AXES,
        default="log",
        help="curves: the bandwidth axis, log (the default: paths from 5 to 1,600 GB/s all "
        "readable) or linear",
    )
    parser.add_argument(
        "--matrix", action="store_true", help="GB/s per (source, destination) GPU pair"
    )
    parser.add_argument(
        "--text", action="store_true", help="with --matrix: a text table, even with -o"
    )
    parser.add_argument(
        "--size",
        type=size,
        metavar="SIZE",
        help="matrix message size: 256MiB, 268435456, 1G (default: the largest present)",
    )
    parser.add_argument(
        "--fleet",
        action="store_true",
        help="a fleet run's host-by-host heatmaps (the default for a result holding only them)",
    )
    parser.add_argument(
        "--verdict",
        metavar="VERDICT.json",
        help="tools/fleet judge --json's verdict: the fleet's heatmaps (--fleet) with its slow "
        "and suspect hosts and links outlined",
    )
    parser.add_argument(
        "--variant",
        default=matrix.DEFAULT_VARIANT,
        metavar="[PATH/]VARIANT",
        help=f"matrix variant (default {matrix.DEFAULT_VARIANT}; path {matrix.DEFAULT_PATH} "
        "unless given first)",
    )
    return parser.parse_args(argv)


def write_text(path, text):
    try:
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror}") from None


def run_matrix(args, runs):
    matrices = [matrix.build_matrix(run, args.variant, args.size) for run in runs]
    if args.text or args.output is None:
        text = "\n".join(matrix.matrix_text(m) for m in matrices)
        if args.output is None:
            sys.stdout.write(text)
        else:
            write_text(args.output, text)
        return 0
    draw.check_image_name(args.output)
    draw.render_matrices(matrices, args.output)
    return 0


def run_curves(args, runs):
    draw.check_image_name(args.output)
    if args.filter:
        curves.filter_series(runs, args.filter)
    draw.render_curves(runs, args.output, args.reference, args.panels, args.bandwidth_axis)
    return 0


def fleet_only(path):
    """True if the file is a fleet run's (xferbench --xfer_fleet): its rows are only each
    series' median pair, and its heatmaps are the chart to draw."""
    document = files.decode_json(path, files.read_regular_file(path, path))
    return files.fleet_object(document) is not None


def wants_fleet(args):
    if args.fleet or args.verdict:  # --verdict: the fleet's heatmaps
        if args.matrix:
            raise InputError("--fleet or --matrix, not both")
        if len(args.runs) != 1:
            raise InputError(f"--fleet: give one result file, not {len(args.runs)}")
        return True
    return not args.matrix and len(args.runs) == 1 and fleet_only(args.runs[0])


def run_fleet(args):
    draw.check_image_name(args.output)
    interpreter.require(("numpy", "scipy", "matplotlib"))
    from ..fleet import report as fleet_report

    path = args.runs[0]
    heatmaps = fleet_report.heatmaps(path, args.verdict)
    draw.render_fleet(heatmaps, args.output, os.path.basename(path))
    return 0


def main(argv=None):
    args = parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # labels on an ASCII-only stdout
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        if wants_fleet(args):
            return run_fleet(args)
        runs = curves.load_runs(args.runs)
        return run_matrix(args, runs) if args.matrix else run_curves(args, runs)
    except InputError as e:
        print(f"plot.py: {one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except interpreter.Missing as e:
        print(f"plot.py: {e}; the text matrix (--matrix --text) needs none", file=sys.stderr)
        return interpreter.EXIT_MISSING
