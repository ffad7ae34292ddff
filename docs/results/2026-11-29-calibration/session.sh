#!/usr/bin/env bash
# Issue 42 on a lent GPU machine: N default tools/run back to back from a fresh machine file,
# with the intervals of the merge that pools the run level over the machine's runs and this one.
#
# usage: docs/results/2026-11-29-calibration/session.sh OUTDIR RUNS
#   unpacks .ompi/ompi-cuda.tar.xz (a CUDA-aware Open MPI built on the CPU machine by
#   tools/build-cuda-aware-mpi --prefix /tmp/ompi-cuda) into /tmp, builds xferbench against it in
#   build/, then runs RUNS default tools/run with XFER_FLOORS=OUTDIR/floors (empty at the start).
# OUTDIR gets session.log, walls.txt, machine.txt and runs.tar.xz (json/run-K.json, its jobs in
# json/run-K.jobs/, the machine file after each run in json/floors-after-K-*.json), packed again
# after every run so that a call cut short still brings back the runs it finished.
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,11p' "$0" >&2; exit 2; fi
out=$1 runs=$2
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 1
mkdir -p "$out/json" "$out/floors"
# shellcheck source=docs/results/tools/lib.sh
source docs/results/tools/lib.sh
mpi=/tmp/ompi-cuda
mpirun=$mpi/bin/mpirun
export MPIRUN=$mpirun XFER_NO_INSTALL=1 PATH=$mpi/bin:$PATH XFER_FLOORS=$out/floors

log "setup"
[ -x "$mpirun" ] || step unpack tar xJf .ompi/ompi-cuda.tar.xz -C /tmp
step configure cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPI_C_COMPILER="$mpi/bin/mpicc" \
  -DMPI_CXX_COMPILER="$mpi/bin/mpicxx" -DMPIEXEC_EXECUTABLE="$mpirun" || exit 1
step build cmake --build build -j "$(nproc)" --target xferbench || exit 1
{ date -u; uname -a; nvidia-smi -L; nproc
  nvidia-smi --query-gpu=driver_version --format=csv,noheader
  "$mpirun" --version | head -1; "$mpi/bin/ompi_info" --parsable --all | grep built_with_cuda
  build/xferbench --version; nvcc --version | tail -1; echo "code: ${XFER_GIT_REVISION:-}"
  env | grep -E '^(NCCL_|CUDA_|OMPI_MCA_)' | sort; } >>"$out/machine.txt" 2>&1

for n in $(seq 1 "$runs"); do
  log "default run $n"
  step "run-$n" tools/run --benchmark_color=false --benchmark_out="$out/json/run-$n.json"
  for f in "$out"/floors/*.json; do
    [ -f "$f" ] && cp "$f" "$out/json/floors-after-$n-$(basename "$f")"
  done
  tar cf - -C "$out" json | xz -T0 -3 >"$out/runs.tar.xz.new" && mv "$out/runs.tar.xz.new" "$out/runs.tar.xz"
  [ -z "${PACK_TO:-}" ] || cp "$out"/{runs.tar.xz,session.log,walls.txt,machine.txt} "$PACK_TO/"
done
log "done"
