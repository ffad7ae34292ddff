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
import contextlib
import dataclasses
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time

from . import files, interrupt, machines, render, report
from .text import one_line

PROG = "tools/ab"
SCHEMA = "xferbench-ab/1"
SIDES = ("A", "B")
DEFAULT_JOBS = 6
MAX_JOBS = 32
# --time-budget: the most jobs a side (xferbench merges at most 64, as tools/run runs), and
# where in the budget the planned sitting ends: jobs up to 15% slower than the pilot's figures
# then end within 110% of it, and up to 10% faster after 85%. (A job's share of time is fixed
# when it starts, and a merge refuses more jobs than their share, so pairs cannot be added.)
BUDGET_MAX_JOBS = 64
BUDGET_AIM = 0.95
# One side's merge: 0.3-0.5 s for 3 to 5 jobs of the default selection on an H200
# (docs/results/2026-11-26-h200-five-short-jobs); more jobs, more files to read.
MERGE_S = 0.5
MERGE_S_PER_JOB = 0.05
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
    """The jobs of one sitting, in a directory of their own. SIGINT or SIGTERM while it runs
    (signals()) stops the job under way after its visit, as tools/run's, and starts no other."""

    def __init__(self, root, directory, flags):
        self.setup = os.path.join(root, "tools", "setup")
        self.directory = directory
        self.flags = flags
        self.done = []  # (label, name, file) of each finished job, in order
        self.cut = None  # the name of the job a signal cut short
        self.stop = None  # the signal's name, once one came
        self.job = None  # the job under way (its own session)

    @contextlib.contextmanager
    def signals(self):
        """SIGINT and SIGTERM recorded and passed on to the job under way, not raised."""
        previous = {s: signal.signal(s, self.on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def on_signal(self, number, frame):
        self.stop = self.stop or signal.Signals(number).name
        if self.job is not None and self.job.poll() is None:
            stop_job(self.job.pid)

    def run(self, command, env=None, stdout=None, job=True):
        """Runs command in a session of its own (a Ctrl-C to tools/ab's process group does not
        reach it; on_signal passes a signal on to a job); its exit status."""
        errors = subprocess.STDOUT if stdout else None
        process = subprocess.Popen(
            command, env=env, stdout=stdout, stderr=errors, start_new_session=True
        )
        self.job = process if job else None
        if job and self.stop:  # a signal came as it started
            stop_job(process.pid)
        try:
            return process.wait()
        finally:
            self.job = None

    def run_job(self, side, jobs, name):
        """Run one job of side; its result file and wall seconds, the file None where a signal
        cut the job short (kept on disk, not judged). Exits 2 where xferbench refused."""
        file = os.path.join(self.directory, f"{name}.json")
        log = os.path.join(self.directory, f"{name}.log")
        env = dict(os.environ)
        env.update(side.env)
        env["XFER_BUILD"] = side.build
        if side.launcher:
            env["MPIRUN"] = side.launcher
        command = ["bash", "-c", 'source "$0" && xfer_job "$@"', self.setup, str(jobs), file, log]
        with open(log, "w"):  # on disk before the job starts: a signal may cut it at once
            pass
        start = time.monotonic()
        status = self.run(command + self.flags, env=env)
        wall = time.monotonic() - start
        print(f"{PROG}: {name} ({side.label}): exit {status} in {wall:.1f} s", file=sys.stderr)
        if self.stop and status not in (0, 1):
            self.cut = name
            return None, wall
        if status not in (0, 1) or not os.path.isfile(file):
            raise BadInput(f"{name} of side {side.label} failed (exit {status}): {why(log)}")
        return file, wall

    def merge(self, side, paths, out, log):
        """Side's jobs merged (xferbench --xfer_merge) into `out`; its result document. A
        signal meanwhile does not stop it."""
        binary = os.path.join(side.build, "xferbench")
        command = [
            binary,
            f"--xfer_merge={','.join(paths)}",
            f"--benchmark_out={out}",
            "--benchmark_color=false",
        ]
        with open(log, "w") as stream:
            status = self.run(command, stdout=stream, job=False)
        if status not in (0, 1) or not os.path.isfile(out):
            raise BadInput(f"merging side {side.label}'s jobs failed (exit {status}): {why(log)}")
        return files.load_result(out)


def stop_job(session):
    """SIGTERM to the job's xferbench processes on this host (its session), which end their
    visit, agree and keep what they measured; to the whole session where none is found (a
    launcher with no rank here passes it on), as tools/run's stop_jobs."""
    try:
        found = subprocess.run(
            ["pkill", "-TERM", "-s", str(session), "-x", "xferbench"], check=False
        ).returncode
    except OSError:
        found = 1
    if found != 0:
        with contextlib.suppress(OSError):
            os.killpg(session, signal.SIGTERM)


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


@dataclasses.dataclass(frozen=True)
class JobCost:
    """What a job costs, from a pilot job that had a 1/pilot_jobs share of each row's time:
    a fixed part (launch, start-up, set-up and warm-up, pattern checks, tear-down: the pilot's
    wall time less its timed loops) and each row's timed loop, which never takes less than one
    sample however many jobs share the row."""

    pilot_jobs: int
    fixed_s: float
    timed_s: tuple  # per row: the pilot's seconds of timed loop
    sample_s: tuple  # per row: one of its samples' seconds

    def job_s(self, jobs):
        """One job of a sitting of `jobs` a side: a row's share of its time limit, and of its
        precision target, both go as 1 / jobs (support/runner.cpp), down to one sample."""
        share = self.pilot_jobs / jobs
        return self.fixed_s + sum(max(s, t * share) for t, s in zip(self.timed_s, self.sample_s))

    def sitting_s(self, jobs):
        """The jobs of both sides, then the two merges."""
        return 2 * jobs * self.job_s(jobs) + 2 * (MERGE_S + MERGE_S_PER_JOB * jobs)


VISIT_TIMES = ("wall_s", "setup_s", "check_s")  # a visit's; set-up holds its warm-up


def pilot_cost(path, wall, pilot_jobs):
    """A JobCost from a pilot job's result file (its visits' times) and wall seconds."""
    document = files.load_result(path)
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    timed, sample = [], []
    for visits in machines.mapping(xferbench.get("visits")).values():
        for visit in visits if isinstance(visits, list) else []:
            seconds = [visit.get(k, 0) if isinstance(visit, dict) else None for k in VISIT_TIMES]
            if not all(isinstance(s, (int, float)) for s in seconds):
                continue
            loop = max(seconds[0] - seconds[1] - seconds[2], 0.0)
            samples = visit.get("samples")
            timed.append(loop)
            sample.append(loop / samples if isinstance(samples, int) and samples > 1 else loop)
    fixed = max(wall - sum(timed), 0.0)
    return JobCost(pilot_jobs, fixed, tuple(timed), tuple(sample))


def plan_jobs(budget, spent, cost):
    """Jobs a side for a budget of which `spent` seconds (the pilots) are gone: the most, up to
    BUDGET_MAX_JOBS, whose sitting is predicted to end by BUDGET_AIM of the budget; 2 where
    only 2 end within it; None where 2 do not."""
    fitting = [
        jobs
        for jobs in range(2, BUDGET_MAX_JOBS + 1)
        if spent + cost.sitting_s(jobs) <= BUDGET_AIM * budget
    ]
    if fitting:
        return max(fitting)
    return 2 if spent + cost.sitting_s(2) <= budget else None


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


def read_document(path):
    """A tools/ab document as JSON (without a verdict it is no result file)."""
    document = files.decode_json(path, files.read_regular_file(path, path))
    return document if isinstance(document, dict) else {}


def sides_of(path):
    """compare.py's (base, new) report.Side of a tools/ab document: A and B."""
    document = read_document(path)
    ab = machines.mapping(document.get("ab"))
    if ab.get("schema") != SCHEMA:
        raise files.InputError(
            f"{path}: one file is compared only if tools/ab wrote it (no 'ab' object of schema "
            f"{SCHEMA}); give BASE NEW"
        )
    incomplete = machines.mapping(ab.get("incomplete"))
    if ab.get("report") is None and incomplete:
        raise files.InputError(
            f"{path}: no verdict: tools/ab was {incomplete.get('reason', 'stopped')} before "
            "2 jobs a side finished (ab.incomplete)"
        )
    files.check_result_document(path, document)
    a_document = ab.get("a_result")
    files.check_result_document(f"{path}: ab.a_result", a_document)
    b_document = {k: v for k, v in document.items() if k != "ab"}
    base = report.load_side("base", [f"{path} (A)"], {f"{path} (A)": a_document})
    new = report.load_side("new", [f"{path} (B)"], {f"{path} (B)": b_document})
    return base, new


def incomplete_note(path):
    """A line for a tools/ab document whose sitting a signal cut short, else None."""
    ab = machines.mapping(read_document(path).get("ab"))
    incomplete = machines.mapping(ab.get("incomplete"))
    if not incomplete:
        return None
    return (
        f"{path}: an incomplete sitting ({incomplete.get('reason')}): "
        f"{ab.get('jobs_per_side')} jobs a side judged of "
        f"{incomplete.get('jobs_planned', 0) // 2} planned (ab.incomplete)"
    )


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


def budget_jobs(sitting, sides, budget, start):
    """Jobs a side planned for `budget` seconds from `start`, from a pilot job of each side
    (not judged; None where a signal cut one). A job costs what the second pilot cost: the
    first job after a pause can take several times as long (its big buffers touch memory that
    a virtual machine must fetch again: 15.7 s against 4.7 s on the 2-core CPU VM), and the
    sitting's jobs follow one another. BadInput where 2 jobs a side cannot fit."""
    walls = []
    for side in sides:
        pilot, wall = sitting.run_job(side, DEFAULT_JOBS, f"pilot-{side.label}")
        if pilot is None:
            return None
        walls.append(wall)
    cost = pilot_cost(pilot, wall, DEFAULT_JOBS)
    spent = time.monotonic() - start
    jobs = plan_jobs(budget, spent, cost)
    if jobs is None:
        raise BadInput(
            f"--time-budget {budget:g}: 2 jobs a side, the least tools/ab judges, need about "
            f"{spent + cost.sitting_s(2):.0f} s with the pilots (a job {cost.job_s(2):.1f} s); "
            "give at least that"
        )
    print(
        f"{PROG}: {jobs} jobs a side, the sitting about {spent + cost.sitting_s(jobs):.0f} s of "
        f"the {budget:g} s budget (a job {cost.job_s(jobs):.1f} s: {cost.fixed_s:.1f} s start-up "
        f"and set-up, at least {sum(cost.sample_s):.1f} s measuring; pilots "
        f"{', '.join(f'{w:.1f}' for w in walls)} s)",
        file=sys.stderr,
    )
    return jobs


@dataclasses.dataclass
class Outcome:
    """What a sitting leaves: its report (None: no verdict), the document, the order judged."""

    report: dict | None
    out: str
    order: list
    wall: float
    jobs: int
    stopped: str | None  # a line saying how a signal cut the sitting, else None


def cut_lines(sitting, planned, judged):
    """The ab.incomplete object and the line saying how a signal cut the sitting."""
    extra = [(name, "unmatched") for _, name, _ in sitting.done[len(judged) :]]
    if sitting.cut:
        extra.append((sitting.cut, "cut"))
    kept = ", ".join(f"{name} ({what})" for name, what in extra) or "none"
    order = "".join(judged) + "|" + "".join(planned[len(judged) :])
    incomplete = {
        "reason": f"interrupted by {sitting.stop}",
        "jobs_planned": len(planned),
        "jobs_finished": len(sitting.done),
        "order_planned": planned,
        "order_judged": judged,
        "not_judged": [{"job": name, "why": what} for name, what in extra],
    }
    if not planned:
        return incomplete, (
            f"ab: interrupted by {sitting.stop} during the pilots (--time-budget), before any "
            f"judged job; kept in {sitting.directory}: {kept}"
        )
    line = (
        f"ab: interrupted by {sitting.stop}: {len(sitting.done)} of {len(planned)} jobs "
        f"finished; judged {len(judged) // 2} a side, ABBA order cut at {order}; not judged, "
        f"kept in {sitting.directory}: {kept}"
    )
    return incomplete, line


def sit(args, root):
    """Run the sitting and judge it: an Outcome. A signal ends the jobs early; the jobs each
    side finished are judged, equal in number (ABBA's first pairs)."""
    out = args.out or default_out(root)
    directory = os.path.splitext(out)[0] + ".jobs"
    os.makedirs(directory, exist_ok=True)
    sitting = Sitting(root, directory, args.flags)
    a, b = args.sides
    by_label = {"A": a, "B": b}
    start = time.monotonic()
    with sitting.signals():
        jobs = args.jobs or DEFAULT_JOBS
        if args.time_budget:
            jobs = budget_jobs(sitting, args.sides, args.time_budget, start)
        planned = abba(jobs) if jobs else []
        for index, label in enumerate(planned):
            if sitting.stop:
                break
            count = sum(1 for done in sitting.done if done[0] == label) + 1
            name = f"job-{index + 1:02d}-{label}{count}"
            file, _ = sitting.run_job(by_label[label], jobs, name)
            if file is None:
                break
            sitting.done.append((label, name, file))
            if index == 1:
                hardware_check(sitting.done[0][2], sitting.done[1][2])
        judged = [label for label, _, _ in sitting.done[: len(sitting.done) // 2 * 2]]
        incomplete, stopped = None, None
        if sitting.stop and (not planned or len(judged) < len(planned)):
            incomplete, stopped = cut_lines(sitting, planned, judged)
        per_side = len(judged) // 2
        if per_side < 2:  # a signal came first: no verdict
            document = {"ab": ab_object(args, by_label, judged, per_side, 0, None, None)}
            document["ab"]["incomplete"] = incomplete
            write(out, document)
            return Outcome(None, out, judged, time.monotonic() - start, per_side, stopped)
        merged = {
            label: sitting.merge(
                by_label[label],
                [file for side, _, file in sitting.done[: len(judged)] if side == label],
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
        "jobs_per_side": per_side,
        "order": judged,
        "wall_s": round(wall, 1),
        "flags": args.flags,
        "sides": {label: by_label[label].to_dict() for label in SIDES},
        "software_differences": software_differences(args.sides, result),
        "incomplete": incomplete,
    }
    document = dict(merged["B"])
    document["ab"] = ab_object(args, by_label, judged, per_side, wall, merged["A"], result)
    document["ab"]["incomplete"] = incomplete
    write(out, document)
    return Outcome(result, out, judged, wall, per_side, stopped)


def ab_object(args, by_label, order, jobs, wall, a_result, result):
    """The document's "ab" object (schema SCHEMA)."""
    return {
        "schema": SCHEMA,
        "a_result": a_result,
        "jobs_per_side": jobs,
        "order": order,
        "wall_s": round(wall, 1),
        "flags": args.flags,
        "sides": {label: by_label[label].to_dict() for label in SIDES},
        "software_differences": result["ab"]["software_differences"] if result else [],
        "report": result,
    }


def write(out, document):
    files.write_atomically(PROG, out, json.dumps(document, indent=1, allow_nan=False) + "\n")


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
