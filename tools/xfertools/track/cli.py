"""Track xferbench runs over time: a history of runs per machine, a gate that learns the noise
from it, a trend page, and exports for the trackers users already run (docs/tracking.md).

    track record --history DIR RUN.json...     file runs under their machine identity
    track check  --history DIR RUN.json        judge a run against the earlier runs of its
                                               identity: exit 0 no regression, 1 regression,
                                               2 bad input or no history to judge by
                                               (exit 3: no Python has numpy and scipy, which
                                               check and report need; docs/python.md)
    track report --history DIR -o PAGE.html    the trend page: one self-contained HTML file
    track floor  [--floors DIR] [--job-seconds S,S,...] [--budget SECONDS] RUN.json
                                               add a run merged from 3 or more jobs to this
                                               machine's file: its floors (xferbench
                                               --xfer_floor=auto) and its plan (--xfer_jobs=auto)
    track export --format bencher|github RUN.json [-o OUT]
                                               Bencher Metric Format, or github-action-
                                               benchmark's custom JSON (--metric latency|bandwidth)
    track calibration [--xferbench PATH] [--json OUT] SERIES...
                                               whether a machine's stated intervals are what its
                                               reruns need: each series of back-to-back runs
                                               merged again as tools/run would have; exit 1 when
                                               a target is missed
"""

import argparse
import json
import math
import os
import sys
import tempfile

from ..core import interpreter
from ..core.files import InputError, write_atomically
from ..core.text import one_line
from ..machine import calibration, floors, history
from . import export

PROG = "track"
WINDOW = 30  # earlier runs judged against at most; changepoint.CAP
IDENTITY_HELP = (
    "leave host names out of the machine identity (runs on different hosts of the same make-up "
    "share a history; give it to record and check alike)"
)


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit status: 0 fine, 1 regression (check) or a target missed (calibration), "
        "2 bad input, 3 no Python with numpy "
        "and scipy (check, report). See docs/tracking.md.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_record(commands)
    add_floor(commands)
    add_check(commands)
    add_report(commands)
    add_export(commands)
    add_calibration(commands)
    return parser


def add_record(commands):
    record = commands.add_parser(
        "record",
        help="file runs in the history under their machine identity",
        description="File xferbench result files in the history DIR under their machine "
        "identity (DIR/<identity>/<time>-<commit>.json, plain JSON). A run recorded before "
        "is left as it is. An incomplete run, or a file that is not an xferbench result, is "
        "refused and nothing is written.",
    )
    record.add_argument("--history", required=True, metavar="DIR", help="the history folder")
    record.add_argument("runs", nargs="+", metavar="RUN.json", help="xferbench result files")
    record.add_argument("--any-host", action="store_true", help=IDENTITY_HELP)


def add_floor(commands):
    floor = commands.add_parser(
        "floor",
        help="add a run merged from 3 or more jobs to this machine's file: floors and plan",
        description="Add RUN (merged from 3 or more jobs, as tools/run makes it) to the file "
        "of its machine, DIR/<machine identity>.json (format xferbench-floor/2), and make its "
        "floors, run-level floors, costs and plan again from the last 10 runs it holds. "
        "xferbench on the same machine finds it: a single process adds the floors "
        "(--xfer_floor=auto, the default), a merge the run level, and --xfer_jobs=auto runs "
        "the plan (docs/reproducibility.md).",
    )
    floor.add_argument(
        "--floors",
        default=floors.DEFAULT_DIRECTORY,
        metavar="DIR",
        help=f"the floor folder (default {floors.DEFAULT_DIRECTORY})",
    )
    floor.add_argument(
        "--job-seconds",
        metavar="S,S,...",
        help="each job's wall seconds, launch to exit, in job order (tools/run passes them): "
        "what a job costs beyond its visits",
    )
    floor.add_argument(
        "--budget",
        metavar="SECONDS",
        help="the plan's time for a whole run (default 60; tools/run passes $XFER_BUDGET)",
    )
    floor.add_argument("run", metavar="RUN.json", help="an xferbench result merged from jobs")


def add_check(commands):
    check = commands.add_parser(
        "check",
        help="judge a run against the earlier runs of its machine identity",
        description="Judge RUN against the earlier runs of its machine identity in DIR (the "
        "last --window; RUN itself never, recorded or not): per family, then per row, with "
        "the noise learned from those runs (from 3 on; with 1 or 2, the rows' stated "
        "ci95_pct). Exit status: 0 no regression, 1 regression, 2 bad input or no history "
        "to judge by.",
    )
    check.add_argument("--history", required=True, metavar="DIR", help="the history folder")
    check.add_argument("run", metavar="RUN.json", help="the xferbench result file to judge")
    check.add_argument(
        "--window",
        type=positive_int,
        default=WINDOW,
        metavar="N",
        help=f"judge against at most the last N earlier runs (default: {WINDOW})",
    )
    check.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="text for a log, markdown for a pull request or step summary, json",
    )
    check.add_argument("--any-host", action="store_true", help=IDENTITY_HELP)


def add_report(commands):
    report = commands.add_parser(
        "report",
        help="write the trend page",
        description="Write the trend page: one self-contained HTML file (no script, no "
        "network), a section per machine identity in DIR (or only --identity), each with "
        "its latest run's verdict first, then per path and variant the series over the "
        "runs with the learned noise band and the change points.",
    )
    report.add_argument("--history", required=True, metavar="DIR", help="the history folder")
    report.add_argument("-o", "--output", required=True, metavar="PAGE.html", help="the page")
    report.add_argument(
        "--identity", metavar="KEY", help="only this identity (its folder name, or a prefix)"
    )
    report.add_argument(
        "--window",
        type=positive_int,
        default=WINDOW,
        metavar="N",
        help=f"judge the latest run against at most the last N earlier runs (default: {WINDOW})",
    )


def add_export(commands):
    exporter = commands.add_parser(
        "export",
        help="write a run for Bencher or github-action-benchmark",
        description="Write RUN for a tracker, per row latency and bandwidth with the range "
        "its stated ci95_pct gives; failed rows are left out (and named on stderr), an "
        "incomplete run is refused. bencher: Bencher Metric Format, measures 'latency' (ns) "
        "and 'bandwidth' (GB/s) per row, for `bencher run --adapter json`. github: "
        "github-action-benchmark's custom JSON of one --metric: latency (us; tool "
        "customSmallerIsBetter) or bandwidth (GB/s; tool customBiggerIsBetter). Written to "
        "OUT (suggested: bencher.json, latency.json, bandwidth.json), or stdout.",
    )
    exporter.add_argument(
        "--format",
        required=True,
        choices=export.FORMATS,
        help="bencher: Bencher Metric Format; github: github-action-benchmark's custom JSON",
    )
    exporter.add_argument("run", metavar="RUN.json", help="the xferbench result file")
    exporter.add_argument("-o", "--output", metavar="OUT", help="where to write (default: stdout)")
    exporter.add_argument(
        "--metric",
        choices=list(export.METRICS),
        help="github only: which metric the file holds (default: latency)",
    )


def add_calibration(commands):
    calibrate = commands.add_parser(
        "calibration",
        help="whether a machine's stated intervals are what its reruns need",
        description="For each SERIES (a folder or tar archive of back-to-back runs of one "
        "machine as tools/run leaves them: RUN.json beside RUN.jobs/), merge each run's jobs "
        "again with --xferbench, in the order they ran, from an empty machine file each run is "
        "then added to (as tools/run states run K at that point of the machine's history), and "
        "print per family, for runs 1-3 and runs 4 on: the share of (pair of runs, row) within "
        "their combined ci95, the median stated ci95 over 1.96 x the row's sd between runs "
        "(tight), the median and p90 ci95, and the wall time; then the targets missed "
        "(covered 90-98%, tight <= 1.3, planned median <= unplanned, wall <= 60 s). "
        "docs/reproducibility.md, 'Calibration'.",
    )
    calibrate.add_argument(
        "--xferbench",
        default=os.path.join("build", "xferbench"),
        metavar="PATH",
        help="the xferbench that merges (default build/xferbench)",
    )
    calibrate.add_argument("--json", metavar="OUT", help="also write the reports as JSON")
    calibrate.add_argument("series", nargs="+", metavar="SERIES", help="a folder or tar archive")


def run_calibration(args):
    if not (os.path.isfile(args.xferbench) and os.access(args.xferbench, os.X_OK)):
        raise InputError(f"--xferbench {args.xferbench}: no such program (build it first)")
    for source in args.series:
        if not os.path.exists(source):
            raise InputError(f"{source}: no such folder or archive")
    reports = []
    with tempfile.TemporaryDirectory() as scratch:
        for source in args.series:
            reports.append(calibration.calibrate(source, args.xferbench, scratch))
            print(calibration.render(reports[-1]), flush=True)
    if args.json:
        write_atomically(f"--json {args.json}", args.json, json.dumps(reports, indent=1) + "\n")
    missed = any(not v["met"] for r in reports for v in r["verdicts"])
    return 1 if missed else 0


def statistics_modules():
    """The modules that need numpy and scipy, imported when a command needs them (under
    another Python where this one lacks them: interpreter.require)."""
    interpreter.require(("numpy", "scipy"))
    from ..verdict import decide
    from . import judgement, page, tracker

    return decide, judgement, page, tracker


def run_record(args):
    store = history.History(args.history)
    if os.path.exists(args.history) and not os.path.isdir(args.history):
        store.check_exists()
    loaded = []
    for path in args.runs:  # every file read before anything is written
        run, context = history.load_run(path)
        loaded.append((path, run, history.identity(context, run.figures, args.any_host)))
    for path, run, facts in loaded:
        key, where, written = store.record(run, facts)
        if written:
            count = len(store.digests(key))
            print(f"recorded {path} as {where} ({count} run{'s' * (count != 1)} of {key})")
        else:
            print(f"{path}: already recorded as {where}; nothing written")
    return 0


def identity_runs(store, path, any_host):
    """(run, key, runs of its identity) of RUN; InputError where the history holds none."""
    run, context = history.load_run(path)
    facts = history.identity(context, run.figures, any_host)
    key = history.identity_key(facts)
    known = store.identities()
    if key in known:
        return run, key, store.runs(key)
    if not known:
        raise InputError(
            f"--history {store.root}: no runs recorded: nothing to judge {path} by "
            "(tools/track record adds runs)"
        )
    nearest = min(known, key=lambda k: len(history.differences(known[k], facts)))
    raise InputError(
        f"{path}: no run of its machine identity ({key}) in {store.root}; the nearest, "
        f"{nearest}, differs in " + "; ".join(history.differences(known[nearest], facts))
    )


def run_check(args):
    decide, judgement, _, tracker = statistics_modules()
    store = history.History(args.history)
    run, key, runs = identity_runs(store, args.run, args.any_host)
    earlier = history.earlier_runs(runs, run)
    if not earlier:
        raise InputError(
            f"{args.run}: no earlier run of {key} to judge it by ({len(runs)} recorded, none "
            f"before {run.label()})"
        )
    try:
        decision = tracker.decide_run(run, args.run, key, earlier, args.window)
    except decide.NotJudgeable as e:
        raise InputError(f"{args.run}: {e}") from None
    sys.stdout.write(judgement.RENDERERS[args.format](decision.checked))
    return decision.checked.exit_status()


def run_report(args):
    _, _, page, tracker = statistics_modules()
    store = history.History(args.history)
    if os.path.isdir(args.output):
        raise InputError(f"-o {args.output}: a directory; give the page's file name")
    known = store.identities()
    if args.identity:
        known = {k: v for k, v in known.items() if k.startswith(args.identity)}
        if not known:
            raise InputError(f"--identity {args.identity}: no such identity in {args.history}")
    runs = {key: store.runs(key) for key in known}
    runs = {key: found for key, found in runs.items() if found}
    if not runs:
        raise InputError(f"--history {args.history}: no runs recorded: nothing to report")
    trends = [tracker.trend(key, known[key], found, args.window) for key, found in runs.items()]
    trends.sort(key=lambda t: t.runs[-1].time, reverse=True)  # the latest run's identity first
    write_atomically(f"-o {args.output}", args.output, page.render(trends, args.history))
    print(f"wrote {args.output} ({len(trends)} identit{'ies' if len(trends) != 1 else 'y'})")
    return 0


def seconds_list(option, text, one=False):
    """Positive finite seconds from 'S,S,...' (a single one if `one`); InputError naming the
    option otherwise."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    valid = all(math.isfinite(v) and v > 0 for v in values)
    if values and valid and (len(values) == 1 or not one):
        return values
    what = "one positive number of seconds" if one else "positive seconds separated by commas"
    raise InputError(f"{option} {text!r}: expected {what}")


def run_floor(args):
    job_seconds = (
        seconds_list("--job-seconds", args.job_seconds) if args.job_seconds is not None else None
    )
    budget = seconds_list("--budget", args.budget, one=True) if args.budget is not None else None
    # The standard library only (no numpy): the floor and the plan are written wherever
    # tools/run runs, also under a system Python without numpy (a machine without packages).
    written, content = floors.write_floor(
        args.run,
        args.floors,
        job_seconds,
        budget[0] if budget else floors.plan.DEFAULT_BUDGET_S,
    )
    print(f"floor of this machine written to {written} ({floors.describe(content)})")
    return 0


def run_export(args):
    if args.metric and args.format != "github":
        raise InputError("--metric: only with --format github (bencher holds both metrics)")
    run, _ = history.load_run(args.run)
    if all(figure.error for figure in run.figures.values()):
        raise InputError(f"{args.run}: every row failed: nothing to export")
    text, notes = export.export(run.figures, args.format, args.metric or "latency")
    for note in notes:
        print(f"{PROG} export: {args.run}: {note}", file=sys.stderr)
    if args.output:
        write_atomically(f"-o {args.output}", args.output, text)
    else:
        sys.stdout.write(text)
    return 0


COMMANDS = {
    "record": run_record,
    "check": run_check,
    "report": run_report,
    "floor": run_floor,
    "export": run_export,
    "calibration": run_calibration,
}


def main(argv=None):
    args = build_parser().parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # '±' on an ASCII-only stdout
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        return COMMANDS[args.command](args)
    except InputError as error:
        print(f"{PROG} {args.command}: error: {one_line(error)}", file=sys.stderr)
        return 2
    except interpreter.Missing as error:
        print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
        return interpreter.EXIT_MISSING
