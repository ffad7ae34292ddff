#!/bin/bash
# The recorded fleets judged by the tools/fleet of the checkout this script sits in (issue 46,
# item 5: the verdicts are the same before and after the move into steps and the two stages).
# usage: judge-recorded.sh OUTDIR   (one text file a judgement, its exit status at the end)
set -euo pipefail
out=$(realpath -m "$1"); mkdir -p "$out"
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
tar xJf "$root/docs/results/2026-11-28-h200x2-fleet/raw.tar.xz" -C "$work"
tar xJf "$root/docs/results/2026-11-28-fleet-bed/raw.tar.xz" -C "$work"
cd "$work"
judge() {  # NAME ARGS...
  local name=$1; shift
  set +e; /usr/bin/python3 "$root/tools/fleet" judge "$@" > "$out/$name.txt" 2>&1
  echo "exit $?" >> "$out/$name.txt"; set -e
}
for f in call-*/fleet/json/fleet-*.json; do judge "$(echo "$f" | tr / _)" "$f"; done
for c in call-1 call-2; do judge "$c-retest" "$c/fleet/json/fleet-1.json" --retest "$c/fleet/json/retest.json"; done
judge bed example-slowed/fleet.json --retest example-slowed/retest.json
judge bed-first example-slowed/fleet.json
