#!/usr/bin/env bash
# Issue 42 on the 2-core CPU VM: SITTINGS sittings of RUNS back-to-back
# `tools/run --benchmark_filter=mpi_host`, each sitting from a fresh machine file.
#
# usage: OUT=DIR [SITTINGS=3] [RUNS=6] XFER_BUILD=build-cpu docs/results/2026-11-29-calibration/cpu.sh
# OUT gets sitting-S/json/run-K.json (its jobs in run-K.jobs/), sitting-S/floors/ (the machine
# file), sitting-S/walls.txt ("run-K SECONDS EXIT LOAD1"), and sitting-S/run-K.log.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
out=${OUT:?OUT=DIR}
export XFER_NO_INSTALL=1 XFER_BUILD=${XFER_BUILD:-$root/build}
for s in $(seq 1 "${SITTINGS:-3}"); do
  dir=$out/sitting-$s
  mkdir -p "$dir/json" "$dir/floors"
  for k in $(seq 1 "${RUNS:-6}"); do
    start=$(date +%s.%N) status=0
    XFER_FLOORS=$dir/floors "$root/tools/run" --benchmark_filter=mpi_host \
      --benchmark_out="$dir/json/run-$k.json" >"$dir/run-$k.log" 2>&1 || status=$?
    echo "run-$k $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') $status $(cut -d' ' -f1 /proc/loadavg)" >>"$dir/walls.txt"
  done
done
