#!/usr/bin/env bash
# The CPU targets of issue 28 with the machine's plan (tools/run's default since the plan):
# 1. LEARN default tools/run runs of mpi_host ping-pong 8 B .. 16 MiB (x2 steps) build this
#    machine's file (results/floors: history, components, plan); the first 3 run 3 jobs each,
#    later ones as many as the plan says.
# 2. PAIRS same-build pairs (same-k-a, same-k-b) and planted pairs (slow-k-a, then slow-k-b with
#    --xfer_test_slowdown=mpi_host:10), each judged by tools/compare.py. The planted run reads
#    the machine file but writes to a scratch copy, so a planted slowdown never enters the
#    history that later intervals and plans come from.
# 3. SINGLES single `mpirun -np 2 xferbench` runs of mpi_host 8 B .. 16 MiB (x4 steps) with the
#    machine's floor (the file the runs above wrote; none of these runs is in it).
# One line per step in counts.txt (name, exit status, seconds, load average).
#   OUT=/tmp/cpu-planned docs/results/2026-11-28-cpu-planned/run.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-$here/runs}
learn=${LEARN:-4} pairs=${PAIRS:-10} singles=${SINGLES:-4}
export XFER_NO_INSTALL=1 XFER_BUILD=${XFER_BUILD:-$root/build}
floors=$out/floors
mkdir -p "$out"
rows=(--benchmark_filter=mpi_host/mode:pingpong --xfer_sizes=8B:16MiB:x2)
note() { echo "$1 exit $2 seconds $3 load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/counts.txt"; }
run() {  # NAME FLOORS [FLAG...]
  local name=$1 dir=$2 start status=0
  shift 2
  start=$(date +%s.%N)
  XFER_FLOORS=$dir "$root/tools/run" "${rows[@]}" --benchmark_out="$out/$name.json" "$@" \
    >"$out/$name.log" 2>&1 || status=$?
  note "$name" "$status" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
}
judge() {
  local status=0
  /usr/bin/python3 "$root/tools/compare.py" --format json "$out/$1-a.json" "$out/$1-b.json" \
    >"$out/$1.compare.json" || status=$?
  note "$1" "$status" 0
}
for k in $(seq 1 "$learn"); do run "learn-$k" "$floors"; done
for k in $(seq 1 "$pairs"); do
  run "same-$k-a" "$floors"
  run "same-$k-b" "$floors"
  judge "same-$k"
  run "slow-$k-a" "$floors"
  rm -rf "$out/scratch" && cp -r "$floors" "$out/scratch"
  run "slow-$k-b" "$out/scratch" --xfer_test_slowdown=mpi_host:10
  judge "slow-$k"
done
for k in $(seq 1 "$singles"); do
  start=$(date +%s.%N) status=0
  XFER_FLOORS=$floors OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to numa -np 2 "$XFER_BUILD/xferbench" \
    --benchmark_filter=mpi_host --xfer_sizes=8B:16MiB:x4 --benchmark_out="$out/single-$k.json" \
    >"$out/single-$k.log" 2>&1 || status=$?
  note "single-$k" "$status" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
done
