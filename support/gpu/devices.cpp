#include "gpu/devices.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "gpu/cuda.hpp"

namespace xfer::gpu {

std::string no_gpu_reason(int rc, int driver_version, int runtime_version,
                          const char* visible_devices) {
  const auto error = static_cast<cudaError_t>(rc);
  std::string why;
  if (error == cudaSuccess || (error == cudaErrorNoDevice && visible_devices))
    why = visible_devices
              ? std::string("no GPU visible with CUDA_VISIBLE_DEVICES='") + visible_devices + "'"
              : "no GPU visible";
  else if (error == cudaErrorNoDevice)
    why = "no GPU on this machine: the NVIDIA driver finds none";
  else if (error == cudaErrorInsufficientDriver && driver_version <= 0)
    why = "no GPU or no NVIDIA driver on this machine";
  else if (error == cudaErrorInsufficientDriver)
    why = "the NVIDIA driver supports CUDA " + cuda_version_text(driver_version) +
          ", older than the CUDA " + cuda_version_text(runtime_version) +
          " xferbench was built with: update the driver";
  else
    why = std::string("no usable GPU: ") + cudaGetErrorString(error);
  // Where there is no driver at all the runtime's own words are "CUDA driver version is
  // insufficient for CUDA runtime version", which mislead; the error's name is for searching.
  if (error != cudaSuccess)
    why += std::string(" (cudaGetDeviceCount: ") + cudaGetErrorName(error) + ")";
  return why;
}

int visible_device_count(std::string* why_none) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaSuccess && count > 0) return count;
  cudaGetLastError();
  if (why_none) {
    int driver = 0;
    int runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    *why_none = no_gpu_reason(rc, driver, runtime, std::getenv("CUDA_VISIBLE_DEVICES"));
  }
  return 0;
}

std::string cuda_version_text(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

DeviceInfo device_info(int device) {
  cudaDeviceProp prop{};
  XFER_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.index = device;
  info.name = prop.name;
  info.memory_bytes = prop.totalGlobalMem;
  const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  char uuid[64];
  std::snprintf(uuid, sizeof uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  info.uuid = uuid;
  char bus[32] = {};
  XFER_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  info.pci_bus_id = bus;
  return info;
}

std::string PairInfo::link() const {
  if (nvlink_count > 0) return "NVLink";
  if (nvlink_count == 0) return "PCIe";
  return "unknown";
}

std::string PairInfo::cell() const {
  if (nvlink_count > 0) return "NV" + std::to_string(nvlink_count);
  if (!pcie_relation.empty()) return pcie_relation;
  return "?";
}

namespace {

bool can_access(int a, int b) {
  int yes = 0;
  if (cudaDeviceCanAccessPeer(&yes, a, b) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return yes != 0;
}

json::Value or_null(const std::string& text) {
  return text.empty() ? json::Value() : json::Value(text);
}

// The pairs recorded so far in this process: the hardware does not change during a run, and
// every path that uses GPUs adds the pairs it uses to one context.cuda.
std::vector<std::pair<int, int>>& recorded_pairs() {
  static std::vector<std::pair<int, int>> pairs;
  return pairs;
}

void record(Registry& registry, const std::vector<std::pair<int, int>>& pairs, const Nvml& nvml) {
  auto& known = recorded_pairs();
  for (const auto& p : pairs) {
    if (p.first != p.second && std::find(known.begin(), known.end(), p) == known.end())
      known.push_back(p);
  }
  int runtime = 0;
  int driver = 0;
  cudaRuntimeGetVersion(&runtime);
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  cudaGetLastError();

  json::Value cuda = json::Value::object();
  cuda.set("runtime_version", or_null(cuda_version_text(runtime)));
  cuda.set("driver_version", or_null(cuda_version_text(driver)));
  cuda.set("driver_release", or_null(nvml.driver_version()));
  cuda.set("nvml", nvml.available());

  json::Value devices = json::Value::array();
  const int count = visible_device_count();
  for (int d = 0; d < count; ++d) {
    const DeviceInfo info = device_info(d);
    json::Value item = json::Value::object();
    item.set("index", info.index);
    item.set("name", info.name);
    item.set("uuid", info.uuid);
    item.set("pci_bus_id", info.pci_bus_id);
    item.set("memory_bytes", info.memory_bytes);
    devices.push(item);
  }
  cuda.set("devices", devices);

  json::Value list = json::Value::array();
  for (const auto& [a, b] : known) {
    if (a >= count || b >= count) continue;
    const PairInfo info = pair_info(a, b, nvml);
    json::Value item = json::Value::object();
    item.set("src", a);
    item.set("dst", b);
    item.set("p2p", info.p2p);
    item.set("p2p_reverse", info.p2p_reverse);
    item.set("link", info.link());
    item.set("nvlink_count",
             info.nvlink_count >= 0 ? json::Value(info.nvlink_count) : json::Value());
    item.set("nvlink_via_switch", info.via_switch);
    item.set("pcie_relation", or_null(info.pcie_relation));
    list.push(item);
  }
  cuda.set("pairs", list);
  registry.context().set("cuda", cuda);
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : std::string(width - text.size(), ' ') + text;
}

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

std::vector<std::string> table(const std::vector<int>& gpus, const Nvml& nvml) {
  std::vector<std::string> lines;
  lines.push_back(
      "GPU topology of the GPUs in use (link: NV# = NVLink with # links, PIX/PXB/PHB/NODE/SYS = "
      "PCIe path as in nvidia-smi topo -m; P2P: cudaDeviceCanAccessPeer(row, column))");
  constexpr std::size_t kWidth = 7;
  std::string head = "      ";
  for (const int g : gpus) head += padded("GPU" + std::to_string(g), kWidth);
  head += "   P2P";
  for (const int g : gpus) head += padded("GPU" + std::to_string(g), kWidth);
  lines.push_back(head);
  for (const int a : gpus) {
    std::string line = padded("GPU" + std::to_string(a), 6);
    std::string p2p;
    for (const int b : gpus) {
      line += padded(a == b ? "X" : pair_info(a, b, nvml).cell(), kWidth);
      p2p += padded(a == b ? "X" : (can_access(a, b) ? "yes" : "no"), kWidth);
    }
    lines.push_back(line + "      " + p2p);
  }
  for (const int g : gpus) {
    const DeviceInfo info = device_info(g);
    lines.push_back("  GPU" + std::to_string(g) + ": " + info.name + ", " + info.pci_bus_id + ", " +
                    gib(info.memory_bytes) + ", " + info.uuid);
  }
  int runtime = 0;
  int driver = 0;
  cudaRuntimeGetVersion(&runtime);
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  cudaGetLastError();
  const std::string release = nvml.driver_version();
  std::string versions = "  driver " + (release.empty() ? std::string("?") : release) + " (CUDA " +
                         cuda_version_text(driver) + "), runtime " + cuda_version_text(runtime);
  if (!nvml.available())
    versions += "; links unknown (?): NVML unavailable (" + nvml.why_unavailable() + ")";
  lines.push_back(versions);
  return lines;
}

}  // namespace

PairInfo pair_info(int src, int dst, const Nvml& nvml) {
  PairInfo info;
  info.src = src;
  info.dst = dst;
  info.p2p = can_access(src, dst);
  info.p2p_reverse = can_access(dst, src);
  if (nvml.available()) {
    const Nvml::Link link = nvml.link(device_info(src).pci_bus_id, device_info(dst).pci_bus_id);
    info.nvlink_count = link.nvlink_count;
    info.via_switch = link.via_switch;
    info.pcie_relation = link.pcie_relation;
  }
  return info;
}

int bind_rank_gpu(Registry& registry, std::string* why_none) {
  const int count = visible_device_count(why_none);
  if (count == 0) return -1;
  const auto& map = registry.config().gpu_map;
  const auto local = static_cast<std::size_t>(registry.world().local_rank());
  if (!map.empty() && local >= map.size())
    throw Error("--xfer_gpu_map names " + std::to_string(map.size()) +
                " GPUs, but this node has a node-local rank " + std::to_string(local));
  const int device = map.empty() ? static_cast<int>(local) % count : map[local];
  if (device >= count)
    throw Error("--xfer_gpu_map: GPU " + std::to_string(device) + " is not visible here (" +
                std::to_string(count) + " visible)");
  XFER_CUDA_CHECK(cudaSetDevice(device));
  // Creates the context now: a GPU that cannot be used (held by another process in exclusive
  // mode, an ECC or driver fault) says so here, once, not in every row.
  XFER_CUDA_CHECK(cudaFree(nullptr));
  const DeviceInfo info = device_info(device);
  json::Value& rank = registry.rank_info();
  rank.set("gpu", device);
  rank.set("gpu_name", info.name);
  rank.set("gpu_uuid", info.uuid);
  rank.set("pci_bus_id", info.pci_bus_id);
  return device;
}

GpuFacts probe_gpu_facts() {
  GpuFacts facts;
  facts.devices = visible_device_count(&facts.why_none);
  facts.can_access.assign(static_cast<std::size_t>(facts.devices) * facts.devices, false);
  for (int d = 0; d < facts.devices; ++d) facts.buses.push_back(device_info(d).pci_bus_id);
  for (int a = 0; a < facts.devices; ++a) {
    for (int b = 0; b < facts.devices; ++b) {
      if (a != b)
        facts.can_access[static_cast<std::size_t>(a) * facts.devices + b] = can_access(a, b);
    }
  }
  return facts;
}

GpuFacts share_gpu_facts(const World& world, const GpuFacts& mine) {
  return decode_facts(world.broadcast(world.is_root() ? encode(mine) : std::string()));
}

void record_cuda_context(Registry& registry, const std::vector<std::pair<int, int>>& pairs) {
  const Nvml nvml;
  record(registry, pairs, nvml);
}

std::vector<std::string> topology_lines(const std::vector<int>& gpus) {
  const Nvml nvml;
  return table(gpus, nvml);
}

void announce_gpus(Registry& registry, const std::vector<std::pair<int, int>>& pairs) {
  static bool printed = false;  // one table per process, before the results
  try {
    const Nvml nvml;
    record(registry, pairs, nvml);
    if (printed || !registry.world().is_root()) return;
    printed = true;
    std::set<int> used;
    for (const auto& [a, b] : pairs) {
      used.insert(a);
      used.insert(b);
    }
    for (const auto& line : table(std::vector<int>(used.begin(), used.end()), nvml))
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  } catch (const std::exception& e) {  // a description of the machine is never worth a crash
    std::fprintf(stderr, "xferbench: GPU topology unavailable: %s\n", e.what());
  }
}

}  // namespace xfer::gpu
