#!/usr/bin/env bash
# The two-H200 session of issue 34 (NVLink through NVSwitch), in phases, so a short lease can run
# it over a few calls (build/ and results/ stay while the machine is warm).
#
# usage: docs/results/2026-11-28-h200x2-links/session.sh OUTDIR PHASE...
#   setup      unpack .ompi/pack.tar.xz (a CUDA-aware Open MPI at /tmp/ompi-cuda and the peers at
#              /tmp/peers, built on the CPU machine), and build xferbench against that MPI in build/
#   capture    the machine's link answers (tests/fixtures/links/capture.sh) into OUTDIR/links
#   tests      the GPU tests (ctest -L gpu, XFER_EXPECT_GPU=1: a GPU test that skips fails)
#   runs:N     N default tools/run back to back (OUTDIR/json/run-K.json, the machine file after
#              each in OUTDIR/json/floors-after-K-*.json)
#   checknode  tools/check-node (its own short run) and --from each default run
#   peers:N    N interleaved rounds on one machine: osu_latency / osu_bw / osu_bibw D D at 8 B,
#              1 MiB and 256 MiB, each followed by mpi_cuda_aware ping-pong / stream
#              (--xfer_ack=buffers) / bidir at the same sizes; nccl-tests sendrecv_perf followed by
#              nccl_sendrecv bidir and ping-pong; PyTorch's copy 0->1 and 1->0 at 64 and 256 MiB
#              (docs/results/tools/gpu_crosscheck.py) followed by memcpy_peer p2p:on uni
#   like:N     N more interleaved rounds: nccl-tests sendrecv_perf followed by nccl_sendrecv bidir
#              with one message in flight each way (--xfer_window=1: sendrecv_perf's grouped
#              send and receive), and osu_latency / osu_bw / osu_bibw D D at 8 B and 1 MiB, each
#              followed by its mpi_cuda_aware row
# setup also copies .ompi/floors/*.json (a machine file carried from an earlier call) into
# results/floors when this machine has none, so a fresh machine plans as the last one did.
# OUTDIR gets session.log (every command as "$ ...", its output, "(exit N)"), walls.txt,
# machine.txt and json/.
set -uo pipefail
if [ $# -lt 2 ]; then sed -n '2,22p' "$0" >&2; exit 2; fi
out=$1
shift
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 1
mkdir -p "$out/json"
# shellcheck source=docs/results/tools/lib.sh
source docs/results/tools/lib.sh
mpi=/tmp/ompi-cuda peers=/tmp/peers
mpirun=$mpi/bin/mpirun
export MPIRUN=$mpirun XFER_NO_INSTALL=1 PATH=$mpi/bin:$PATH

next_run() {
  local n=1
  while [ -e "$out/json/run-$n.json" ]; do n=$((n + 1)); done
  echo "$n"
}
xfer2() {  # xfer2 NAME ARGS...: xferbench on 2 ranks, its result in json/NAME.json
  local name=$1
  shift
  step "$name" "$mpirun" -np 2 build/xferbench "$@" --benchmark_color=false \
    --benchmark_out="$out/json/$name.json"
}

for phase in "$@"; do
  case $phase in
    setup)
      log "setup"
      [ -x "$mpirun" ] || step unpack tar xJf .ompi/pack.tar.xz -C /
      step configure cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DMPI_C_COMPILER="$mpi/bin/mpicc" \
        -DMPI_CXX_COMPILER="$mpi/bin/mpicxx" -DMPIEXEC_EXECUTABLE="$mpirun" || exit 1
      step build cmake --build build -j "$(nproc)" || exit 1
      if ! ls results/floors/*.json >/dev/null 2>&1 && ls .ompi/floors/*.json >/dev/null 2>&1; then
        mkdir -p results/floors && cp .ompi/floors/*.json results/floors/
      fi
      { date -u; uname -a; nvidia-smi -L; nvidia-smi topo -m
        nvidia-smi --query-gpu=driver_version --format=csv,noheader
        "$mpirun" --version | head -1; "$mpi/bin/ompi_info" --parsable --all | grep built_with_cuda
        build/xferbench --version; nvcc --version | tail -1
        python3 -c 'import torch; print("torch", torch.__version__)'
        env | grep -E '^(NCCL_|CUDA_|OMPI_MCA_)' | sort; } >>"$out/machine.txt" 2>&1 ;;
    capture)
      log "capture"
      step capture tests/fixtures/links/capture.sh build/xferbench "$out/links" ;;
    tests)
      log "GPU tests"
      XFER_EXPECT_GPU=1 step tests timeout 200 ctest --test-dir build -L gpu --output-on-failure ;;
    runs:*)
      for _ in $(seq 1 "${phase#runs:}"); do
        n=$(next_run)
        log "default run $n"
        step "run-$n" tools/run --benchmark_color=false --benchmark_out="$out/json/run-$n.json"
        for f in results/floors/*.json; do
          [ -f "$f" ] && cp "$f" "$out/json/floors-after-$n-$(basename "$f")"
        done
      done ;;
    checknode)
      log "check-node"
      step check-node tools/check-node --out "$out/json/check-node.json"
      for f in "$out"/json/run-*.json; do
        [ -f "$f" ] && step "check-node-from-$(basename "$f" .json)" tools/check-node --from "$f"
      done ;;
    peers:*)
      for r in $(seq 1 "${phase#peers:}"); do
        log "peers round $r"
        for s in 8 1048576 268435456; do
          osu "osu_latency-DD-$s-$r" "$mpirun" "$peers/omb-cuda" osu_latency "$s" "D D"
        done
        xfer2 "xfer-pingpong-$r" --benchmark_filter='^mpi_cuda_aware/mode:pingpong/' \
          --xfer_sizes=8,1M,256M
        for s in 8 1048576 268435456; do
          osu "osu_bw-DD-$s-$r" "$mpirun" "$peers/omb-cuda" osu_bw "$s" "D D"
        done
        xfer2 "xfer-stream-$r" --benchmark_filter='^mpi_cuda_aware/mode:stream/' \
          --xfer_modes=stream --xfer_ack=buffers --xfer_sizes=8,1M,256M
        for s in 8 1048576 268435456; do
          osu "osu_bibw-DD-$s-$r" "$mpirun" "$peers/omb-cuda" osu_bibw "$s" "D D"
        done
        xfer2 "xfer-bidir-$r" --benchmark_filter='^mpi_cuda_aware/mode:bidir/' \
          --xfer_modes=bidir --xfer_sizes=8,1M,256M
        step "nccl-tests-$r" "$mpirun" -np 2 -x LD_LIBRARY_PATH="$mpi/lib:/usr/local/cuda/lib64" \
          "$peers/nccl-tests/sendrecv_perf" -b 8 \
          -e 268435456 -f 2 -g 1
        xfer2 "xfer-nccl-$r" --benchmark_filter='^nccl_sendrecv/mode:(pingpong|bidir)/' \
          --xfer_modes=pingpong,bidir --xfer_sizes=8,1M,256M
        step "torch-0to1-$r" python3 docs/results/tools/gpu_crosscheck.py --src 0 --dst 1 \
          --sizes 64M,256M
        step "torch-1to0-$r" python3 docs/results/tools/gpu_crosscheck.py --src 1 --dst 0 \
          --sizes 64M,256M
        step "xfer-peer-$r" build/xferbench --benchmark_filter='^memcpy_peer/p2p:on/dir:uni/' \
          --xfer_gpus=0:1,1:0 --xfer_sizes=64M,256M --benchmark_color=false \
          --benchmark_out="$out/json/xfer-peer-$r.json"
      done ;;
    like:*)
      for r in $(seq 1 "${phase#like:}"); do
        log "like-for-like round $r"
        step "nccl-tests-w1-$r" "$mpirun" -np 2 -x LD_LIBRARY_PATH="$mpi/lib:/usr/local/cuda/lib64" \
          "$peers/nccl-tests/sendrecv_perf" -b 8 -e 268435456 -f 2 -g 1
        xfer2 "xfer-nccl-w1-$r" --benchmark_filter='^nccl_sendrecv/mode:(pingpong|bidir)/' \
          --xfer_modes=pingpong,bidir --xfer_window=1 --xfer_sizes=8,1M,256M
        for s in 8 1048576; do
          osu "osu_latency-DD-$s-l$r" "$mpirun" "$peers/omb-cuda" osu_latency "$s" "D D"
        done
        xfer2 "xfer-pingpong-l$r" --benchmark_filter='^mpi_cuda_aware/mode:pingpong/' \
          --xfer_sizes=8,1M
        for s in 8 1048576; do
          osu "osu_bw-DD-$s-l$r" "$mpirun" "$peers/omb-cuda" osu_bw "$s" "D D"
        done
        xfer2 "xfer-stream-l$r" --benchmark_filter='^mpi_cuda_aware/mode:stream/' \
          --xfer_modes=stream --xfer_ack=buffers --xfer_sizes=8,1M
        for s in 8 1048576; do
          osu "osu_bibw-DD-$s-l$r" "$mpirun" "$peers/omb-cuda" osu_bibw "$s" "D D"
        done
        xfer2 "xfer-bidir-l$r" --benchmark_filter='^mpi_cuda_aware/mode:bidir/' \
          --xfer_modes=bidir --xfer_sizes=8,1M
      done ;;
    *)
      echo "session.sh: unknown phase $phase" >&2
      exit 2 ;;
  esac
done
log "done"
