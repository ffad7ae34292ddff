#include "links/sysfs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "links/links.hpp"

namespace xfer::links {
namespace fs = std::filesystem;

namespace sysfs {

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

fs::path pci_device(const std::string& root, const std::string& bus_id) {
  return fs::path(root) / "sys/bus/pci/devices" / bus_id;
}

fs::path upstream_port(const std::string& root, const std::string& bus_id) {
  std::error_code ec;
  const fs::path real = fs::canonical(pci_device(root, bus_id), ec);
  if (ec) return {};
  const fs::path parent = real.parent_path();
  return fs::exists(parent / "max_link_speed") ? parent : fs::path();
}

}  // namespace sysfs

namespace {

using sysfs::first_line;
using sysfs::pci_device;
using sysfs::upstream_port;

int to_int(const std::string& text) {
  const bool digits =
      !text.empty() && text.size() < 9 && text.find_first_not_of("0123456789") == std::string::npos;
  return digits ? std::stoi(text) : -1;
}

int lowest_known(int a, int b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

}  // namespace

double pcie_gbps(int generation, int width) {
  // GT/s per lane and the share of bits left after line encoding.
  static const double kRate[] = {0, 2.5, 5, 8, 16, 32};
  if (generation < 1 || generation > 5 || width <= 0) return 0;
  const double encoding = generation <= 2 ? 8.0 / 10 : 128.0 / 130;
  return kRate[generation] * width * encoding / 8;
}

int pcie_generation_of(const std::string& speed_text) {
  const double gts = std::atof(speed_text.c_str());
  static const double kRate[] = {2.5, 5, 8, 16, 32};
  for (int g = 0; g < 5; ++g) {
    if (std::fabs(gts - kRate[g]) < 0.1) return g + 1;
  }
  return -1;
}

bool Pcie::below_max() const {
  return known() && ((max_gen > 0 && gen < max_gen) || (max_width > 0 && width < max_width));
}

Pcie read_pcie(const LinkAnswers& answers, const std::string& bus_id) {
  Pcie p;
  const std::string id = normal_bus_id(bus_id);
  bool from_nvml = false;
  if (answers.nvml_available()) {
    const GpuAnswers a = answers.gpu(id);
    p.gen = a.pcie_gen_current;
    p.width = a.pcie_width_current;
    p.max_gen = lowest_known(a.pcie_gen_max, a.pcie_gen_gpu_max);
    p.max_width = a.pcie_width_max;
    from_nvml = p.gen > 0 || p.max_gen > 0;
  }
  const fs::path device = pci_device(answers.sysfs_root(), id);
  const std::string speed = first_line(device / "current_link_speed");
  const bool from_sysfs = !speed.empty();
  if (from_sysfs) {
    if (p.gen <= 0) p.gen = pcie_generation_of(speed);
    if (p.width <= 0) p.width = to_int(first_line(device / "current_link_width"));
    p.max_gen = lowest_known(p.max_gen, pcie_generation_of(first_line(device / "max_link_speed")));
    p.max_width = lowest_known(p.max_width, to_int(first_line(device / "max_link_width")));
    if (const fs::path port = upstream_port(answers.sysfs_root(), id); !port.empty()) {
      p.max_gen = lowest_known(p.max_gen, pcie_generation_of(first_line(port / "max_link_speed")));
      p.max_width = lowest_known(p.max_width, to_int(first_line(port / "max_link_width")));
    }
  }
  p.source = from_nvml && from_sysfs ? "NVML+sysfs"
             : from_nvml             ? "NVML"
             : from_sysfs            ? "sysfs"
                                     : "";
  return p;
}

double port_gbps(const std::string& rate_text) {
  double gbits = 0;
  char unit[16] = {};
  if (std::sscanf(rate_text.c_str(), "%lf %15s", &gbits, unit) != 2) return 0;
  return std::string(unit).rfind("Gb/s", 0) == 0 ? gbits / 8 : 0;
}

std::vector<Port> network_ports(const std::string& sysfs_root) {
  std::vector<Port> ports;
  std::error_code ec;
  const fs::path base = fs::path(sysfs_root) / "sys/class/infiniband";
  for (const auto& device : fs::directory_iterator(base, ec)) {
    for (const auto& port : fs::directory_iterator(device.path() / "ports", ec)) {
      const std::string state = first_line(port.path() / "state");
      if (state.find("ACTIVE") == std::string::npos) continue;
      ports.push_back({device.path().filename().string() + "/" + port.path().filename().string(),
                       port_gbps(first_line(port.path() / "rate"))});
    }
  }
  std::sort(ports.begin(), ports.end(),
            [](const Port& a, const Port& b) { return a.name < b.name; });
  return ports;
}

}  // namespace xfer::links
