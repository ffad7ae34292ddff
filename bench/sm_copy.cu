// sm_copy: a copy kernel, the second way a GPU reaches memory that is not its own (the way
// NCCL's transfers go): its threads load and store through a mapped or peer pointer.
//
//   host:mapped/dir:h2d|d2h   GPU N's kernel reads mapped pinned host memory into its own, or
//                             writes its own into it (zero-copy over PCIe)
//   host:mapped/dir:bi        both at once in one kernel, warps alternating between the two
//                             copies (each its own buffers); GB/s is their sum
//   dir:local                 within the GPU's memory: the memory-bandwidth reference
//   peer:read/pair:AtoB       B's kernel loads A's memory into B's (peer access, NVLink or PCIe)
//   peer:write/pair:AtoB      A's kernel stores its memory into B's
//   peer:bi/pair:AtoB         A's kernel writes B's while B's writes A's; GB/s is their sum
// The kernel (gpu/copy_kernels.hpp) moves 16-byte vectors with every SM full: SMs x the blocks
// of 512 threads an SM holds (the occupancy API), a grid-stride loop with four loads in flight a
// thread, and the last bytes % 16 one a thread, so it copies the message exactly
// (copies_plan.hpp: plan_copy_grid). One launch is one copy; a batch of launches is timed with
// CUDA events, the stream held until queued, as the copy-engine paths. Copies take turns over a
// ring of buffers twice the L2 cache (copies_plan.hpp: plan_ring), so none reads what the one
// before it left in the cache.
//
// One process does the copies (rank 0); other ranks only take part in the agreements.
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

using gpu::Event;
using gpu::HostDir;
using gpu::RingSide;
using gpu::SmFamily;
using gpu::SmReach;
using gpu::Stream;
using Memory = RingSide::Memory;

// The GPU whose kernel makes the copy (peer:bi: A's; B's makes the way back).
int runner_of(const SmFamily& f) { return f.reach == SmReach::PeerRead ? f.dst : f.src; }

// Buffers, streams and events of one run of one row. a: GPU src's stream, b: GPU dst's (a second
// stream of the same GPU for host and local rows). The copy src_ -> dst_ runs on the runner's
// stream; the way back of peer:bi (back_src_ -> back_dst_) on b, forked from and joined to a.
class SmCopy {
 public:
  SmCopy(const SmFamily& family, std::size_t bytes, std::uint64_t seed)
      : f_(family),
        bytes_(bytes),
        seed_(seed),
        reverse_seed_(mix64(seed)),
        runner_(runner_of(family)),
        a_(family.src),
        b_(family.dst),
        start_(runner_),
        stop_(runner_),
        forked_(runner_, false),
        joined_(family.dst, false),
        hold_(runner_) {
    ring_ = gpu::plan_ring(bytes, gpu::l2_bytes(runner_));
    cursor_ = gpu::RingCursor(ring_.slots);
    const int gpu = f_.src;
    switch (f_.reach) {
      case SmReach::Host: {
        const bool up = f_.dir != HostDir::D2H;
        src_ = RingSide(up ? Memory::Mapped : Memory::Device, gpu, ring_, bytes);
        dst_ = RingSide(up ? Memory::Device : Memory::Mapped, gpu, ring_, bytes);
        if (f_.dir == HostDir::Both) {
          back_src_ = RingSide(Memory::Device, gpu, ring_, bytes);
          back_dst_ = RingSide(Memory::Mapped, gpu, ring_, bytes);
        }
        break;
      }
      case SmReach::Local:
        src_ = RingSide(Memory::Device, gpu, ring_, bytes);
        dst_ = RingSide(Memory::Device, gpu, ring_, bytes);
        break;
      default:
        gpu::enable_peer_access(runner_, runner_ == f_.src ? f_.dst : f_.src);
        src_ = RingSide(Memory::Device, f_.src, ring_, bytes);
        dst_ = RingSide(Memory::Device, f_.dst, ring_, bytes);
        if (f_.reach == SmReach::PeerBoth) {
          gpu::enable_peer_access(f_.dst, f_.src);
          back_src_ = RingSide(Memory::Device, f_.dst, ring_, bytes);
          back_dst_ = RingSide(Memory::Device, f_.src, ring_, bytes);
        }
    }
    const int jobs = f_.reach == SmReach::Host && f_.dir == HostDir::Both ? 2 : 1;
    grid_ = gpu::plan_copy_grid(bytes, gpu::sm_count(runner_), gpu::copy_blocks_per_sm(runner_),
                                gpu::kCopyThreads, jobs);
    if (f_.reach == SmReach::PeerBoth)
      grid_back_ = gpu::plan_copy_grid(bytes, gpu::sm_count(f_.dst),
                                       gpu::copy_blocks_per_sm(f_.dst), gpu::kCopyThreads, 1);
    src_.fill(seed_, a_.get());
    if (two_copies())
      back_src_.fill(reverse_seed_, f_.reach == SmReach::PeerBoth ? b_.get() : a_.get());
  }

  void warm_up(int copies) {
    enqueue(copies);
    run().synchronize();
  }

  void poison() {
    dst_.poison(seed_, side_stream(f_.dst).get());
    if (two_copies()) back_dst_.poison(reverse_seed_, a_.get());
    cursor_.restart();
  }

  // GPU time of `batch` copies; with `hold`, the stream is held until all are queued. None if
  // the hold gave up before the host had queued them.
  std::optional<double> time_batch(std::int64_t batch, bool hold) {
    {
      std::optional<gpu::HeldStream> held;
      if (hold) held.emplace(hold_, run().get());
      start_.record(run().get());
      enqueue(batch);
      stop_.record(run().get());
    }
    stop_.synchronize();
    if (hold && hold_.timed_out()) return std::nullopt;
    return gpu::elapsed_seconds(start_, stop_);
  }

  double time_one() { return *time_batch(1, false); }

  void validate(bool corrupt) {
    const auto slots = cursor_.written();
    const Stream& dst_stream = side_stream(f_.dst);
    if (corrupt && !slots.empty()) dst_.flip(slots.back(), dst_stream.get());
    for (const auto k : slots) {
      check(dst_, k, seed_, src_, dst_stream);
      if (two_copies()) check(back_dst_, k, reverse_seed_, back_src_, a_);
    }
  }

 private:
  bool two_copies() const {
    return f_.reach == SmReach::PeerBoth || (f_.reach == SmReach::Host && f_.dir == HostDir::Both);
  }
  const Stream& run() const { return runner_ == f_.src ? a_ : b_; }
  // The stream for work on GPU `device`'s memory (host and local rows: a's).
  const Stream& side_stream(int device) const { return device == f_.src ? a_ : b_; }

  // `copies` launches, ordered after what the runner's stream holds so far and before what it
  // gets next (peer:bi: B's launches fork from and join it).
  void enqueue(std::int64_t copies) {
    const bool peer_both = f_.reach == SmReach::PeerBoth;
    if (peer_both) {
      forked_.record(a_.get());
      gpu::wait(b_.get(), forked_);
    }
    for (std::int64_t i = 0; i < copies; ++i) {
      const std::uint64_t k = cursor_.take();
      {
        gpu::DeviceGuard guard(runner_);
        const gpu::CopyJob back = two_copies() && !peer_both
                                      ? gpu::CopyJob{back_dst_.slot(k), back_src_.slot(k)}
                                      : gpu::CopyJob{};
        gpu::launch_copy(grid_, {dst_.slot(k), src_.slot(k)}, back, back.dst ? 2 : 1, run().get());
      }
      if (peer_both) {
        gpu::DeviceGuard guard(f_.dst);
        gpu::launch_copy(grid_back_, {back_dst_.slot(k), back_src_.slot(k)}, {}, 1, b_.get());
      }
    }
    if (peer_both) {
      joined_.record(b_.get());
      gpu::wait(a_.get(), joined_);
    }
  }

  void check(const RingSide& dst, std::uint64_t k, std::uint64_t seed, const RingSide& src,
             const Stream& stream) const {
    const Mismatch m = dst.check(k, seed, stream.get());
    if (m.count > 0)
      throw Error(describe(m, bytes_) + " in " + dst.where() + ", copied from " + src.where() +
                  " by GPU " + std::to_string(runner_) + "'s copy kernel");
  }

  const SmFamily f_;
  const std::size_t bytes_;
  const std::uint64_t seed_;
  const std::uint64_t reverse_seed_;
  const int runner_;
  gpu::Ring ring_;
  gpu::RingCursor cursor_;
  gpu::CopyGrid grid_, grid_back_;
  RingSide src_, dst_, back_src_, back_dst_;  // back_: the second copy of dir:bi and peer:bi
  Stream a_, b_;
  Event start_, stop_;     // timing, on the runner
  Event forked_, joined_;  // ordering only (peer:bi)
  gpu::StreamHold hold_;   // last: released (and its kernel gone) before anything is freed
};

void sm_row(Visit& visit, const Harness& h, const Row& row, const SmFamily& f, bool& may_hold) {
  const std::string host = "host memory";
  std::string where;
  switch (f.reach) {
    case SmReach::Host:
      where = "GPU " + std::to_string(f.src) + " kernel, " +
              (f.dir == HostDir::H2D   ? "host -> GPU"
               : f.dir == HostDir::D2H ? "GPU -> host"
                                       : "host <-> GPU");
      break;
    case SmReach::Local:
      where = "GPU " + std::to_string(f.src) + " kernel, local";
      break;
    default:
      where = "GPU " + std::to_string(runner_of(f)) + " kernel, GPU " + std::to_string(f.src) +
              (f.reach == SmReach::PeerBoth ? " <-> GPU " : " -> GPU ") + std::to_string(f.dst);
  }
  // A batch of launches per clock reading, held until queued (1 launch a copy; peer:bi 2, plus
  // the fork and join around the batch).
  const bool peer_both = f.reach == SmReach::PeerBoth;
  const gpu::BatchPlan timing =
      gpu::plan_batch(batch_for(row.bytes), peer_both ? 2 : 1, peer_both ? 6 : 2);
  gpu::copy_row<SmCopy>(visit, h, row, f, where, timing, may_hold, f.directions());
}

}  // namespace

void register_sm_copy(Registry& registry) {
  gpu::register_copy_families(registry, "sm_copy", gpu::plan_sm_copy, sm_row, BigWarmUp::NewFamily);
}

}  // namespace xfer
