#!/usr/bin/env python3
"""xferbench against nccl-tests and PyTorch, round by round, from a session.sh log.

    nccl_torch_ratios.py SESSION_DIR

Pairs, within each peers round of session.sh (peer first, then xferbench):
  nccl-tests sendrecv_perf (2 ranks, out-of-place)  time per operation, us
      against nccl_sendrecv/mode:bidir               one-way time of a message, us
  The like-for-like operation: with 2 ranks sendrecv_perf's operation is one ncclSend to the
  other rank and one ncclRecv from it in a group, both ranks at once, so a message crosses each
  way at the same time: xferbench's bidir row with one message in flight each way
  (--xfer_window=1). With its default window (64 messages each way in one group) the bidir row
  states the time per message of a window, which small messages share: not the same operation.
  nccl_sendrecv ping-pong (one way at a time) is printed beside it for reference.
  PyTorch copy_ GPU a -> GPU b (docs/results/tools/gpu_crosscheck.py "peer")  GB/s
      against memcpy_peer/p2p:on/dir:uni/pair:atob  GB/s
Prints every round's ratio (xferbench / peer: time for NCCL, bandwidth for copies) and the
median. Standard library only; exit status 2 on a missing session.
"""

import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from peer_ratios import blocks  # noqa: E402 (the session log's commands and outputs)

NCCL_ROW = re.compile(r"^\s+(\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+([0-9.]+)\s")
SIZES = (8, 1048576, 268435456)


def rows(session, command):
    out = next((w.split("=", 1)[1] for w in command if w.startswith("--benchmark_out=")), "")
    path = os.path.join(session, "json", os.path.basename(out))
    if not out or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    return {
        r["name"].replace("/manual_time", ""): r
        for r in document["benchmarks"]
        if r.get("run_type", "iteration") == "iteration" and "GB/s" in r
    }


def main():
    if len(sys.argv) != 2 or not os.path.isfile(os.path.join(sys.argv[1], "session.log")):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    session = sys.argv[1]
    with open(os.path.join(session, "session.log"), encoding="utf-8", errors="replace") as f:
        runs = list(blocks(f.read()))
    nccl, torch, table = None, [], {}
    for command, output in runs:
        words = " ".join(command)
        if "sendrecv_perf" in words:
            nccl = {int(m.group(1)): float(m.group(2)) for m in map(NCCL_ROW.match, output) if m}
        elif "gpu_crosscheck.py" in words:
            doc = json.loads("\n".join(output))
            torch.append(doc)
        elif "xferbench" in words and "nccl_sendrecv" in words and nccl:
            mine = rows(session, command)
            for size in SIZES:
                bidir = mine.get(f"nccl_sendrecv/mode:bidir/bytes:{size}")
                pingpong = mine.get(f"nccl_sendrecv/mode:pingpong/bytes:{size}")
                window = "window 1" if "--xfer_window=1" in command else "window 64"
                if bidir and size in nccl:
                    table.setdefault((f"sendrecv_perf, {window}", size), []).append(
                        (nccl[size], bidir["real_time"], pingpong and pingpong["real_time"])
                    )
            nccl = None
        elif "xferbench" in words and "memcpy_peer" in words and torch:
            mine = rows(session, command)
            for doc in torch:
                a, b = doc["src"], doc["dst"]
                for size, figures in doc["results"].items():
                    row = mine.get(f"memcpy_peer/p2p:on/dir:uni/pair:{a}to{b}/bytes:{size}")
                    if row and figures and figures.get("peer"):
                        table.setdefault((f"PyTorch copy_ {a}->{b}", int(size)), []).append(
                            (figures["peer"], row["GB/s"], None)
                        )
            torch = []
    print(f"{'peer':<26} {'bytes':>10}  {'peer (each round)':<26} {'xferbench (each round)':<26}"
          f" {'ratio':>6}")
    for (peer, size), rounds in sorted(table.items()):
        ratios = [mine / theirs for theirs, mine, _ in rounds]
        extra = ""
        if rounds[0][2] is not None:
            extra = "  ping-pong one way: " + " ".join(f"{r[2]:.4g}" for r in rounds) + " us"
        print(f"{peer:<26} {size:>10}  {' '.join(f'{r[0]:.5g}' for r in rounds):<26} "
              f"{' '.join(f'{r[1]:.5g}' for r in rounds):<26} {statistics.median(ratios):>6.3f}"
              f"{extra}")
    print("ratio: median over rounds of xferbench / peer (NCCL: time, below 1 is faster; "
          "copies: GB/s, above 1 is more)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
