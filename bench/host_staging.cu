// host_staging: GPU a -> host buffer -> GPU b in one process with cudaMemcpyAsync, the path
// every copy takes when the GPUs cannot reach each other (and what MPI does for device data
// when it is not CUDA-aware).
//
//   host:pinned      page-locked host buffer (cudaHostRegister): true asynchronous DMA
//   host:pageable    ordinary malloc'ed buffer: the driver copies through its own pinned
//                    buffers and the calls block the host
//   mode:sequential  the whole message to the host, then the whole message to GPU b
//   mode:pipelined   in chunks (copy_plan.hpp: staging_chunk, at most 4 MiB): chunk i goes to
//                    GPU b while chunk i+1 comes down from GPU a, on two streams joined by
//                    events, as a real staging layer does
//   (no timing key)  bandwidth: pinned: GPU time of a batch, the stream held until queued;
//                    pageable: host clock of the batch (its calls block, it cannot be held)
//   timing:latency   one copy as an application sees it: host clock, enqueue to completion
//
// With one GPU, a = b (device -> host -> the same device). One process does the copies (rank
// 0); other ranks only take part in the agreements.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/pattern.hpp"
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
using gpu::StagingFamily;
using gpu::Stream;

double host_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Buffers, streams and events of one run of one row. Stream a (GPU a) copies down, stream b
// (GPU b) copies up; every copy ends with stream a waiting for stream b, so the next copy in
// a batch never overwrites host memory that is still being read.
class StagedCopy {
 public:
  StagedCopy(const StagingFamily& family, std::size_t bytes, std::uint64_t seed)
      : f_(family),
        bytes_(bytes),
        chunk_(family.pipelined ? gpu::staging_chunk(bytes) : bytes),
        seed_(seed),
        src_(family.src, bytes),
        dst_(family.dst, bytes),
        stream_a_(family.src),
        stream_b_(family.dst),
        start_(family.src),
        stop_(family.src),
        staged_(family.src, false),
        joined_(family.dst, false) {
    if (f_.pinned) {
      pinned_ = gpu::PinnedBuffer(bytes);
      hold_.emplace(f_.src);
    } else {
      pageable_ = gpu::PageableBuffer(bytes);
    }
    host_ = static_cast<char*>(f_.pinned ? pinned_.data() : pageable_.data());
    gpu::fill_pattern_device(src_.data(), bytes, seed_, stream_a_.get());
    stream_a_.synchronize();
  }

  void warm_up(int copies) {
    for (int i = 0; i < copies; ++i) enqueue_copy();
    stream_a_.synchronize();
  }

  // Poisons GPU b's buffer, and the host buffer too: an upload that ran ahead of its download
  // would deliver poison, not a stale copy of the right data.
  void poison() {
    gpu::poison_device(dst_.data(), bytes_, seed_, stream_b_.get());
    fill_bytes(host_, bytes_, 0xA5);
    stream_b_.synchronize();
  }

  // Pinned: GPU time of `batch` copies, with `hold` the stream held until all are queued.
  // Pageable: its calls wait for the copies themselves, so the host clock is the measure.
  // None if the hold gave up before the host had queued the batch.
  std::optional<double> time_batch(std::int64_t batch, bool hold) {
    if (!f_.pinned) {
      const auto start = std::chrono::steady_clock::now();
      for (std::int64_t i = 0; i < batch; ++i) enqueue_copy();
      stream_a_.synchronize();
      return host_seconds_since(start);
    }
    {
      std::optional<gpu::HeldStream> held;
      if (hold) held.emplace(*hold_, stream_a_.get());
      start_.record(stream_a_.get());
      for (std::int64_t i = 0; i < batch; ++i) enqueue_copy();
      stop_.record(stream_a_.get());
    }
    stop_.synchronize();
    if (hold && hold_->timed_out()) return std::nullopt;
    return gpu::elapsed_seconds(start_, stop_);
  }

  // One copy as an application sees it: from the first call to the end of a synchronize.
  double time_one() {
    const auto start = std::chrono::steady_clock::now();
    enqueue_copy();
    stream_a_.synchronize();
    return host_seconds_since(start);
  }

  void validate(bool corrupt) {
    if (corrupt) gpu::flip_byte_device(dst_.data(), bytes_ / 2, stream_b_.get());
    const Mismatch m = gpu::count_mismatches_device(dst_.data(), bytes_, seed_, stream_b_.get());
    if (m.count > 0)
      throw Error(describe(m, bytes_) + " on GPU " + std::to_string(f_.dst) + ", staged from GPU " +
                  std::to_string(f_.src) + " through " + (f_.pinned ? "pinned" : "pageable") +
                  " host memory");
  }

 private:
  // One whole copy a -> host -> b, in chunks of chunk_ (one chunk: sequential).
  void enqueue_copy() {
    char* src = static_cast<char*>(src_.data());
    char* dst = static_cast<char*>(dst_.data());
    for (std::size_t offset = 0; offset < bytes_; offset += chunk_) {
      const std::size_t n = std::min(chunk_, bytes_ - offset);
      XFER_CUDA_CHECK(cudaMemcpyAsync(host_ + offset, src + offset, n, cudaMemcpyDeviceToHost,
                                      stream_a_.get()));
      staged_.record(stream_a_.get());
      gpu::wait(stream_b_.get(), staged_);  // this chunk is on the host
      XFER_CUDA_CHECK(cudaMemcpyAsync(dst + offset, host_ + offset, n, cudaMemcpyHostToDevice,
                                      stream_b_.get()));
    }
    joined_.record(stream_b_.get());
    gpu::wait(stream_a_.get(), joined_);  // the host buffer is free again
  }

  const StagingFamily f_;
  const std::size_t bytes_;
  const std::size_t chunk_;
  const std::uint64_t seed_;
  DeviceBuffer src_, dst_;
  gpu::PinnedBuffer pinned_;
  gpu::PageableBuffer pageable_;
  char* host_ = nullptr;
  Stream stream_a_, stream_b_;
  Event start_, stop_;                   // timing, on GPU a
  Event staged_, joined_;                // ordering only: a chunk is down; the whole copy is up
  std::optional<gpu::StreamHold> hold_;  // pinned only; last: released before anything is freed
};

// `may_hold` is the family's: once queueing blocked behind a hold, the family times unheld.
void staging_row(Visit& visit, const Harness& h, const Row& row, const StagingFamily& f,
                 bool& may_hold) {
  const std::string where =
      "GPU " + std::to_string(f.src) + " -> host -> GPU " + std::to_string(f.dst);
  // Bandwidth: a batch of copies per clock reading; pinned batches are held until queued
  // where they are short enough to hold (copy_plan.hpp: plan_batch).
  gpu::BatchPlan timing{1, false};  // timing:latency: one copy, host clock
  if (!f.latency) {
    timing = f.pinned ? gpu::plan_batch(batch_for(row.bytes),
                                        gpu::staging_operations_per_copy(row.bytes, f.pipelined), 2)
                      : gpu::BatchPlan{batch_for(row.bytes), false};
  }
  gpu::copy_row<StagedCopy>(visit, h, row, f, where, timing, may_hold);
}

}  // namespace

void register_host_staging(Registry& registry) {
  gpu::register_copy_families(registry, "host_staging", gpu::plan_host_staging, staging_row,
                              BigWarmUp::NewFamily);
}

}  // namespace xfer
