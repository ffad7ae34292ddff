// mpi_staged: the seed tutorial's "CUDA staged version". The data lives on the GPUs; every leg
// of the ping-pong copies it to host memory, sends it with MPI, and copies it back up to the
// receiving GPU. Variants: pinned or pageable host buffers, copied whole (mode:sequential), and
// pinned buffers in overlapping chunks (mode:pipelined, the best staging can do; see
// support/gpu/staging_mpi.hpp). One-way time is half the round trip, ending on rank 0 once the
// echo is back on its GPU.
#include <mpi.h>

#include <memory>

#include "harness.hpp"
#include "paths.hpp"
#include "staging_mpi.hpp"
#include "staging_ping_pong.hpp"

namespace xfer {
namespace {

constexpr int kPingTag = 30;
constexpr int kPongTag = 40;

struct Variant {
  gpu::HostMemory host;
  gpu::StagingMode mode;
  const char* family;
};

constexpr Variant kVariants[] = {
    {gpu::HostMemory::Pinned, gpu::StagingMode::Sequential,
     "mpi_staged/host:pinned/mode:sequential"},
    {gpu::HostMemory::Pageable, gpu::StagingMode::Sequential,
     "mpi_staged/host:pageable/mode:sequential"},
    {gpu::HostMemory::Pinned, gpu::StagingMode::Pipelined, "mpi_staged/host:pinned/mode:pipelined"},
};

// One round trip. Rank 0: device -> host -> MPI -> rank 1, then back into its receive buffer.
// Rank 1: receives onto its GPU, then sends that same device buffer back.
void round_trip(const World& world, gpu::MpiStaging& staging, const gpu::PingPongBuffers& b) {
  if (world.rank() == 0) {
    staging.send(b.send(), 1, kPingTag);
    staging.recv(b.recv(), 1, kPongTag);
  } else if (world.rank() == 1) {
    staging.recv(b.recv(), 0, kPingTag);
    staging.send(b.recv(), 0, kPongTag);
  }
}

void ping_pong(benchmark::State& state, const Harness& h, const Row& row, int device,
               const Variant& variant) {
  const World& world = h.world;
  const std::size_t bytes = row.bytes;

  // Device buffers (rank 0 sends the pattern, receive buffers poisoned) and host staging.
  std::unique_ptr<gpu::PingPongBuffers> buffers;
  std::unique_ptr<gpu::MpiStaging> staging;
  if (!all_ok(state, h, row, "allocate", [&] {
        buffers = std::make_unique<gpu::PingPongBuffers>(world, device, bytes, row.seed);
        if (!buffers->active()) return;
        staging = std::make_unique<gpu::MpiStaging>(world, device, buffers->stream(), bytes,
                                                    variant.host, variant.mode);
      }))
    return;
  const bool active = buffers->active();

  if (!all_ok(state, h, row, "warm-up", [&] {
        if (!active) return;
        for (int i = 0; i < h.config.warmup; ++i) round_trip(world, *staging, *buffers);
        buffers->poison();
        staging->poison();
      }))
    return;

  const std::int64_t batch = batch_for(bytes);
  Tally tally;
  timed_round_trips(
      state, h, row, batch, active, [&] { round_trip(world, *staging, *buffers); }, tally);
  if (state.error_occurred()) return;

  // Rank 1 checks what arrived on its GPU, rank 0 what came back to its GPU.
  if (!all_ok(state, h, row, "validate",
              [&] { buffers->validate(corrupt_here(h, row) && world.rank() == 1); }))
    return;

  report_row(state, row, tally, batch);
}

}  // namespace

void register_mpi_staged(Registry& registry) {
  const gpu::RankGpu gpu = gpu::bind_ping_pong_gpu(registry, gpu::GpuUse::PingPongRanks);
  if (!gpu.ok()) {
    registry.skip("mpi_staged", gpu.skip_reason);
    return;
  }
  gpu::announce_rank_gpus(registry, gpu.device);
  for (const Variant& variant : kVariants) {
    registry.add(
        "mpi_staged", variant.family,
        [device = gpu.device, &variant](benchmark::State& state, const Harness& h, const Row& row) {
          ping_pong(state, h, row, device, variant);
        });
  }
}

}  // namespace xfer
