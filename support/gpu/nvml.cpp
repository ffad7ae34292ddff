#include "nvml.hpp"

#include <dlfcn.h>

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

constexpr int kClockMem = 2;                // nvmlClockType_t NVML_CLOCK_MEM
constexpr unsigned kFieldNvlinkSpeed = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr int kValueUnsignedInt = 1;        // nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_INT

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
    if (rc != kNvmlSuccess || active != kFeatureEnabled) continue;
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
  // NVSwitch systems: a's links and b's links both end at switches, which join every pair.
  if (from_a.direct == 0 && from_a.to_switch > 0 && count_links(b, "").to_switch > 0) {
    link.nvlink_count = from_a.to_switch;
    link.via_switch = true;
  }
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
  nvmlDevice_t device = nullptr;
  if (a.links <= 0 || api_->handle_by_bus_id(bus_a.c_str(), &device) != kNvmlSuccess) return a;
  for (unsigned i = 0; i < kMaxLinks && api_->link_version; ++i) {
    int active = 0;
    unsigned version = 0;
    if (api_->link_state(device, i, &active) == kNvmlSuccess && active == kFeatureEnabled &&
        api_->link_version(device, i, &version) == kNvmlSuccess) {
      a.version_code = static_cast<int>(version);
      break;
    }
  }
  FieldValue speed{};
  speed.fieldId = kFieldNvlinkSpeed;
  if (api_->field_values && api_->field_values(device, 1, &speed) == kNvmlSuccess &&
      speed.nvmlReturn == kNvmlSuccess && speed.valueType == kValueUnsignedInt)
    a.link_mbps = speed.value.uiVal;
  return a;
}

}  // namespace xfer::gpu

namespace xfer::links {
std::unique_ptr<LinkAnswers> system_answers() { return std::make_unique<gpu::Nvml>(); }
}  // namespace xfer::links
