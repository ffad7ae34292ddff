# Shell helpers the session scripts share (source it). Every command goes to $out/session.log as
# "$ COMMAND", its output, then "(exit N)" (peer_ratios.py and spread.py read that),
# and "NAME SECONDS EXIT" to $out/walls.txt.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

log() { echo "== $(date +%T) $*" | tee -a "$out/session.log"; }

# step NAME COMMAND...
step() {
  local name=$1 start rc
  shift
  echo "\$ $*" >>"$out/session.log"
  start=$(date +%s.%N)
  "$@" >>"$out/session.log" 2>&1
  rc=$?
  echo "(exit $rc)" >>"$out/session.log"
  echo "$name $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') $rc" >>"$out/walls.txt"
  return $rc
}

# osu NAME MPIRUN OMB_DIR TEST SIZE BUFFERS: one OSU test at one size (H H or D D).
osu() {
  local name=$1 mpirun=$2 omb=$3 test=$4 size=$5 buffers=$6 cuda=() iters=()
  [ "$buffers" = "D D" ] && cuda=(-d cuda)
  [ "$size" -ge 268435456 ] && iters=(-i 100 -x 10)
  # shellcheck disable=SC2086
  step "$name" "$mpirun" -np 2 "$omb/$test" "${cuda[@]}" -m "$size:$size" "${iters[@]}" $buffers
}
