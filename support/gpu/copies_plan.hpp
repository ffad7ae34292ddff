// What the copy paths of one GPU at a time (ce_copy, sm_copy, pointer_chase) run here and what
// they skip, decided from plain facts (copy_plan.hpp: GpuFacts) so it is testable without a GPU,
// and the arithmetic of their kernels: the grid of a copy kernel and the bytes it covers, the
// ring of buffers that keeps copies out of the L2 cache, and where a pointer chase ends.
//
// GPUs: a per-GPU family runs on the source GPU of each --xfer_gpus pair (default 0:1: GPU 0;
// all: every GPU); with one GPU visible, on GPU 0. A peer family runs on each pair a:b, a != b.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/copy_plan.hpp"

namespace xfer::gpu {

// The way bytes go: host -> device, device -> host, both at once, within the GPU's memory.
enum class HostDir { H2D, D2H, Both, Local };
std::string dir_part(HostDir dir);  // "dir:h2d", "dir:d2h", "dir:bi", "dir:local"

// ce_copy: cudaMemcpyAsync between host memory and GPU `src` (src = dst), or within it.
struct CeFamily {
  int src = 0;
  int dst = 0;
  HostDir dir = HostDir::H2D;
  bool pinned = true;    // host:pinned, else host:pageable (dir:local: no host memory)
  bool latency = false;  // never: every row is bandwidth-timed (gpu/copy_row.hpp reads it)
  // "ce_copy/host:pinned/dir:h2d/gpu:0", "ce_copy/dir:local/gpu:0"
  std::string name() const;
  links::Crossing crossing() const;  // the GPU's PCIe link, or its memory (dir:local)
  int directions() const { return dir == HostDir::Both ? 2 : 1; }
};

// sm_copy: a copy kernel. Host: GPU src's kernel reads or writes mapped pinned host memory;
// local: within GPU src's memory; peer (pair:AtoB, bytes A -> B): read: B's kernel reads A's
// memory; write: A's kernel writes B's; bi: A's kernel writes B's while B's writes A's.
enum class SmReach { Host, Local, PeerRead, PeerWrite, PeerBoth };
struct SmFamily {
  int src = 0;
  int dst = 0;
  SmReach reach = SmReach::Host;
  HostDir dir = HostDir::H2D;  // SmReach::Host only
  bool latency = false;        // never
  // "sm_copy/host:mapped/dir:h2d/gpu:0", "sm_copy/dir:local/gpu:0", "sm_copy/peer:read/pair:0to1"
  std::string name() const;
  links::Crossing crossing() const;  // PCIe, the GPU's memory, or GPU to GPU with peer access
  bool peer() const { return reach != SmReach::Host && reach != SmReach::Local; }
  int directions() const {
    return (reach == SmReach::Host && dir == HostDir::Both) || reach == SmReach::PeerBoth ? 2 : 1;
  }
};

// pointer_chase: one thread of GPU dst follows a chain of dependent 8-byte loads through mapped
// pinned host memory (gpu:N: src = dst = N) or through GPU src's memory (pair:AtoB: the chain
// in A's memory, the thread on B; peer:read).
struct ChaseFamily {
  int src = 0;
  int dst = 0;
  bool peer = false;
  bool latency = false;  // the row's time is per access already
  // "pointer_chase/host:mapped/span:2MiB/gpu:0", "pointer_chase/peer:read/span:2MiB/pair:0to1"
  std::string name() const;
  links::Crossing crossing() const;  // nothing: a latency is no share of a link
};

CopyPlan<CeFamily> plan_ce_copy(const GpuPairs& gpus, const GpuFacts& facts);
CopyPlan<SmFamily> plan_sm_copy(const GpuPairs& gpus, const GpuFacts& facts);
CopyPlan<ChaseFamily> plan_pointer_chase(const GpuPairs& gpus, const GpuFacts& facts);

// The sizes each family has and which of its rows the default run holds (the rest: a
// --benchmark_filter away; harness.hpp: FamilySizes): ce_copy pinned h2d and d2h at
// kDefaultCeSizes, sm_copy dir:local at kDefaultLocalBytes, pointer_chase one 8-byte load a
// message (a chain spanning kChaseSpanBytes), none of them in the default run.
extern const std::vector<std::uint64_t> kDefaultCeSizes;  // 4 KiB, 1 MiB, 64 MiB
constexpr std::uint64_t kDefaultLocalBytes = std::uint64_t{256} << 20;
FamilySizes sizes_of(const CeFamily& family);
FamilySizes sizes_of(const SmFamily& family);
FamilySizes sizes_of(const ChaseFamily& family);

// The grid of the copy kernel (gpu/copy_kernels.hpp). Each thread moves 16-byte vectors (the
// buffers are 256-byte aligned) in a grid-stride loop; the message's last bytes % 16 are moved
// one byte a thread by the first threads, so the bytes copied are the message, exactly, whatever
// the grid. Blocks: SMs x the blocks of `threads` an SM holds at once (the occupancy API), so
// every SM is full and each thread keeps several loads in flight; fewer where the message has
// fewer vectors than that many threads. `jobs` 2: two copies at once, warps alternating between
// them (both directions of one kernel), each with half the threads.
struct CopyGrid {
  unsigned blocks = 1;
  unsigned threads = 1;
  std::uint64_t vectors = 0;  // 16-byte vectors of one job
  unsigned tail = 0;          // bytes after the vectors, < 16
  std::uint64_t bytes() const { return vectors * 16 + tail; }
  std::uint64_t threads_per_job(int jobs) const {
    return std::uint64_t{blocks} * threads / static_cast<unsigned>(jobs);
  }
};
CopyGrid plan_copy_grid(std::uint64_t bytes, int sms, int blocks_per_sm, int threads, int jobs);

// Where each copy of a batch reads and writes: slot i % slots of a ring on either side. A copy
// that reads what the one before it left in the L2 cache would measure the cache, not the link
// or the memory (a local copy of a few MiB could read above the memory's rate and fail its row),
// so rings of small messages span at least twice the L2 cache; at most kMaxRingSlots slots
// (below about 1.5 MiB on an H200 a copy is too short for the cache to matter: the launch
// bounds it). Slots are 256-byte aligned.
constexpr std::uint64_t kMaxRingSlots = 64;
struct Ring {
  std::uint64_t stride = 0;  // bytes from one slot to the next
  std::uint64_t slots = 1;
  std::uint64_t bytes() const { return stride * slots; }
};
Ring plan_ring(std::uint64_t bytes, std::uint64_t l2_bytes);

// The pointer chase's chain, as nvbandwidth's latency tests lay it out: 8-byte nodes over
// kChaseSpanBytes, node i pointing at node (i + kChaseStride) % nodes, so each load is on a
// 128-byte line of its own.
constexpr std::uint64_t kChaseSpanBytes = std::uint64_t{2} << 20;
constexpr std::uint64_t kChaseStride = 16;
constexpr std::uint64_t kChaseNodes = kChaseSpanBytes / 8;
constexpr std::int64_t kChaseBatch = 4096;  // loads a timed kernel follows
// The node a chase starting at node `start` reaches after `loads` loads.
std::uint64_t chase_node_after(std::uint64_t start, std::uint64_t loads);

}  // namespace xfer::gpu
