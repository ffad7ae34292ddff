#include "floor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "error.hpp"
#include "pooled.hpp"

namespace xfer {

// 1.96 x the spread between MPI jobs that 4 visits per job could not see, rounded up, from the
// experiment of docs/results/2026-11-24-h200-variance-sources (one H200 VM, 6 conditions x 3-4 jobs
// x 30 rows): copies the CPU drives, and copies too short to be more than launch and wake-up costs,
// move with the process; bytes that stay on the GPU, and long DMA copies, do not.
double measured_floor_pct(const std::string& name) {
  const std::string path = name.substr(0, name.find('/'));
  const auto at = name.find("/bytes:");
  const std::uint64_t bytes =
      at == std::string::npos ? 0 : std::strtoull(name.c_str() + at + 7, nullptr, 10);
  const bool long_dma = bytes >= (std::uint64_t{4} << 20);
  if (path == "mpi_cuda_aware" || path == "nccl_sendrecv") return 1;
  if (path == "mpi_host") return 8;
  if (path == "mpi_staged") return 6;
  if (path ==
      "memcpy_peer")  // peer access on: GPU to GPU; off: the driver stages through pinned memory
    return name.find("/p2p:on/") != std::string::npos || long_dma ? 1 : 12;
  if (path == "host_staging")
    return name.find("/host:pinned/") != std::string::npos && long_dma ? 1 : 12;
  return 0;
}

namespace {

constexpr const char* kFormat = "xferbench-floor/1";

const json::Value& member(const json::Value& object, const char* key) {
  static const json::Value none;
  const json::Value* v = object.is_object() ? object.find(key) : nullptr;
  return v ? *v : none;
}

// Equal as JSON: objects by their keys in any order (Python may sort them), the rest as written.
bool same_value(const json::Value& a, const json::Value& b) {
  if (a.is_object() != b.is_object() || a.is_array() != b.is_array()) return false;
  if (a.is_object()) {
    if (a.keys().size() != b.keys().size()) return false;
    for (std::size_t i = 0; i < a.keys().size(); ++i) {
      const json::Value* other = b.find(a.keys()[i]);
      if (!other || !same_value(a.items()[i], *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.items().size() != b.items().size()) return false;
    for (std::size_t i = 0; i < a.items().size(); ++i)
      if (!same_value(a.items()[i], b.items()[i])) return false;
    return true;
  }
  return a.dump(0) == b.dump(0);
}

}  // namespace

std::string read_floor_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) throw UsageError("--xfer_floor: " + path + ": cannot read it");
  return text.str();
}

json::Value machine_match(const json::Value& xferbench, int num_cpus) {
  const json::Value& cuda = member(xferbench, "cuda");
  const json::Value& mpi = member(xferbench, "mpi");
  json::Value gpus;
  if (member(cuda, "devices").is_array()) {
    gpus = json::Value::array();
    for (const json::Value& d : member(cuda, "devices").items()) gpus.push(member(d, "name"));
  }
  json::Value out = json::Value::object();
  out.set("gpus", gpus);
  out.set("gpu_links", member(cuda, "pairs"));
  out.set("cuda_driver", member(cuda, "driver_version"));
  out.set("cuda_runtime", member(cuda, "runtime_version"));
  out.set("nccl", member(member(xferbench, "nccl"), "version"));
  out.set("mpi_library", member(mpi, "library"));
  out.set("mpi_cuda_aware", member(mpi, "cuda_aware"));
  out.set("world_size", member(xferbench, "world_size"));
  out.set("num_cpus", num_cpus);
  return out;
}

MachineFloors::MachineFloors(const std::string& file, const std::string& text,
                             const json::Value& match)
    : file_(file) {
  json::Value doc;
  try {
    doc = json::parse(text);
  } catch (const std::exception& e) {
    throw UsageError("--xfer_floor: " + file + ": " + e.what());
  }
  if (member(doc, "format").text() != kFormat || !member(doc, "floors").is_object())
    throw UsageError("--xfer_floor: " + file + ": not a floor file (format " + kFormat +
                     ", written by tools/run or tools/track floor)");
  if (!match.is_null() && !same_value(member(doc, "match"), match))
    throw UsageError("--xfer_floor: " + file +
                     ": measured on another machine or software (its \"match\" differs from "
                     "this run's)");
  floors_ = member(doc, "floors");
}

double MachineFloors::pct(const std::string& name) const {
  const auto at = name.find("/bytes:");
  if (at == std::string::npos) return -1;
  const json::Value* points = floors_.find(name.substr(0, at));
  if (!points || !points->is_array()) return -1;
  const double bytes = std::strtod(name.c_str() + at + 7, nullptr);
  double best = -1, distance = 0;
  for (const json::Value& point : points->items()) {
    if (!point.is_array() || point.items().size() != 2) continue;
    const double size = point.items()[0].number();
    const double pct = point.items()[1].number();
    if (!(size > 0) || !(pct >= 0)) continue;
    const double d = std::fabs(std::log2(size / std::max(bytes, 1.0)));
    if (d > std::log2(kPoolSizeFactor)) continue;  // sizes that far apart move differently
    if (best < 0 || d < distance) {
      best = pct;
      distance = d;
    }
  }
  return best;
}

std::string find_machine_floors(const std::string& dir, const json::Value& match) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->path().extension() == ".json") files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    try {
      MachineFloors(file, read_floor_text(file), match);
      return file;
    } catch (const UsageError&) {  // another machine's, or not a floor file
    }
  }
  return "";
}

}  // namespace xfer
