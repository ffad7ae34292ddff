// Holds a stream still while the host queues a batch of timed operations, so the time between
// a batch's start and stop events is the GPU's work alone, not the host's enqueue overhead
// (what nvbandwidth and p2pBandwidthLatencyTest do).
//
//   StreamHold hold(device);          // once per benchmark run: a pinned, mapped flag
//   {
//     HeldStream held(hold, stream);  // a one-thread kernel spins on the flag in `stream`
//     start.record(stream); ...queue the batch...; stop.record(stream);
//     held.release();                 // the host writes the flag; the kernel exits
//   }                                 // (a HeldStream leaving scope early releases too)
//   stop.synchronize();
//   hold.check();                     // throws if the kernel had given up by itself
//
// The kernel can never hang: it gives up by itself after `timeout_s` of %globaltimer. If it
// did, the host was still queueing when the GPU started, so enqueue time leaked into the
// measurement: check() turns that into an error naming the cause, never a published number;
// the copy paths instead re-time that batch unheld and stop holding for the family
// (note_hold_gave_up says so), since only long copies can block the queue.
// Other streams (also on other devices) are held too when they wait on an event recorded in
// the held stream after the hold. Never hold a stream in front of an operation the host waits
// for while queueing (a pageable cudaMemcpyAsync, a cudaMalloc, a large driver-staged peer
// copy): it would wait for the timeout.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>

#include "gpu/cuda.hpp"

namespace xfer::gpu {

class StreamHold {
 public:
  explicit StreamHold(int device, double timeout_s = 2.0);
  ~StreamHold();  // releases a pending hold and waits for the kernel to exit
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  // Launches the spinning kernel into `stream` (a stream of this hold's device). A hold still
  // pending from before is released first.
  void hold(cudaStream_t stream);
  // Lets the kernel exit. Idempotent; never throws.
  void release() noexcept;
  // Waits until the kernel has exited; true if it gave up by itself (timeout).
  bool timed_out();
  // Throws xfer::Error if timed_out().
  void check();
  int device() const { return device_; }
  double timeout_s() const { return timeout_s_; }

 private:
  struct Flags {
    int release;
    int timed_out;
  };
  int device_;
  double timeout_s_;
  PinnedBuffer flags_;  // host-mapped: the host writes `release`, the kernel `timed_out`
  Flags* device_flags_ = nullptr;
  Event exited_;          // recorded right after the kernel
  bool pending_ = false;  // a kernel was launched and not yet released
  bool launched_ = false;
};

// One line on stderr: the hold of `row` gave up before the host had queued the batch, so the
// row's family is timed without a hold from now on (its copies are long; see docs/gpu-paths.md).
void note_hold_gave_up(const std::string& row);

// One timed batch of a copy path, with the fallback both copy paths share: a latency row times
// one copy with the host clock; a bandwidth row times `batch` copies, held while `hold` and the
// family's `may_hold` allow, and if the hold gave up it re-times unheld and clears `may_hold`.
// `Copy` has double time_one() and std::optional<double> time_batch(batch, hold).
template <class Copy>
double time_copies(Copy& copy, bool latency, std::int64_t batch, bool hold, bool& may_hold,
                   const std::string& row) {
  if (latency) return copy.time_one();
  if (const auto held = copy.time_batch(batch, hold && may_hold)) return *held;
  may_hold = false;
  note_hold_gave_up(row);
  return *copy.time_batch(batch, false);
}

// Holds `stream` for one scope; release() (or leaving the scope) lets it go.
class HeldStream {
 public:
  HeldStream(StreamHold& hold, cudaStream_t stream) : hold_(hold) { hold_.hold(stream); }
  ~HeldStream() { hold_.release(); }
  HeldStream(const HeldStream&) = delete;
  HeldStream& operator=(const HeldStream&) = delete;
  void release() noexcept { hold_.release(); }

 private:
  StreamHold& hold_;
};

}  // namespace xfer::gpu
