#include "gpu/copy_plan.hpp"

#include <algorithm>
#include <sstream>

#include "base/error.hpp"

namespace xfer::gpu {

bool GpuFacts::p2p(int a, int b) const {
  if (a < 0 || b < 0 || a >= devices || b >= devices) return false;
  const std::size_t index = static_cast<std::size_t>(a) * devices + b;
  return index < can_access.size() && can_access[index];
}

// "<devices> <matrix of 0/1> <why_none...>": the reason goes last, it may hold spaces.
std::string encode(const GpuFacts& facts) {
  std::string matrix, buses;
  for (const bool b : facts.can_access) matrix += b ? '1' : '0';
  for (const auto& bus : facts.buses) buses += (buses.empty() ? "" : ",") + bus;
  return std::to_string(facts.devices) + " " + (matrix.empty() ? "-" : matrix) + " " +
         (buses.empty() ? "-" : buses) + " " + facts.why_none;
}

GpuFacts decode_facts(const std::string& text) {
  std::istringstream in(text);
  GpuFacts facts;
  std::string matrix, buses;
  if (!(in >> facts.devices >> matrix >> buses) || facts.devices < 0)
    throw Error("malformed GPU facts: '" + text + "'");
  in.get();  // the separating space
  std::getline(in, facts.why_none);
  if (matrix != "-") {
    for (const char c : matrix) facts.can_access.push_back(c == '1');
  }
  if (buses != "-") {
    std::istringstream list(buses);
    for (std::string bus; std::getline(list, bus, ',');) facts.buses.push_back(bus);
  }
  if (facts.can_access.size() !=
          static_cast<std::size_t>(facts.devices) * static_cast<std::size_t>(facts.devices) ||
      (!facts.buses.empty() && facts.buses.size() != static_cast<std::size_t>(facts.devices)))
    throw Error("malformed GPU facts: '" + text + "'");
  return facts;
}

std::string GpuFacts::bus(int device) const {
  return device >= 0 && static_cast<std::size_t>(device) < buses.size()
             ? buses[static_cast<std::size_t>(device)]
             : std::string();
}

std::string pair_part(int src, int dst) {
  return "pair:" + std::to_string(src) + "to" + std::to_string(dst);
}

std::string PeerFamily::name() const {
  return std::string("memcpy_peer/p2p:") + (p2p ? "on" : "off") +
         (bidirectional ? "/dir:bi" : "/dir:uni") + (latency ? "/timing:latency/" : "/") +
         pair_part(src, dst);
}

std::string StagingFamily::name() const {
  return std::string("host_staging/host:") + (pinned ? "pinned" : "pageable") +
         (pipelined ? "/mode:pipelined" : "/mode:sequential") +
         (latency ? "/timing:latency/" : "/") + pair_part(src, dst);
}

links::Crossing PeerFamily::crossing() const {
  auto c = links::Crossing::between_gpus(links::Crossing::Kind::GpuCopy, src, dst);
  c.peer_access = p2p;
  return c;
}

links::Crossing StagingFamily::crossing() const {
  auto c = links::Crossing::between_gpus(links::Crossing::Kind::HostStagedCopy, src, dst);
  c.at_once = pipelined;
  return c;
}

namespace {

std::string visible_text(int devices) {
  return std::to_string(devices) + (devices == 1 ? " CUDA device is" : " CUDA devices are") +
         " visible";
}

// The ordered pairs asked for, without repeats, in the order given.
std::vector<std::pair<int, int>> requested(const GpuPairs& gpus, int devices) {
  std::vector<std::pair<int, int>> pairs;
  for (const auto& p : expand_pairs(gpus, devices)) {
    if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
  }
  return pairs;
}

std::string missing_gpu(std::pair<int, int> pair, int devices) {
  const int missing = pair.first >= devices ? pair.first : pair.second;
  return "GPU " + std::to_string(missing) + " does not exist here (" + visible_text(devices) +
         ", numbered from 0)";
}

bool in_range(std::pair<int, int> pair, int devices) {
  return pair.first >= 0 && pair.second >= 0 && pair.first < devices && pair.second < devices;
}

}  // namespace

CopyPlan<PeerFamily> plan_memcpy_peer(const GpuPairs& gpus, const GpuFacts& facts) {
  CopyPlan<PeerFamily> plan;
  if (facts.devices == 0) {
    plan.skips.push_back(
        {"memcpy_peer", facts.why_none.empty() ? "no GPU visible" : facts.why_none});
    return plan;
  }
  if (facts.devices < 2) {
    plan.skips.push_back({"memcpy_peer", "needs 2 GPUs; only " + visible_text(facts.devices)});
    return plan;
  }
  std::vector<std::pair<int, int>> pairs;
  for (const auto& p : requested(gpus, facts.devices)) {
    const std::string where = "memcpy_peer/" + pair_part(p.first, p.second);
    if (!in_range(p, facts.devices)) {
      plan.skips.push_back({where, missing_gpu(p, facts.devices)});
    } else if (p.first == p.second) {
      plan.skips.push_back({where,
                            "source and destination are the same GPU; a peer copy needs "
                            "two (host_staging takes a:a)"});
    } else {
      pairs.push_back(p);
    }
  }
  struct Shape {
    bool bidirectional;
    bool latency;
  };
  const Shape shapes[] = {{false, false}, {true, false}, {false, true}};
  for (const bool p2p : {true, false}) {
    for (const auto& shape : shapes) {
      for (const auto& [a, b] : pairs) {
        const PeerFamily family{a, b, p2p, shape.bidirectional, shape.latency};
        if (p2p && !facts.p2p(a, b)) {
          if (!shape.bidirectional && !shape.latency)  // one skip per pair says it all
            plan.skips.push_back({"memcpy_peer/p2p:on/" + pair_part(a, b),
                                  "GPU " + std::to_string(a) + " cannot access GPU " +
                                      std::to_string(b) +
                                      " as a peer (cudaDeviceCanAccessPeer is 0); p2p:off "
                                      "shows the driver's staged copy"});
          continue;
        }
        if (p2p && shape.bidirectional && !facts.p2p(b, a)) {
          plan.skips.push_back({family.name(), "GPU " + std::to_string(b) + " cannot access GPU " +
                                                   std::to_string(a) +
                                                   " as a peer (cudaDeviceCanAccessPeer is 0)"});
          continue;
        }
        plan.families.push_back(family);
      }
    }
  }
  if (plan.families.empty())
    plan.skips.push_back({"memcpy_peer", "no runnable GPU pair among those asked for"});
  return plan;
}

CopyPlan<StagingFamily> plan_host_staging(const GpuPairs& gpus, const GpuFacts& facts) {
  CopyPlan<StagingFamily> plan;
  if (facts.devices == 0) {
    plan.skips.push_back(
        {"host_staging", facts.why_none.empty() ? "no GPU visible" : facts.why_none});
    return plan;
  }
  std::vector<std::pair<int, int>> pairs;
  if (facts.devices == 1) {
    pairs.emplace_back(0, 0);  // one GPU: device -> host -> the same device
  } else {
    for (const auto& p : requested(gpus, facts.devices)) {
      if (in_range(p, facts.devices))
        pairs.push_back(p);
      else
        plan.skips.push_back(
            {"host_staging/" + pair_part(p.first, p.second), missing_gpu(p, facts.devices)});
    }
  }
  struct Shape {
    bool pinned;
    bool pipelined;
    bool latency;
  };
  const Shape shapes[] = {{true, false, false}, {true, true, false}, {false, false, false},
                          {false, true, false}, {true, false, true}, {false, false, true}};
  for (const auto& shape : shapes) {
    for (const auto& [a, b] : pairs)
      plan.families.push_back({a, b, shape.pinned, shape.pipelined, shape.latency});
  }
  if (plan.families.empty())
    plan.skips.push_back({"host_staging", "no runnable GPU pair among those asked for"});
  return plan;
}

std::size_t staging_chunk(std::size_t bytes) {
  constexpr std::size_t kMin = std::size_t{256} << 10;
  constexpr std::size_t kMax = std::size_t{4} << 20;
  return std::max<std::size_t>(1, std::min(bytes, std::clamp(bytes / 8, kMin, kMax)));
}

int staging_operations_per_copy(std::size_t bytes, bool pipelined) {
  const std::size_t chunk = pipelined ? staging_chunk(bytes) : std::max<std::size_t>(bytes, 1);
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  return static_cast<int>(std::min<std::size_t>(std::max<std::size_t>(chunks, 1), 1 << 20) * 4 + 2);
}

BatchPlan plan_batch(std::int64_t wanted, int ops_per_copy, int fixed_ops) {
  const std::int64_t room = (kMaxHeldOperations - fixed_ops) / std::max(ops_per_copy, 1);
  if (room < 1) return {1, false};
  return {std::clamp<std::int64_t>(wanted, 1, room), true};
}

bool may_hold_peer_copy(bool p2p, std::uint64_t bytes) {
  return p2p || bytes <= kMaxHeldStagedPeerBytes;
}

}  // namespace xfer::gpu
