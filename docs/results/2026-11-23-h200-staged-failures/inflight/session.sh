export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -x /tmp/ompi-cuda/bin/mpirun ] || tar xJf .ompi/ompi-cuda.tar.xz -C /
R=/tmp/ab2; mkdir -p $R
F="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMPI_C_COMPILER=/tmp/ompi-cuda/bin/mpicc -DMPI_CXX_COMPILER=/tmp/ompi-cuda/bin/mpicxx -DMPIEXEC_EXECUTABLE=/tmp/ompi-cuda/bin/mpirun -DXFER_BUILD_TESTS=OFF"
(XFER_GIT_REVISION=wip-inflight cmake -S . -B build -G Ninja $F && cmake --build build -j16 --target xferbench) > $R/build-new.log 2>&1 & 
(XFER_GIT_REVISION=aaeb0e5 cmake -S .ompi/old-src -B /tmp/build-old -G Ninja $F && cmake --build /tmp/build-old -j16 --target xferbench) > $R/build-old.log 2>&1
wait; ls -la build/xferbench /tmp/build-old/xferbench || exit 1
M=/tmp/ompi-cuda/bin/mpirun; O=/tmp/peers/omb-cuda
for r in 1 2 3; do
  for p in osu_bw osu_bibw; do echo "\$ $p 16M" >> $R/log; $M -np 2 $O/$p -m 16777216:16777216 >> $R/log 2>&1; done
  for v in old new; do b=build/xferbench; [ $v = old ] && b=/tmp/build-old/xferbench
    echo "== round $r $v" >> $R/log
    timeout 100 $M -np 2 $b --benchmark_color=false --benchmark_filter='mpi_host|mpi_staged/host:pinned/staging:pipelined' --xfer_modes=stream,bidir --xfer_sizes=1M,16M,256M --benchmark_out=$R/$v-$r.json >> $R/log 2>&1
  done
done
grep -E "^(16777216|mpi_)" $R/log | awk '{print $1, $2, $7, $9, $10, $11}'
tar czf $OUT/ab2.tgz -C /tmp ab2
