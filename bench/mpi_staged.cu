// mpi_staged: the classic CUDA-aware MPI tutorial's "CUDA staged version". The data lives on the
// GPUs; every leg copies it to host memory, sends it with MPI, and copies it back up to the
// receiving GPU (support/gpu/staging_mpi.hpp). Variants: pinned or pageable host buffers copied
// whole (staging:sequential), and pinned buffers in overlapping chunks (staging:pipelined, the best
// staging can do). The sequential variants are the tutorial's baseline and stay ping-pong only;
// the pipelined one also runs mode:stream and mode:bidir (support/mpi/exchange.hpp). A leg ends
// once the data is on the receiving GPU, so ping-pong's one-way time is half the round trip.
#include <memory>

#include "gpu/device_slots.hpp"
#include "gpu/staging_mpi.hpp"
#include "gpu/staging_ping_pong.hpp"
#include "harness/exchange_row.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

constexpr int kTag = 30;

struct Variant {
  gpu::HostMemory host;
  gpu::StagingMode staging;
  const char* family;  // the exchange mode follows
};

constexpr Variant kVariants[] = {
    {gpu::HostMemory::Pinned, gpu::StagingMode::Sequential,
     "mpi_staged/host:pinned/staging:sequential"},
    {gpu::HostMemory::Pageable, gpu::StagingMode::Sequential,
     "mpi_staged/host:pageable/staging:sequential"},
    {gpu::HostMemory::Pinned, gpu::StagingMode::Pipelined,
     "mpi_staged/host:pinned/staging:pipelined"},
};

// The visit's device slots (each slot its own pattern) and the host staging behind them are
// made together; the staging is the exchange (support/harness/exchange_row.hpp).
void exchange(Visit& visit, const Harness& h, const Row& row, Mode mode, int device,
              const Variant& variant) {
  const PairRole role = role_of(h.pairs, h.world.rank());
  const int window = mode == Mode::PingPong
                         ? 1
                         : window_for(h.config.window, row.bytes, gpu::StagedSlots::kInFlight);
  exchange_row_via<gpu::StagedSlots>(
      visit, h, row, mode, [](gpu::StagedSlots& b) -> gpu::MpiStaging& { return b.staging(); },
      [&](const Traffic& traffic, int slots) {
        return std::make_unique<gpu::StagedSlots>(
            gpu::DeviceSlots(traffic, device, slots, row.bytes, row.seed),
            std::make_unique<gpu::MpiStaging>(h.world, role, device, row.bytes, window,
                                              variant.host, variant.staging, kTag));
      });
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
    // Down this rank's PCIe link, across to the peer, up its link: in turn or pipelined.
    auto crossing =
        links::Crossing::between_ranks(links::Crossing::Kind::RankHostStaged, registry.pairs());
    crossing.at_once = variant.staging == gpu::StagingMode::Pipelined;
    for (const Mode mode : all_modes()) {
      if (variant.staging == gpu::StagingMode::Sequential && mode != Mode::PingPong) continue;
      registry.add(
          "mpi_staged", exchange_family(variant.family, mode, registry.config(), registry.pairs()),
          [mode, device = gpu.device, &variant](Visit& visit, const Harness& h, const Row& row) {
            exchange(visit, h, row, mode, device, variant);
          },
          BigWarmUp::NewFamily, crossing);
    }
  }
}

}  // namespace xfer
