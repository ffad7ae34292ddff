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
"""

import argparse
import dataclasses
import json
import os
import shlex
import socket
import subprocess
import sys
import time

from . import files, machines, render, report
from .text import one_line

PROG = "tools/ab"
SCHEMA = "xferbench-ab/1"
SIDES = ("A", "B")
DEFAULT_JOBS = 6
MAX_JOBS = 32
# The smallest change flagged. A sitting compares A and B in alternating jobs, so the drift
# between sittings that tools/track's 3% guards against is not in it; at 3% a true 3% change
# would be flagged only about half the time (its estimate falls below 3% as often as above).
DEFAULT_THRESHOLD = 1.0
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


class BadInput(Exception):
    """One line for stderr; exit status 2."""


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


def abba(jobs):
    """The order of 2 x jobs: A B, B A, A B, ..."""
    return [label for k in range(jobs) for label in (SIDES if k % 2 == 0 else SIDES[::-1])]


class Sitting:
    """The jobs of one sitting, in a directory of their own."""

    def __init__(self, root, directory, flags):
        self.setup = os.path.join(root, "tools", "setup")
        self.directory = directory
        self.flags = flags
        self.files = {label: [] for label in SIDES}
        self.walls = []

    def run_job(self, side, jobs, name):
        """Run one job of side; its result file. Exits 2 where xferbench refused."""
        file = os.path.join(self.directory, f"{name}.json")
        log = os.path.join(self.directory, f"{name}.log")
        env = dict(os.environ)
        env.update(side.env)
        env["XFER_BUILD"] = side.build
        if side.launcher:
            env["MPIRUN"] = side.launcher
        command = ["bash", "-c", 'source "$0" && xfer_job "$@"', self.setup, str(jobs), file, log]
        start = time.monotonic()
        status = subprocess.run(command + self.flags, env=env, check=False).returncode
        wall = time.monotonic() - start
        print(f"{PROG}: {name} ({side.label}): exit {status} in {wall:.1f} s", file=sys.stderr)
        if status not in (0, 1) or not os.path.isfile(file):
            raise BadInput(f"{name} of side {side.label} failed (exit {status}): {why(log)}")
        return file, wall


def why(log):
    """xferbench's own lines from a job's log, else the launcher's first words."""
    try:
        with open(log, errors="replace") as stream:
            lines = [line.strip() for line in stream if line.strip(" -\n")]
    except OSError:
        return f"see {log}"
    own = [line for line in lines if line.startswith("xferbench:")]
    told = own[:3] if own else lines[:2]
    return "; ".join(told) + f" ({log})" if told else f"see {log}"


def visit_seconds(path):
    """Seconds a job spent in its visits (measuring, warm-up, checks), from its file."""
    document = files.load_result(path)
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    visits = machines.mapping(xferbench.get("visits"))
    return sum(
        v.get("wall_s", 0)
        for entries in visits.values()
        if isinstance(entries, list)
        for v in entries
        if isinstance(v, dict) and isinstance(v.get("wall_s"), (int, float))
    )


def plan_jobs(budget, pilot_jobs, pilot_wall, pilot_visits):
    """Jobs per side that fit budget seconds: a job costs its start-up and set-up (its wall
    less its visits) plus its share of the rows' time, and the shares of a side's jobs add up
    to one whole run's, whatever their number (Kalibera and Jones: spend on the level that
    varies, here processes). A job's start-up varies with the machine's load: a quarter more
    is allowed for it."""
    overhead = 1.25 * max(pilot_wall - pilot_visits, 0.1)
    measuring = pilot_visits * pilot_jobs  # one side's visits, all jobs together
    jobs = int((budget - 2 * measuring) / (2 * overhead))
    return max(2, min(MAX_JOBS, jobs))


def hardware_check(a_file, b_file):
    """Refuse sides that ran on different hardware or placement (the first job of each)."""
    a, b = (
        machines.hardware_identity(machines.context_of(files.load_result(f)))
        for f in (a_file, b_file)
    )
    if a is None or b is None:
        raise BadInput("a job's result holds no context.xferbench: not an xferbench build")
    differing = [k for k in machines.HARDWARE_FIELDS if a.get(k) != b.get(k)]
    if differing:
        details = "; ".join(f"{k}: {a.get(k)!r} vs {b.get(k)!r}" for k in differing)
        raise BadInput(
            f"sides A and B ran on different hardware or placement ({details}); tools/ab "
            "compares software on one machine"
        )


def merge(side, paths, out, log):
    binary = os.path.join(side.build, "xferbench")
    command = [
        binary,
        f"--xfer_merge={','.join(paths)}",
        f"--benchmark_out={out}",
        "--benchmark_color=false",
    ]
    with open(log, "w") as stream:
        status = subprocess.run(command, stdout=stream, stderr=subprocess.STDOUT).returncode
    if status not in (0, 1) or not os.path.isfile(out):
        raise BadInput(f"merging side {side.label}'s jobs failed (exit {status}): {why(log)}")
    return files.load_result(out)


def software_differences(sides, report_dict):
    """What differs between the sides' software: their settings, then the facts their runs
    recorded (build revision, MPI library, recorded environment, ...)."""
    a, b = sides
    out = []
    if a.build != b.build:
        out.append({"field": "build", "A": a.build, "B": b.build})
    for key in dict.fromkeys(list(a.env) + list(b.env)):
        if a.env.get(key) != b.env.get(key):
            out.append({"field": f"env {key}", "A": a.env.get(key), "B": b.env.get(key)})
    if a.launcher != b.launcher:
        out.append({"field": "launcher", "A": a.launcher, "B": b.launcher})
    recorded = {d["field"] for d in out}
    for d in report_dict["context_diff"]:
        if d["field"] not in recorded and d["field"] not in ("date",):
            out.append({"field": d["field"], "A": d["base"], "B": d["new"]})
    return out


def sides_of(path):
    """compare.py's (base, new) report.Side of a tools/ab document: A and B."""
    document = files.load_result(path)
    ab = machines.mapping(document.get("ab"))
    if ab.get("schema") != SCHEMA:
        raise files.InputError(
            f"{path}: one file is compared only if tools/ab wrote it (no 'ab' object of schema "
            f"{SCHEMA}); give BASE NEW"
        )
    a_document = ab.get("a_result")
    files.check_result_document(f"{path}: ab.a_result", a_document)
    b_document = {k: v for k, v in document.items() if k != "ab"}
    base = report.load_side("base", [f"{path} (A)"], {f"{path} (A)": a_document})
    new = report.load_side("new", [f"{path} (B)"], {f"{path} (B)": b_document})
    return base, new


def head_lines(args, jobs, order, wall):
    a, b = args.sides
    return [
        f"ab: {jobs} jobs per side in ABBA order ({''.join(order)}), {wall:.0f} s; "
        f"flags: {' '.join(shlex.quote(f) for f in args.flags) or '(none)'}",
        f"A: {a.describe()}",
        f"B: {b.describe()}",
    ]


def default_out(root):
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return os.path.join(root, "results", f"ab-{socket.gethostname().split('.')[0]}-{stamp}.json")


def sit(args, root):
    """Run the sitting and judge it: (report, document, order, wall)."""
    out = args.out or default_out(root)
    directory = os.path.splitext(out)[0] + ".jobs"
    os.makedirs(directory, exist_ok=True)
    sitting = Sitting(root, directory, args.flags)
    a, b = args.sides
    by_label = {"A": a, "B": b}
    start = time.monotonic()
    jobs = args.jobs or DEFAULT_JOBS
    if args.time_budget:
        pilot, wall = sitting.run_job(a, DEFAULT_JOBS, "pilot")
        jobs = plan_jobs(args.time_budget - wall, DEFAULT_JOBS, wall, visit_seconds(pilot))
        print(
            f"{PROG}: {jobs} jobs per side fit the time budget "
            f"(pilot job of {DEFAULT_JOBS}: {wall:.1f} s)",
            file=sys.stderr,
        )
    order = abba(jobs)
    for index, label in enumerate(order):
        count = len(sitting.files[label]) + 1
        file, _ = sitting.run_job(by_label[label], jobs, f"job-{index + 1:02d}-{label}{count}")
        sitting.files[label].append(file)
        if index == 1:
            hardware_check(sitting.files["A"][0], sitting.files["B"][0])
    merged = {
        label: merge(
            by_label[label],
            sitting.files[label],
            os.path.join(directory, f"{label.lower()}.json"),
            os.path.join(directory, f"merge-{label.lower()}.log"),
        )
        for label in SIDES
    }
    wall = time.monotonic() - start
    base = report.load_side(
        "base",
        [os.path.join(directory, "a.json")],
        {os.path.join(directory, "a.json"): merged["A"]},
    )
    new = report.load_side(
        "new", [os.path.join(directory, "b.json")], {os.path.join(directory, "b.json"): merged["B"]}
    )
    options = argparse.Namespace(
        metric="time",
        threshold=DEFAULT_THRESHOLD if args.threshold is None else args.threshold,
        alpha=args.alpha,
        filter=None,
        cross_machine=False,
    )
    result = report.build_report(base, new, options, machines.hardware_identity)
    result["ab"] = {
        "jobs_per_side": jobs,
        "order": order,
        "wall_s": round(wall, 1),
        "flags": args.flags,
        "sides": {label: by_label[label].to_dict() for label in SIDES},
        "software_differences": software_differences(args.sides, result),
    }
    document = dict(merged["B"])
    document["ab"] = {
        "schema": SCHEMA,
        "a_result": merged["A"],
        "jobs_per_side": jobs,
        "order": order,
        "wall_s": round(wall, 1),
        "flags": args.flags,
        "sides": {label: by_label[label].to_dict() for label in SIDES},
        "software_differences": result["ab"]["software_differences"],
        "report": result,
    }
    files.write_atomically(PROG, out, json.dumps(document, indent=1, allow_nan=False) + "\n")
    return result, out, order, wall, jobs


def software_lines(result):
    differences = result["ab"]["software_differences"]
    if not differences:
        return ["Software differences: none (an A/A run: both sides the same)."]
    return ["Software differences:"] + [
        f"- {d['field']}: A {d['A']!r}, B {d['B']!r}" for d in differences
    ]


def main(argv, root):
    args = parse_args(argv, root)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        result, out, order, wall, jobs = sit(args, root)
    except (BadInput, files.InputError) as error:
        print(f"{PROG}: error: {one_line(error)}", file=sys.stderr)
        return 2
    result["tool"] = "ab"
    text = render.RENDERERS[args.format](result)
    if args.format == "text":
        verdict, rest = text.split("\n", 1)
        head = head_lines(args, jobs, order, wall) + software_lines(result)
        text = "\n".join([verdict] + head) + "\n" + rest
    sys.stdout.write(text)
    print(f"{PROG}: written to {out}", file=sys.stderr)
    return 1 if result["regressions"] else 0
