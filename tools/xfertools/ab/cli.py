"""tools/ab: two builds or settings of xferbench measured in one sitting, in alternating jobs.

Each side is a build directory, environment settings and a launcher. Their jobs run one at a
time, never together (they would compete for the link being measured), in ABBA order (A B, B A,
A B, ...: a drift over the sitting falls on both sides alike), each job a full sweep of the
selected rows launched as tools/run launches one (tools/setup's xfer_job). Each side's jobs are
merged (xferbench --xfer_merge) into an ordinary result file, and B is judged against A by
their jobs as tools/compare.py judges (report.py, replicates.py): family first, then rows, with
false-discovery control and a minimum effect. The document written is B's merged result with
an "ab" object beside it holding A's merged result, the sides, the order and the report, so
that tools/plot.py reads it as B's result and tools/compare.py AB.json compares its sides.

This module is the command line; plan.py plans the sitting, jobs.py runs its jobs and
document.py writes its document (compare/ab_sides.py reads it back).
"""

import argparse
import dataclasses
import os
import shlex
import sys

from ..compare import render
from ..core import checkout, files, interrupt
from ..core.text import one_line
from .document import PROG
from .jobs import BadInput, sit
from .plan import DEFAULT_JOBS, DEFAULT_THRESHOLD

MAX_JOBS = 32
# Flags tools/ab sets on every job itself (tools/setup's xfer_job) or that would leave the
# jobs nothing to compare.
OWN_FLAGS = (
    "--benchmark_out",
    "--xfer_jobs",
    "--xfer_visits",
    "--xfer_merge",
    "--benchmark_repetitions",
    "--help",
    "--version",
)


@dataclasses.dataclass(frozen=True)
class Side:
    label: str
    build: str  # the build directory holding xferbench
    env: dict  # environment settings of this side's jobs
    launcher: str | None  # MPIRUN for this side's jobs (None: the caller's MPIRUN or mpirun)

    def describe(self):
        parts = [f"build {self.build}"]
        parts += [f"{k}={v}" for k, v in self.env.items()]
        if self.launcher:
            parts.append(f"MPIRUN={self.launcher}")
        return ", ".join(parts)

    def to_dict(self):
        return {"build": self.build, "env": self.env, "launcher": self.launcher}


def setting(text):
    name, equals, value = text.partition("=")
    if not equals or not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 2 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected 2 to {MAX_JOBS}, got {value}")
    return value


def seconds(text):
    try:
        value = float(text.rstrip("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{PROG}: error: {message}", file=sys.stderr)
        sys.exit(2)


def build_parser(root):
    parser = Parser(
        prog=PROG,
        allow_abbrev=False,
        description="Measure two builds or settings of xferbench in alternating jobs (ABBA) "
        "on this machine and judge B against A. Other flags go to every job's xferbench.",
        epilog="exit status: 0 no change (or B faster), 1 B slower, 2 bad input, 3 no Python with "
        "numpy and scipy. See docs/ab.md.",
    )
    default_build = os.environ.get("XFER_BUILD") or os.path.join(root, "build")
    for side in ("a", "b"):
        upper = side.upper()
        parser.add_argument(
            f"--{side}-build",
            default=default_build,
            metavar="DIR",
            help=f"build directory of side {upper} (default: $XFER_BUILD or build/)",
        )
        parser.add_argument(
            f"--{side}-env",
            type=setting,
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help=f"an environment setting of side {upper}'s jobs (repeatable)",
        )
        parser.add_argument(
            f"--{side}-mpirun",
            metavar="COMMAND",
            help=f"launcher of side {upper}'s jobs, e.g. a second MPI's mpirun (default: "
            "$MPIRUN or mpirun)",
        )
    parser.add_argument(
        "--jobs",
        type=positive_int,
        metavar="N",
        help=f"jobs per side (2 to {MAX_JOBS}; default {DEFAULT_JOBS})",
    )
    parser.add_argument(
        "--time-budget",
        type=seconds,
        metavar="SECONDS",
        help="choose the jobs per side to fit this long, from a first job's cost (not with --jobs)",
    )
    parser.add_argument("--out", metavar="FILE", help="the document (default: results/ab-*.json)")
    parser.add_argument(
        "--format", choices=list(render.RENDERERS), default="text", help="report format"
    )
    parser.add_argument(
        "--threshold",
        type=float,
        metavar="PCT",
        help=f"smallest change that counts, percent (default: {DEFAULT_THRESHOLD:g})",
    )
    parser.add_argument(
        "--alpha", type=float, help="false-discovery rate (default: 0.01, as tools/track)"
    )
    return parser


def parse_args(argv, root):
    parser = build_parser(root)
    args, flags = parser.parse_known_args(argv)
    for flag in flags:
        if not flag.startswith("--"):
            parser.error(f"unexpected argument {flag!r} (xferbench flags look like --name=value)")
        if flag.split("=", 1)[0] in OWN_FLAGS:
            parser.error(f"{flag.split('=', 1)[0]} is tools/ab's own choice for every job")
    if args.jobs and args.time_budget:
        parser.error("give --jobs or --time-budget, not both")
    if args.threshold is not None and not 0 <= args.threshold < 100:
        parser.error(f"--threshold: expected a percentage from 0 to 100, got {args.threshold}")
    if args.alpha is not None and not 0 < args.alpha < 1:
        parser.error(f"--alpha: expected a number between 0 and 1, got {args.alpha}")
    args.flags = flags
    sides = []
    for side in ("a", "b"):
        build = os.path.abspath(getattr(args, f"{side}_build"))
        binary = os.path.join(build, "xferbench")
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            parser.error(
                f"--{side}-build {build}: no xferbench there (build it with cmake first, or "
                "run tools/run once)"
            )
        sides.append(
            Side(
                side.upper(),
                build,
                dict(getattr(args, f"{side}_env")),
                getattr(args, f"{side}_mpirun"),
            )
        )
    args.sides = tuple(sides)
    return args


def head_lines(args, jobs, order, wall):
    a, b = args.sides
    return [
        f"ab: {jobs} jobs per side in ABBA order ({''.join(order)}), {wall:.0f} s; "
        f"flags: {' '.join(shlex.quote(f) for f in args.flags) or '(none)'}",
        f"A: {a.describe()}",
        f"B: {b.describe()}",
    ]


def software_lines(result):
    differences = result["ab"]["software_differences"]
    if not differences:
        return ["Software differences: none (an A/A run: both sides the same)."]
    return ["Software differences:"] + [
        f"- {d['field']}: A {d['A']!r}, B {d['B']!r}" for d in differences
    ]


def main(argv=None, root=None):
    """tools/ab with argv (else sys.argv's) on the checkout root (else checkout.root())."""
    root = root or checkout.root()
    args = parse_args(sys.argv[1:] if argv is None else argv, root)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        outcome = sit(args, root)
    except (BadInput, files.InputError) as error:
        print(f"{PROG}: error: {one_line(error)}", file=sys.stderr)
        return 2
    result = outcome.report
    if result is None:
        print(
            f"ab: no verdict: {outcome.jobs} job{'s' if outcome.jobs != 1 else ''} a side "
            "finished, 2 needed"
        )
        if outcome.stopped:
            print(outcome.stopped)
        print(f"{PROG}: written to {outcome.out} (incomplete, no verdict)", file=sys.stderr)
        return interrupt.EXIT_INTERRUPTED
    result["tool"] = "ab"
    text = render.RENDERERS[args.format](result)
    if args.format == "text":
        verdict, rest = text.split("\n", 1)
        head = head_lines(args, outcome.jobs, outcome.order, outcome.wall)
        if outcome.stopped:
            head.insert(0, outcome.stopped)
        text = "\n".join([verdict] + head + software_lines(result)) + "\n" + rest
    sys.stdout.write(text)
    if outcome.stopped:
        print(f"{PROG}: written to {outcome.out} (incomplete)", file=sys.stderr)
        return interrupt.EXIT_INTERRUPTED
    print(f"{PROG}: written to {outcome.out}", file=sys.stderr)
    return 1 if result["regressions"] else 0
