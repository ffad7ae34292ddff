#!/bin/bash
# behaviour.sh BIN OUTDIR: runs BIN (an xferbench) through fixed cases whose rows, fields and
# text must not change across a refactor: --help, a refused flag, the row list, seed-fixed
# 2-rank runs (plain, with the two-H200 link fixture), a 4-rank run of two pairs, and two
# merges of the recorded two-H200 jobs. Run from the repository root; compare two OUTDIRs
# with compare_behaviour.py.
set -u
if [ $# -ne 2 ] || [ "$1" = --help ]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  [ "${1:-}" = --help ] && exit 0 || exit 2
fi
BIN=$1; OUT=$2; mkdir -p "$OUT"; : > "$OUT/status"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
$BIN --help > $OUT/help.txt 2>&1
mpirun --oversubscribe -np 2 $BIN --xfer_seed=7 --xfer_sizes=8,64K,1M --xfer_max_time=0.05 --benchmark_out=$OUT/run.json > $OUT/run.out 2> $OUT/run.err
echo "run exit $?" >> $OUT/status
mpirun --oversubscribe -np 2 $BIN --xfer_seed=7 --xfer_sizes=8,1M --xfer_max_time=0.05 --xfer_test_links=tests/fixtures/links/h200x2 --benchmark_out=$OUT/links.json > $OUT/links.out 2> $OUT/links.err
echo "links exit $?" >> $OUT/status
mpirun --oversubscribe -np 4 $BIN --xfer_seed=7 --xfer_sizes=8,4K --xfer_max_time=0.05 --xfer_pairs=0:1,2:3 --benchmark_filter=mpi_host --benchmark_out=$OUT/pairs.json > $OUT/pairs.out 2> $OUT/pairs.err
echo "pairs exit $?" >> $OUT/status
J=tests/fixtures/merge/h200x2-jobs
$BIN --xfer_merge=$J/job-1.json,$J/job-2.json,$J/job-3.json --xfer_floor=0 --benchmark_out=$OUT/merge.json > $OUT/merge.out 2> $OUT/merge.err
echo "merge exit $?" >> $OUT/status
$BIN --xfer_merge=$J/job-1.json,$J/job-2.json,$J/job-3.json --benchmark_out=$OUT/merge2.json > $OUT/merge2.out 2> $OUT/merge2.err
echo "merge2 exit $?" >> $OUT/status
$BIN --xfer_sizes=bogus > $OUT/bad.out 2> $OUT/bad.err; echo "bad exit $?" >> $OUT/status
mpirun --oversubscribe -np 2 $BIN --benchmark_list_tests > $OUT/list.out 2> $OUT/list.err; echo "list exit $?" >> $OUT/status
