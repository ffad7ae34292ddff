#include "gpu/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <type_traits>

namespace xfer::gpu {
namespace {

// The ABI of the few NVML entry points used (nvml.h, NVML API reference).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED: e.g. no NVLink
constexpr int kFeatureEnabled = 1;             // nvmlEnableState_t NVML_FEATURE_ENABLED
constexpr int kNvLinkDeviceSwitch = 0x02;      // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr unsigned kMaxLinks = 18;             // NVML_NVLINK_MAX_LINKS (NVML 12.x and 13.x)

struct PciInfo {         // nvmlPciInfo_t
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using DriverVersionFn = nvmlReturn_t (*)(char*, unsigned);
using HandleByBusIdFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using LinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*);
using RemotePciFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, PciInfo*);
using RemoteTypeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*);
using CommonAncestorFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int*);
using UintFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*);
using LinkVersionFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, unsigned*);

constexpr int kClockMem = 2;                    // nvmlClockType_t NVML_CLOCK_MEM
constexpr unsigned kFieldNvlinkSpeed = 90;      // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned kFieldNvlinkLinkCount = 91;  // NVML_FI_DEV_NVLINK_LINK_COUNT
constexpr unsigned kFieldNvlinkGetSpeed = 164;  // NVML_FI_DEV_NVLINK_GET_SPEED (scopeId: link)

struct FieldValue {  // nvmlFieldValue_t
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union {
    double dVal;
    unsigned uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
using FieldValuesFn = nvmlReturn_t (*)(nvmlDevice_t, int, FieldValue*);

// A field's value as a number, by its nvmlValueType_t (0 double, 1 unsigned int, 2 unsigned
// long, 3 unsigned long long, 4 signed long long, 5 signed int); -1 where it did not answer.
double field_number(FieldValuesFn fn, nvmlDevice_t device, unsigned field, unsigned scope) {
  FieldValue v{};
  v.fieldId = field;
  v.scopeId = scope;
  if (!fn || fn(device, 1, &v) != kNvmlSuccess || v.nvmlReturn != kNvmlSuccess) return -1;
  switch (v.valueType) {
    case 0:
      return v.value.dVal;
    case 1:
      return v.value.uiVal;
    case 2:
      return static_cast<double>(v.value.ulVal);
    case 3:
      return static_cast<double>(v.value.ullVal);
    case 4:
      return static_cast<double>(v.value.sllVal);
    case 5:
      return static_cast<int>(v.value.uiVal);
    default:
      return -1;
  }
}

struct BusId {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  bool ok = false;
  bool operator==(const BusId& o) const {
    return ok && o.ok && domain == o.domain && bus == o.bus && device == o.device &&
           function == o.function;
  }
};

// "0000:19:00.0" (CUDA) and "00000000:19:00.0" (NVML) name the same device.
BusId parse_bus_id(const char* text) {
  BusId id;
  id.ok = std::sscanf(text, "%x:%x:%x.%x", &id.domain, &id.bus, &id.device, &id.function) == 4;
  return id;
}

const char* relation_name(int level) {
  switch (level) {  // nvmlGpuTopologyLevel_t, named as nvidia-smi topo -m names them
    case 0:
      return "INT";
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return "";
  }
}

}  // namespace

struct Nvml::Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  DriverVersionFn driver_version = nullptr;
  HandleByBusIdFn handle_by_bus_id = nullptr;
  LinkStateFn link_state = nullptr;
  RemotePciFn remote_pci = nullptr;
  RemoteTypeFn remote_type = nullptr;  // optional (newer drivers)
  CommonAncestorFn common_ancestor = nullptr;
  UintFn pcie_gen_current = nullptr, pcie_gen_max = nullptr, pcie_gen_gpu_max = nullptr;
  UintFn pcie_width_current = nullptr, pcie_width_max = nullptr, memory_bus_width = nullptr;
  ClockFn max_clock = nullptr;
  LinkVersionFn link_version = nullptr;
  FieldValuesFn field_values = nullptr;
};

Nvml::Nvml() : api_(std::make_unique<Api>()) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    why_ = "libnvidia-ml.so.1 not loadable";
    return;
  }
  auto load = [this](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library_, name));
  };
  load(api_->init, "nvmlInit_v2");
  load(api_->shutdown, "nvmlShutdown");
  load(api_->driver_version, "nvmlSystemGetDriverVersion");
  load(api_->handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  load(api_->link_state, "nvmlDeviceGetNvLinkState");
  load(api_->remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  load(api_->remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  load(api_->common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  load(api_->pcie_gen_current, "nvmlDeviceGetCurrPcieLinkGeneration");
  load(api_->pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  load(api_->pcie_gen_gpu_max, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
  load(api_->pcie_width_current, "nvmlDeviceGetCurrPcieLinkWidth");
  load(api_->pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  load(api_->memory_bus_width, "nvmlDeviceGetMemoryBusWidth");
  load(api_->max_clock, "nvmlDeviceGetMaxClockInfo");
  load(api_->link_version, "nvmlDeviceGetNvLinkVersion");
  load(api_->field_values, "nvmlDeviceGetFieldValues");
  if (!api_->init || !api_->shutdown || !api_->handle_by_bus_id) {
    why_ = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2";
    return;
  }
  const nvmlReturn_t rc = api_->init();
  if (rc != kNvmlSuccess) {
    why_ = "nvmlInit_v2 returned " + std::to_string(rc);
    return;
  }
  init_ok_ = true;
}

Nvml::~Nvml() {
  if (init_ok_) api_->shutdown();
  if (library_) dlclose(library_);
}

std::string Nvml::driver_version() const {
  if (!init_ok_ || !api_->driver_version) return "";
  char text[96] = {};
  if (api_->driver_version(text, sizeof text) != kNvmlSuccess) return "";
  return text;
}

Nvml::LinkCount Nvml::count_links(void* handle, const std::string& target_bus) const {
  auto* device = static_cast<nvmlDevice_t>(handle);
  const BusId target = parse_bus_id(target_bus.c_str());
  LinkCount count;
  for (unsigned l = 0; l < kMaxLinks; ++l) {
    int active = 0;
    const nvmlReturn_t rc = api_->link_state(device, l, &active);
    if (rc == kNvmlSuccess || rc == kNvmlNotSupported) count.answered = true;
    if (rc == kNvmlSuccess) ++count.present;
    if (rc != kNvmlSuccess || active != kFeatureEnabled) continue;
    ++count.active;
    if (count.first_active < 0) count.first_active = static_cast<int>(l);
    int type = -1;
    if (api_->remote_type && api_->remote_type(device, l, &type) == kNvmlSuccess &&
        type == kNvLinkDeviceSwitch) {
      ++count.to_switch;
      continue;
    }
    PciInfo remote{};
    if (api_->remote_pci(device, l, &remote) != kNvmlSuccess) continue;
    remote.busId[sizeof remote.busId - 1] = '\0';
    if (parse_bus_id(remote.busId) == target) ++count.direct;
  }
  return count;
}

Nvml::Link Nvml::link(const std::string& bus_a, const std::string& bus_b) const {
  Link link;
  if (!init_ok_) return link;
  nvmlDevice_t a = nullptr;
  nvmlDevice_t b = nullptr;
  if (api_->handle_by_bus_id(bus_a.c_str(), &a) != kNvmlSuccess ||
      api_->handle_by_bus_id(bus_b.c_str(), &b) != kNvmlSuccess)
    return link;

  int level = -1;
  if (api_->common_ancestor && api_->common_ancestor(a, b, &level) == kNvmlSuccess)
    link.pcie_relation = relation_name(level);

  if (!api_->link_state || !api_->remote_pci) return link;
  const LinkCount from_a = count_links(a, bus_b);
  if (!from_a.answered) return link;
  link.nvlink_count = from_a.direct;
  // NVSwitch systems: a's links and b's links both end at switches, which join every pair;
  // a to b runs on the fewer of a's and b's switch links.
  const LinkCount from_b = count_links(b, "");
  if (from_a.direct == 0 && from_a.to_switch > 0 && from_b.to_switch > 0) {
    link.nvlink_count = std::min(from_a.to_switch, from_b.to_switch);
    link.via_switch = true;
  }
  // How many links the pair could use: through NVSwitches, the fewer of the GPUs' links (NVML's
  // count, else the links it answers for, active or not); direct, a's links to b and a's
  // links that are down. More than nvlink_count: a link is down (Link::degraded).
  const auto present = [this](void* device, const LinkCount& count) {
    const double n = field_number(api_->field_values, static_cast<nvmlDevice_t>(device),
                                  kFieldNvlinkLinkCount, 0);
    return n > 0 ? static_cast<int>(n) : count.present;
  };
  link.links_present = link.via_switch
                           ? std::min(present(a, from_a), present(b, from_b))
                           : from_a.direct + std::max(0, present(a, from_a) - from_a.active);
  link.first_active = from_a.first_active;
  return link;
}

links::GpuAnswers Nvml::gpu(const std::string& bus_id) const {
  links::GpuAnswers a;
  nvmlDevice_t device = nullptr;
  if (!init_ok_ || api_->handle_by_bus_id(bus_id.c_str(), &device) != kNvmlSuccess) return a;
  const auto ask = [device](UintFn fn, int& into) {
    unsigned value = 0;
    if (fn && fn(device, &value) == kNvmlSuccess) into = static_cast<int>(value);
  };
  ask(api_->pcie_gen_current, a.pcie_gen_current);
  ask(api_->pcie_gen_max, a.pcie_gen_max);
  ask(api_->pcie_gen_gpu_max, a.pcie_gen_gpu_max);
  ask(api_->pcie_width_current, a.pcie_width_current);
  ask(api_->pcie_width_max, a.pcie_width_max);
  ask(api_->memory_bus_width, a.memory_bus_bits);
  unsigned mhz = 0;
  if (api_->max_clock && api_->max_clock(device, kClockMem, &mhz) == kNvmlSuccess)
    a.memory_clock_max_mhz = static_cast<int>(mhz);
  return a;
}

links::NvlinkAnswers Nvml::nvlink(const std::string& bus_a, const std::string& bus_b) const {
  links::NvlinkAnswers a;
  const Link l = link(bus_a, bus_b);
  a.links = l.nvlink_count;
  a.via_switch = l.via_switch;
  a.links_present = l.links_present > 0 ? l.links_present : -1;
  nvmlDevice_t device = nullptr;
  if (a.links <= 0 || l.first_active < 0 ||
      api_->handle_by_bus_id(bus_a.c_str(), &device) != kNvmlSuccess)
    return a;
  const auto first = static_cast<unsigned>(l.first_active);
  unsigned version = 0;
  if (api_->link_version && api_->link_version(device, first, &version) == kNvmlSuccess)
    a.version_code = static_cast<int>(version);
  // The speed: the common field (all active links), and the first active link's own field.
  a.link_mbps = field_number(api_->field_values, device, kFieldNvlinkSpeed, 0);
  a.link_speed_mbps = field_number(api_->field_values, device, kFieldNvlinkGetSpeed, first);
  if (a.link_mbps <= 0) a.link_mbps = -1;
  if (a.link_speed_mbps <= 0) a.link_speed_mbps = -1;
  return a;
}

}  // namespace xfer::gpu

namespace xfer::links {
std::unique_ptr<LinkAnswers> system_answers() { return std::make_unique<gpu::Nvml>(); }
}  // namespace xfer::links
