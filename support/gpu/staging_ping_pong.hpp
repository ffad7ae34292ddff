// What the GPU ping-pong paths (mpi_staged, mpi_cuda_aware, nccl_sendrecv) share: which GPU a
// rank takes and whether the path can run at all, and the device buffers of one benchmark run
// with their pattern, poison and validation.
//
//   RankGpu gpu = bind_ping_pong_gpu(registry, GpuUse::...);   // collective, at registration
//   if (!gpu.ok()) registry.skip(path, gpu.skip_reason);
//
//   PingPongBuffers buffers(world, gpu.device, bytes, seed);    // per run: allocate, fill
//   ...warm-up...; buffers.poison(); ...timed loop...; buffers.validate(corrupt);
//
// The roles follow the seed tutorial: rank 0 sends `send()` and receives the echo into
// `recv()`; rank 1 receives into `recv()` and sends that same buffer back. Ranks beyond 1 own
// no buffers (active() is false) and only take part in the agreements.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../harness.hpp"
#include "cuda.hpp"

namespace xfer::gpu {

enum class GpuUse {
  PingPongRanks,    // ranks 0 and 1 need a GPU (they may share one); other ranks only agree
  EveryRankOwnGpu,  // every rank needs a GPU of its own (an NCCL communicator over all ranks)
};

struct RankGpu {
  int device = -1;          // this rank's GPU (-1: none)
  std::string skip_reason;  // the same on every rank; "" when the path can run
  bool ok() const { return skip_reason.empty(); }
};

// Collective. Needs 2 ranks; binds this rank to its node-local rank's GPU (bind_rank_gpu,
// which records it in context.ranks) and agrees whether `use` is satisfied everywhere.
RankGpu bind_ping_pong_gpu(Registry& registry, GpuUse use);

// Collective. Rank 0 prints which rank runs on which host and GPU, one line per rank (the
// first 8), to stderr: "  rank 1 @ node1 -> GPU 1 NVIDIA H200 (0000:2a:00.0)".
void announce_rank_gpus(const Registry& registry, int device);

class PingPongBuffers {
 public:
  // Rank 0: `send` holds the pattern of `seed`, `recv` is poisoned. Rank 1: one poisoned
  // buffer. Synchronizes, so the data is in place before any other engine reads it.
  PingPongBuffers(const World& world, int device, std::size_t bytes, std::uint64_t seed);

  bool active() const { return active_; }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  void* send() const { return rank_ == 0 ? send_.data() : recv_.data(); }
  void* recv() const { return recv_.data(); }
  cudaStream_t stream() const { return stream_.get(); }

  // Poisons what this rank receives into again (after warm-up, which delivered the pattern
  // already), so only the timed loop can make validation pass. Synchronizes.
  void poison();

  // Throws xfer::Error ("validation: N of M bytes differ, ...") unless what this rank
  // received is the pattern. `corrupt`: flip one byte first (the --xfer_test_corrupt switch).
  void validate(bool corrupt);

 private:
  int rank_ = 0;
  bool active_ = false;
  int device_ = -1;
  std::size_t bytes_ = 0;
  std::uint64_t seed_ = 0;
  Stream stream_;
  DeviceBuffer send_;
  DeviceBuffer recv_;
};

}  // namespace xfer::gpu
