#!/usr/bin/env python3
"""An independent second opinion on xferbench's GPU copy numbers, using PyTorch.

    python3 docs/results/tools/gpu_crosscheck.py [--src 0 --dst 1] [--sizes 64M,128M,256M,512M,1G]

Times GPU src -> GPU dst tensor copies (what memcpy_peer p2p:on measures: PyTorch enables peer
access and copies with cudaMemcpyAsync on the source GPU's stream) and copies between GPU src
and a pinned or pageable host tensor, with CUDA events around a batch of copies, and prints
GB/s (GB = 1e9 bytes) as JSON on stdout. Every figure is the median of --trials batches.

Compare with xferbench (same machine, same sizes):
  peer              memcpy_peer/p2p:on/dir:uni/pair:AtoB
  d2h_pinned + h2d_pinned: the two halves of host_staging/host:pinned/mode:sequential
                    (sequential staging takes about 1 / (1/d2h + 1/h2d))
  staged_pinned_sequential  host_staging/host:pinned/mode:sequential/pair:AtoB (host clock
                    over a batch here, so expect it a little lower)
Needs PyTorch with CUDA; exit status 2 without it.
"""

import argparse
import json
import statistics
import sys
import time

import repo_tools  # noqa: F401 (this folder's: puts the repository's tools/ on sys.path)

from xfertools.core.sizes import parse_sizes


def size_list(text):
    try:
        return parse_sizes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def event_timed(torch, device, copy, reps):
    """Seconds per copy: `reps` copies between two events on `device`'s current stream."""
    with torch.cuda.device(device):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            copy()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e-3 / reps


def host_timed(torch, copy, reps):
    """Seconds per copy by the host clock, from the first call to a full synchronize."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        copy()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / reps


def measure(torch, timer, nbytes, trials, warmup=3):
    reps = max(3, min(50, (4 << 30) // nbytes))
    timer(warmup)
    seconds = statistics.median(timer(reps) for _ in range(trials))
    return round(nbytes / seconds / 1e9, 3)


def measure_size(torch, a, b, nbytes, trials):
    """GB/s of every copy kind at nbytes between GPU a, the host and GPU b (None: no peer
    copies); None if the peer copy arrived wrong."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{a}").fill_(7)
    back = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{a}")
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    pageable = torch.empty(nbytes, dtype=torch.uint8)

    def on_device(copy):
        return measure(torch, lambda r: event_timed(torch, a, copy, r), nbytes, trials)

    def on_host(copy):
        return measure(torch, lambda r: host_timed(torch, copy, r), nbytes, trials)

    row = {
        "d2h_pinned": on_device(lambda: pinned.copy_(src, non_blocking=True)),
        "h2d_pinned": on_device(lambda: back.copy_(pinned, non_blocking=True)),
        "d2h_pageable": on_host(lambda: pageable.copy_(src)),
        "h2d_pageable": on_host(lambda: back.copy_(pageable)),
    }
    if b is None:
        return row
    dst = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{b}")
    row["peer"] = on_device(lambda: dst.copy_(src, non_blocking=True))
    if not torch.equal(dst.cpu(), src.cpu()):
        print(f"gpu_crosscheck: peer copy of {nbytes} bytes arrived wrong", file=sys.stderr)
        return None

    def staged():
        # PyTorch does not order copies through a host tensor: events do, both ways.
        with torch.cuda.device(a):
            pinned.copy_(src, non_blocking=True)
            down = torch.cuda.Event()
            down.record()
        with torch.cuda.device(b):
            torch.cuda.current_stream().wait_event(down)
            dst.copy_(pinned, non_blocking=True)
            up = torch.cuda.Event()
            up.record()
        with torch.cuda.device(a):
            torch.cuda.current_stream().wait_event(up)  # the host buffer is free again

    row["staged_pinned_sequential"] = on_host(staged)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=int, default=0)
    parser.add_argument("--dst", type=int, default=1)
    parser.add_argument("--sizes", type=size_list, default="64M,128M,256M,512M,1G")
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    try:
        import torch  # noqa: PLC0415 (optional dependency, only here)
    except ImportError:
        print("gpu_crosscheck: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_crosscheck: PyTorch sees no CUDA device", file=sys.stderr)
        return 2

    count = torch.cuda.device_count()
    a, b = args.src, args.dst
    two = count >= 2 and a != b and max(a, b) < count
    report = {
        "tool": "gpu_crosscheck",
        "unit": "GB/s (1e9 bytes per second)",
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "devices": [torch.cuda.get_device_name(d) for d in range(count)],
        "src": a,
        "dst": b if two else a,
        "p2p": bool(two and torch.cuda.can_device_access_peer(a, b)),
        "results": {},
    }
    for nbytes in args.sizes:
        row = measure_size(torch, a, b if two else None, nbytes, args.trials)
        if row is None:
            return 1
        report["results"][str(nbytes)] = row
        torch.cuda.empty_cache()  # this size's buffers went with measure_size's frame
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
