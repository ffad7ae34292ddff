// The link book (the links a run uses, each once, the route of each family over them, and what
// they ran at while the transfers ran), the words that describe a link, and the reader that
// samples a family's links while it runs.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "links/links.hpp"

namespace xfer::links {
namespace {

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

// The lines of the pairs: each degraded NVLink pair, then each pair with peer access off
// despite a link.
void add_pair_lines(const Book& book, std::vector<std::string>& out) {
  for (const auto& line : book.degraded_lines()) out.push_back(line);
  for (const auto& p : book.peer_off()) out.push_back(peer_off_line(p));
}

}  // namespace

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
  add_pair_lines(*this, out);
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
  add_pair_lines(*this, out);
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
