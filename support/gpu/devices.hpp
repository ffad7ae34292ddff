// Which GPUs this process sees, how they are joined, and which one a rank takes.
//
// API (namespace xfer::gpu):
//   visible_device_count(&why)     0 with a readable reason when there is no driver or no GPU
//                                  ("no GPU or no NVIDIA driver on this machine
//                                  (cudaGetDeviceCount: cudaErrorInsufficientDriver)"); never
//                                  throws
//   bind_rank_gpu(registry, &why)  node-local rank % visible count; cudaSetDevice and the
//                                  context; records gpu, gpu_name, gpu_uuid, pci_bus_id in
//                                  registry.rank_info(); -1 (and why) without a GPU; throws
//                                  xfer::Error when a visible GPU cannot be used. Not
//                                  collective: agree before acting on either
//   device_info(d), pair_info(a, b, nvml)   one GPU, one ordered pair
//   probe_gpu_facts() / share_gpu_facts(world, facts)   what copy_plan.hpp plans from; rank 0's
//                                  facts broadcast (collective)
//   record_cuda_context(registry, pairs)   context.cuda: versions, every visible device, and
//                                  the pairs in use (merged over calls); see result-format.md
//   topology_lines(gpus)           the short `nvidia-smi topo -m`-like table of `gpus`
//   announce_gpus(registry, pairs) record_cuda_context, and rank 0 prints the table of the GPUs
//                                  in `pairs` to stderr the first time it is called
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/copy_plan.hpp"
#include "gpu/nvml.hpp"
#include "harness/harness.hpp"

namespace xfer::gpu {

int visible_device_count(std::string* why_none = nullptr);
// That reason, from cudaGetDeviceCount's result `rc` (cudaSuccess: it counted none), the
// driver's and the runtime's CUDA versions (cudaDriverGetVersion gives 0 where there is no
// driver) and CUDA_VISIBLE_DEVICES (null: not set).
std::string no_gpu_reason(int rc, int driver_version, int runtime_version,
                          const char* visible_devices);

// 13000 -> "13.0", 12080 -> "12.8"; 0 -> "" (unknown).
std::string cuda_version_text(int version);

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;        // "GPU-5e1c0000-93b2-6c1d-8f0e-2a7b9c4d1a2b", as nvidia-smi -L
  std::string pci_bus_id;  // "0000:19:00.0"
  std::uint64_t memory_bytes = 0;
};
DeviceInfo device_info(int device);

struct PairInfo {
  int src = 0;
  int dst = 1;
  bool p2p = false;          // cudaDeviceCanAccessPeer(src, dst)
  bool p2p_reverse = false;  // cudaDeviceCanAccessPeer(dst, src)
  int nvlink_count = -1;     // -1: unknown (no NVML)
  bool via_switch = false;
  std::string pcie_relation;  // "" unknown
  // "NVLink", "PCIe" or "unknown"
  std::string link() const;
  // The table cell: "NV18", "PIX".. "SYS", "?"
  std::string cell() const;
};
PairInfo pair_info(int src, int dst, const Nvml& nvml);

int bind_rank_gpu(Registry& registry, std::string* why_none = nullptr);

GpuFacts probe_gpu_facts();
GpuFacts share_gpu_facts(const World& world, const GpuFacts& mine);

void record_cuda_context(Registry& registry, const std::vector<std::pair<int, int>>& pairs);

std::vector<std::string> topology_lines(const std::vector<int>& gpus);

void announce_gpus(Registry& registry, const std::vector<std::pair<int, int>>& pairs);

// What a copy family's bytes cross, with the PCI bus ids rank 0 probed for its GPUs (the
// routes follow from them: links/routes.hpp).
template <class Family>
links::Crossing crossing_of(const Family& family, const GpuFacts& facts) {
  links::Crossing c = family.crossing();
  c.src_bus = facts.bus(family.src);
  c.dst_bus = facts.bus(family.dst);
  return c;
}

// Registration shared by the one-process copy paths: rank 0 probes the GPUs and every rank
// plans from its facts (`plan(gpus, facts)` -> skips and families), skips are recorded, rank 0
// announces the GPUs in use, and each family is added at its sizes (sizes_of(family), found
// beside the family's type) with its own may-hold flag, which
// `row(visit, harness, row, family, may_hold)` clears once a stream hold gave up.
template <class PlanFn, class RowFn>
void register_copy_families(Registry& registry, const std::string& path, PlanFn plan_for,
                            RowFn row_fn, BigWarmUp big_warm_up) {
  const World& world = registry.world();
  const GpuFacts facts = share_gpu_facts(world, world.is_root() ? probe_gpu_facts() : GpuFacts{});
  const auto plan = plan_for(registry.config().gpus, facts);
  for (const auto& skip : plan.skips) registry.skip(skip.path, skip.reason);
  if (plan.families.empty()) return;

  if (world.is_root()) {
    std::vector<std::pair<int, int>> pairs;
    for (const auto& f : plan.families) pairs.emplace_back(f.src, f.dst);
    announce_gpus(registry, pairs);
  }
  for (const auto& family : plan.families) {
    auto may_hold = std::make_shared<bool>(true);
    registry.add(
        path, family.name(),
        [family, may_hold, row_fn](Visit& visit, const Harness& h, const Row& row) {
          row_fn(visit, h, row, family, *may_hold);
        },
        big_warm_up, crossing_of(family, facts), sizes_of(family));
  }
}

}  // namespace xfer::gpu
