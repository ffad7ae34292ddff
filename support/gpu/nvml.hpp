// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") as NCCL does, for what the CUDA
// runtime does not say: how many NVLink links join two GPUs and the PCIe path between them.
// Build machines have no nvml.h and no library: the few declarations needed are here, and a
// missing library or a failing call means "unknown", never an error.
#pragma once

#include <memory>
#include <string>

#include "links/links.hpp"

namespace xfer::gpu {

// Also the production side of the links seam (support/links/links.hpp): PCIe generation and width,
// memory bus width and clock, NVLink version and per-link rate, and the real /sys.
class Nvml : public links::LinkAnswers {
 public:
  Nvml();            // dlopen + nvmlInit_v2; available() says whether that worked
  ~Nvml() override;  // nvmlShutdown + dlclose
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return init_ok_; }
  const std::string& why_unavailable() const { return why_; }

  // The driver release ("580.95.05"), or "" if unknown.
  std::string driver_version() const;

  struct Link {
    int nvlink_count = -1;      // active NVLink links from a to b (via NVSwitch: a's switch
                                // links); -1 unknown
    bool via_switch = false;    // the links go to an NVSwitch, not straight to b
    std::string pcie_relation;  // "PIX", "PXB", "PHB", "NODE", "SYS", "INT"; "" unknown
    int links_present = -1;     // the links the pair could use, active or not (nvml.cpp)
    int first_active = -1;      // a's first active link toward b (or its switches)
  };
  // Bus ids as cudaDeviceGetPCIBusId writes them ("0000:19:00.0").
  Link link(const std::string& bus_a, const std::string& bus_b) const;

  // links::LinkAnswers
  bool nvml_available() const override { return init_ok_; }
  std::string why_no_nvml() const override { return why_; }
  links::GpuAnswers gpu(const std::string& bus_id) const override;
  links::NvlinkAnswers nvlink(const std::string& bus_a, const std::string& bus_b) const override;
  std::string sysfs_root() const override { return "/"; }

 private:
  struct Api;
  struct LinkCount {
    int direct = 0;         // active links whose far end is the target GPU
    int to_switch = 0;      // active links whose far end is an NVSwitch
    bool answered = false;  // NVML said something about the links (even "not supported")
    int present = 0;        // links NVML answers for, active or not
    int active = 0;         // active links, wherever they go
    int first_active = -1;  // the first active link counted
  };
  LinkCount count_links(void* device, const std::string& target_bus) const;  // "": no target
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  bool init_ok_ = false;
  std::string why_;
};

}  // namespace xfer::gpu
