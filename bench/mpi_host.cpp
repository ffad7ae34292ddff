// mpi_host: the seed tutorial's "CPU version". Rank 0 sends a host buffer to rank 1, rank 1
// sends it back; one-way time is half the round trip. Ranks beyond 1 only take part in the
// agreements, so any world size works.
#include <mpi.h>

#include <memory>
#include <vector>

#include "error.hpp"
#include "harness.hpp"
#include "paths.hpp"
#include "pattern.hpp"

namespace xfer {
namespace {

constexpr int kPingTag = 10;
constexpr int kPongTag = 20;

// A row's buffers: rank 0 sends `send`, and rank 0 and 1 receive into `recv`.
struct HostBuffers {
  std::vector<char> send;
  std::vector<char> recv;
};

// One round trip. Rank 0 sends `send` and receives the echo into `recv`; rank 1 receives
// into `recv` and sends that same buffer back.
void round_trip(const World& world, HostBuffers& b, std::size_t bytes) {
  const MessageType message(bytes);
  if (world.rank() == 0) {
    XFER_MPI_CHECK(MPI_Send(b.send.data(), message.count(), message.type(), 1, kPingTag,
                            world.comm()));
    XFER_MPI_CHECK(MPI_Recv(b.recv.data(), message.count(), message.type(), 1, kPongTag,
                            world.comm(), MPI_STATUS_IGNORE));
  } else if (world.rank() == 1) {
    XFER_MPI_CHECK(MPI_Recv(b.recv.data(), message.count(), message.type(), 0, kPingTag,
                            world.comm(), MPI_STATUS_IGNORE));
    XFER_MPI_CHECK(MPI_Send(b.recv.data(), message.count(), message.type(), 0, kPongTag,
                            world.comm()));
  }
}

void ping_pong(benchmark::State& state, const Harness& h, const Row& row) {
  const World& world = h.world;
  const bool active = world.rank() < 2;
  const std::size_t bytes = row.bytes;

  // Once per row: allocate, let rank 0 send the pattern, warm up.
  HostBuffers* b = setup_once<HostBuffers>(
      state, h, row,
      [&] {
        auto made = std::make_unique<HostBuffers>();
        if (active) made->recv.resize(bytes);
        if (world.rank() == 0) {
          made->send.resize(bytes);
          fill_pattern(made->send.data(), bytes, row.seed);
        }
        return made;
      },
      [&](HostBuffers& made) {
        for (int i = 0; i < warmup_for(h.config, bytes); ++i) round_trip(world, made, bytes);
      });
  if (!b) return;

  // Every timed pass starts from poison: only its own round trips can make validation pass.
  if (active) fill_pattern(b->recv.data(), bytes, poison_seed(row.seed));
  const std::int64_t batch = batch_for(bytes);
  Measurement m;
  if (!measure_round_trips(
          state, h, row, batch, active, [&] { round_trip(world, *b, bytes); }, m))
    return;

  // Rank 1 checks what arrived, rank 0 what came back.
  if (!all_ok(state, h, row, "validate", [&] {
        if (!active) return;
        if (corrupt_here(h, row) && world.rank() == 1) b->recv[bytes / 2] ^= 0x01;
        const Mismatch bad = find_mismatches(b->recv.data(), bytes, row.seed);
        if (bad.count > 0) throw Error(describe(bad, bytes));
      }))
    return;

  report_row(state, row, m, batch);
}

}  // namespace

void register_mpi_host(Registry& registry) {
  if (registry.world().size() < 2) {
    registry.skip("mpi_host", "needs 2 ranks (world size is 1); launch with mpirun -np 2");
    return;
  }
  registry.add("mpi_host", "mpi_host", ping_pong);
}

}  // namespace xfer
