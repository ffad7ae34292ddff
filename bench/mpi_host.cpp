// mpi_host: the classic CUDA-aware MPI tutorial's "CPU version": MPI between host buffers. In
// mode:pingpong the leader of a pair (rank 0 by default) sends a message and its peer sends it
// back, one-way time being half the round trip; mode:stream keeps a window of messages in flight
// (as osu_bw) and mode:bidir streams both ways at once (as osu_bibw); see support/mpi/exchange.hpp.
// --xfer_pairs runs several pairs at once; ranks in no pair only take part in the agreements.
#include <memory>

#include "harness/exchange_row.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

constexpr int kTag = 10;

void exchange(Visit& visit, const Harness& h, const Row& row, Mode mode) {
  MpiExchange mpi(h.world, role_of(h.pairs, h.world.rank()), row.bytes, kTag,
                  h.config.ack_in_buffers);
  exchange_row<HostSlots>(visit, h, row, mode, mpi, [&](const Traffic& traffic, int slots) {
    return std::make_unique<HostSlots>(traffic, slots, row.bytes, row.seed);
  });
}

}  // namespace

void register_mpi_host(Registry& registry) {
  if (registry.world().size() < 2) {
    registry.skip("mpi_host", "needs 2 ranks (world size is 1); launch with mpirun -np 2");
    return;
  }
  // Host memory between ranks: between nodes the bytes cross the network port.
  const auto crossing =
      links::Crossing::between_ranks(links::Crossing::Kind::RankHostMemory, registry.pairs());
  for (const Mode mode : all_modes()) {
    registry.add(
        "mpi_host", exchange_family("mpi_host", mode, registry.config(), registry.pairs(), true),
        [mode](Visit& visit, const Harness& h, const Row& row) { exchange(visit, h, row, mode); },
        BigWarmUp::FirstInProcess, crossing);
  }
}

}  // namespace xfer
