// memcpy_peer: cudaMemcpyPeerAsync from GPU a to GPU b in one process: what the copy engines
// get out of the link between two GPUs.
//
//   p2p:on   peer access enabled both ways: the copy goes straight over NVLink or PCIe P2P
//   p2p:off  peer access disabled both ways: the driver stages the copy through host memory
//   dir:uni  a -> b;  dir:bi  a -> b and b -> a at once on two streams (GB/s is their sum)
//   (no timing key)  bandwidth: GPU time of a batch of copies, the stream held until queued
//   timing:latency   one copy as an application sees it: host clock, enqueue to completion
//
// One process does the copies (rank 0); other ranks only take part in the agreements.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "gpu/copy_plan.hpp"
#include "gpu/copy_row.hpp"
#include "gpu/cuda.hpp"
#include "gpu/device_pattern.hpp"
#include "gpu/devices.hpp"
#include "gpu/stream_hold.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

using gpu::DeviceBuffer;
using gpu::Event;
using gpu::PeerFamily;
using gpu::Stream;

// Peer access is per-context state that outlives a row: set it, both ways, before every run.
void set_peer_access(int a, int b, bool enable) {
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    gpu::DeviceGuard guard(from);
    const cudaError_t rc =
        enable ? cudaDeviceEnablePeerAccess(to, 0) : cudaDeviceDisablePeerAccess(to);
    const cudaError_t harmless =
        enable ? cudaErrorPeerAccessAlreadyEnabled : cudaErrorPeerAccessNotEnabled;
    if (rc == harmless) {
      cudaGetLastError();  // already as wanted; clear it so no later check sees it
    } else if (rc != cudaSuccess) {
      gpu::raise_cuda_error(rc,
                            enable ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess",
                            __FILE__, __LINE__);
    }
  }
}

// Buffers, streams and events of one run of one row. a -> b carries the row's pattern; in
// dir:bi, b -> a carries another one, so crossed buffers are caught too.
class PeerCopy {
 public:
  PeerCopy(const PeerFamily& family, std::size_t bytes, std::uint64_t seed)
      : f_(family),
        bytes_(bytes),
        seed_(seed),
        reverse_seed_(mix64(seed)),
        stream_a_(family.src),
        stream_b_(family.dst),
        start_(family.src),
        stop_(family.src),
        forked_(family.src, false),
        joined_(family.dst, false),
        hold_(family.src) {
    set_peer_access(f_.src, f_.dst, f_.p2p);
    src_a_ = DeviceBuffer(f_.src, bytes);
    dst_b_ = DeviceBuffer(f_.dst, bytes);
    gpu::fill_pattern_device(src_a_.data(), bytes, seed_, stream_a_.get());
    if (f_.bidirectional) {
      src_b_ = DeviceBuffer(f_.dst, bytes);
      dst_a_ = DeviceBuffer(f_.src, bytes);
      gpu::fill_pattern_device(src_b_.data(), bytes, reverse_seed_, stream_b_.get());
    }
    stream_a_.synchronize();
    stream_b_.synchronize();
  }

  void warm_up(int copies) {
    for (int i = 0; i < copies; ++i) enqueue(1);
    stream_a_.synchronize();
  }

  void poison() {
    gpu::poison_device(dst_b_.data(), bytes_, seed_, stream_b_.get());
    if (f_.bidirectional) gpu::poison_device(dst_a_.data(), bytes_, reverse_seed_, stream_a_.get());
    stream_a_.synchronize();
    stream_b_.synchronize();
  }

  // GPU time of `batch` copies; with `hold`, the stream is held until all are queued. None
  // if the hold gave up before the host had queued them (then enqueue time leaked in).
  std::optional<double> time_batch(std::int64_t batch, bool hold) {
    {
      std::optional<gpu::HeldStream> held;
      if (hold) held.emplace(hold_, stream_a_.get());
      start_.record(stream_a_.get());
      enqueue(batch);
      stop_.record(stream_a_.get());
    }
    stop_.synchronize();
    if (hold && hold_.timed_out()) return std::nullopt;
    return gpu::elapsed_seconds(start_, stop_);
  }

  // One copy as an application sees it: from the call to the end of a stream synchronize.
  double time_one() {
    const auto start = std::chrono::steady_clock::now();
    enqueue(1);
    stream_a_.synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void validate(bool corrupt) {
    if (corrupt) gpu::flip_byte_device(dst_b_.data(), bytes_ / 2, stream_b_.get());
    check(dst_b_, seed_, f_.src, stream_b_);
    if (f_.bidirectional) check(dst_a_, reverse_seed_, f_.dst, stream_a_);
  }

 private:
  // `copies` copies a -> b (and b -> a), all ordered after what stream a holds so far and
  // before what stream a gets next.
  void enqueue(std::int64_t copies) {
    if (f_.bidirectional) {
      forked_.record(stream_a_.get());
      gpu::wait(stream_b_.get(), forked_);
    }
    for (std::int64_t i = 0; i < copies; ++i) {
      XFER_CUDA_CHECK(cudaMemcpyPeerAsync(dst_b_.data(), f_.dst, src_a_.data(), f_.src, bytes_,
                                          stream_a_.get()));
      if (f_.bidirectional)
        XFER_CUDA_CHECK(cudaMemcpyPeerAsync(dst_a_.data(), f_.src, src_b_.data(), f_.dst, bytes_,
                                            stream_b_.get()));
    }
    if (f_.bidirectional) {
      joined_.record(stream_b_.get());
      gpu::wait(stream_a_.get(), joined_);
    }
  }

  // `stream` belongs to the destination's GPU.
  void check(const DeviceBuffer& dst, std::uint64_t seed, int from, const Stream& stream) const {
    const Mismatch m = gpu::count_mismatches_device(dst.data(), bytes_, seed, stream.get());
    if (m.count > 0)
      throw Error(describe(m, bytes_) + " on GPU " + std::to_string(dst.device()) +
                  ", copied from GPU " + std::to_string(from));
  }

  const PeerFamily f_;
  const std::size_t bytes_;
  const std::uint64_t seed_;
  const std::uint64_t reverse_seed_;
  DeviceBuffer src_a_, dst_b_, src_b_, dst_a_;
  Stream stream_a_, stream_b_;
  Event start_, stop_;     // timing, on GPU a
  Event forked_, joined_;  // ordering only: a -> b's stream and back
  gpu::StreamHold hold_;   // last: released (and its kernel gone) before anything is freed
};

// `may_hold` is the family's: once queueing blocked behind a hold, the family times unheld.
void peer_row(Visit& visit, const Harness& h, const Row& row, const PeerFamily& f, bool& may_hold) {
  const std::string where = "GPU " + std::to_string(f.src) + " -> GPU " + std::to_string(f.dst);
  // Bandwidth: a batch of copies per clock reading, held until queued (a->b: 1 queued
  // operation per copy; dir:bi: 2, plus the fork and join events around the batch).
  gpu::BatchPlan timing{1, false};
  if (!f.latency) {
    timing =
        gpu::plan_batch(batch_for(row.bytes), f.bidirectional ? 2 : 1, f.bidirectional ? 6 : 2);
    timing.hold = timing.hold && gpu::may_hold_peer_copy(f.p2p, row.bytes);
  }
  gpu::copy_row<PeerCopy>(visit, h, row, f, where, timing, may_hold, f.bidirectional ? 2 : 1);
}

}  // namespace

void register_memcpy_peer(Registry& registry) {
  gpu::register_copy_families(registry, "memcpy_peer", gpu::plan_memcpy_peer, peer_row,
                              BigWarmUp::EveryVisit);
}

}  // namespace xfer
