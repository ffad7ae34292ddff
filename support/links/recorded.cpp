// The links' answers recorded by --xfer_dump_links and read back in their place
// (tests/fixtures/links/README.md): RecordedAnswers reads them, record_answers writes them.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "links/links.hpp"
#include "links/sysfs.hpp"

namespace xfer::links {
namespace fs = std::filesystem;

namespace {

using sysfs::first_line;
using sysfs::pci_device;
using sysfs::upstream_port;

const char* kGpuKeys[] = {"pcie_gen_current",    "pcie_gen_max",   "pcie_gen_gpu_max",
                          "pcie_width_current",  "pcie_width_max", "memory_bus_bits",
                          "memory_clock_max_mhz"};

int* gpu_field(GpuAnswers& a, const std::string& key) {
  int* fields[] = {&a.pcie_gen_current,    &a.pcie_gen_max,   &a.pcie_gen_gpu_max,
                   &a.pcie_width_current,  &a.pcie_width_max, &a.memory_bus_bits,
                   &a.memory_clock_max_mhz};
  for (std::size_t i = 0; i < std::size(kGpuKeys); ++i) {
    if (key == kGpuKeys[i]) return fields[i];
  }
  return nullptr;
}

}  // namespace

RecordedAnswers::RecordedAnswers(const std::string& dir) : dir_(dir) {
  if (!fs::is_directory(dir)) throw UsageError(dir + ": not a directory of recorded link answers");
  std::ifstream in(fs::path(dir) / "nvml.txt");
  nvml_ = static_cast<bool>(in);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind, a, b;
    words >> kind >> a;
    const auto bad = [&](const std::string& why) {
      return UsageError(dir + "/nvml.txt line " + std::to_string(number) + ": " + why);
    };
    if (kind == "nvlink") words >> b;
    if ((kind != "gpu" && kind != "nvlink") || normal_bus_id(a).empty() ||
        (kind == "nvlink" && normal_bus_id(b).empty()))
      throw bad("expected 'gpu BUSID key=value...' or 'nvlink BUSID BUSID key=value...'");
    GpuAnswers gpu;
    NvlinkAnswers link;
    for (std::string item; words >> item;) {
      const auto eq = item.find('=');
      const std::string key = item.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      char* end = nullptr;
      const double number_value = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0') throw bad("'" + item + "' is not key=number");
      const int whole = static_cast<int>(number_value);
      if (kind == "gpu" && gpu_field(gpu, key)) {
        *gpu_field(gpu, key) = whole;
      } else if (kind == "nvlink" && key == "links") {
        link.links = whole;
      } else if (kind == "nvlink" && key == "version_code") {
        link.version_code = whole;
      } else if (kind == "nvlink" && key == "link_mbps") {
        link.link_mbps = number_value;
      } else if (kind == "nvlink" && key == "link_speed_mbps") {
        link.link_speed_mbps = number_value;
      } else if (kind == "nvlink" && key == "links_present") {
        link.links_present = whole;
      } else if (kind == "nvlink" && key == "via_switch") {
        link.via_switch = whole != 0;
      } else {
        throw bad("unknown key '" + key + "'");
      }
    }
    if (kind == "gpu") gpus_[normal_bus_id(a)] = gpu;
    if (kind == "nvlink") pairs_[{normal_bus_id(a), normal_bus_id(b)}] = link;
  }
}

GpuAnswers RecordedAnswers::gpu(const std::string& bus_id) const {
  const auto it = gpus_.find(normal_bus_id(bus_id));
  return it == gpus_.end() ? GpuAnswers{} : it->second;
}

NvlinkAnswers RecordedAnswers::nvlink(const std::string& bus_a, const std::string& bus_b) const {
  const auto it = pairs_.find({normal_bus_id(bus_a), normal_bus_id(bus_b)});
  if (it != pairs_.end()) return it->second;
  NvlinkAnswers none;
  if (nvml_) none.links = 0;  // NVML answered for this machine: no line, no link
  return none;
}

std::vector<std::string> record_answers(const LinkAnswers& answers,
                                        const std::vector<std::string>& bus_ids,
                                        const std::string& dir) {
  std::vector<std::string> written;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
    throw Error(dir + ": cannot create or write this directory");
  const auto copy_files = [&](const fs::path& from, const fs::path& to,
                              std::initializer_list<const char*> names) {
    fs::create_directories(to, ec);
    for (const char* name : names) {
      if (!fs::exists(from / name)) continue;
      std::ofstream(to / name) << first_line(from / name) << "\n";
      written.push_back((to / name).string());
    }
  };
  if (answers.nvml_available()) {
    std::ofstream out(fs::path(dir) / "nvml.txt");
    out << "# NVML's answers, recorded by xferbench --xfer_dump_links (support/links/links.hpp)\n";
    for (const auto& bus : bus_ids) {
      GpuAnswers gpu = answers.gpu(bus);
      out << "gpu " << normal_bus_id(bus);
      for (const char* key : kGpuKeys) out << " " << key << "=" << *gpu_field(gpu, key);
      out << "\n";
    }
    for (const auto& a : bus_ids) {
      for (const auto& b : bus_ids) {
        if (a == b) continue;
        const NvlinkAnswers link = answers.nvlink(a, b);
        if (link.links <= 0) continue;
        out << "nvlink " << normal_bus_id(a) << " " << normal_bus_id(b) << " links=" << link.links
            << " version_code=" << link.version_code << " link_mbps=" << link.link_mbps
            << " link_speed_mbps=" << link.link_speed_mbps
            << " links_present=" << link.links_present
            << " via_switch=" << (link.via_switch ? 1 : 0) << "\n";
      }
    }
    if (!out) throw Error(dir + "/nvml.txt: cannot write");
    written.push_back(dir + "/nvml.txt");
  }
  const fs::path root(answers.sysfs_root());
  for (const auto& bus : bus_ids) {
    const std::string id = normal_bus_id(bus);
    const fs::path real = fs::canonical(pci_device(root.string(), id), ec);
    if (ec) continue;
    // The same tree as sysfs: the device under its ports, and the bus/pci/devices link to it.
    const fs::path relative = real.lexically_relative(root);
    const std::initializer_list<const char*> names = {"current_link_speed", "current_link_width",
                                                      "max_link_speed", "max_link_width"};
    copy_files(real, fs::path(dir) / relative, names);
    if (const fs::path port = upstream_port(root.string(), id); !port.empty())
      copy_files(port, fs::path(dir) / port.lexically_relative(root), names);
    const fs::path link = pci_device(dir, id);
    fs::create_directories(link.parent_path(), ec);
    fs::remove(link, ec);
    fs::create_directory_symlink((fs::path(dir) / relative).lexically_relative(link.parent_path()),
                                 link, ec);
  }
  for (const auto& port : network_ports(root.string())) {
    const auto slash = port.name.find('/');
    const fs::path at = fs::path("sys/class/infiniband") / port.name.substr(0, slash) / "ports" /
                        port.name.substr(slash + 1);
    copy_files(root / at, fs::path(dir) / at, {"rate", "state"});
  }
  return written;
}

}  // namespace xfer::links
