#include <cstdio>
#include <map>
#include <vector>

#include "base/pattern.hpp"
#include "gpu/device_pattern.hpp"
#include "gpu/devices.hpp"
#include "gpu/staging_ping_pong.hpp"

namespace xfer::gpu {
namespace {

// The first non-empty entry, named by its rank unless it is rank 0's.
std::string first_reason(const std::vector<std::string>& per_rank) {
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (per_rank[r].empty()) continue;
    return r == 0 ? per_rank[r] : "rank " + std::to_string(r) + ": " + per_rank[r];
  }
  return "";
}

// "ranks 0 and 2 share GPU 0000:19:00.0 on node1", or "" when every rank has its own GPU.
std::string shared_gpu(const std::vector<std::string>& host_and_gpu) {
  std::map<std::string, std::size_t> owner;
  for (std::size_t r = 0; r < host_and_gpu.size(); ++r) {
    const auto [it, fresh] = owner.emplace(host_and_gpu[r], r);
    if (fresh) continue;
    const std::string& key = host_and_gpu[r];
    const auto bar = key.find('|');
    return "ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " share GPU " +
           key.substr(bar + 1) + " on " + key.substr(0, bar) +
           "; NCCL needs a GPU of its own per rank (run at most one rank per GPU)";
  }
  return "";
}

// context.cuda (versions, devices, and the topology of the first pair when its ranks share a
// host) via announce_gpus, which also prints the topology table once. Collective.
void record_ping_pong_pair(Registry& registry, int device) {
  const World& world = registry.world();
  const auto where = world.all_gather(world.host() + "|" + std::to_string(device));
  if (device < 0) return;
  std::vector<std::pair<int, int>> pairs;
  const auto split = [](const std::string& text) {
    const auto bar = text.rfind('|');
    return std::make_pair(text.substr(0, bar), std::stoi(text.substr(bar + 1)));
  };
  const auto [first, second] = registry.pairs().front();
  const auto [host0, gpu0] = split(where[static_cast<std::size_t>(first)]);
  const auto [host1, gpu1] = split(where[static_cast<std::size_t>(second)]);
  if (host0 == host1 && gpu0 >= 0 && gpu1 >= 0 && gpu0 != gpu1)
    pairs = {{gpu0, gpu1}, {gpu1, gpu0}};
  announce_gpus(registry, pairs);
}

}  // namespace

RankGpu bind_ping_pong_gpu(Registry& registry, GpuUse use) {
  const World& world = registry.world();
  if (world.size() < 2) return {-1, "needs 2 ranks (world size is 1); launch with mpirun -np 2"};

  std::string why;
  std::string broken;
  int device = -1;
  try {
    device = bind_rank_gpu(registry, &why);
  } catch (const std::exception& e) {
    broken =
        rank_prefix() + "the GPU of this rank on " + world.host() + " cannot be used: " + e.what();
    device = -1;
  }
  // No GPU at all is a reason to skip; a GPU that is there but fails ends the run on every rank
  // (a CI job must not pass with its GPU paths quietly skipped).
  if (const std::string first = world.first_message(broken); !first.empty())
    throw FatalError(first + " (to run only the host paths, hide the GPUs: CUDA_VISIBLE_DEVICES=)");
  const bool needs_gpu =
      use == GpuUse::EveryRankOwnGpu || role_of(registry.pairs(), world.rank()).active();
  const std::string mine = needs_gpu && device < 0 ? (why.empty() ? "no GPU visible" : why) : "";
  if (const std::string reason = first_reason(world.all_gather(mine)); !reason.empty())
    return {device, reason};

  if (use == GpuUse::EveryRankOwnGpu) {
    std::string key = world.host() + "|";
    try {
      key += device_info(device).pci_bus_id;
    } catch (const std::exception&) {
      key += "GPU " + std::to_string(device);
    }
    if (const std::string reason = shared_gpu(world.all_gather(key)); !reason.empty())
      return {device, reason};
  }
  record_ping_pong_pair(registry, device);
  return {device, ""};
}

void announce_rank_gpus(const Registry& registry, int device) {
  const World& world = registry.world();
  std::string mine = "  rank " + std::to_string(world.rank()) + " @ " + world.host() + " -> ";
  if (device < 0) {
    mine += "no GPU";
  } else {
    mine += "GPU " + std::to_string(device);
    try {
      const DeviceInfo info = device_info(device);
      mine += " " + info.name + " (" + info.pci_bus_id + ")";
    } catch (const std::exception&) {
    }
  }
  const std::vector<std::string> lines = world.all_gather(mine);
  if (!world.is_root()) return;
  std::fprintf(stderr, "ranks and GPUs (node-local rank %% visible GPUs):\n");
  for (std::size_t r = 0; r < lines.size() && r < 8; ++r)
    std::fprintf(stderr, "%s\n", lines[r].c_str());
  if (lines.size() > 8) std::fprintf(stderr, "  ... %zu ranks in all\n", lines.size());
  std::fflush(stderr);
}

}  // namespace xfer::gpu
