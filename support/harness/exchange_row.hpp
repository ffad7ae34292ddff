// One row of a path between rank pairs, whatever carries it (MPI on host or device buffers,
// NCCL) and in whichever mode: the classic ping-pong's steps, written once.
//
//   1. afresh in every visit: make the buffers (`Slots`: HostSlots or gpu::DeviceSlots), fill
//      the senders' slots, warm up;
//   2. poison what is received, then time samples (a batch of round trips, or of windows) with
//      each pair leader's clock until the row is precise enough or its time is up;
//   3. every receiver validates what arrived; report (GB/s of all pairs together).
//
// `Exchange` moves one sample: round_trip(send, recv), stream(send, recv, window),
// bidir(send, recv, window), and complete() to wait for what it queued (NCCL; MPI: nothing).
// Most paths build one per visit of the row; an exchange that owns buffers (mpi_staged's host
// staging) is made and kept with the slots instead, and exchange_row_via finds it there.
#pragma once

#include <functional>
#include <memory>

#include "harness/harness.hpp"
#include "mpi/exchange.hpp"

namespace xfer {

// `exchange_of(slots)` is the Exchange that moves a sample through the row's `slots`.
template <class Slots, class ExchangeOf>
void exchange_row_via(
    Visit& visit, const Harness& h, const Row& row, Mode mode, const ExchangeOf& exchange_of,
    const std::function<std::unique_ptr<Slots>(const Traffic&, int slots)>& make) {
  const PairRole role = role_of(h.pairs, h.world.rank());
  const std::size_t bytes = row.bytes;
  const std::uint64_t in_flight = Slots::kInFlight;  // most bytes a window keeps in flight
  const int window = window_for(h.config.window, bytes, in_flight);
  const int slots = mode == Mode::PingPong ? 1 : slots_for(h.config.window, bytes, in_flight);
  const auto one_sample = [&](Slots& b) {
    auto& exchange = exchange_of(b);
    if (mode == Mode::PingPong) {
      exchange.round_trip(b.send(), b.recv());
    } else if (mode == Mode::Stream) {
      exchange.stream(b.send(), b.recv(), window);
    } else {
      exchange.bidir(b.send(), b.recv(), window);
    }
  };

  auto b = set_up<Slots>(
      visit, h, row, [&] { return make(traffic_of(mode, role), slots); },
      [&](Slots& made, int messages) {
        for (int i = 0; i < messages; ++i) one_sample(made);
        exchange_of(made).complete();
      });
  if (!b) return;

  if (!check_ok(visit, h, row, "poison", [&] { b->poison(); })) return;
  const std::int64_t batch = messages_per_sample(mode, h.config.window, bytes, in_flight);
  const std::int64_t calls = calls_per_sample(mode, h.config.window, bytes, in_flight);
  const double per_message = mode == Mode::PingPong ? 2 : 1;  // a round trip is two messages
  Measurement m;
  if (!measure(
          visit, h, row, batch, role.leader,
          [&] {
            return host_timed(
                calls, [&] { one_sample(*b); }, [&] { exchange_of(*b).complete(); }, per_message);
          },
          m))
    return;

  // Every receiver checks what arrived (in ping-pong the leader checks the echo).
  if (!check_ok(visit, h, row, "validate",
                [&] { b->validate(corrupt_here(h, row) && role.active() && !role.leader); }))
    return;

  report_row(visit, row, m, batch, directions(mode), static_cast<int>(h.pairs.size()));
}

// One exchange for every sample of this call of the row.
template <class Slots, class Exchange>
void exchange_row(Visit& visit, const Harness& h, const Row& row, Mode mode, Exchange& exchange,
                  const std::function<std::unique_ptr<Slots>(const Traffic&, int slots)>& make) {
  exchange_row_via<Slots>(
      visit, h, row, mode, [&](Slots&) -> Exchange& { return exchange; }, make);
}

}  // namespace xfer
