#!/usr/bin/env bash
# Same-build and planted-slowdown pairs of back-to-back tools/run results (mpi_host ping-pong,
# 8 B .. 16 MiB in steps of 2x, XFER_JOBS jobs each), each pair judged by tools/compare.py.
# Pair k: runs same-k-a and same-k-b of one build; then slow-k-a and slow-k-b, the second with
# --xfer_test_slowdown=mpi_host:10 (every mpi_host time reported 10% longer). One line per
# comparison in counts.txt: its exit status (0 nothing flagged, 1 flagged) and the load average.
#   docs/results/2026-11-26-cpu-compare/run.sh            (PAIRS=10, XFER_JOBS=3 by default)
#   FIRST=9 docs/results/2026-11-26-cpu-compare/run.sh    (pairs 9..PAIRS only, appended)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-$here/runs}
pairs=${PAIRS:-10}
first=${FIRST:-1}
export XFER_JOBS=${XFER_JOBS:-3} XFER_NO_INSTALL=1
mkdir -p "$out"
rows=(--benchmark_filter=mpi_host/mode:pingpong --xfer_sizes=8B:16MiB:x2)
run() { "$root/tools/run" "${rows[@]}" "$@" >/dev/null 2>&1; }
judge() {
  local status=0
  /usr/bin/python3 "$root/tools/compare.py" --format json "$out/$1-a.json" "$out/$1-b.json" \
    >"$out/$1.compare.json" || status=$?
  echo "$1 exit $status load $(cut -d' ' -f1-3 /proc/loadavg)"
}
for k in $(seq "$first" "$pairs"); do
  run --benchmark_out="$out/same-$k-a.json"
  run --benchmark_out="$out/same-$k-b.json"
  judge "same-$k"
  run --benchmark_out="$out/slow-$k-a.json"
  run --xfer_test_slowdown=mpi_host:10 --benchmark_out="$out/slow-$k-b.json"
  judge "slow-$k"
done | tee -a "$out/counts.txt"
