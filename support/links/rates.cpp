// The line rates of the links: bus ids in one spelling, NVLink's rate per link from NVML's
// answers (or the version it names), and a GPU memory's copy rate.
#include <cstdio>
#include <string>

#include "links/links.hpp"

namespace xfer::links {

std::string normal_bus_id(const std::string& text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return "";
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

namespace {

// nvmlNvlinkVersion_t (nvml.h: NVML_NVLINK_VERSION_1_0 = 1 ... NVML_NVLINK_VERSION_5_0 = 7) and
// the rate of one link of that version per direction, as NVML's speed fields and `nvidia-smi
// nvlink -s` state it (the signalling rate: 18 NVLink4 links read 26.562 GB/s each on the
// two-H200 machine; NVIDIA's data sheets quote 25 GB/s of payload per NVLink4 link). Codes 3
// (2.2) and 5 (3.1) name no rate xferbench can state: unknown.
struct VersionRate {
  int code;
  const char* name;
  double link_gbps;  // 0: unknown
};
constexpr VersionRate kNvlinkVersions[] = {
    {1, "1.0", 20.0}, {2, "2.0", 25.78125}, {3, "2.2", 0},      {4, "3.0", 25.0},
    {5, "3.1", 0},    {6, "4.0", 26.5625},  {7, "5.0", 53.125},
};

const VersionRate* version_rate(int code) {
  for (const auto& v : kNvlinkVersions) {
    if (v.code == code) return &v;
  }
  return nullptr;
}

}  // namespace

std::string nvlink_version_name(int version_code) {
  const VersionRate* v = version_rate(version_code);
  return v ? v->name : "";
}

NvlinkRate nvlink_rate(const NvlinkAnswers& a) {
  NvlinkRate rate;
  if (a.link_mbps > 0) {
    rate.link_gbps = a.link_mbps / 1000;
    rate.source = "NVML NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON";
    return rate;
  }
  if (a.link_speed_mbps > 0) {
    rate.link_gbps = a.link_speed_mbps / 1000;
    rate.source = "NVML NVML_FI_DEV_NVLINK_GET_SPEED";
    return rate;
  }
  const VersionRate* v = version_rate(a.version_code);
  if (v && v->link_gbps > 0) {
    rate.link_gbps = v->link_gbps;
    rate.source = std::string("NVLink ") + v->name + " (NVML version code " +
                  std::to_string(a.version_code) + ")";
    return rate;
  }
  rate.why_unknown =
      "NVML answers neither NVLink speed field, and " +
      (a.version_code <= 0 ? std::string("names no NVLink version")
                           : "its NVLink version code " + std::to_string(a.version_code) +
                                 (v ? " (NVLink " + std::string(v->name) + ")" : "") +
                                 " has no rate xferbench knows");
  return rate;
}

double nvlink_gbps(const NvlinkAnswers& a) {
  return a.links > 0 ? a.links * nvlink_rate(a).link_gbps : 0;
}

double memory_copy_gbps(int bus_bits, int clock_mhz) {
  if (bus_bits <= 0 || clock_mhz <= 0) return 0;
  const double memory_gbps = bus_bits / 8.0 * clock_mhz * 1e6 * 2 / 1e9;
  return memory_gbps / 2;  // every byte copied is read once and written once
}

}  // namespace xfer::links
