#!/usr/bin/env bash
# Issue 45 on a lent GPU machine (Ubuntu 24.04, its own Python): the moved Python tools behave
# as the tree before the move there too, and the commands that run xferbench still do.
#
# usage: docs/results/2026-11-29-python-house/gpu.sh OUTDIR BASE_TOOLS
#   BASE_TOOLS: tools/ of the commit before the move (git archive b8f3479 tools), carried along.
# Builds xferbench in build/ (the image's MPI), then: one default tools/run (tools/setup's build,
# track floor and the plan through the thin tools/track), tools/check-node live, behaviour.sh on
# BASE_TOOLS and on tools/ with compare.sh (under the first Python found with numpy, scipy and
# matplotlib: the image's /usr/bin/python3 has none), and ctest -L tools. OUTDIR gets
# session.log, machine.txt, run.json, check-node.txt, behaviour.txt and ctest-tools.txt.
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,11p' "$0" >&2; exit 2; fi
out=$(realpath -m "$1") base=$(realpath -e "$2") || exit 2
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 1
mkdir -p "$out"
# shellcheck source=docs/results/tools/lib.sh
source docs/results/tools/lib.sh
export XFER_NO_INSTALL=1 XFER_FLOORS=$out/floors OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=docs/results/2026-11-29-python-house

log "build"
step configure cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 || exit 1
step build cmake --build build -j "$(nproc)" || exit 1
{ date -u; uname -a; nvidia-smi -L; nproc; grep PRETTY /etc/os-release
  nvidia-smi --query-gpu=driver_version --format=csv,noheader
  mpirun --version | head -1; build/xferbench --version; cmake --version | head -1
  /usr/bin/python3 --version
  /usr/bin/python3 -c 'import numpy, scipy, matplotlib; print("numpy", numpy.__version__, "scipy", scipy.__version__, "matplotlib", matplotlib.__version__)'
  /usr/bin/python3 -c 'import sys; sys.path.insert(0, "tools"); import xfertools; print("xfertools", xfertools.__version__)'
  grep -m1 CMAKE_PROJECT_VERSION: build/CMakeCache.txt; echo "code: ${XFER_CODE:-not given}"; } >>"$out/machine.txt" 2>&1

log "default run"
step run tools/run --benchmark_color=false --benchmark_out="$out/run.json"
log "check-node"
tools/check-node --out "$out/check-node.json" >"$out/check-node.txt" 2>&1
echo "exit $?" >>"$out/check-node.txt"
log "behaviour"
for PYTHON in /usr/bin/python3 "$(command -v python3)" /opt/torch/.venv/bin/python3; do
  "$PYTHON" -c 'import numpy, scipy, matplotlib' 2>/dev/null && break
done
export PYTHON
echo "behaviour under $PYTHON: $("$PYTHON" -c 'import sys, numpy, scipy, matplotlib; print(sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__, "matplotlib", matplotlib.__version__)')" >>"$out/machine.txt" 2>&1
XFERBENCH=$PWD/build/xferbench bash "$here/behaviour.sh" "$base" /tmp/house-before >>"$out/session.log" 2>&1
XFERBENCH=$PWD/build/xferbench bash "$here/behaviour.sh" tools /tmp/house-after >>"$out/session.log" 2>&1
bash "$here/compare.sh" /tmp/house-before /tmp/house-after >"$out/behaviour.txt" 2>&1
echo "exit $?" >>"$out/behaviour.txt"
log "ctest -L tools"
ctest --test-dir build -L tools -j 8 --output-on-failure --timeout 600 >"$out/ctest-tools.txt" 2>&1
echo "exit $?" >>"$out/ctest-tools.txt"
log "done"
