// The calibration reference: the plainest MPI_Send/MPI_Recv ping-pong, built like xferbench
// and run in the same job, so mpi_host's harness overhead can be measured against it.
// usage: mpirun -np 2 plain_pingpong [bytes=8] [round_trips=100000]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long bytes = argc > 1 ? std::atol(argv[1]) : 8;
  const long trips = argc > 2 ? std::atol(argv[2]) : 100000;
  if (size < 2 || bytes <= 0 || trips <= 0) {
    if (rank == 0)
      std::fprintf(stderr, "plain_pingpong: needs 2 ranks, bytes > 0, round_trips > 0\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<char> buffer(static_cast<std::size_t>(bytes), 1);
  auto trip = [&] {
    if (rank == 0) {
      MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 10, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 20, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 10, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 20, MPI_COMM_WORLD);
    }
  };
  for (int i = 0; i < 1000; ++i) trip();  // warm-up
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < trips; ++i) trip();
  const double elapsed = MPI_Wtime() - start;
  if (rank == 0)
    std::printf("{\"bytes\": %ld, \"round_trips\": %ld, \"one_way_us\": %.4f, \"GB/s\": %.4f}\n",
                bytes, trips, elapsed / trips / 2 * 1e6, bytes / (elapsed / trips / 2) / 1e9);
  MPI_Finalize();
  return 0;
}
