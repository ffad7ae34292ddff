// ce_copy: the copy engines between host memory and one GPU, each way alone and both ways at
// once, and within the GPU's memory: what cudaMemcpyAsync gets out of the GPU's PCIe link (the
// first question on a new node, and what pinned, non-blocking tensor copies depend on) and out of
// its memory.
//
//   host:pinned    page-locked host memory: true asynchronous DMA
//   host:pageable  ordinary malloc'ed memory: the driver copies through its own pinned buffers
//                  and the calls block the host (no dir:bi: that would need two host threads)
//   dir:h2d, dir:d2h   host -> GPU, GPU -> host, each alone
//   dir:bi         both at once on two streams, each its own buffers; GB/s is their sum
//   dir:local      device -> device within the GPU's memory (nvbandwidth's device_local_copy)
//   gpu:N          the GPU: the source of each --xfer_gpus pair (copies_plan.hpp)
// Timing as host_staging's: pinned and local: GPU time of a batch, the stream held until queued;
// pageable: host clock of the batch (its calls block, it cannot be held). dir:local's copies
// take turns over a ring of buffers twice the L2 cache (copies_plan.hpp: plan_ring), so none
// reads what the one before left in the cache.
//
// One process does the copies (rank 0); other ranks only take part in the agreements.
#include <chrono>
#include <optional>
#include <string>

#include "gpu/copies_plan.hpp"
#include "gpu/copy_kernels.hpp"
#include "gpu/copy_ring.hpp"
#include "gpu/copy_row.hpp"
#include "gpu/cuda.hpp"
#include "gpu/devices.hpp"
#include "gpu/stream_hold.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

using gpu::CeFamily;
using gpu::Event;
using gpu::HostDir;
using gpu::RingSide;
using gpu::Stream;

// Buffers, streams and events of one run of one row. Stream `up_` carries host -> GPU (and
// dir:local), stream `down_` GPU -> host; in dir:bi `down_` forks from and joins `up_` around a
// batch, and the d2h direction carries a pattern of its own.
class CeCopy {
 public:
  CeCopy(const CeFamily& family, std::size_t bytes, std::uint64_t seed)
      : f_(family),
        bytes_(bytes),
        seed_(seed),
        reverse_seed_(mix64(seed)),
        up_(family.src),
        down_(family.src),
        start_(family.src),
        stop_(family.src),
        forked_(family.src, false),
        joined_(family.src, false) {
    const int gpu = f_.src;
    const auto host = f_.pinned ? RingSide::Memory::Pinned : RingSide::Memory::Pageable;
    const gpu::Ring one{(bytes + 255) / 256 * 256, 1};
    if (f_.dir == HostDir::Local) {
      ring_ = gpu::plan_ring(bytes, gpu::l2_bytes(gpu));
      cursor_ = gpu::RingCursor(ring_.slots);
      src_ = RingSide(RingSide::Memory::Device, gpu, ring_, bytes);
      dst_ = RingSide(RingSide::Memory::Device, gpu, ring_, bytes);
    } else {
      ring_ = one;
      const bool up = f_.dir != HostDir::D2H;
      src_ = RingSide(up ? host : RingSide::Memory::Device, gpu, one, bytes);
      dst_ = RingSide(up ? RingSide::Memory::Device : host, gpu, one, bytes);
      if (f_.dir == HostDir::Both) {
        back_src_ = RingSide(RingSide::Memory::Device, gpu, one, bytes);
        back_dst_ = RingSide(host, gpu, one, bytes);
        back_src_.fill(reverse_seed_, down_.get());
      }
    }
    src_.fill(seed_, up_.get());
    if (f_.pinned || f_.dir == HostDir::Local) hold_.emplace(gpu);
  }

  void warm_up(int copies) {
    enqueue(copies);
    up_.synchronize();
  }

  void poison() {
    dst_.poison(seed_, up_.get());
    if (f_.dir == HostDir::Both) back_dst_.poison(reverse_seed_, down_.get());
    cursor_.restart();
  }

  // Pinned and local: GPU time of `batch` copies, the stream held while they are queued where
  // `hold`. Pageable: its calls wait for the copies, so the host clock is the measure.
  std::optional<double> time_batch(std::int64_t batch, bool hold) {
    if (!hold_) {
      const auto start = std::chrono::steady_clock::now();
      enqueue(batch);
      up_.synchronize();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    {
      std::optional<gpu::HeldStream> held;
      if (hold) held.emplace(*hold_, up_.get());
      start_.record(up_.get());
      enqueue(batch);
      stop_.record(up_.get());
    }
    stop_.synchronize();
    if (hold && hold_->timed_out()) return std::nullopt;
    return gpu::elapsed_seconds(start_, stop_);
  }

  double time_one() { return *time_batch(1, false); }

  void validate(bool corrupt) {
    const auto slots = cursor_.written();
    if (corrupt && !slots.empty()) dst_.flip(slots.back(), up_.get());
    for (const auto k : slots) check(dst_, k, seed_, src_, up_);
    if (f_.dir == HostDir::Both) check(back_dst_, 0, reverse_seed_, back_src_, down_);
  }

 private:
  // `copies` copies (each both ways in dir:bi), ordered after what stream up_ holds so far and
  // before what it gets next.
  void enqueue(std::int64_t copies) {
    const bool both = f_.dir == HostDir::Both;
    if (both) {
      forked_.record(up_.get());
      gpu::wait(down_.get(), forked_);
    }
    for (std::int64_t i = 0; i < copies; ++i) {
      const std::uint64_t k = cursor_.take();
      XFER_CUDA_CHECK(
          cudaMemcpyAsync(dst_.slot(k), src_.slot(k), bytes_, cudaMemcpyDefault, up_.get()));
      if (both)
        XFER_CUDA_CHECK(cudaMemcpyAsync(back_dst_.slot(0), back_src_.slot(0), bytes_,
                                        cudaMemcpyDefault, down_.get()));
    }
    if (both) {
      joined_.record(down_.get());
      gpu::wait(up_.get(), joined_);
    }
  }

  void check(const RingSide& dst, std::uint64_t k, std::uint64_t seed, const RingSide& src,
             const Stream& stream) const {
    const Mismatch m = dst.check(k, seed, stream.get());
    if (m.count > 0)
      throw Error(describe(m, bytes_) + " in " + dst.where() + ", copied from " + src.where() +
                  " by the copy engine");
  }

  const CeFamily f_;
  const std::size_t bytes_;
  const std::uint64_t seed_;
  const std::uint64_t reverse_seed_;
  gpu::Ring ring_;
  gpu::RingCursor cursor_;
  RingSide src_, dst_, back_src_, back_dst_;  // back_: GPU -> host of dir:bi
  Stream up_, down_;
  Event start_, stop_;     // timing, on up_
  Event forked_, joined_;  // ordering only
  std::optional<gpu::StreamHold>
      hold_;  // pinned and local; last: released before anything is freed
};

void ce_row(Visit& visit, const Harness& h, const Row& row, const CeFamily& f, bool& may_hold) {
  const std::string where =
      f.dir == HostDir::Local ? "GPU " + std::to_string(f.src) + " -> GPU " + std::to_string(f.src)
      : f.dir == HostDir::H2D ? "host -> GPU " + std::to_string(f.src)
      : f.dir == HostDir::D2H ? "GPU " + std::to_string(f.src) + " -> host"
                              : "host <-> GPU " + std::to_string(f.src);
  // A batch of copies per clock reading; held until queued where pinned or local (1 queued
  // copy each; dir:bi 2, plus the fork and join around the batch).
  gpu::BatchPlan timing{batch_for(row.bytes), false};
  if (f.pinned || f.dir == HostDir::Local)
    timing = gpu::plan_batch(batch_for(row.bytes), f.directions(), f.directions() == 2 ? 6 : 2);
  gpu::copy_row<CeCopy>(visit, h, row, f, where, timing, may_hold, f.directions());
}

}  // namespace

void register_ce_copy(Registry& registry) {
  gpu::register_copy_families(registry, "ce_copy", gpu::plan_ce_copy, ce_row, BigWarmUp::NewFamily);
}

}  // namespace xfer
