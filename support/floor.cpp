#include "floor.hpp"

#include <cstdint>
#include <cstdlib>

namespace xfer {

// 1.96 x the spread between MPI jobs that 4 visits per job could not see, rounded up, from the
// experiment of docs/results/2026-11-24-h200-variance-sources (one H200 VM, 6 conditions x 3-4 jobs x
// 30 rows): copies the CPU drives, and copies too short to be more than launch and wake-up
// costs, move with the process; bytes that stay on the GPU, and long DMA copies, do not.
double measured_floor_pct(const std::string& name) {
  const std::string path = name.substr(0, name.find('/'));
  const auto at = name.find("/bytes:");
  const std::uint64_t bytes =
      at == std::string::npos ? 0 : std::strtoull(name.c_str() + at + 7, nullptr, 10);
  const bool long_dma = bytes >= (std::uint64_t{4} << 20);
  if (path == "mpi_cuda_aware" || path == "nccl_sendrecv") return 1;
  if (path == "mpi_host") return 8;
  if (path == "mpi_staged") return 6;
  if (path == "memcpy_peer")  // peer access on: GPU to GPU; off: the driver stages through pinned memory
    return name.find("/p2p:on/") != std::string::npos || long_dma ? 1 : 12;
  if (path == "host_staging")
    return name.find("/host:pinned/") != std::string::npos && long_dma ? 1 : 12;
  return 0;
}

}  // namespace xfer
