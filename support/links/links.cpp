#include "links/links.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.hpp"

namespace xfer::links {
namespace fs = std::filesystem;

namespace {

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

int to_int(const std::string& text) {
  const bool digits =
      !text.empty() && text.size() < 9 && text.find_first_not_of("0123456789") == std::string::npos;
  return digits ? std::stoi(text) : -1;
}

fs::path pci_device(const std::string& root, const std::string& bus_id) {
  return fs::path(root) / "sys/bus/pci/devices" / bus_id;
}

// The port above the GPU in the PCIe tree (its slot), "" where sysfs has none with a link.
fs::path upstream_port(const std::string& root, const std::string& bus_id) {
  std::error_code ec;
  const fs::path real = fs::canonical(pci_device(root, bus_id), ec);
  if (ec) return {};
  const fs::path parent = real.parent_path();
  return fs::exists(parent / "max_link_speed") ? parent : fs::path();
}

int lowest_known(int a, int b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

std::string fixed1(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string peer_off_line(const PeerOff& p) {
  return "p2p_off_despite_link: GPU " + std::to_string(p.src) + " -> GPU " + std::to_string(p.dst) +
         ": peer access is off although NVML counts " + std::to_string(p.nvlink_count) +
         " NVLink link(s) between them";
}

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

std::string normal_bus_id(const std::string& text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return "";
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

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
    out << "# NVML's answers, recorded by xferbench --xfer_dump_links (support/links.hpp)\n";
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

std::string Link::describe() const {
  std::string text;
  if (kind == "PCIe") {
    text = "PCIe Gen" + std::to_string(pcie.gen) + " x" + std::to_string(pcie.width) + " of GPU " +
           bus_id;
  } else if (kind == "NVLink") {
    text = "NVLink x" + std::to_string(nvlink.links) + (nvlink.via_switch ? " (NVSwitch)" : "") +
           " " + id.substr(id.find(':') + 1);
    if (gbps <= 0) return text + ": rate unknown, so its rows get no share: " + why_unknown;
    text += " (" + fixed1(gbps / nvlink.links) + " GB/s a link, " + rate_source + ")";
  } else if (kind == "memory") {
    text = "memory of GPU " + bus_id + " (" + std::to_string(memory_bus_bits) + "-bit, " +
           std::to_string(memory_clock_max_mhz) + " MHz)";
  } else {
    text = "network port " + id.substr(id.find(':') + 1);
  }
  return text + ": " + fixed1(gbps) + " GB/s per direction" +
         (kind == "memory" ? " of copy payload" : "");
}

std::string over_line_rate(double row_gbps, double ceiling_gbps, const std::string& links) {
  if (!(ceiling_gbps > 0) || row_gbps <= ceiling_gbps) return "";
  return fixed1(row_gbps) + " GB/s is " + fixed1(row_gbps / ceiling_gbps * 100) +
         "% of the line rate of the links it crosses (" + fixed1(ceiling_gbps) + " GB/s: " + links +
         "): an error in the measurement or in the peak, not a result";
}

void Book::set_answers(std::unique_ptr<LinkAnswers> answers) { answers_ = std::move(answers); }

std::string Book::add(Link link) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& known : links_) {
    if (known.id == link.id) return link.id;
  }
  links_.push_back(std::move(link));
  return links_.back().id;
}

std::string Book::pcie(const std::string& bus_id) {
  if (!answers_) return "";
  Link link;
  link.kind = "PCIe";
  link.bus_id = normal_bus_id(bus_id);
  link.id = "pcie:" + link.bus_id;
  link.pcie = read_pcie(*answers_, bus_id);
  if (!link.pcie.known()) return "";
  link.gbps = pcie_gbps(link.pcie.gen, link.pcie.width);
  link.max_gbps = pcie_gbps(std::max(link.pcie.gen, link.pcie.max_gen),
                            std::max(link.pcie.width, link.pcie.max_width));
  return link.gbps > 0 ? add(link) : "";
}

std::string Book::memory(const std::string& bus_id) {
  if (!answers_ || !answers_->nvml_available()) return "";
  const GpuAnswers a = answers_->gpu(bus_id);
  Link link;
  link.kind = "memory";
  link.bus_id = normal_bus_id(bus_id);
  link.id = "memory:" + link.bus_id;
  link.memory_bus_bits = a.memory_bus_bits;
  link.memory_clock_max_mhz = a.memory_clock_max_mhz;
  link.gbps = link.max_gbps = memory_copy_gbps(a.memory_bus_bits, a.memory_clock_max_mhz);
  return link.gbps > 0 ? add(link) : "";
}

std::string Book::nvlink(const std::string& bus_a, const std::string& bus_b) {
  if (!answers_ || !answers_->nvml_available()) return "";
  Link link;
  link.kind = "NVLink";
  link.bus_id = normal_bus_id(bus_a);
  link.id = "nvlink:" + link.bus_id + ">" + normal_bus_id(bus_b);
  link.nvlink = answers_->nvlink(bus_a, bus_b);
  if (link.nvlink.links <= 0) return "";
  const NvlinkRate rate = nvlink_rate(link.nvlink);
  link.gbps = link.max_gbps = link.nvlink.links * rate.link_gbps;
  link.rate_source = rate.source;
  link.why_unknown = rate.why_unknown;
  return add(link);
}

std::string Book::network() {
  if (!answers_) return "";
  Port best;
  for (const auto& port : network_ports(answers_->sysfs_root())) {
    if (port.gbps > best.gbps) best = port;
  }
  if (best.gbps <= 0) return "";
  Link link;
  link.kind = "network";
  link.id = "network:" + best.name;
  link.gbps = link.max_gbps = best.gbps;
  return add(link);
}

void Book::set_route(const std::string& family, Route route) {
  if (route.links.empty() ||
      std::any_of(route.links.begin(), route.links.end(), [](const auto& l) { return l.empty(); }))
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  routes_[family] = std::move(route);
}

bool Book::has_route(const std::string& family) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return routes_.count(family) > 0;
}

bool Book::wants_running_read(const std::string& family) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = routes_.find(family);
  if (it == routes_.end() || !answers_) return false;
  return std::any_of(it->second.links.begin(), it->second.links.end(), [&](const std::string& id) {
    if (id.rfind("pcie:", 0) != 0) return false;
    const auto link =
        std::find_if(links_.begin(), links_.end(), [&](const Link& l) { return l.id == id; });
    return link != links_.end() && (!link->read_running || link->gbps < link->max_gbps);
  });
}

void Book::read_running(const std::string& family) {
  std::vector<std::string> buses;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = routes_.find(family);
    if (it == routes_.end() || !answers_) return;
    for (const auto& id : it->second.links) {
      if (id.rfind("pcie:", 0) == 0) buses.push_back(id.substr(5));
    }
  }
  for (const auto& bus : buses) {
    const Pcie now = read_pcie(*answers_, bus);  // outside the lock: NVML and sysfs take time
    if (!now.known()) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& link : links_) {
      if (link.id != "pcie:" + bus) continue;
      const double gbps = pcie_gbps(now.gen, now.width);
      // The fastest reading while transfers ran: an idle link reads slow, a busy one does not.
      if (!link.read_running || gbps > link.gbps) {
        link.pcie.gen = now.gen;
        link.pcie.width = now.width;
        link.gbps = gbps;
      }
      link.read_running = true;
    }
  }
}

double Book::ceiling_gbps(const std::string& family) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = routes_.find(family);
  if (it == routes_.end()) return 0;
  double inverse_sum = 0;
  double slowest = 0;
  for (const auto& id : it->second.links) {
    const auto link =
        std::find_if(links_.begin(), links_.end(), [&](const Link& l) { return l.id == id; });
    // A PCIe link never read while a transfer ran counts at its maximum: a reading at rest
    // may be a power-saving generation, and a ceiling too low would refuse a true figure.
    const double gbps = link == links_.end()                          ? 0
                        : link->kind == "PCIe" && !link->read_running ? link->max_gbps
                                                                      : link->gbps;
    if (gbps <= 0) return 0;
    inverse_sum += 1 / gbps;
    slowest = slowest == 0 ? gbps : std::min(slowest, gbps);
  }
  return it->second.join == Route::Join::Serial ? 1 / inverse_sum : slowest;
}

double Book::row_ceiling_gbps(const std::string& family, int directions, int pairs) const {
  bool memory_only = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = routes_.find(family);
    if (it == routes_.end()) return 0;
    for (const auto& id : it->second.links)
      memory_only = memory_only && id.rfind("memory:", 0) == 0;
  }
  return ceiling_gbps(family) * (memory_only ? 1 : directions) * pairs;
}

std::string Book::route_text(const std::string& family) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = routes_.find(family);
  if (it == routes_.end()) return "";
  std::string text;
  for (const auto& id : it->second.links) text += (text.empty() ? "" : ", ") + id;
  if (it->second.links.size() > 1)
    text += it->second.join == Route::Join::Serial ? " in turn" : " at once";
  return text;
}

std::vector<Link> Book::links() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return links_;
}

std::vector<std::string> Book::downtrained() const {
  std::vector<std::string> ids;
  for (const auto& link : links()) {
    if (link.downtrained()) ids.push_back(link.id);
  }
  return ids;
}

json::Value Book::to_json() const {
  json::Value out = json::Value::object();
  out.set("nvml", answers_ ? json::Value(answers_->nvml_available()) : json::Value());
  json::Value list = json::Value::array();
  for (const auto& link : links()) {
    json::Value item = json::Value::object();
    item.set("id", link.id);
    item.set("kind", link.kind);
    item.set("describe", link.describe());
    item.set("gbps", link.gbps);
    item.set("max_gbps", link.max_gbps);
    if (link.kind == "PCIe") {
      item.set("generation", link.pcie.gen);
      item.set("width", link.pcie.width);
      item.set("max_generation", link.pcie.max_gen);
      item.set("max_width", link.pcie.max_width);
      item.set("source", link.pcie.source);
      item.set("read_while_running", link.read_running);
      item.set("downtrained", link.downtrained());
    } else if (link.kind == "NVLink") {
      item.set("links", link.nvlink.links);
      item.set("links_present", link.nvlink.links_present);
      item.set("degraded", link.degraded());
      item.set("version_code", link.nvlink.version_code);
      item.set("version", nvlink_version_name(link.nvlink.version_code));
      item.set("link_gbps", link.nvlink.links > 0 ? link.gbps / link.nvlink.links : 0.0);
      item.set("source", link.rate_source);
      item.set("via_switch", link.nvlink.via_switch);
      if (!link.why_unknown.empty()) item.set("unknown", link.why_unknown);
    } else if (link.kind == "memory") {
      item.set("bus_bits", link.memory_bus_bits);
      item.set("clock_max_mhz", link.memory_clock_max_mhz);
    }
    list.push(item);
  }
  out.set("links", list);
  json::Value routes = json::Value::object();
  std::map<std::string, Route> copy;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    copy = routes_;
  }
  for (const auto& [family, route] : copy) {
    json::Value r = json::Value::object();
    json::Value ids = json::Value::array();
    for (const auto& id : route.links) ids.push(id);
    r.set("links", ids);
    r.set("join", route.join == Route::Join::Serial ? "serial" : "overlapped");
    r.set("gbps", ceiling_gbps(family));
    routes.set(family, r);
  }
  out.set("routes", routes);
  json::Value down = json::Value::array();
  for (const auto& id : downtrained()) down.push(id);
  out.set("downtrained", down);
  json::Value degraded = json::Value::array();
  for (const auto& link : links()) {
    if (link.degraded()) degraded.push(link.id);
  }
  out.set("degraded", degraded);
  json::Value off = json::Value::array();
  for (const auto& p : peer_off_) {
    json::Value item = json::Value::object();
    item.set("src", p.src);
    item.set("dst", p.dst);
    item.set("nvlink_count", p.nvlink_count);
    off.push(item);
  }
  out.set("p2p_off_despite_link", off);
  return out;
}

std::vector<std::string> Book::lines() const {
  std::vector<std::string> out;
  for (const auto& link : links()) out.push_back("link " + link.describe());
  for (const auto& line : degraded_lines()) out.push_back(line);
  for (const auto& p : peer_off_) out.push_back(peer_off_line(p));
  return out;
}

std::vector<std::string> Book::degraded_lines() const {
  std::vector<std::string> out;
  for (const auto& link : links()) {
    if (link.degraded())
      out.push_back("degraded: " + link.id + " has " + std::to_string(link.nvlink.links) +
                    " NVLink link(s) active of the " + std::to_string(link.nvlink.links_present) +
                    " its GPUs have");
  }
  return out;
}

std::vector<std::string> Book::problems() const {
  std::vector<std::string> out;
  for (const auto& link : links()) {
    if (link.downtrained())
      out.push_back("downtrained: " + link.id + " ran at Gen" + std::to_string(link.pcie.gen) +
                    " x" + std::to_string(link.pcie.width) + " (" + fixed1(link.gbps) +
                    " GB/s) while transfers ran; the GPU and its slot allow Gen" +
                    std::to_string(link.pcie.max_gen) + " x" + std::to_string(link.pcie.max_width) +
                    " (" + fixed1(link.max_gbps) + " GB/s per direction)");
  }
  for (const auto& line : degraded_lines()) out.push_back(line);
  for (const auto& p : peer_off_) out.push_back(peer_off_line(p));
  return out;
}

RunningReader::RunningReader(Book& book, std::string family)
    : book_(book), family_(std::move(family)) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      lock.unlock();
      book_.read_running(family_);
      lock.lock();
      wake_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stop_; });
    }
  });
}

RunningReader::~RunningReader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  book_.read_running(family_);
}

}  // namespace xfer::links
