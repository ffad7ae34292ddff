// nccl_sendrecv: the ping-pong with ncclSend/ncclRecv instead of MPI. One communicator over all
// ranks serves the whole run (made by the first row that needs it, outside any timing); rank 0
// sends then receives, rank 1 receives then sends, other ranks are members that do nothing.
// A batch of round trips is queued on one stream and waited for once, so the GPUs play the
// ping-pong among themselves; one-way time is half of rank 0's wall time for the batch.
#include <mpi.h>
#include <nccl.h>

#include <cstdlib>
#include <memory>

#include "harness.hpp"
#include "nccl_comm.hpp"
#include "paths.hpp"
#include "staging_ping_pong.hpp"

namespace xfer {
namespace {

// Queues one round trip on the buffers' stream. Rank 0 sends its buffer and receives the echo
// into another; rank 1 receives into its buffer and sends that same buffer back.
void enqueue_round_trip(gpu::NcclComm& comm, int rank, const gpu::PingPongBuffers& b) {
  const std::size_t bytes = b.bytes();
  if (rank == 0) {
    XFER_NCCL_COMM_CHECK(comm, ncclSend(b.send(), bytes, ncclUint8, 1, comm.get(), b.stream()));
    XFER_NCCL_COMM_CHECK(comm, ncclRecv(b.recv(), bytes, ncclUint8, 1, comm.get(), b.stream()));
  } else if (rank == 1) {
    XFER_NCCL_COMM_CHECK(comm, ncclRecv(b.recv(), bytes, ncclUint8, 0, comm.get(), b.stream()));
    XFER_NCCL_COMM_CHECK(comm, ncclSend(b.recv(), bytes, ncclUint8, 0, comm.get(), b.stream()));
  }
}

void ping_pong(benchmark::State& state, const Harness& h, const Row& row, int device,
               gpu::SharedNcclComm& shared) {
  const World& world = h.world;
  const int rank = world.rank();

  // The run's communicator: made by the first row, by all ranks together.
  gpu::NcclComm* comm = nullptr;
  if (!all_ok(state, h, row, "NCCL communicator", [&] { comm = &shared.acquire(world, device); }))
    return;

  // Once per row: device buffers (rank 0 sends the pattern), then warm-up.
  gpu::PingPongBuffers* b = setup_once<gpu::PingPongBuffers>(
      state, h, row,
      [&] { return std::make_unique<gpu::PingPongBuffers>(world, device, row.bytes, row.seed); },
      [&](gpu::PingPongBuffers& made) {
        if (!made.active()) return;
        for (int i = 0; i < warmup_for(h.config, row.bytes); ++i)
          enqueue_round_trip(*comm, rank, made);
        comm->wait(made.stream());
      });
  if (!b) return;

  // Every timed pass starts from poison: only its own round trips can make validation pass.
  if (!all_ok(state, h, row, "poison", [&] { b->poison(); })) return;
  const std::int64_t batch = batch_for(row.bytes);
  Measurement m;
  // The whole batch is queued on one stream, then waited for (inside the timed region).
  if (!measure_round_trips(
          state, h, row, batch, b->active(), [&] { enqueue_round_trip(*comm, rank, *b); }, m,
          [&] { comm->wait(b->stream()); }))
    return;

  // Rank 1 checks what arrived on its GPU, rank 0 what came back to its GPU.
  if (!all_ok(state, h, row, "validate", [&] { b->validate(corrupt_here(h, row) && rank == 1); }))
    return;

  report_row(state, row, m, batch);
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
  registry.add(
      "nccl_sendrecv", "nccl_sendrecv",
      [device = gpu.device, shared](benchmark::State& state, const Harness& h, const Row& row) {
        ping_pong(state, h, row, device, *shared);
      });
}

}  // namespace xfer
