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

// A row's device buffers and, on the two ranks that take part, its host staging.
struct StagedRow {
  std::unique_ptr<gpu::PingPongBuffers> buffers;
  std::unique_ptr<gpu::MpiStaging> staging;
};

// One round trip. Rank 0: device -> host -> MPI -> rank 1, then back into its receive buffer.
// Rank 1: receives onto its GPU, then sends that same device buffer back.
void round_trip(const World& world, StagedRow& r) {
  const gpu::PingPongBuffers& b = *r.buffers;
  if (world.rank() == 0) {
    r.staging->send(b.send(), 1, kPingTag);
    r.staging->recv(b.recv(), 1, kPongTag);
  } else if (world.rank() == 1) {
    r.staging->recv(b.recv(), 0, kPingTag);
    r.staging->send(b.recv(), 0, kPongTag);
  }
}

void ping_pong(benchmark::State& state, const Harness& h, const Row& row, int device,
               const Variant& variant) {
  const World& world = h.world;
  const std::size_t bytes = row.bytes;

  // Once per row: device buffers (rank 0 sends the pattern), host staging, then warm-up.
  StagedRow* r = setup_once<StagedRow>(
      state, h, row,
      [&] {
        auto made = std::make_unique<StagedRow>();
        made->buffers = std::make_unique<gpu::PingPongBuffers>(world, device, bytes, row.seed);
        if (made->buffers->active())
          made->staging = std::make_unique<gpu::MpiStaging>(
              world, device, made->buffers->stream(), bytes, variant.host, variant.mode);
        return made;
      },
      [&](StagedRow& made) {
        if (!made.buffers->active()) return;
        for (int i = 0; i < warmup_for(h.config, bytes); ++i) round_trip(world, made);
      });
  if (!r) return;
  const bool active = r->buffers->active();

  // Every timed pass starts from poison: only its own round trips can make validation pass.
  if (!all_ok(state, h, row, "poison", [&] {
        r->buffers->poison();
        if (active) r->staging->poison();
      }))
    return;
  const std::int64_t batch = batch_for(bytes);
  Measurement m;
  if (!measure_round_trips(state, h, row, batch, active, [&] { round_trip(world, *r); }, m))
    return;

  // Rank 1 checks what arrived on its GPU, rank 0 what came back to its GPU.
  if (!all_ok(state, h, row, "validate",
              [&] { r->buffers->validate(corrupt_here(h, row) && world.rank() == 1); }))
    return;

  report_row(state, row, m, batch);
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
