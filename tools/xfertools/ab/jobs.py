"""tools/ab's jobs: a sitting's jobs run one at a time in a directory of their own, each as
tools/run launches one (tools/setup's xfer_job), each side's jobs merged, and the sides judged
as tools/compare.py judges them. SIGINT or SIGTERM stops the job under way and starts no other;
what finished is judged."""

import argparse
import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time

from ..compare import report
from ..core import files
from ..result import machines
from .document import PROG, ab_object, software_differences, write
from .plan import DEFAULT_JOBS, DEFAULT_THRESHOLD, SIDES, abba, pilot_cost, plan_jobs


class BadInput(Exception):
    """One line for stderr; exit status 2."""


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
        planned = run_jobs(sitting, args, by_label, start)
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
    result = judge_sides(args, directory, merged)
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


def run_jobs(sitting, args, by_label, start):
    """The planned ABBA order, its jobs run one at a time into sitting.done until the plan ends,
    a signal stops it or a job leaves no result; the sides' hardware checked after the first
    two."""
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
    return planned


def judge_sides(args, directory, merged):
    """compare.py's report of B's merged jobs against A's, by their jobs."""
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
    return report.build_report(base, new, options, machines.hardware_identity)
