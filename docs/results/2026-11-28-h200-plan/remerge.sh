#!/usr/bin/env bash
# Offline: what a lease's default runs state with the run level the machine file would have
# given each of them. The runs are taken in order; run i's jobs are merged again by a build of
# xferbench (--xfer_merge finds the file of runs 1..i-1 in XFER_FLOORS), and then run i is added
# to that file by tools/track floor with its jobs' seconds from the session's log, as tools/run
# does after each run.
#
# usage: docs/results/2026-11-28-h200-plan/remerge.sh LEASE_JSON_TAR SESSION_LOG_XZ JOBS OUTDIR [XFERBENCH]
#   e.g. remerge.sh lease1-json.tar.xz lease1-session.log.xz 3 /tmp/l1 build-cpu/xferbench
# OUTDIR gets json/ (unpacked), remerged/run-N.json, floors/ (the machine file) and after-N/
# (a copy of it after run N).
set -euo pipefail
tarball=$1 log=$2 jobs=$3 out=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
xferbench=${5:-$root/build/xferbench}
mkdir -p "$out/remerged" "$out/floors"
tar xJf "$tarball" -C "$out"
xz -dc "$log" | grep -o "job [0-9]* of $jobs: exit [0-9]* in [0-9.]* s" | awk '{print $8}' >"$out/seconds.txt"
runs=$(ls "$out"/json/run-*.json | wc -l)
for i in $(seq 1 "$runs"); do
  [ -d "$out/json/run-$i.jobs" ] || continue
  files=$(ls "$out"/json/run-"$i".jobs/job-*.json | paste -sd,)
  XFER_FLOORS=$out/floors "$xferbench" --xfer_merge="$files" --benchmark_format=json \
    --benchmark_out="$out/remerged/run-$i.json" >/dev/null 2>"$out/remerged/merge-$i.log"
  seconds=$(sed -n "$((jobs * i - jobs + 1)),$((jobs * i))p" "$out/seconds.txt" | paste -sd,)
  /usr/bin/python3 "$root/tools/track" floor --floors "$out/floors" --job-seconds "$seconds" \
    "$out/json/run-$i.json"
  mkdir -p "$out/after-$i" && cp "$out"/floors/*.json "$out/after-$i/"
done
