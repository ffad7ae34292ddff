// How two ranks of a pair exchange messages over MPI (pairs.hpp), the same calls on host and
// device pointers (a CUDA-aware MPI takes either):
//
//   mode:pingpong  the leader sends one message, its peer sends it back; one-way time is half
//                  the round trip (the classic ping-pong's measure: latency)
//   mode:stream    the leader keeps a window of messages in flight to its peer (MPI_Isend x W,
//                  as osu_bw), the peer answers the whole window with a 4-byte acknowledgement;
//                  time per message is the window's time / W (sustained one-way bandwidth)
//   mode:bidir     both ranks stream a window to each other at once (as osu_bibw); GB/s counts
//                  both directions
//
// A window's messages go through `slots` buffers (each slot its own pattern), message i through
// slot i % slots, so what a window delivered is validated slot by slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/host_memory.hpp"
#include "base/pairs.hpp"
#include "mpi/world.hpp"

namespace xfer {

enum class Mode { PingPong, Stream, Bidir };
struct Config;
// Every mode, in the order pingpong, stream, bidir: paths register rows of each, and the
// selection (selection.hpp) runs those of the modes --xfer_modes asks for.
const std::vector<Mode>& all_modes();
const char* mode_name(Mode mode);  // "pingpong", "stream", "bidir"
int directions(Mode mode);         // 2 for bidir

// `family` with "/pairs:N" appended when several pairs run at once.
std::string with_pairs(const std::string& family, const RankPairs& pairs);
// "mpi_host/mode:stream", with "/pairs:N" when several pairs run at once. `mpi_acks`: the path
// streams through MpiExchange, whose stream rows end in "/ack:buffers" under --xfer_ack=buffers.
std::string exchange_family(const std::string& path, Mode mode, const Config& config,
                            const RankPairs& pairs, bool mpi_acks = false);

// The most bytes a window keeps in flight: 4 GiB, so a window stays --xfer_window messages
// deep up to 64 MiB messages, as osu_bw's. Depth matters on host memory too: capped at 64 MiB,
// a 256 MiB host stream (one message per window) ran at 6 GB/s instead of 13 on the H200 VM
// (docs/results/2026-11-23-h200-staged-failures/inflight). A path whose own pipeline bounds
// what is in flight may keep less (mpi_staged: its staging ring).
constexpr std::uint64_t kWindowInFlight = std::uint64_t{4} << 30;

// Messages in flight per window: --xfer_window, but no more than `in_flight` bytes of them (at
// least one), so a 1 GiB stream keeps 4 messages in flight instead of 64 GiB.
int window_for(int window, std::uint64_t bytes, std::uint64_t in_flight);
// Distinct buffers behind a window: no more than 256 KiB of them (at least one). osu_bw and
// osu_bibw move every message of a window through one buffer, which stays in the CPU caches;
// a window through 64 MiB of distinct buffers would measure DRAM instead, and half the rate.
// With 1 MiB (16 slots of 64 KiB, send and receive: 2 MiB per rank in bidir, past a core's L2)
// 64 KiB streams ran 10-25% slower than with 256 KiB on the CPU VM, 3 rounds out of 3.
int slots_for(int window, std::uint64_t bytes, std::uint64_t in_flight);
// Calls of one timed sample: ping-pong batch_for(bytes) round trips; stream and bidir enough
// windows to move 16 MiB (at least one), so the agreement between samples, which the peer's
// back-to-back windows do not have, stays a small part of the time.
std::int64_t calls_per_sample(Mode mode, int window, std::uint64_t bytes, std::uint64_t in_flight);
// Messages one timed sample moves (one way): round trips, or windows x messages in a window.
std::int64_t messages_per_sample(Mode mode, int window, std::uint64_t bytes,
                                 std::uint64_t in_flight);

// The pattern seed of slot `slot` for messages from the leader (`from_leader`) or to it.
std::uint64_t slot_seed(std::uint64_t row_seed, int slot, bool from_leader);

// Buffers of `slots` messages of `bytes` each, one after another (host or device memory).
struct SlotView {
  char* base = nullptr;
  std::size_t bytes = 0;
  int slots = 1;
  char* at(std::int64_t message) const { return base + (message % slots) * bytes; }
};

// What a rank of a pair sends and receives in `mode`, and whose patterns: the leader sends in
// every mode; its peer sends its own data only in bidir (in pingpong it echoes what arrived).
struct Traffic {
  bool sends = false;
  bool sends_as_leader = false;  // its send slots carry the leader's patterns
  bool receives = false;
  bool expects_leader = false;  // its receive slots must end up with the leader's patterns
};
Traffic traffic_of(Mode mode, const PairRole& role);

// A row's host buffers on one rank: `slots` to send and `slots` to receive, as traffic needs.
class HostSlots {
 public:
  static constexpr std::uint64_t kInFlight = kWindowInFlight;
  HostSlots(const Traffic& traffic, int slots, std::size_t bytes, std::uint64_t row_seed);
  SlotView send() { return {send_.get(), bytes_, slots_}; }
  SlotView recv() { return {recv_.get(), bytes_, slots_}; }
  // Before every timed pass: only that pass can make validation succeed.
  void poison();
  // Throws xfer::Error naming the slot unless every receive slot holds its pattern.
  // `corrupt`: flip one byte first (--xfer_test_corrupt).
  void validate(bool corrupt);

 private:
  Traffic traffic_;
  int slots_;
  std::size_t bytes_;
  std::uint64_t seed_;
  // Left uninitialised: the pattern or the poison is their first touch, not a zero fill.
  HostPages send_;
  HostPages recv_;
};

class MpiExchange {
 public:
  // `ack_in_buffers` (--xfer_ack=buffers): stream's acknowledgement is one byte through the
  // message buffers, as osu_bw's, instead of a host word.
  MpiExchange(const World& world, const PairRole& role, std::size_t bytes, int tag_base,
              bool ack_in_buffers = false);

  // One round trip: the leader sends send.at(0) and receives the echo into recv.at(0); its
  // peer receives into recv.at(0) and sends that same buffer back.
  void round_trip(const SlotView& send, const SlotView& recv);
  // One window of `window` messages from the leader's `send` slots into the peer's `recv`
  // slots, then the acknowledgement; returns once the leader has it.
  void stream(const SlotView& send, const SlotView& recv, int window);
  // One window each way at once; returns once this rank has sent and received all of it.
  void bidir(const SlotView& send, const SlotView& recv, int window);
  void complete() {}  // MPI's calls return once their messages are through

 private:
  const World& world_;
  PairRole role_;
  MessageType message_;
  int tag_;
  bool ack_in_buffers_;
  std::vector<MPI_Request> requests_;
  char ack_[4] = {};
};

}  // namespace xfer
