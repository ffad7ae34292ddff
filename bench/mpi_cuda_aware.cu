// mpi_cuda_aware: the seed tutorial's "CUDA-Aware version". Device pointers go straight into
// MPI_Send/MPI_Recv; how the bytes move (CUDA IPC, GPUDirect, or staging inside MPI) is the MPI
// library's business. Runs only where every rank's MPI is CUDA-aware (or the user forces it):
// that is decided at registration, before any device pointer reaches MPI.
#include <mpi.h>

#include <memory>

#include "cuda_aware.hpp"
#include "harness.hpp"
#include "paths.hpp"
#include "staging_ping_pong.hpp"

namespace xfer {
namespace {

constexpr int kPingTag = 50;
constexpr int kPongTag = 60;

// One round trip. Rank 0 sends its device buffer and receives the echo into another; rank 1
// receives into its device buffer and sends that same buffer back.
void round_trip(const World& world, const gpu::PingPongBuffers& b, const MessageType& message) {
  if (world.rank() == 0) {
    XFER_MPI_CHECK(MPI_Send(b.send(), message.count(), message.type(), 1, kPingTag, world.comm()));
    XFER_MPI_CHECK(MPI_Recv(b.recv(), message.count(), message.type(), 1, kPongTag, world.comm(),
                            MPI_STATUS_IGNORE));
  } else if (world.rank() == 1) {
    XFER_MPI_CHECK(MPI_Recv(b.recv(), message.count(), message.type(), 0, kPingTag, world.comm(),
                            MPI_STATUS_IGNORE));
    XFER_MPI_CHECK(MPI_Send(b.recv(), message.count(), message.type(), 0, kPongTag, world.comm()));
  }
}

void ping_pong(benchmark::State& state, const Harness& h, const Row& row, int device) {
  const World& world = h.world;
  const std::size_t bytes = row.bytes;
  const MessageType message(bytes);

  // Once per row: device buffers (rank 0 sends the pattern), then warm-up.
  gpu::PingPongBuffers* b = setup_once<gpu::PingPongBuffers>(
      state, h, row,
      [&] { return std::make_unique<gpu::PingPongBuffers>(world, device, bytes, row.seed); },
      [&](gpu::PingPongBuffers& made) {
        if (!made.active()) return;
        for (int i = 0; i < warmup_for(h.config, bytes); ++i) round_trip(world, made, message);
      });
  if (!b) return;

  // Every timed pass starts from poison: only its own round trips can make validation pass.
  if (!all_ok(state, h, row, "poison", [&] { b->poison(); })) return;
  const std::int64_t batch = batch_for(bytes);
  Measurement m;
  if (!measure_round_trips(
          state, h, row, batch, b->active(), [&] { round_trip(world, *b, message); }, m))
    return;

  // Rank 1 checks what arrived on its GPU, rank 0 what came back to its GPU.
  if (!all_ok(state, h, row, "validate",
              [&] { b->validate(corrupt_here(h, row) && world.rank() == 1); }))
    return;

  report_row(state, row, m, batch);
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
  registry.add("mpi_cuda_aware", "mpi_cuda_aware",
               [device = gpu.device](benchmark::State& state, const Harness& h, const Row& row) {
                 ping_pong(state, h, row, device);
               });
}

}  // namespace xfer
