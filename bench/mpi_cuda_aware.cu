// mpi_cuda_aware: the classic CUDA-aware MPI tutorial's "CUDA-Aware version". Device pointers go
// straight into MPI_Send/MPI_Recv; how the bytes move (CUDA IPC, GPUDirect, or staging inside MPI)
// is the MPI library's business. Runs only where every rank's MPI is CUDA-aware (or the user forces
// it): that is decided at registration, before any device pointer reaches MPI.
#include <memory>

#include "gpu/device_slots.hpp"
#include "gpu/staging_ping_pong.hpp"
#include "harness/exchange_row.hpp"
#include "mpi/cuda_aware.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

constexpr int kTag = 50;

// The same exchange as mpi_host (support/mpi/exchange.hpp), on device buffers.
void exchange(Visit& visit, const Harness& h, const Row& row, Mode mode, int device) {
  MpiExchange mpi(h.world, role_of(h.pairs, h.world.rank()), row.bytes, kTag,
                  h.config.ack_in_buffers);
  exchange_row<gpu::DeviceSlots>(visit, h, row, mode, mpi, [&](const Traffic& traffic, int slots) {
    return std::make_unique<gpu::DeviceSlots>(traffic, device, slots, row.bytes, row.seed);
  });
}

}  // namespace

void register_mpi_cuda_aware(Registry& registry) {
  // What MPI says about itself goes into the context whether or not the path can run.
  const CudaAwareDecision cuda_aware =
      agree_cuda_aware(registry.world(), registry.config().cuda_aware);
  record_cuda_aware(registry.context(), cuda_aware);

  const gpu::RankGpu gpu = gpu::bind_ping_pong_gpu(registry, gpu::GpuUse::PingPongRanks);
  if (!gpu.ok()) {
    registry.skip("mpi_cuda_aware", gpu.skip_reason);
    return;
  }
  if (!cuda_aware.use) {
    registry.skip("mpi_cuda_aware", cuda_aware.skip_reason);
    return;
  }
  // GPU memory handed to MPI: GPU to GPU where Open MPI's CUDA IPC may copy it (routes.hpp).
  const auto crossing =
      links::Crossing::between_ranks(links::Crossing::Kind::RankGpuMemory, registry.pairs());
  for (const Mode mode : all_modes()) {
    registry.add(
        "mpi_cuda_aware",
        exchange_family("mpi_cuda_aware", mode, registry.config(), registry.pairs(), true),
        [mode, device = gpu.device](Visit& visit, const Harness& h, const Row& row) {
          exchange(visit, h, row, mode, device);
        },
        BigWarmUp::EveryVisit, crossing);
  }
}

}  // namespace xfer
