#include "gpu/copies_plan.hpp"

#include <algorithm>

namespace xfer::gpu {
namespace {

std::string gpu_part(int gpu) { return "gpu:" + std::to_string(gpu); }

std::string visible_text(int devices) {
  return std::to_string(devices) + (devices == 1 ? " CUDA device is" : " CUDA devices are") +
         " visible";
}

std::string missing(int gpu, int devices) {
  return "GPU " + std::to_string(gpu) + " does not exist here (" + visible_text(devices) +
         ", numbered from 0)";
}

// The GPUs of the per-GPU families: the source of each pair asked for, once each, in order;
// GPU 0 where only one is visible. Skips name the ones that do not exist.
template <class Family>
std::vector<int> copy_gpus(const GpuPairs& gpus, const GpuFacts& facts, const std::string& path,
                           CopyPlan<Family>& plan) {
  if (facts.devices == 1) return {0};
  std::vector<int> out;
  for (const auto& [a, b] : expand_pairs(gpus, facts.devices)) {
    if (std::find(out.begin(), out.end(), a) != out.end()) continue;
    if (a < 0 || a >= facts.devices) {
      plan.skips.push_back({path + "/" + gpu_part(a), missing(a, facts.devices)});
      continue;
    }
    out.push_back(a);
  }
  return out;
}

// The peer pairs asked for that exist and are two GPUs, once each, in order.
template <class Family>
std::vector<std::pair<int, int>> peer_pairs(const GpuPairs& gpus, const GpuFacts& facts,
                                            const std::string& path, CopyPlan<Family>& plan) {
  std::vector<std::pair<int, int>> out;
  for (const auto& p : expand_pairs(gpus, facts.devices)) {
    if (std::find(out.begin(), out.end(), p) != out.end()) continue;
    const auto [a, b] = p;
    const std::string where = path + "/" + pair_part(a, b);
    if (a < 0 || b < 0 || a >= facts.devices || b >= facts.devices)
      plan.skips.push_back({where, missing(a >= facts.devices || a < 0 ? a : b, facts.devices)});
    else if (a == b)
      plan.skips.push_back(
          {where, "source and destination are the same GPU; a peer copy needs two"});
    else
      out.push_back(p);
  }
  return out;
}

std::string no_peer(int from, int to) {
  return "GPU " + std::to_string(from) + " cannot access GPU " + std::to_string(to) +
         " as a peer (cudaDeviceCanAccessPeer is 0)";
}

template <class Family>
bool no_device(const GpuFacts& facts, const std::string& path, CopyPlan<Family>& plan) {
  if (facts.devices > 0) return false;
  plan.skips.push_back({path, facts.why_none.empty() ? "no GPU visible" : facts.why_none});
  return true;
}

template <class Family>
void none_runnable(const std::string& path, CopyPlan<Family>& plan) {
  if (plan.families.empty()) plan.skips.push_back({path, "no runnable GPU among those asked for"});
}

}  // namespace

std::string dir_part(HostDir dir) {
  switch (dir) {
    case HostDir::H2D:
      return "dir:h2d";
    case HostDir::D2H:
      return "dir:d2h";
    case HostDir::Both:
      return "dir:bi";
    case HostDir::Local:
      break;
  }
  return "dir:local";
}

std::string CeFamily::name() const {
  if (dir == HostDir::Local) return "ce_copy/dir:local/" + gpu_part(src);
  return std::string("ce_copy/host:") + (pinned ? "pinned/" : "pageable/") + dir_part(dir) + "/" +
         gpu_part(src);
}

links::Crossing CeFamily::crossing() const {
  return links::Crossing::between_gpus(
      dir == HostDir::Local ? links::Crossing::Kind::LocalCopy : links::Crossing::Kind::HostCopy,
      src, dst);
}

std::string SmFamily::name() const {
  switch (reach) {
    case SmReach::Host:
      return "sm_copy/host:mapped/" + dir_part(dir) + "/" + gpu_part(src);
    case SmReach::Local:
      return "sm_copy/dir:local/" + gpu_part(src);
    case SmReach::PeerRead:
      return "sm_copy/peer:read/" + pair_part(src, dst);
    case SmReach::PeerWrite:
      return "sm_copy/peer:write/" + pair_part(src, dst);
    case SmReach::PeerBoth:
      break;
  }
  return "sm_copy/peer:bi/" + pair_part(src, dst);
}

links::Crossing SmFamily::crossing() const {
  if (peer()) {
    auto c = links::Crossing::between_gpus(links::Crossing::Kind::GpuCopy, src, dst);
    c.peer_access = true;
    return c;
  }
  return links::Crossing::between_gpus(
      reach == SmReach::Local ? links::Crossing::Kind::LocalCopy : links::Crossing::Kind::HostCopy,
      src, dst);
}

std::string ChaseFamily::name() const {
  return peer ? "pointer_chase/peer:read/span:2MiB/" + pair_part(src, dst)
              : "pointer_chase/host:mapped/span:2MiB/" + gpu_part(src);
}

links::Crossing ChaseFamily::crossing() const { return {}; }

CopyPlan<CeFamily> plan_ce_copy(const GpuPairs& gpus, const GpuFacts& facts) {
  CopyPlan<CeFamily> plan;
  if (no_device(facts, "ce_copy", plan)) return plan;
  const auto list = copy_gpus(gpus, facts, "ce_copy", plan);
  struct Shape {
    HostDir dir;
    bool pinned;
  };
  // Pageable memory has no both-ways row: its copies block the calling thread, so two
  // directions at once would need two host threads.
  const Shape shapes[] = {{HostDir::H2D, true},  {HostDir::D2H, true},  {HostDir::Both, true},
                          {HostDir::H2D, false}, {HostDir::D2H, false}, {HostDir::Local, true}};
  for (const auto& shape : shapes) {
    for (const int g : list) plan.families.push_back({g, g, shape.dir, shape.pinned});
  }
  none_runnable("ce_copy", plan);
  return plan;
}

CopyPlan<SmFamily> plan_sm_copy(const GpuPairs& gpus, const GpuFacts& facts) {
  CopyPlan<SmFamily> plan;
  if (no_device(facts, "sm_copy", plan)) return plan;
  const auto list = copy_gpus(gpus, facts, "sm_copy", plan);
  for (const HostDir dir : {HostDir::H2D, HostDir::D2H, HostDir::Both}) {
    for (const int g : list) plan.families.push_back({g, g, SmReach::Host, dir});
  }
  for (const int g : list) plan.families.push_back({g, g, SmReach::Local, HostDir::Local});
  if (facts.devices < 2) {
    plan.skips.push_back({"sm_copy/peer", "needs 2 GPUs; only " + visible_text(facts.devices)});
  } else {
    const auto pairs = peer_pairs(gpus, facts, "sm_copy/peer", plan);
    for (const SmReach reach : {SmReach::PeerRead, SmReach::PeerWrite, SmReach::PeerBoth}) {
      for (const auto& [a, b] : pairs) {
        const SmFamily family{a, b, reach, HostDir::H2D};
        // read: b's kernel loads a's memory; write: a's kernel stores to b's; bi: both.
        if (reach != SmReach::PeerWrite && !facts.p2p(b, a)) {
          plan.skips.push_back({family.name(), no_peer(b, a)});
        } else if (reach != SmReach::PeerRead && !facts.p2p(a, b)) {
          plan.skips.push_back({family.name(), no_peer(a, b)});
        } else {
          plan.families.push_back(family);
        }
      }
    }
  }
  none_runnable("sm_copy", plan);
  return plan;
}

CopyPlan<ChaseFamily> plan_pointer_chase(const GpuPairs& gpus, const GpuFacts& facts) {
  CopyPlan<ChaseFamily> plan;
  if (no_device(facts, "pointer_chase", plan)) return plan;
  for (const int g : copy_gpus(gpus, facts, "pointer_chase", plan))
    plan.families.push_back({g, g, false});
  if (facts.devices < 2) {
    plan.skips.push_back(
        {"pointer_chase/peer", "needs 2 GPUs; only " + visible_text(facts.devices)});
  } else {
    for (const auto& [a, b] : peer_pairs(gpus, facts, "pointer_chase/peer", plan)) {
      const ChaseFamily family{a, b, true};
      if (facts.p2p(b, a))
        plan.families.push_back(family);
      else
        plan.skips.push_back({family.name(), no_peer(b, a)});
    }
  }
  none_runnable("pointer_chase", plan);
  return plan;
}

const std::vector<std::uint64_t> kDefaultCeSizes = {std::uint64_t{4} << 10, std::uint64_t{1} << 20,
                                                    std::uint64_t{64} << 20};

FamilySizes sizes_of(const CeFamily& family) {
  FamilySizes sizes;
  sizes.all_by_default = false;
  if (family.pinned && (family.dir == HostDir::H2D || family.dir == HostDir::D2H))
    sizes.by_default = kDefaultCeSizes;
  return sizes;
}

FamilySizes sizes_of(const SmFamily& family) {
  FamilySizes sizes;
  sizes.all_by_default = false;
  if (family.reach == SmReach::Local) sizes.by_default = {kDefaultLocalBytes};
  return sizes;
}

FamilySizes sizes_of(const ChaseFamily&) {
  FamilySizes sizes;
  sizes.own = {8};
  sizes.all_by_default = false;
  return sizes;
}

CopyGrid plan_copy_grid(std::uint64_t bytes, int sms, int blocks_per_sm, int threads, int jobs) {
  CopyGrid grid;
  grid.threads = static_cast<unsigned>(std::max(threads, 64));
  grid.vectors = bytes / 16;
  grid.tail = static_cast<unsigned>(bytes % 16);
  const std::uint64_t most = static_cast<std::uint64_t>(std::max(sms, 1)) *
                             static_cast<std::uint64_t>(std::max(blocks_per_sm, 1));
  // Enough threads for every vector of every job (and the tail), no more than fill the GPU.
  const std::uint64_t work = std::max<std::uint64_t>(grid.vectors, grid.tail) *
                             static_cast<std::uint64_t>(std::max(jobs, 1));
  const std::uint64_t needed = std::max<std::uint64_t>(1, (work + grid.threads - 1) / grid.threads);
  grid.blocks = static_cast<unsigned>(std::min(needed, most));
  return grid;
}

Ring plan_ring(std::uint64_t bytes, std::uint64_t l2_bytes) {
  Ring ring;
  ring.stride = std::max<std::uint64_t>(256, (bytes + 255) / 256 * 256);
  const std::uint64_t span = 2 * l2_bytes;
  if (bytes >= span) return ring;
  ring.slots = std::clamp<std::uint64_t>((span + ring.stride - 1) / ring.stride, 1, kMaxRingSlots);
  return ring;
}

std::uint64_t chase_node_after(std::uint64_t start, std::uint64_t loads) {
  return (start % kChaseNodes + (loads % kChaseNodes) * kChaseStride % kChaseNodes) % kChaseNodes;
}

}  // namespace xfer::gpu
