// What the one-process GPU copy paths (memcpy_peer, host_staging) run here and what they skip,
// decided from plain facts (device count, peer-access matrix) so it is testable without a GPU.
// Rank 0 probes the facts; every rank plans from rank 0's facts, so every rank registers the
// same benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "harness/harness.hpp"

namespace xfer::gpu {

struct GpuFacts {
  int devices = 0;
  std::string why_none;            // why there is no device, when devices == 0
  std::vector<bool> can_access;    // row-major devices x devices: cudaDeviceCanAccessPeer(a, b)
  std::vector<std::string> buses;  // each device's PCI bus id (empty: not probed)

  bool p2p(int a, int b) const;
  std::string bus(int device) const;  // "" where unknown
};

// One line of text, so rank 0's facts can be broadcast as a string.
std::string encode(const GpuFacts& facts);
GpuFacts decode_facts(const std::string& text);  // throws xfer::Error on malformed text

struct PeerFamily {
  int src = 0;
  int dst = 1;
  bool p2p = true;
  bool bidirectional = false;
  bool latency = false;  // timing:latency (host clock, one copy) instead of bandwidth
  // "memcpy_peer/p2p:on/dir:uni/pair:0to1", ".../dir:uni/timing:latency/pair:0to1"
  std::string name() const;
  links::Crossing crossing() const;  // GPU to GPU with peer access, else through the driver
};

struct StagingFamily {
  int src = 0;
  int dst = 1;
  bool pinned = true;
  bool pipelined = false;
  bool latency = false;
  // "host_staging/host:pinned/mode:pipelined/pair:0to1"
  std::string name() const;
  links::Crossing crossing() const;  // down src's PCIe link and up dst's, in turn or at once
};

// Their sizes: every size of the run, all in the default selection.
inline FamilySizes sizes_of(const PeerFamily&) { return {}; }
inline FamilySizes sizes_of(const StagingFamily&) { return {}; }

template <class Family>
struct CopyPlan {
  std::vector<Family> families;
  std::vector<Skip> skips;  // whole path ("memcpy_peer") or one variant/pair (its family name)
};

// Variant-major order (all pairs of one variant, then the next), like p2pBandwidthLatencyTest's
// matrices: p2p:on uni, bi, latency; then p2p:off uni, bi, latency.
CopyPlan<PeerFamily> plan_memcpy_peer(const GpuPairs& gpus, const GpuFacts& facts);

// pinned sequential, pinned pipelined, pageable sequential, pageable pipelined, then latency
// (sequential) pinned and pageable. With one GPU every pair becomes 0to0 (a = b).
CopyPlan<StagingFamily> plan_host_staging(const GpuPairs& gpus, const GpuFacts& facts);

// "pair:0to1"
std::string pair_part(int src, int dst);

// Chunk of the pipelined staging copy: bytes/8, at most 4 MiB, at least 256 KiB (and never
// more than the message): 8 chunks for mid-size messages, 4 MiB chunks for large ones.
std::size_t staging_chunk(std::size_t bytes);

// Operations one staged copy queues: per chunk a download, an event, a wait and an upload;
// then the join (an event and a wait). Sequential copies are one chunk.
int staging_operations_per_copy(std::size_t bytes, bool pipelined);

// How a bandwidth row times a batch. Holding the stream (stream_hold.hpp) keeps enqueue time
// out, but only a bounded number of operations may wait behind the hold before queueing
// itself blocks; p2pBandwidthLatencyTest holds about 100 copies.
constexpr int kMaxHeldOperations = 128;
struct BatchPlan {
  std::int64_t batch = 1;  // copies per timed batch
  bool hold = true;        // hold the stream while queueing; false: the batch is too long to
                           // hold, and its copies take far longer to run than to queue
};
// `wanted` copies (batch_for), each `ops_per_copy` queued operations (copies, event records,
// stream waits), plus `fixed_ops` per batch (start/stop events, fork/join).
BatchPlan plan_batch(std::int64_t wanted, int ops_per_copy, int fixed_ops);

// Copies the driver stages through the host (memcpy_peer p2p:off) block the host while it
// queues them once they are large (seen on 2x H200: 1 GiB blocked, 256 MiB did not), so they
// must not wait behind a hold. Above 64 MiB such a copy takes over a millisecond, so starting
// the clock unheld costs well under 1%.
constexpr std::uint64_t kMaxHeldStagedPeerBytes = std::uint64_t{64} << 20;
bool may_hold_peer_copy(bool p2p, std::uint64_t bytes);

}  // namespace xfer::gpu
