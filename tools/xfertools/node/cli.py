"""Bring-up check of a GPU node: does every path meant to fill its link reach its share of it?

    check-node [--xferbench PATH] [--out FILE] [--args ARGS] [--pcie-share S] ...
    check-node --from RESULT.json [--pcie-share S] ...

Runs a short selection (host_staging pinned sequential and pipelined, memcpy_peer
peer-to-peer one way and both ways, and each GPU's copies host -> device and device -> host,
each way alone, by copy engine and by kernel: ce_copy and sm_copy, at 256 MiB and 1 GiB, over
every ordered pair of the node's GPUs: --xfer_gpus=all), writes an ordinary result file
(tools/compare.py and tools/track read it), and judges it. --from judges a result file already
made instead, e.g. a full tools/run result.

Only the rows meant to fill their link are judged (docs/links.md, "Checking a node"): the
bandwidth-timed variants whose bytes cross only their route's links (host_staging pinned,
memcpy_peer p2p:on, ce_copy pinned and sm_copy, the stream and bidir modes of mpi_cuda_aware,
nccl_sendrecv, mpi_host),
from 256 MiB, where their bandwidth has saturated. Each family, pair by pair, is judged by its
best such row against its share of its link (pct_of_link). Not judged: smaller rows,
timing:latency, pageable and MPI-staged rows, ping-pong between ranks, memcpy_peer p2p:off (a
driver staging through host memory), and rows whose link is unknown.

Default shares: each family's lowest healthy share over recorded H200 runs, less 5 points
(listed below the options). A --KIND-share flag sets one share for every judged family over
that kind of link, including those with no measured default (ce_copy and sm_copy have none
yet: each direction, dir:h2d and dir:d2h, is judged on its own once --pcie-share is given, so a
link slow one way fails by that way's name). Exit status: 0 every judged
family reaches its share; 1 one falls short, a row failed, a link is downtrained or a GPU pair
has peer access off despite an NVLink link (each named), or nothing could be judged; 2 bad
input; 130 interrupted.
"""

import argparse
import math
import os
import shlex
import socket
import subprocess
import sys
import time

from ..core import checkout, fields
from ..core.files import InputError, decode_json, load_result, read_regular_file
from ..core.sizes import format_size
from ..core.text import one_line
from ..result import machines
from . import links

PROG = "check-node"
ROOT = checkout.root()
SELECTION = [
    "--benchmark_filter=^(host_staging/host:pinned/mode:(sequential|pipelined)"
    "|memcpy_peer/p2p:on/dir:(uni|bi))/pair:"
    "|^(ce_copy/host:pinned|sm_copy/host:mapped)/dir:(h2d|d2h)/gpu:",
    "--xfer_sizes=256MiB,1GiB",  # the judged sizes' ends (links.JUDGED_FROM_BYTES up)
    "--xfer_gpus=all",  # every ordered GPU pair (one GPU: host_staging 0 -> 0)
    "--xfer_visits=2",
    "--xfer_max_time=2",
]
# Seconds on one GPU; every ordered pair of 8 GPUs is 56 pairs (not yet timed). A hung GPU must
# not hang the check.
TIMEOUT_S = 600


def share(text):
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a share: {text!r} (e.g. 0.7 or 70%)") from None
    if not math.isfinite(value) or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1 (100%): {text!r}")
    return value


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check that every GPU path meant to fill its link reaches a share of it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=defaults_text()
        + "\nExit status: 0 all judged paths reach their share, 1 some do not (named), "
        "2 bad input.",
    )
    parser.add_argument(
        "--from",
        dest="result",
        metavar="RESULT.json",
        help="judge this result file instead of running xferbench",
    )
    parser.add_argument(
        "--xferbench",
        default=os.path.join(ROOT, "build", "xferbench"),
        help="the xferbench binary (default: build/xferbench)",
    )
    parser.add_argument(
        "--out", help="where the result goes (default: results/check-node-<host>-<time>.json)"
    )
    parser.add_argument(
        "--args",
        default="",
        metavar="ARGS",
        help="more xferbench arguments, one string, after the selection's (e.g. "
        "--args='--xfer_gpus=0:1' checks one pair)",
    )
    for kind in links.KINDS:
        parser.add_argument(
            f"--{kind.lower()}-share",
            type=share,
            metavar="S",
            help=f"share of its link every judged family over {kind} must reach (default: "
            "each family's own, below)",
        )
    return parser


def defaults_text():
    """The default shares and the rule that made them, for --help."""
    lines = [
        f"Default shares (judged from {format_size(links.JUDGED_FROM_BYTES)}: a family's "
        f"lowest healthy share, less {links.MARGIN_POINTS} points; docs/links.md):"
    ]
    for entry in links.HEALTHY:
        gpus = "1 GPU" if entry.gpus == 1 else f"{entry.gpus} GPUs"
        lines.append(
            f"  {entry.rows}, {entry.kind}, {gpus}: {links.default_share(entry):.0%} "
            f"(lowest {entry.lowest}%: {entry.runs})"
        )
    lines.append("  any other judged family: not judged unless its kind's share is given")
    return "\n".join(lines)


def run_selection(args):
    """Runs the selection; returns the result file's path. InputError when it cannot run."""
    if not os.access(args.xferbench, os.X_OK):
        raise InputError(f"--xferbench={args.xferbench}: not an executable (build it first)")
    out = args.out or os.path.join(
        ROOT,
        "results",
        f"check-node-{socket.gethostname().split('.')[0]}-{time.strftime('%Y%m%d-%H%M%S')}.json",
    )
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    command = [args.xferbench, *SELECTION, *shlex.split(args.args), "--benchmark_out=" + out]
    print("check-node: " + " ".join(shlex.quote(c) for c in command), file=sys.stderr)
    try:
        status = subprocess.run(command, timeout=TIMEOUT_S, check=False).returncode
    except subprocess.TimeoutExpired:
        status = "timed out"
    if not os.path.exists(out):
        raise InputError(f"xferbench wrote no result ({status}); see its output above")
    print(f"check-node: result written to {out}", file=sys.stderr)
    return out


def main(argv=None):
    args = build_parser().parse_args(argv)
    overrides = {kind: getattr(args, f"{kind.lower()}_share") for kind in links.KINDS}
    try:
        if args.result:
            document = load_result(args.result)
        else:  # a run with no rows (no GPU here) is a failed check, not bad input
            path = run_selection(args)
            document = decode_json(path, read_regular_file(path, path))
    except InputError as error:
        print(f"{PROG}: error: {one_line(error)}", file=sys.stderr)
        return 2
    if not isinstance(document, dict) or not document.get(fields.BENCHMARKS):
        context = machines.xferbench_context(machines.context_of(machines.mapping(document)))
        skipped = (context or {}).get(fields.SKIPPED) or []
        why = "; ".join(
            f"{s.get('path')}: {s.get('reason')}" for s in skipped if isinstance(s, dict)
        )
        print(f"{PROG}: FAIL no row ran" + (f" ({why})" if why else ""))
        return 1
    result = links.check_node(document, overrides)
    for reached, line in result.verdicts:
        print(f"{PROG}: {'ok  ' if reached else 'FAIL'} {line}")
    for line in result.failures:
        print(f"{PROG}: FAIL {line}")
    short = sum(not reached for reached, _ in result.verdicts)
    if result.unjudged:
        print(
            f"{PROG}: not judged (no share measured for their link; a --KIND-share flag sets "
            f"one): {', '.join(result.unjudged)}"
        )
    if not result.verdicts:
        why = (
            "no row crossed a known link (no GPU, or its links unreadable)"
            if result.linked_rows == 0
            else "no row meant to fill its link, from "
            f"{format_size(links.JUDGED_FROM_BYTES)}, has a share to reach "
            "(docs/links.md: which rows are judged)"
        )
        print(f"{PROG}: FAIL nothing judged: {why}")
        return 1
    if short or result.failures:
        print(
            f"{PROG}: FAIL {short} of {len(result.verdicts)} judged famil"
            f"{'y' if len(result.verdicts) == 1 else 'ies'} short of its share"
            + (f", {len(result.failures)} other failure(s)" if result.failures else "")
        )
        return 1
    print(
        f"{PROG}: ok: {len(result.verdicts)} judged famil"
        f"{'y reaches its' if len(result.verdicts) == 1 else 'ies reach their'} share of "
        f"their link; {result.linked_rows} row(s) crossed a known link"
    )
    return 0
