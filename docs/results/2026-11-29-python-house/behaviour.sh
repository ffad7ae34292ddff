#!/bin/bash
# behaviour.sh TOOLS_DIR OUT_DIR: runs the Python command-line tools of TOOLS_DIR (compare.py,
# plot.py, track, ab, fleet, check-node, calibrate.py) through fixed cases on the recorded
# inputs of the checkout that holds this script (tests/fixtures, docs/results tarballs) and
# writes what they show to OUT_DIR: per case CASE.txt (the command, stdout, "--- stderr",
# stderr, "exit N") and CASE.NAME for each file the tool wrote (images with CASE.NAME.info:
# bytes, sha256, pixel size). Two trees behave alike when `diff -r OUT1 OUT2` is empty
# (compare.sh OUT1 OUT2 says where they differ).
# track calibration merges with an xferbench: $XFERBENCH, else build/xferbench of this
# checkout; give both sides the same binary (without one those two cases say "skipped").
# The tools run under $PYTHON (default /usr/bin/python3: the one tools/setup equips); Open MPI's
# OMPI_MCA_* settings of the caller reach the merges (a GPU image sets some it needs).
# Works in /tmp/xfer-behaviour-work (removed first and at the end): do not run two at once.
set -u
if [ $# -ne 2 ] || [ "$1" = --help ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  [ "${1:-}" = --help ] && exit 0 || exit 2
fi
TOOLS=$(realpath -e "$1") || { echo "behaviour.sh: no such folder: $1" >&2; exit 2; }
OUT=$(realpath -m "$2")
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=/tmp/xfer-behaviour-work   # a fixed path: any path a tool prints is the same both sides
XB=${XFERBENCH:-$root/build/xferbench}
[ -d "$root/tests/fixtures" ] || { echo "behaviour.sh: $root: no tests/fixtures (run the copy in docs/results/<folder>/ of a checkout)" >&2; exit 2; }
for tool in compare.py plot.py track ab fleet check-node calibrate.py; do
  [ -f "$TOOLS/$tool" ] || { echo "behaviour.sh: $TOOLS/$tool: no such file" >&2; exit 2; }
done
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/cases.txt" ]; then
  echo "behaviour.sh: $OUT holds files but no cases.txt: not replacing it" >&2; exit 2
fi
rm -rf "$work" "$OUT" && mkdir -p "$work" "$OUT" || exit 2
[ "${KEEP_WORK:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
start=$SECONDS

# One environment for every tool: nothing of the caller's (XFER_BUILD, MPIRUN, XFER_PYTHON,
# PYTHONPATH, COLUMNS, TZ, MPLBACKEND, ...) reaches them. COLUMNS fixes argparse's wrapping.
# Images: matplotlib stamps SVG and PDF with the time and SVG ids with random salt;
# SOURCE_DATE_EPOCH=0 and svg.hashsalt (a matplotlibrc that sets nothing else) make them
# byte-reproducible; PNG is reproducible as is. PYTHONHASHSEED=0: a set's order is then fixed.
printf 'svg.hashsalt: xferbench-behaviour\n' > "$work/matplotlibrc"
PY=${PYTHON:-/usr/bin/python3}
mapfile -t MCA < <(env | grep '^OMPI_MCA_' || true)
ENV=(env -i "${MCA[@]}" PATH=/usr/local/bin:/usr/bin:/bin HOME="${HOME:-/root}" LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
     COLUMNS=80 LINES=24 PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
     SOURCE_DATE_EPOCH=0 MATPLOTLIBRC="$work/matplotlibrc"
     OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
# matplotlib's first use can build its font cache and say so on stderr: do that here
"${ENV[@]}" "$PY" -c 'import matplotlib.pyplot' > /dev/null 2>&1

# The inputs, copied and unpacked under $work; every case runs in a folder of $work with
# relative paths, and writes its files to ./out/ (collected into $OUT after the case).
R=$root/docs/results
mkdir -p "$work/fx" "$work/fleet" "$work/ab" "$work/cal" "$work/track"
cp -r "$root/tests/fixtures/." "$work/fx/"
tar xJf "$R/2026-11-28-h200x2-fleet/raw.tar.xz" -C "$work/fleet"   # as judge-recorded.sh
tar xJf "$R/2026-11-28-fleet-bed/raw.tar.xz" -C "$work/fleet"
tar xJf "$R/2026-11-26-h200-ab/json.tar.xz" -C "$work/ab" aa.json eager-1.json eager-2.json slow5.json
cp "$R/2026-11-29-calibration/h200-runs-1.tar.xz" "$work/cal/"
tar xJf "$R/2026-11-29-calibration/cpu-sitting-1.tar.xz" -C "$work/cal"
tar xJf "$R/2026-11-29-calibration/h200-runs-1.tar.xz" -C "$work/track"   # json/run-1..8.json
: > "$OUT/cases.txt"

info() {  # FILE: bytes, sha256 and, for an image, its size
  /usr/bin/python3 - "$1" <<'EOF'
import hashlib, re, struct, sys
data = open(sys.argv[1], "rb").read()
line = f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"
if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
    line += ", PNG %d x %d px" % struct.unpack(">II", data[16:24])
elif data.lstrip()[:5] in (b"<?xml", b"<svg "):
    m = re.search(rb'<svg[^>]*?width="([^"]*)"[^>]*?height="([^"]*)"', data)
    line += ", SVG " + (m.group(1).decode() + " x " + m.group(2).decode() if m else "(no size)")
elif data[:5] == b"%PDF-":
    m = re.search(rb"/MediaBox\s*\[([^\]]*)\]", data)
    line += ", PDF MediaBox [" + (m.group(1).decode().strip() if m else "?") + "]"
print(line)
EOF
}

run() {  # CASE TOOL ARGS...: run TOOL from the current folder; record it as OUT/CASE.*
  local case=$1 tool=$2 rc f; shift 2
  rm -rf out && mkdir out
  { printf '$ tools/%s' "$tool"; for f in "$@"; do  # the command, quoted where needed
      if [[ $f =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then printf ' %s' "$f"
      else printf " '%s'" "$f"; fi   # (no argument here holds a ')
    done; printf '\n'; } > "$OUT/$case.txt"
  "${ENV[@]}" timeout 300 "$PY" "$TOOLS/$tool" "$@" \
    > "$work/stdout" 2> "$work/stderr" < /dev/null
  rc=$?
  for f in stdout stderr; do
    [ $f = stderr ] && echo "--- stderr" >> "$OUT/$case.txt"
    cat "$work/$f" >> "$OUT/$case.txt"
    [ -s "$work/$f" ] && [ -n "$(tail -c 1 "$work/$f")" ] && echo "[no newline at end]" >> "$OUT/$case.txt"
  done
  echo "exit $rc" >> "$OUT/$case.txt"
  echo "$case exit $rc" >> "$OUT/cases.txt"
  for f in $(cd out && find . -type f | sort); do  # the files the tool wrote
    f=${f#./}
    cp "out/$f" "$OUT/$case.${f//\//_}"
    case $f in *.png|*.svg|*.pdf) info "out/$f" > "$OUT/$case.${f//\//_}.info" ;; esac
  done
  rm -rf out
}

listing() {  # CASE DIR: each file under DIR (of the current folder) with its sha256
  (find "$2" -type f | sort | xargs -r sha256sum) > "$OUT/$1.txt"
}

# ---- --help of every command and sub-command --------------------------------------------
cd "$work/fx"
for t in compare.py plot.py track ab fleet check-node calibrate.py; do run "help-$t" "$t" --help; done
for s in record check report floor export calibration; do run "help-track-$s" track "$s" --help; done
for s in judge run; do run "help-fleet-$s" fleet "$s" --help; done   # (run: exit 2 before 2769c8b)

# ---- compare.py ---------------------------------------------------------------------------
cd "$work/fx/compare"
A=real_mpi_host_a.json B=real_mpi_host_b.json
run compare-mpi-host compare.py $A $B
run compare-mpi-host-markdown compare.py --format markdown $A $B
run compare-mpi-host-json compare.py --format json $A $B
run compare-merged compare.py real_merged_a.json real_merged_b.json
run compare-merged-markdown compare.py --format markdown real_merged_a.json real_merged_b.json
run compare-merged-json compare.py --format json real_merged_a.json real_merged_b.json
run compare-merged-latency-threshold compare.py --metric latency --threshold 10 --alpha 0.05 \
  real_merged_a.json real_merged_b.json
run compare-pooled compare.py --base real_merged_a.json $A --new real_merged_b.json $B
run compare-filter compare.py --filter 'bytes:(8|4096)$' real_merged_a.json real_merged_b.json
run compare-cross-machine compare.py --cross-machine --metric bandwidth $A xferbench_h200_node1.json
run compare-ci-single compare.py ci_single_base.json ci_single_new.json
run compare-ci-hostile compare.py ci_single_base.json ci_hostile_new.json
run compare-modes compare.py modes_legacy.json modes_modern.json
run compare-aggregates compare.py xferbench_aggregates_only.json xferbench_h200_node1.json
run compare-plain-gbench compare.py gb_1.7.1_error_occurred.json gb_1.8.3_skipped.json
run compare-plain-gbench-json compare.py --format json gb_1.7.1_error_occurred.json gb_1.8.3_skipped.json
run bad-compare-flag compare.py --bogus $A $B
run bad-compare-not-json compare.py not_json.json $A
run bad-compare-no-benchmarks compare.py no_benchmarks.json $A
run bad-compare-nothing-in-common compare.py nonfinite_tokens.json $A
run bad-compare-missing compare.py absent.json $A
run bad-compare-one-file-not-ab compare.py ../ab/h200-second-job-of-3.json
# a tools/ab document re-judged: its side A against its side B (2026-11-26-h200-ab)
cd "$work/ab"
for d in aa eager-1 eager-2 slow5; do run "compare-ab-$d" compare.py $d.json; done
run compare-ab-slow5-markdown compare.py --format markdown slow5.json
run compare-ab-slow5-json compare.py --format json slow5.json
run compare-ab-slow5-threshold compare.py --threshold 5 --alpha 0.05 --filter 'bytes:(8|65536)$' slow5.json

# ---- ab (it runs builds: only what it answers without running one) ----------------------
run bad-ab-jobs ab --jobs 1
run bad-ab-jobs-and-budget ab --jobs 4 --time-budget 60
run bad-ab-no-build ab --a-build no-such-build --jobs 2

# ---- track --------------------------------------------------------------------------------
cd "$work/track"   # json/run-1..8.json: 8 back-to-back merged runs of one H200 (2026-11-29)
run track-record-1-7 track record --history hist json/run-{1,2,3,4,5,6,7}.json
run track-check track check --history hist json/run-8.json
run track-check-markdown track check --history hist --format markdown json/run-8.json
run track-check-json track check --history hist --format json json/run-8.json
run track-check-window track check --history hist --window 3 json/run-8.json
run track-record-8 track record --history hist json/run-8.json
run track-record-8-again track record --history hist json/run-8.json
cp ../fx/track/*.json .   # a second identity: one run, and it again 200% slower
run track-record-fixture track record --history hist mpi_host_repetitions.json
run track-check-regression track check --history hist mpi_host_repetitions_slowdown_200pct.json
run track-check-regression-json track check --history hist --format json \
  mpi_host_repetitions_slowdown_200pct.json
run track-record-any-host track record --history hist-any --any-host json/run-{1,2,3}.json
run track-check-any-host track check --history hist-any --any-host json/run-8.json
run track-report track report --history hist -o out/page.html
run track-report-identity track report --history hist --identity no-gpu --window 3 -o out/page.html
listing track-history hist
listing track-history-any-host hist-any
run track-export-bencher track export --format bencher json/run-8.json -o out/bencher.json
run track-export-github track export --format github json/run-8.json -o out/latency.json
run track-export-github-bandwidth track export --format github --metric bandwidth json/run-8.json
run track-export-failed-row track export --format bencher ../fx/plot/host_staging_failed_row.json
run track-floor-1 track floor --floors floors json/run-1.json
run track-floor-2 track floor --floors floors json/run-2.json
run track-floor-3 track floor --floors floors json/run-3.json
cp floors/*.json "$OUT/track-floor-3.floor.json"
run track-floor-4 track floor --floors floors --job-seconds 12.5,11.0,11.2,11.9 --budget 90 \
  json/run-4.json
cp floors/*.json "$OUT/track-floor-4.floor.json"
listing track-floors floors
run bad-track-no-command track
run bad-track-bogus-command track bogus
run bad-track-record-not-json track record --history hist ../fx/compare/not_json.json
run bad-track-check-no-history track check --history no-such-dir json/run-8.json
run bad-track-check-other-machine track check --history hist ../fx/compare/real_mpi_host_a.json
run bad-track-report-no-history track report --history no-such-dir -o out/page.html
run bad-track-floor-single-job track floor --floors floors-bad mpi_host_repetitions.json
run bad-track-export-not-json track export --format bencher ../fx/compare/not_json.json
run bad-track-export-format track export --format csv json/run-8.json

# ---- track calibration: series of back-to-back runs merged again -------------------------
cd "$work/cal"
run bad-track-calibration-no-xferbench track calibration --xferbench no-such-xferbench sitting-1
run bad-track-calibration-no-series track calibration --xferbench no-such-xferbench no-such-series
if [ -x "$XB" ]; then
  cp "$XB" "$work/xferbench"   # not under test: the same binary both sides
  run track-calibration-cpu track calibration --xferbench ../xferbench --json out/report.json sitting-1
  run track-calibration-h200-archive track calibration --xferbench ../xferbench \
    --json out/report.json h200-runs-1.tar.xz
else
  echo "behaviour.sh: no xferbench at $XB (set XFERBENCH): track calibration cases skipped" >&2
  for c in track-calibration-cpu track-calibration-h200-archive; do
    echo "skipped: no xferbench" > "$OUT/$c.txt"; echo "$c skipped" >> "$OUT/cases.txt"
  done
fi

# ---- fleet --------------------------------------------------------------------------------
cd "$work/fleet"   # the two-H200 fleet (call-1..3) and the bed (example-slowed) together
# exactly the judgements of docs/results/2026-11-29-fleet-power/judge-recorded.sh
for f in call-*/fleet/json/fleet-*.json; do run "fleet-judge-$(echo "$f" | tr / _)" fleet judge "$f"; done
for c in call-1 call-2; do
  run "fleet-judge-$c-retest" fleet judge "$c/fleet/json/fleet-1.json" --retest "$c/fleet/json/retest.json"
done
run fleet-judge-bed fleet judge example-slowed/fleet.json --retest example-slowed/retest.json
run fleet-judge-bed-first fleet judge example-slowed/fleet.json
# and what judge writes, and its other flags
run fleet-judge-bed-first-files fleet judge example-slowed/fleet.json \
  --rounds-out out/rounds.json --json out/verdict.json
run fleet-judge-bed-files fleet judge example-slowed/fleet.json --retest example-slowed/retest.json \
  --rounds-out out/rounds.json --json out/verdict.json
run fleet-judge-bed-no-matrix fleet judge example-slowed/fleet.json --retest example-slowed/retest.json --no-matrix
run fleet-judge-bed-no-retest-required fleet judge example-slowed/fleet.json --no-retest-required
run fleet-judge-bed-strict fleet judge example-slowed/fleet.json --retest example-slowed/retest.json \
  --q 0.01 --min-host 0.1 --min-link 0.5 --matrix
run fleet-judge-call-1-files fleet judge call-1/fleet/json/fleet-1.json --json out/verdict.json \
  --rounds-out out/rounds.json
run fleet-judge-call-3 fleet judge call-3/fleet-run/fleet.json --json out/verdict.json
# the bed's 8 hosts under two leaf switches (as tests/tools/test_fleet_tool.py)
printf 'SwitchName=s0 Nodes=nodeA,nodeB,nodeC,nodeD\nSwitchName=s1 Nodes=nodeE,nodeF,nodeG,nodeH\nSwitchName=spine Switches=s[0-1]\n' > topology.conf
printf 'SwitchName=s1 Nodes=nodeA,nodeB\nSwitchName=s2 Nodes=node[A-B]\n' > bad-topology.conf
run fleet-judge-bed-topology fleet judge example-slowed/fleet.json --no-retest-required --topology topology.conf
run fleet-judge-bed-topology-retest fleet judge example-slowed/fleet.json --retest example-slowed/retest.json \
  --topology topology.conf --json out/verdict.json
run bad-fleet-no-command fleet
run bad-fleet-judge-missing fleet judge no-such-fleet.json
run bad-fleet-judge-not-fleet fleet judge ../fx/compare/real_mpi_host_a.json
run bad-fleet-judge-topology fleet judge example-slowed/fleet.json --topology bad-topology.conf
run bad-fleet-judge-no-topology fleet judge example-slowed/fleet.json --topology no-such.conf
run bad-fleet-judge-other-retest fleet judge example-slowed/fleet.json --retest call-1/fleet/json/retest.json
run bad-fleet-judge-q fleet judge example-slowed/fleet.json --q 2
run bad-fleet-run-no-launch fleet run --out out/run

# ---- plot.py ------------------------------------------------------------------------------
cd "$work/fx"
run plot-sweep-png plot.py plot/mpi_host_sweep.json -o out/sweep.png
run plot-modes-svg plot.py plot/exchange_modes_4rank.json -o out/modes.svg
run plot-modes-pdf plot.py plot/exchange_modes_4rank.json --panels none -o out/modes.pdf
run plot-staged-linear plot.py plot/mpi_staged_modes_2rank.json --panels path --bandwidth-axis linear \
  -o out/staged.png
run plot-failed-row plot.py plot/host_staging_failed_row.json -o out/failed.png
run plot-overlay-reference plot.py check-node/h200x2-default-run.json check-node/h200-default-run.json \
  --filter '^host_staging/host:pinned' --reference -o out/overlay.png
run plot-matrix-text plot.py plot/memcpy_peer_allpairs_4gpu.json --matrix
run plot-matrix-text-1mib plot.py plot/memcpy_peer_allpairs_4gpu.json --matrix --size 1MiB \
  --variant p2p:off/dir:uni
run plot-matrix-text-file plot.py plot/memcpy_peer_allpairs_4gpu.json --matrix --text -o out/matrix.txt
run plot-matrix-png plot.py plot/memcpy_peer_allpairs_4gpu.json --matrix --size 256MiB -o out/matrix.png
run bad-plot-missing plot.py no-such.json -o out/x.png
run bad-plot-size plot.py plot/memcpy_peer_allpairs_4gpu.json --matrix --size 3MiB
run bad-plot-variant plot.py plot/memcpy_peer_allpairs_4gpu.json --matrix --variant p2p:off/dir:bi
run bad-plot-filter plot.py plot/mpi_host_sweep.json --filter nomatch -o out/x.png
run bad-plot-not-json plot.py compare/not_json.json -o out/x.png
cd "$work/fleet"
run plot-fleet-bed-verdict plot.py example-slowed/fleet.json --verdict example-slowed/verdict.json -o out/fleet.png
run plot-fleet-bed-svg plot.py --fleet example-slowed/fleet.json -o out/fleet.svg
run plot-fleet-h200x2 plot.py --fleet call-1/fleet/json/fleet-1.json -o out/fleet.png

# ---- check-node --from ---------------------------------------------------------------------
cd "$work/fx"
for f in check-node/*.json; do run "check-node-$(basename "$f" .json)" check-node --from "$f"; done
cd "$work/fleet"   # a recorded two-H200 default run and check-node's own result (2026-11-28)
run check-node-h200x2-run check-node --from call-2/setup-tests-runs/json/run-1.json
run check-node-h200x2-check-node check-node --from call-2/setup-tests-runs/json/check-node.json
cd "$work/track"
run check-node-h200-run-8 check-node --from json/run-8.json
run check-node-shares-fail check-node --from json/run-8.json --pcie-share 0.95 --memory-share 0.5
run bad-check-node-not-json check-node --from ../fx/compare/not_json.json
run bad-check-node-share check-node --from json/run-8.json --pcie-share 2
run bad-check-node-missing check-node --from no-such.json

# ---- calibrate.py (it runs MPI binaries: usage only) ---------------------------------------
run bad-calibrate-flag calibrate.py --bogus
run bad-calibrate-rounds calibrate.py --rounds x

# No path of this run may show: TOOLS_DIR and the checkout differ between the two sides.
leak=$(grep -rlF -e "$TOOLS" -e "$root" "$OUT" 2>/dev/null)
[ -n "$leak" ] && echo "behaviour.sh: WARNING: these outputs hold a path of this run:" $leak >&2
echo "behaviour.sh: $(wc -l < "$OUT/cases.txt") cases in $((SECONDS - start)) s -> $OUT" >&2
