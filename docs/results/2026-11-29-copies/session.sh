#!/usr/bin/env bash
# Issue 43 on a one-GPU H200: the new copy paths (ce_copy, sm_copy, pointer_chase) side by side
# with nvbandwidth v0.8, in about 6 minutes.
#
# usage: docs/results/2026-11-29-copies/session.sh OUTDIR [PHASE...]   (default: all phases)
#   setup      build xferbench (Release, CUDA arch 90) in build/, and nvbandwidth from .peers/
#              (build-nvbandwidth, nvbandwidth-0.8.tar.gz and boost.tar.xz, carried: the GPU
#              machine has no ../shared and reaches no package registry) into OUTDIR/nvbandwidth
#   rounds:N   N interleaved rounds: nvbandwidth at its default buffer (512 MiB), xferbench's
#              matching rows at 512 MiB, nvbandwidth -b 64, xferbench at 64 MiB (every other
#              round in the reverse order, so a drift over the session does not favour one tool)
#   tests      the GPU tests (ctest -L gpu, XFER_EXPECT_GPU=1: a GPU test that skips fails)
#   pack       OUTDIR as one tarball, OUTDIR.tar.xz
# OUTDIR gets session.log (every command as "$ ...", its output, "(exit N)"), walls.txt,
# machine.txt, json/ (xferbench-<size>-<round>.json, nvbandwidth-<size>-<round>.json).
# ratios.py OUTDIR.tar.xz prints xferbench / nvbandwidth per test and size.
set -uo pipefail
if [ $# -lt 1 ]; then sed -n '2,18p' "$0" >&2; exit 2; fi
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- setup rounds:3 tests pack
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 1
mkdir -p "$out/json"
# shellcheck source=docs/results/tools/lib.sh
source docs/results/tools/lib.sh
nvb=$out/nvbandwidth/nvbandwidth

# The nvbandwidth tests compared (README.md says which xferbench row matches each).
TESTS=(host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce
  device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_sm device_to_host_memcpy_sm
  host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm
  device_local_copy host_device_latency_sm)
# xferbench's matching rows: every size of --xfer_sizes (pointer_chase has its own: 8 B a load).
FILTER='^(ce_copy/host:pinned/dir:(h2d|d2h|bi)|ce_copy/dir:local|sm_copy/host:mapped/dir:(h2d|d2h|bi)|sm_copy/dir:local|pointer_chase/host:mapped/span:2MiB)/gpu:0/'

nvbandwidth() {  # nvbandwidth NAME MIB: its JSON in json/NAME.json
  local name=$1 mib=$2 start rc
  echo "\$ $nvb -j -b $mib -t ${TESTS[*]}" >>"$out/session.log"
  start=$(date +%s.%N)
  "$nvb" -j -b "$mib" -t "${TESTS[@]}" >"$out/json/$name.json" 2>>"$out/session.log"
  rc=$?
  echo "(exit $rc)" >>"$out/session.log"
  echo "$name $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') $rc" >>"$out/walls.txt"
}
xfer() {  # xfer NAME SIZE: xferbench's matching rows, one process, in json/NAME.json
  step "$1" build/xferbench --benchmark_filter="$FILTER" --xfer_sizes="$2" \
    --benchmark_color=false --benchmark_out="$out/json/$1.json"
}

for phase in "$@"; do
  case $phase in
    setup)
      log "setup"
      step configure cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 || exit 1
      step build cmake --build build -j "$(nproc)" || exit 1
      # build-nvbandwidth reads nvbandwidth-0.8.tar.gz beside itself.
      step nvbandwidth-build .peers/build-nvbandwidth "$out/nvbandwidth" .peers/boost.tar.xz ||
        exit 1
      { date -u; uname -a; nvidia-smi -L; nvidia-smi topo -m
        nvidia-smi --query-gpu=driver_version,pcie.link.gen.max,pcie.link.width.max --format=csv
        build/xferbench --version; nvcc --version | tail -1
        env | grep -E '^(NCCL_|CUDA_|OMPI_MCA_)' | sort; } >>"$out/machine.txt" 2>&1 ;;
    rounds:*)
      for r in $(seq 1 "${phase#rounds:}"); do
        log "round $r"
        if [ $((r % 2)) -eq 1 ]; then
          nvbandwidth "nvbandwidth-512MiB-$r" 512
          xfer "xferbench-512MiB-$r" 512MiB
          nvbandwidth "nvbandwidth-64MiB-$r" 64
          xfer "xferbench-64MiB-$r" 64MiB
        else
          xfer "xferbench-64MiB-$r" 64MiB
          nvbandwidth "nvbandwidth-64MiB-$r" 64
          xfer "xferbench-512MiB-$r" 512MiB
          nvbandwidth "nvbandwidth-512MiB-$r" 512
        fi
      done ;;
    tests)
      log "GPU tests"
      XFER_EXPECT_GPU=1 step tests timeout 200 ctest --test-dir build -L gpu --output-on-failure ;;
    pack)
      log "pack"
      python3 docs/results/2026-11-29-copies/ratios.py "$out" >"$out/ratios.txt" 2>&1
      tar cf - -C "$(dirname "$out")" "$(basename "$out")" | xz -6 >"$out.tar.xz"
      echo "packed $out.tar.xz ($(du -h "$out.tar.xz" | cut -f1))" ;;
    *) echo "session.sh: unknown phase '$phase'" >&2; exit 2 ;;
  esac
done
