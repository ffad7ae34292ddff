"""Compare two sets of xferbench (Google Benchmark JSON) results.

    compare.py BASE NEW
    compare.py --base A.json [B.json ...] --new C.json [D.json ...]
    compare.py AB.json            (the document tools/ab wrote: its side A against side B)

Rows are matched by name (a ping-pong row named before exchange modes matches its mode:pingpong
name). xferbench results are judged as tools/track judges, family first and then rows, with
false-discovery control and a minimum effect; the replicates are the sides' jobs (separate
processes: the jobs a file from tools/run merged, or one per single-job file), and with one job
a side the rows' stated ci95. Plain Google Benchmark files are judged row by row on their
repetitions (one process each side) with a Mann-Whitney U test. With --cross-machine, each
family also gets its geomean ratio over sizes with a 95% interval. Exit status: 0 no
regression, 1 regression (the CI gate), 2 bad input, 3 no Python with numpy and scipy to
judge xferbench results (docs/python.md). See docs/compare.md.
"""

import argparse
import math
import re
import sys

from ..core import interpreter
from ..core.arguments import probability
from ..core.files import InputError
from ..core.text import one_line
from ..result import machines
from . import ab_sides, judging, render, report

PROG = "compare.py"


def percentage(text):
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def regex(text):
    try:
        return re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f"bad regular expression: {error}") from None


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Compare xferbench / Google Benchmark JSON results.",
        epilog="exit status: 0 no regression, 1 regression, 2 bad input, 3 no Python with numpy "
        "and scipy (xferbench results). See docs/compare.md.",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="BASE NEW",
        help="one base and one new result file, or one tools/ab document",
    )
    parser.add_argument(
        "--base", nargs="+", metavar="FILE", help="base result files; their repetitions pool"
    )
    parser.add_argument(
        "--new", nargs="+", metavar="FILE", help="new result files; their repetitions pool"
    )
    parser.add_argument(
        "--metric",
        choices=list(judging.METRICS),
        default="time",
        help="what judges a row (default: time, which every row has)",
    )
    parser.add_argument(
        "--threshold",
        type=percentage,
        metavar="PCT",
        help="smallest change that counts, in percent (default: 3 for xferbench results, as "
        "tools/track; 5 for plain Google Benchmark repetitions)",
    )
    parser.add_argument(
        "--alpha",
        type=probability,
        help="false-discovery rate over families and rows for xferbench results (default: "
        "0.01, as tools/track); significance level of the U test for plain Google Benchmark "
        "repetitions (default: 0.05)",
    )
    parser.add_argument(
        "--format",
        choices=list(render.RENDERERS),
        default="text",
        help="output format (default: text)",
    )
    parser.add_argument(
        "--filter", type=regex, metavar="REGEX", help="compare only rows whose name matches"
    )
    parser.add_argument(
        "--cross-machine",
        action="store_true",
        help="allow base and new from different machines; adds per-family ratios",
    )
    return parser


def parse_args(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.files and (args.base or args.new):
        parser.error("give either BASE NEW or --base/--new, not both")
    args.ab = None
    if args.files:
        if len(args.files) == 1:
            args.ab = args.files[0]
        elif len(args.files) != 2:
            parser.error("give exactly two files, BASE NEW (pool more with --base ... --new ...)")
        else:
            args.base, args.new = [args.files[0]], [args.files[1]]
    elif not (args.base and args.new):
        parser.error("give BASE NEW, or both --base and --new")
    return args


def main(argv=None):
    args = parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # '±' on an ASCII-only stdout
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        if args.ab:
            document = ab_sides.read_document(args.ab)
            base, new = ab_sides.sides_of(args.ab, document)
            result = report.build_report(base, new, args, machines.hardware_identity)
            note = ab_sides.incomplete_note(args.ab, document)
            if note:
                print(f"{PROG}: {note}", file=sys.stderr)
        else:
            result = report.build_report(
                report.load_side("base", args.base), report.load_side("new", args.new), args
            )
    except InputError as error:
        print(f"{PROG}: error: {one_line(error)}", file=sys.stderr)
        return 2
    except ImportError:  # xferbench results are judged with numpy and scipy
        try:  # run again under a Python that has them, where this one lacks them
            interpreter.require(("numpy", "scipy"))
        except interpreter.Missing as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return interpreter.EXIT_MISSING
        raise
    sys.stdout.write(render.RENDERERS[args.format](result))
    return result["exit_status"]
