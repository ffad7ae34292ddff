"""Which host, which link: judge a fleet run of xferbench (--xfer_fleet: every pair of a
cluster's ranks, in rounds of disjoint pairs), or run one and its re-test, and name the slow
hosts and links with their intervals (issue 37; the model: tools/xfertools/fleet/model.py).

    fleet judge RESULT.json [--retest RETEST.json ...] [--json VERDICT.json]
                [--rounds-out ROUNDS.json] [--matrix | --no-matrix] [--q Q]
                [--min-host F] [--min-link F] [--no-retest-required] [--topology FILE]
    fleet run [--out DIR] [--passes 1|2] [judge options] -- LAUNCH... XFERBENCH [ARGS...]

A suspect (a host or link slower than the healthy spread allows) is called slow only when a
re-test, measured afresh in rounds of its own, finds it slow again: congestion within one round
is not blamed on a host. judge --rounds-out writes those rounds (xferbench
--xfer_fleet_rounds=ROUNDS.json measures them); judge --retest adds what they measured. run
does all of it: the fleet run, the re-test where there are suspects, the final verdict.

Exit status:
  0    nothing named: no host, rail or link slow (suspects their re-test cleared are not named)
  1    a host, rail or link called slow; the last line, "drain: HOSTLIST", names the hosts
  2    bad input: usage, an unreadable file, a file without a fleet object, a re-test of
       another fleet
  3    not final, nothing called slow yet: suspects not re-tested (--rounds-out writes the
       rounds that re-test them; run re-tests them itself), or the schedule did not finish
       (lost ranks, rounds not measured, a launch that failed): some hosts or links not judged
  4    run: the launch failed, or left no fleet result to judge (its exit status is printed)
  5    no Python has numpy and scipy (docs/python.md)
  130  interrupted (SIGINT or SIGTERM; run passes it to the launch and keeps every file)
1 wins over 3: hosts called slow are named even where other suspects still wait for a re-test.
"""

import argparse
import math
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time

from ..ab.jobs import Sitting, stop_job
from ..core import checkout, interrupt
from ..core.arguments import probability
from ..core.files import InputError, fleet_object
from ..core.text import one_line
from . import model as fleet
from . import report as fleet_report
from . import topology as fleet_topology

PROG = "fleet"
ROOT = checkout.root()
EXIT_LAUNCH_FAILED = 4
MATRIX_HOSTS = 16
# Flags `fleet run` sets on each launch itself.
OWN_FLAGS = ("--benchmark_out", "--xfer_fleet", "--xfer_fleet_rounds")


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(fleet_report.EXIT_BAD_INPUT)


def fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 <= value < 10):
        raise argparse.ArgumentTypeError(f"expected a fraction, 0 to 10 (0.05 is 5%): {text!r}")
    return value


def add_judge_options(parser):
    group = parser.add_argument_group("judging")
    group.add_argument(
        "--q",
        type=probability,
        default=fleet.Q,
        help=f"false-discovery rate over hosts, and over links (default {fleet.Q:g})",
    )
    group.add_argument(
        "--min-host",
        type=fraction,
        default=fleet.MIN_HOST,
        metavar="F",
        help=f"smallest host effect called, a fraction (default {fleet.MIN_HOST:g}: 5%%)",
    )
    group.add_argument(
        "--min-link",
        type=fraction,
        default=fleet.MIN_LINK,
        metavar="F",
        help=f"smallest link excess called, a fraction (default {fleet.MIN_LINK:g}: 25%%)",
    )
    group.add_argument(
        "--no-retest-required",
        action="store_true",
        help="call suspects slow without a re-test (congestion in one round may then be "
        "blamed on a host or a link)",
    )
    group.add_argument(
        "--topology",
        metavar="FILE",
        help="the fleet's switches: Slurm's topology.conf or `scontrol show topology`'s output; "
        "a slow leaf uplink is then named as one, not as its hosts",
    )
    group.add_argument(
        "--matrix",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"print each series' host-by-host matrix (default: up to {MATRIX_HOSTS} hosts)",
    )


def build_parser():
    parser = Parser(
        prog=PROG,
        description=__doc__.split("\n\n")[0],
        epilog=__doc__[__doc__.index("Exit status:") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parser.commands = commands
    judge = commands.add_parser(
        "judge",
        help="judge a fleet result and its re-tests",
        description="Judge RESULT (xferbench --xfer_fleet's result) per series (family and "
        "size): the slow hosts, rails and links with their 95% intervals, each series' "
        "host-by-host matrix, and the hosts to drain as a Slurm hostlist.",
        epilog=__doc__[__doc__.index("Exit status:") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    judge.add_argument("result", metavar="RESULT.json", help="the fleet run's result")
    judge.add_argument(
        "--retest",
        action="append",
        default=[],
        metavar="RETEST.json",
        help="a re-test's result (xferbench --xfer_fleet_rounds) of the same fleet (repeatable)",
    )
    judge.add_argument(
        "--rounds-out",
        metavar="ROUNDS.json",
        help="where suspects remain that were not re-tested, write the rounds that re-test "
        "them (xferbench --xfer_fleet_rounds=ROUNDS.json)",
    )
    judge.add_argument("--json", metavar="VERDICT.json", help="also write the verdicts as JSON")
    add_judge_options(judge)
    run = commands.add_parser(
        "run",
        help="run a fleet, re-test its suspects, judge",
        description="Run LAUNCH (a launcher and xferbench with its flags) with "
        "--xfer_fleet=PASSES --benchmark_out=DIR/fleet.json, judge it; where there are "
        "suspects, write DIR/retest-rounds.json and run LAUNCH again with "
        "--xfer_fleet_rounds=DIR/retest-rounds.json --benchmark_out=DIR/retest.json; judge "
        "both and write DIR/verdict.json. Every file is kept. A launch that fails stops the "
        "run; what its file holds is judged, as incomplete.",
        epilog="example: tools/fleet run --out fleet-0412 -- srun --mpi=pmix -N 64 -n 64 "
        "build/xferbench --benchmark_filter=mpi_host\n\n"
        + __doc__[__doc__.index("Exit status:") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    run.add_argument(
        "--out",
        metavar="DIR",
        help="the folder for the files (default: results/fleet-HOST-TIME); not one that holds "
        "a fleet run already",
    )
    run.add_argument(
        "--passes",
        type=int,
        choices=(1, 2),
        default=2,
        help="passes over every pair (default 2: the second puts other pairs in a round "
        "together, and says how repeatable the verdict is)",
    )
    add_judge_options(run)
    return parser


def parse_args(argv):
    parser = build_parser()
    launch = []
    if argv[:1] == ["run"]:
        if "--" not in argv and not {"-h", "--help"} & set(argv):
            parser.commands.choices["run"].error(
                "give the launch command after --: fleet run [OPTIONS] -- mpirun ... xferbench"
            )
        cut = argv.index("--") if "--" in argv else len(argv)
        argv, launch = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    args.launch = launch
    if args.command == "run":
        run = parser.commands.choices["run"]
        if not launch:
            run.error("the launch command after -- is empty")
        for word in launch:
            if word.split("=", 1)[0] in OWN_FLAGS:
                run.error(f"{word.split('=', 1)[0]} is fleet run's own choice")
        if shutil.which(launch[0]) is None:
            run.error(f"{launch[0]}: no such command")
    return args


def judge_options(args):
    """fleet.judge's options from the command line (args.leaves: main read --topology)."""
    return {
        "q": args.q,
        "min_host": args.min_host,
        "min_link": args.min_link,
        "require_retest": not args.no_retest_required,
        "topology": args.leaves,
    }


def judge_files(args, result, retests, launch_note=None, lost=()):
    """The Judgement of result with its re-tests, the ranks of the `lost` hosts (named by the
    launcher) left unjudged; InputError for bad files."""
    document, notes = fleet_report.combined(result, retests)
    if lost:
        f = document["fleet"]
        ranks = [r for r, h in enumerate(f["host_of"]) if f["hosts"][h] in lost]
        f["lost"] = sorted(set(f.get("lost") or []) | set(ranks))
    try:
        return fleet_report.judge_all(document, notes, launch_note, **judge_options(args))
    except (ValueError, KeyError, TypeError) as error:  # what check_fleet let through
        raise InputError(f"{result}: cannot judge its fleet object: {error}") from None


def retest_text(plan, written=None):
    pairs = sum(len(r) for r in plan["rounds"])
    where = (
        f"written to {written}"
        if written
        else "give --rounds-out FILE, then run xferbench --xfer_fleet_rounds=FILE"
    )
    return f"re-test: {len(plan['rounds'])} rounds, {pairs} pairs settle the suspects ({where})"


def run_judge(args):
    judgement = judge_files(args, args.result, args.retest)
    plan = fleet_report.retest_plan(judgement)
    if plan and args.rounds_out:
        fleet_report.write_json(f"--rounds-out {args.rounds_out}", args.rounds_out, plan)
        print(
            f"{PROG} judge: re-test rounds written to {args.rounds_out} ({plan['why']})",
            file=sys.stderr,
        )
    elif args.rounds_out:
        print(
            f"{PROG} judge: no suspect left to re-test: {args.rounds_out} not written",
            file=sys.stderr,
        )
    extra = retest_text(plan, args.rounds_out) if plan else None
    sys.stdout.write(fleet_report.render(judgement, args.matrix, extra))
    if args.json:
        files = {"result": args.result, "retests": args.retest}
        document = fleet_report.verdict_document(judgement, files)
        fleet_report.write_json(f"--json {args.json}", args.json, document)
    return judgement.status()


# ------------------------------------------------------------------------------- fleet run


def default_out():
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return os.path.join(ROOT, "results", f"fleet-{socket.gethostname().split('.')[0]}-{stamp}")


def say(text):
    print(f"{PROG} run: {one_line(text)}", file=sys.stderr, flush=True)


def launch(sitting, command, log_path):
    """Run command, a signal passed on to it; its output on our stderr (stdout is the
    verdict's) and in log_path, where a launcher that lost a host names it (lost_hosts). Its
    exit status."""
    say(" ".join(shlex.quote(word) for word in command))
    sys.stdout.flush()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        sitting.job = process
        if sitting.stop:  # a signal came as it started
            stop_job(process.pid)
        try:
            for chunk in iter(lambda: process.stdout.read1(65536), b""):
                sys.stderr.buffer.write(chunk)
                sys.stderr.flush()
                log.write(chunk)
            return process.wait()
        finally:
            sitting.job = None


# How launchers name the node they lost: Open MPI's mpirun (a daemon gone silent, a rank killed)
# and Slurm's srun.
LOST_NODE = (
    re.compile(r"Remote daemon:.*? on node (\S+)"),
    re.compile(r"on node (\S+?) exited on signal"),
    re.compile(r"srun: error: (\S+?): task"),
)


def lost_hosts(log_path, hosts):
    """The fleet's hosts the launch's output names as lost, in the order named."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    found = []
    for pattern in LOST_NODE:
        for match in pattern.finditer(text):
            name = match.group(1).rstrip(".,:;")
            if name in hosts and name not in found:
                found.append(name)
    return found


def kept(directory):
    names = sorted(os.listdir(directory))
    return f"kept in {directory}: {', '.join(names) or 'nothing'}"


def has_fleet(path, retest=False):
    """(True, None) if path holds a fleet object to judge (measured pairs; for a re-test, a
    fleet object), else (False, why not)."""
    try:
        if retest:
            fleet_report.load_fleet(path)
        else:
            fleet_report.combined(path, [])
    except InputError as error:
        return False, str(error)
    return True, None


def whole(path):
    """True if path's fleet measured every round it planned and says it is complete: a launch
    that exited non-zero after writing it (MPI_Finalize hung and was cut short: xferbench's
    world.hpp) lost nothing."""
    try:
        found = fleet_object(fleet_report.load_fleet(path))
    except InputError:
        return False
    rounds = found.get("rounds") or {}
    return found.get("incomplete") is None and rounds.get("measured") == rounds.get("planned")


def finish(args, directory, result, retests, launch_note=None, lost=()):
    """The final judgement: printed, DIR/verdict.json written; its exit status."""
    judgement = judge_files(args, result, retests, launch_note, lost)
    plan = fleet_report.retest_plan(judgement)
    extra = None
    if plan:
        left = os.path.join(directory, "retest-rounds-left.json")
        fleet_report.write_json(left, left, plan)
        extra = retest_text(plan, left)
    sys.stdout.write(fleet_report.render(judgement, args.matrix, extra))
    verdict = os.path.join(directory, "verdict.json")
    files = {"result": result, "retests": retests}
    fleet_report.write_json(verdict, verdict, fleet_report.verdict_document(judgement, files))
    say(f"verdict written to {verdict}")
    return judgement.status()


def run_fleet(args):
    directory = os.path.abspath(args.out or default_out())
    result = os.path.join(directory, "fleet.json")
    rounds = os.path.join(directory, "retest-rounds.json")
    retest = os.path.join(directory, "retest.json")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InputError(f"--out {args.out}: not a directory")
    taken = [p for p in (result, retest, rounds) if os.path.exists(p)]
    if taken:
        raise InputError(
            f"--out {directory}: holds a fleet run already ({os.path.basename(taken[0])}); "
            "give another folder"
        )
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise InputError(f"--out {directory}: cannot make it: {error.strerror}") from None
    sitting = Sitting(ROOT, directory, [])
    with sitting.signals():
        first_log = os.path.join(directory, "fleet.log")
        status = launch(
            sitting,
            args.launch + [f"--xfer_fleet={args.passes}", f"--benchmark_out={result}"],
            first_log,
        )
        if sitting.stop:
            say(f"interrupted by {sitting.stop} (the launch exited {status}); {kept(directory)}")
            return interrupt.EXIT_INTERRUPTED
        usable, why = has_fleet(result)
        if status != 0 and usable and whole(result):
            say(f"the launch exited {status} after writing a whole schedule; judging it")
            status = 0
        if status != 0 or not usable:
            say(f"the launch exited {status}; {kept(directory)}")
            if not usable:
                say(f"nothing to judge: {why}")
                return EXIT_LAUNCH_FAILED
            note = f"the launch exited {status}: its result may hold part of the schedule"
            hosts = fleet_object(fleet_report.load_fleet(result))["hosts"]
            lost = lost_hosts(first_log, hosts)
            if lost:
                note += f"; the launcher lost {', '.join(lost)}"
            return finish(args, directory, result, [], note, lost)
        first = judge_files(args, result, [])
        plan = fleet_report.retest_plan(first)
        if plan is None:
            return finish(args, directory, result, [])
        fleet_report.write_json(rounds, rounds, plan)
        say(f"{retest_text(plan, rounds)}: {plan['why']}")
        if sitting.stop:
            say(f"interrupted by {sitting.stop}; {kept(directory)}")
            return interrupt.EXIT_INTERRUPTED
        status = launch(
            sitting,
            args.launch + [f"--xfer_fleet_rounds={rounds}", f"--benchmark_out={retest}"],
            os.path.join(directory, "retest.log"),
        )
        if sitting.stop:
            say(f"interrupted by {sitting.stop} (the re-test exited {status}); {kept(directory)}")
            return interrupt.EXIT_INTERRUPTED
        retests = [retest]
        if status != 0 and whole(retest):
            say(f"the re-test exited {status} after writing all its rounds; judging them")
            status = 0
        if status != 0:  # what it measured counts; suspects it did not reach stay suspects
            usable, why = has_fleet(retest, retest=True)
            say(f"the re-test exited {status}; {kept(directory)}")
            if not usable:
                say(f"the re-test left nothing to judge: {why}")
                retests = []
        return finish(args, directory, result, retests)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if hasattr(sys.stdout, "reconfigure"):  # host names on an ASCII-only stdout
        sys.stdout.reconfigure(errors="backslashreplace")
    try:  # a bad --topology is said before anything is judged or launched
        args.leaves = fleet_topology.read_topology(args.topology) if args.topology else None
        return run_judge(args) if args.command == "judge" else run_fleet(args)
    except InputError as error:
        print(f"{PROG} {args.command}: error: {one_line(error)}", file=sys.stderr)
        return fleet_report.EXIT_BAD_INPUT
