// What the GPU paths between ranks (mpi_staged, mpi_cuda_aware, nccl_sendrecv) share: which GPU
// a rank takes and whether the path can run at all. Their buffers are gpu::DeviceSlots.
//
//   RankGpu gpu = bind_ping_pong_gpu(registry, GpuUse::...);   // collective, at registration
//   if (!gpu.ok()) registry.skip(path, gpu.skip_reason);
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/cuda.hpp"
#include "harness/harness.hpp"

namespace xfer::gpu {

enum class GpuUse {
  PingPongRanks,    // the ranks of --xfer_pairs need a GPU (they may share one); others agree
  EveryRankOwnGpu,  // every rank needs a GPU of its own (an NCCL communicator over all ranks)
};

struct RankGpu {
  int device = -1;          // this rank's GPU (-1: none)
  std::string skip_reason;  // the same on every rank; "" when the path can run
  bool ok() const { return skip_reason.empty(); }
};

// Collective. Needs 2 ranks; binds this rank to its node-local rank's GPU (bind_rank_gpu,
// which records it in context.ranks) and agrees whether `use` is satisfied everywhere. Throws
// xfer::FatalError on every rank if any rank's GPU is visible but cannot be used.
RankGpu bind_ping_pong_gpu(Registry& registry, GpuUse use);

// Collective. Rank 0 prints which rank runs on which host and GPU, one line per rank (the
// first 8), to stderr: "  rank 1 @ node1 -> GPU 1 NVIDIA H200 (0000:2a:00.0)".
void announce_rank_gpus(const Registry& registry, int device);

}  // namespace xfer::gpu
