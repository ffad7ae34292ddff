// nccl_sendrecv: the ping-pong with ncclSend/ncclRecv instead of MPI. One communicator over all
// ranks serves the whole run (made by the first row that needs it, outside any timing); rank 0
// sends then receives, rank 1 receives then sends, other ranks are members that do nothing.
// A batch of round trips is queued on one stream and waited for once, so the GPUs play the
// ping-pong among themselves; one-way time is half of rank 0's wall time for the batch.
#include <mpi.h>
#include <nccl.h>

#include <cstdlib>
#include <memory>

#include "gpu/device_slots.hpp"
#include "gpu/nccl_comm.hpp"
#include "gpu/nccl_exchange.hpp"
#include "gpu/staging_ping_pong.hpp"
#include "harness/exchange_row.hpp"
#include "harness/harness.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

void exchange(Visit& visit, const Harness& h, const Row& row, Mode mode, int device,
              gpu::SharedNcclComm& shared) {
  // The run's communicator: made by the first row, by all ranks together.
  gpu::NcclComm* comm = nullptr;
  if (!all_ok(visit, h, row, "NCCL communicator", [&] { comm = &shared.acquire(h.world, device); }))
    return;
  std::unique_ptr<gpu::NcclExchange> nccl;
  if (!all_ok(visit, h, row, "NCCL stream", [&] {
        nccl =
            std::make_unique<gpu::NcclExchange>(*comm, role_of(h.pairs, h.world.rank()), row.bytes);
      }))
    return;
  exchange_row<gpu::DeviceSlots>(
      visit, h, row, mode, *nccl, [&](const Traffic& traffic, int slots) {
        return std::make_unique<gpu::DeviceSlots>(traffic, device, slots, row.bytes, row.seed);
      });
}

}  // namespace

void register_nccl_sendrecv(Registry& registry) {
  json::Value nccl = json::Value::object();
  try {
    nccl.set("version", gpu::nccl_version());
  } catch (const std::exception&) {
    nccl.set("version", nullptr);
  }
  registry.context().set("nccl", nccl);

  const gpu::RankGpu gpu = gpu::bind_ping_pong_gpu(registry, gpu::GpuUse::EveryRankOwnGpu);
  if (!gpu.ok()) {
    registry.skip("nccl_sendrecv", gpu.skip_reason);
    return;
  }
  // Point-to-point needs no NVLink multicast; keep NCCL from setting it up unless asked to.
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  std::shared_ptr<gpu::SharedNcclComm> shared = gpu::SharedNcclComm::create();
  // GPU memory handed to NCCL: GPU to GPU where its P2P transport may copy it (routes.hpp).
  auto crossing =
      links::Crossing::between_ranks(links::Crossing::Kind::RankGpuMemory, registry.pairs());
  crossing.nccl = true;
  for (const Mode mode : all_modes()) {
    registry.add(
        "nccl_sendrecv",
        exchange_family("nccl_sendrecv", mode, registry.config(), registry.pairs()),
        [mode, device = gpu.device, shared](Visit& visit, const Harness& h, const Row& row) {
          exchange(visit, h, row, mode, device, *shared);
        },
        BigWarmUp::EveryVisit, crossing);
  }
}

}  // namespace xfer
