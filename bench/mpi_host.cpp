// mpi_host: the seed tutorial's "CPU version". Rank 0 sends a host buffer to rank 1, rank 1
// sends it back; one-way time is half the round trip. Ranks beyond 1 only take part in the
// agreements, so any world size works.
#include <mpi.h>

#include <cstring>
#include <vector>

#include "error.hpp"
#include "harness.hpp"
#include "paths.hpp"
#include "pattern.hpp"

namespace xfer {
namespace {

constexpr int kPingTag = 10;
constexpr int kPongTag = 20;

// One round trip. Rank 0 sends `send` and receives the echo into `recv`; rank 1 receives
// into `recv` and sends that same buffer back.
void round_trip(const World& world, const char* send, char* recv, std::size_t bytes) {
  const MessageType message(bytes);
  if (world.rank() == 0) {
    XFER_MPI_CHECK(MPI_Send(send, message.count(), message.type(), 1, kPingTag, world.comm()));
    XFER_MPI_CHECK(MPI_Recv(recv, message.count(), message.type(), 1, kPongTag, world.comm(),
                            MPI_STATUS_IGNORE));
  } else if (world.rank() == 1) {
    XFER_MPI_CHECK(MPI_Recv(recv, message.count(), message.type(), 0, kPingTag, world.comm(),
                            MPI_STATUS_IGNORE));
    XFER_MPI_CHECK(MPI_Send(recv, message.count(), message.type(), 0, kPongTag, world.comm()));
  }
}

void ping_pong(benchmark::State& state, const Harness& h, const Row& row) {
  const World& world = h.world;
  const bool active = world.rank() < 2;
  const std::size_t bytes = row.bytes;

  // Allocate once per run; rank 0 sends the pattern, everyone's receive buffer is poisoned.
  std::vector<char> send;
  std::vector<char> recv;
  if (!all_ok(state, h, row, "allocate", [&] {
        if (!active) return;
        recv.resize(bytes);
        fill_pattern(recv.data(), bytes, poison_seed(row.seed));
        if (world.rank() == 0) {
          send.resize(bytes);
          fill_pattern(send.data(), bytes, row.seed);
        }
      }))
    return;

  if (!all_ok(state, h, row, "warm-up", [&] {
        for (int i = 0; i < h.config.warmup; ++i)
          round_trip(world, send.data(), recv.data(), bytes);
        // Poison again: only the timed round trips can make validation pass.
        if (active) fill_pattern(recv.data(), bytes, poison_seed(row.seed));
      }))
    return;

  const std::int64_t batch = batch_for(bytes);
  Tally tally;
  timed_round_trips(
      state, h, row, batch, active, [&] { round_trip(world, send.data(), recv.data(), bytes); },
      tally);
  if (state.error_occurred()) return;

  // Rank 1 checks what arrived, rank 0 what came back.
  if (!all_ok(state, h, row, "validate", [&] {
        if (!active) return;
        if (corrupt_here(h, row) && world.rank() == 1) recv[bytes / 2] ^= 0x01;
        const Mismatch m = find_mismatches(recv.data(), bytes, row.seed);
        if (m.count > 0) throw Error(describe(m, bytes));
      }))
    return;

  report_row(state, row, tally, batch);
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
