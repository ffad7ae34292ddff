// Device data through MPI by way of host memory, for an MPI that cannot take device pointers:
// the classic CUDA-aware MPI tutorial's "CUDA staged version", the pipelined one a careful
// implementation would write, and support/mpi/exchange.hpp's three modes on top of them (mpi_staged's
// exchange).
//
//   MpiStaging staging(world, role, device, bytes, window, HostMemory::Pinned,
//                      StagingMode::Pipelined, tag);    // host buffers, once per row
//   staging.round_trip(send, recv);                    // the leader's send.at(0) to its peer
//                                                      // and back into its recv.at(0)
//   staging.stream(send, recv, window);                // a window leader -> peer, then an ack
//   staging.bidir(send, recv, window);                 // a window each way at once
//
// Every leg ends with the data on the receiving GPU: a receive returns once its copies to the
// device have completed, so a ping-pong's echo and a stream's acknowledgement only leave a rank
// whose data has arrived.
//
// Sequential (ping-pong only): the whole message is copied, then sent (or received, then
// copied), through host buffers of the message's size.
// Pipelined: messages move in chunks (chunk_for()) through a small ring of pinned slots per
// direction, so the copy of one chunk overlaps the MPI transfer of others, and the slots stay
// in the CPU caches instead of streaming the whole message through DRAM twice. A window's
// messages are one sequence of chunks (message i chunk j), so the ring never drains between
// messages. The sender (SendPipe) queues D2H copies into free slots with an event behind each
// and MPI_Isends a chunk as soon as its event completes; a slot is reused once its send has
// completed. The receiver (RecvPipe) keeps an MPI_Irecv posted in every free slot and queues a
// chunk's H2D copy as soon as it has arrived; a slot is reposted once that copy has completed.
// Each pipe is a state machine that never blocks (step() polls MPI_Test and cudaEventQuery),
// so a rank that sends and receives at once (bidir) steps both in one loop, and each keeps
// calling into MPI while it waits for the GPU, so MPI's own progress never stalls. The two
// directions have their own slots, events, requests and stream. Needs pinned memory: copies
// from pageable memory do not overlap with anything.
//
// Sends and receives use separate host buffers, so a receive that delivered nothing cannot
// pass validation with data this rank staged itself.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/cuda.hpp"
#include "gpu/device_slots.hpp"
#include "mpi/exchange.hpp"
#include "mpi/world.hpp"

namespace xfer::gpu {

enum class HostMemory { Pinned, Pageable };
enum class StagingMode { Sequential, Pipelined };

// One direction of pipelined staging: a ring of pinned slots, with an event and an MPI request
// per slot, on a stream of its own. start() takes a sequence of messages of one size (message i
// at messages.at(i)), cut into chunks; step() does whatever can be done without waiting and
// returns; done() once the last chunk is through.
class StagingPipe {
 public:
  StagingPipe(int device, std::size_t bytes, std::size_t chunk, std::size_t slots);
  // Before every timed pass on the receiving side: a constant differs from the pattern almost
  // everywhere.
  void poison();

 protected:
  void begin(const SlotView& messages, std::int64_t count, int peer, int tag, MPI_Comm comm);
  char* device_chunk(std::size_t k) const;  // chunk k of the sequence: message k / per_message_
  std::size_t chunk_bytes(std::size_t k) const;
  char* slot(std::size_t k) const;
  cudaEvent_t event(std::size_t k) const { return events_[k % slots_].get(); }
  MPI_Request* request(std::size_t k) { return &requests_[k % slots_]; }

  std::size_t bytes_;        // one message
  std::size_t chunk_;        // one chunk of it (the last may be shorter)
  std::size_t per_message_;  // chunks per message
  std::size_t stride_;       // one slot: min(chunk, message), in whole 64-byte cache lines
  std::size_t slots_;
  Stream stream_;
  PinnedBuffer pinned_;
  std::vector<Event> events_;
  std::vector<MPI_Request> requests_;
  SlotView messages_;
  std::size_t total_ = 0;  // chunks in the sequence
  int peer_ = -1;
  int tag_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class SendPipe : public StagingPipe {
 public:
  using StagingPipe::StagingPipe;
  void start(const SlotView& from, std::int64_t count, int peer, int tag, MPI_Comm comm);
  void step();
  bool done() const { return done_ == total_; }  // every chunk sent (its slot free again)

 private:
  // Chunks [0, copied_) are queued for D2H, [0, sent_) handed to MPI, [0, done_) sent.
  std::size_t copied_ = 0, sent_ = 0, done_ = 0;
};

class RecvPipe : public StagingPipe {
 public:
  using StagingPipe::StagingPipe;
  void start(const SlotView& into, std::int64_t count, int peer, int tag, MPI_Comm comm);
  void step();
  bool done() const { return arrived_ == total_; }  // every chunk arrived and queued for H2D
  void finish() { stream_.synchronize(); }          // ... and on the device

 private:
  // Chunks [0, posted_) have a receive posted, [0, arrived_) are queued for H2D, [0, freed_)
  // are on the device (their slots free again).
  std::size_t posted_ = 0, arrived_ = 0, freed_ = 0;
};

class MpiStaging {
 public:
  // Pipelined chunks: about 8 per message, at least 256 KiB (below that a chunk's fixed cost
  // of an MPI message and a copy launch outweighs the overlap), at most 2 MiB, 8 slots in
  // flight per direction: 16 MiB of pinned staging each way, which stays in the CPU caches.
  // Chosen by measurement on 2x H200 (docs/mpi-gpu-paths.md).
  static constexpr std::size_t kMinChunk = std::size_t{256} << 10;
  static constexpr std::size_t kMaxChunk = std::size_t{2} << 20;
  static constexpr std::size_t kChunksWanted = 8;
  static constexpr std::size_t kSlots = 8;
  static std::size_t chunk_for(std::size_t bytes);

  // Allocates the host buffers on the ranks of a pair (a rank in no pair allocates nothing and
  // takes part in nothing) for messages of `bytes`, at most `window` of them per call (1 for
  // ping-pong); copies run on streams of `device`, where the data lives. Tags: `tag_base` for
  // data, `tag_base + 1` for the echo and the acknowledgement.
  MpiStaging(const World& world, const PairRole& role, int device, std::size_t bytes, int window,
             HostMemory host, StagingMode mode, int tag_base);

  // exchange_row's Exchange (support/mpi/exchange.hpp's modes, the same messages and tags as
  // MpiExchange). bidir needs Pipelined: blocking sends both ways would wait for each other.
  void round_trip(const SlotView& send, const SlotView& recv);
  void stream(const SlotView& send, const SlotView& recv, int window);
  void bidir(const SlotView& send, const SlotView& recv, int window);
  void complete() {}  // every call returns with its data through

  // Poisons the host receive buffers (before every timed pass, with the device buffers).
  void poison();

 private:
  void send(const SlotView& from, std::int64_t count, int tag);
  void recv(const SlotView& into, std::int64_t count, int tag);
  void send_sequential(const void* device_src, int tag);
  void recv_sequential(void* device_dst, int tag);

  const World& world_;
  PairRole role_;
  std::size_t bytes_;
  MessageType message_;  // sequential: the whole message, in one MPI call even above 2 GiB
  HostMemory host_;
  StagingMode mode_;
  int tag_;
  Stream stream_;  // sequential copies
  PinnedBuffer pinned_send_, pinned_recv_;
  PageableBuffer pageable_send_, pageable_recv_;
  std::unique_ptr<SendPipe> send_pipe_;  // pipelined
  std::unique_ptr<RecvPipe> recv_pipe_;
  char ack_[4] = {};
};

// exchange_row's Slots for mpi_staged: the row's device slots and the host staging between them
// and MPI, made once per row, kept and poisoned together; the staging is the row's exchange.
class StagedSlots {
 public:
  // A window no deeper than 64 MiB: the staging ring (kSlots chunks of at most 2 MiB) already
  // bounds what is in flight, and a 16 MiB window of 4 GiB took 0.5 s a sample (2 samples per
  // row); with 64 MiB the same rows took 7-28 samples at the same GB/s (docs/results/
  // 2026-11-23-h200-staged-failures/inflight).
  static constexpr std::uint64_t kInFlight = std::uint64_t{64} << 20;
  StagedSlots(DeviceSlots device, std::unique_ptr<MpiStaging> staging)
      : device_(std::move(device)), staging_(std::move(staging)) {}
  SlotView send() const { return device_.send(); }
  SlotView recv() const { return device_.recv(); }
  MpiStaging& staging() { return *staging_; }
  void poison() {
    device_.poison();
    staging_->poison();
  }
  void validate(bool corrupt) { device_.validate(corrupt); }

 private:
  DeviceSlots device_;
  std::unique_ptr<MpiStaging> staging_;
};

}  // namespace xfer::gpu
