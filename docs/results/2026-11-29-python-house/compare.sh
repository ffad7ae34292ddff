#!/bin/bash
# compare.sh BEFORE AFTER: two OUT_DIRs of behaviour.sh compared byte for byte. Prints each
# case whose output differs (a text file's first lines of diff; for an image, both sides'
# .info line), each file on one side only, then "differences: N"; exit 0 when N is 0, else 1.
set -u
if [ $# -ne 2 ] || [ "$1" = --help ]; then
  sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
  [ "${1:-}" = --help ] && exit 0 || exit 2
fi
A=$1; B=$2; n=0
for d in "$A" "$B"; do
  [ -f "$d/cases.txt" ] || { echo "compare.sh: $d: no cases.txt (not a behaviour.sh output)" >&2; exit 2; }
done
while read -r f; do
  if [ ! -e "$A/$f" ] || [ ! -e "$B/$f" ]; then
    echo "ONLY IN $([ -e "$A/$f" ] && echo "$A" || echo "$B"): $f"; n=$((n + 1))
  elif [[ $f != *.info ]] && ! cmp -s "$A/$f" "$B/$f"; then  # (an .info goes with its image)
    n=$((n + 1))
    case $f in
      *.png|*.svg|*.pdf) echo "DIFF $f"; echo "  before: $(cat "$A/$f.info")"; echo "  after:  $(cat "$B/$f.info")" ;;
      *) echo "DIFF $f"; diff -u "$A/$f" "$B/$f" | sed -n '3,30p' | sed 's/^/  /' ;;
    esac
  fi
done < <({ (cd "$A" && find . -type f); (cd "$B" && find . -type f); } | sed 's|^\./||' | sort -u)
echo "differences: $n"
[ $n -eq 0 ]
