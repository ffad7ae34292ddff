#!/usr/bin/env bash
# The fleet mode (issue 37, item 7) on the two-H200 machine: the schedule over the GPU paths
# between ranks, one rank per GPU. Run after the setup phase of
# docs/results/2026-11-28-h200x2-links/session.sh (a CUDA-aware Open MPI at /tmp/ompi-cuda and
# xferbench built against it in build/).
#
# usage: docs/results/2026-11-28-h200x2-fleet/session.sh OUTDIR REPEATS
#   REPEATS times: xferbench --xfer_fleet=2 over mpi_cuda_aware and nccl_sendrecv (default sizes
#   8 B and 4 MiB, ping-pong) on 2 ranks, its result in OUTDIR/json/fleet-K.json; then once a
#   re-test of the one pair from a rounds file (OUTDIR/json/retest.json), and once the same
#   fleet with --xfer_modes=stream (bandwidth by a window of messages).
# OUTDIR gets session.log (every command, its output, its exit), walls.txt and json/.
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,13p' "$0" >&2; exit 2; fi
out=$1 repeats=$2
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 1
mkdir -p "$out/json"
# shellcheck source=docs/results/tools/lib.sh
source docs/results/tools/lib.sh
mpirun=/tmp/ompi-cuda/bin/mpirun
gpu_paths='^(mpi_cuda_aware|nccl_sendrecv)/'
fleet() {  # fleet NAME ARGS...
  local name=$1
  shift
  step "$name" "$mpirun" -np 2 build/xferbench --benchmark_filter="$gpu_paths" \
    --benchmark_color=false --benchmark_out="$out/json/$name.json" "$@"
}
log "fleet x $repeats"
for k in $(seq 1 "$repeats"); do fleet "fleet-$k" --xfer_fleet=2; done
cat >"$out/json/rounds.json" <<'JSON'
{"format": "xferbench-fleet-rounds/1", "ranks": 2, "rounds": [[[0, 1]]], "why": "the one pair"}
JSON
log "re-test"
fleet retest --xfer_fleet_rounds="$out/json/rounds.json"
log "stream"
fleet fleet-stream --xfer_fleet=2 --xfer_modes=stream
log "done"
