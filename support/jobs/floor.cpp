#include "jobs/floor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "base/error.hpp"
#include "base/pooled.hpp"

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

constexpr const char* kFormatFloors = "xferbench-floor/1";  // floors only
constexpr const char* kFormatPlan = "xferbench-floor/2";    // and run_floors and plan

using json::member;

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

namespace {

bool is_floor_format(const json::Value& doc) {
  const std::string& format = member(doc, "format").text();
  return format == kFormatFloors || format == kFormatPlan;
}

bool whole(double x) { return std::isfinite(x) && x == std::floor(x); }

// Checks `table` ({family: [[bytes, ...], ...]}): each point `width` finite numbers, bytes a
// whole number above 0, and `valid` true of the point. `what` names the member in messages,
// `form` the expected point.
void check_points(const std::string& file, const std::string& what, const json::Value& table,
                  std::size_t width, const std::function<bool(const std::vector<double>&)>& valid,
                  const std::string& form) {
  if (!table.is_object())
    throw UsageError("--xfer_floor: " + file + ": " + what + ": expected {family: [" + form +
                     ", ...]}");
  for (std::size_t f = 0; f < table.keys().size(); ++f) {
    const std::string where = what + "[\"" + table.keys()[f] + "\"]";
    const json::Value& points = table.items()[f];
    if (!points.is_array())
      throw UsageError("--xfer_floor: " + file + ": " + where + ": expected [" + form + ", ...]");
    for (std::size_t i = 0; i < points.items().size(); ++i) {
      const json::Value& point = points.items()[i];
      std::vector<double> numbers;
      if (point.is_array() && point.items().size() == width)
        for (const json::Value& n : point.items())
          if (n.is_number() && std::isfinite(n.number())) numbers.push_back(n.number());
      if (numbers.size() != width || !(numbers[0] > 0) || !whole(numbers[0]) || !valid(numbers))
        throw UsageError("--xfer_floor: " + file + ": " + where + "[" + std::to_string(i) +
                         "] is " + point.dump(0) + ": expected " + form);
    }
  }
}

// The points of `table` ({family: [[bytes, ...], ...]}) of the row `name`'s family, its size in
// `bytes`; null when the table holds no such family.
const json::Value* family_points(const json::Value& table, const std::string& name, double& bytes) {
  const auto at = name.find("/bytes:");
  if (at == std::string::npos) return nullptr;
  bytes = std::strtod(name.c_str() + at + 7, nullptr);
  return table.find(name.substr(0, at));
}

// The point of `table` ({family: [[bytes, ...], ...]}, checked) for the row `name`: its family's
// at the nearest size within a factor of kPoolSizeFactor (sizes that far apart move
// differently), or null when none is that near.
const json::Value* nearest_point(const json::Value& table, const std::string& name) {
  double bytes = 0;
  const json::Value* points = family_points(table, name, bytes);
  if (!points) return nullptr;
  const json::Value* best = nullptr;
  double distance = 0;
  for (const json::Value& point : points->items()) {
    const double d = std::fabs(std::log2(point.items()[0].number() / std::max(bytes, 1.0)));
    if (d > std::log2(kPoolSizeFactor)) continue;
    if (!best || d < distance) {
      best = &point;
      distance = d;
    }
  }
  return best;
}

// A /2 file's plan: null, or {"jobs": 3..64, "rows": {family: [[bytes, seconds], ...]},
// "budget_s" and "predicted_wall_s" numbers or null}; other members are for people to read.
void check_plan(const std::string& file, const json::Value& plan) {
  if (plan.is_null()) return;
  const auto bad = [&file](const std::string& what) {
    return UsageError("--xfer_floor: " + file + ": plan" + what);
  };
  if (!plan.is_object()) throw bad(": expected null or an object");
  const json::Value& jobs = member(plan, "jobs");
  if (!jobs.is_number() || !whole(jobs.number()) || jobs.number() < 3 || jobs.number() > 64)
    throw bad(".jobs is " + jobs.dump(0) + ": expected a whole number from 3 to 64");
  check_points(
      file, "plan.rows", member(plan, "rows"), 2,
      [](const std::vector<double>& p) { return p[1] > 0 && p[1] <= 86400; },
      "[bytes, seconds] with seconds above 0, up to 86400");
  for (const char* key : {"budget_s", "predicted_wall_s"}) {
    const json::Value& v = member(plan, key);
    if (!v.is_null() && !(v.is_number() && std::isfinite(v.number())))
      throw bad(std::string(".") + key + " is " + v.dump(0) + ": expected seconds or null");
  }
}

}  // namespace

MachineFile::MachineFile(const std::string& file, const std::string& text, const json::Value& match)
    : file_(file) {
  json::Value doc;
  try {
    doc = json::parse(text);
  } catch (const std::exception& e) {
    throw UsageError("--xfer_floor: " + file + ": " + e.what());
  }
  if (!is_floor_format(doc))
    throw UsageError("--xfer_floor: " + file + ": not a floor file (format " + kFormatFloors +
                     " or " + kFormatPlan + ", written by tools/run or tools/track floor)");
  if (!match.is_null() && !same_value(member(doc, "match"), match))
    throw UsageError("--xfer_floor: " + file +
                     ": measured on another machine or software (its \"match\" differs from "
                     "this run's)");
  floors_ = member(doc, "floors");
  check_points(
      file, "floors", floors_, 2, [](const std::vector<double>& p) { return p[1] >= 0; },
      "[bytes, pct] with pct >= 0");
  if (member(doc, "format").text() == kFormatFloors) return;
  // A /2 file always holds both: {} and null until its history is long enough.
  if (!doc.find("run_floors") || !doc.find("plan"))
    throw UsageError("--xfer_floor: " + file + ": a " + kFormatPlan +
                     " file holds \"run_floors\" and \"plan\" ({} and null until 3 runs)");
  run_floors_ = member(doc, "run_floors");
  check_points(
      file, "run_floors", run_floors_, 3,
      [](const std::vector<double>& p) { return p[1] >= 0 && p[2] >= 1; },
      "[bytes, sd_pct, df] with sd_pct >= 0 and df >= 1");
  plan_ = member(doc, "plan");
  check_plan(file, plan_);
  if (member(doc, "history").is_array()) history_ = member(doc, "history");
}

double MachineFile::pct(const std::string& name) const {
  const json::Value* point = nearest_point(floors_, name);
  return point ? point->items()[1].number() : -1;
}

RunLevel MachineFile::run_level(const std::string& name) const {
  const json::Value* point = nearest_point(run_floors_, name);
  return point ? RunLevel{point->items()[1].number(), point->items()[2].number()} : RunLevel{};
}

std::vector<std::pair<std::size_t, RunMean>> MachineFile::run_means(const std::string& family,
                                                                    std::uint64_t bytes) const {
  std::vector<std::pair<std::size_t, RunMean>> out;
  for (std::size_t run = 0; run < history_.items().size(); ++run) {
    const json::Value& entry = history_.items()[run];
    if (!entry.is_object()) continue;
    const json::Value& jobs = member(entry, "jobs");
    const json::Value& rows = member(entry, "rows");
    if (!jobs.is_number() || !whole(jobs.number()) || jobs.number() < 2 || !rows.is_object())
      continue;
    const json::Value* points = rows.find(family);
    if (!points || !points->is_array()) continue;
    for (const json::Value& point : points->items()) {
      if (!point.is_array() || point.items().size() < 3) continue;
      const std::vector<json::Value>& p = point.items();
      if (!p[0].is_number() || p[0].number() != static_cast<double>(bytes)) continue;
      if (p[1].is_number() && p[2].is_number() && std::isfinite(p[1].number()) &&
          std::isfinite(p[2].number()) && p[2].number() >= 0)
        out.push_back({run, RunMean{p[1].number(), p[2].number() / jobs.number()}});
      break;
    }
  }
  return out;
}

int MachineFile::plan_jobs() const {
  return plan_.is_null() ? 0 : static_cast<int>(member(plan_, "jobs").number());
}

double MachineFile::plan_seconds(const std::string& name) const {
  double bytes = 0;
  const json::Value* points = family_points(member(plan_, "rows"), name, bytes);
  if (!points) return -1;
  for (const json::Value& point : points->items())
    if (point.items()[0].number() == bytes) return point.items()[1].number();
  return -1;
}

MachineFile load_machine_file(const std::string& named, const json::Value& match,
                              std::string* text) {
  const char* dir = std::getenv("XFER_FLOORS");
  const std::string path =
      named.empty() ? find_machine_floors(dir && *dir ? dir : "results/floors", match) : named;
  if (path.empty()) return MachineFile();
  std::string read = read_floor_text(path);
  MachineFile machine(path, read, match);
  if (text) *text = std::move(read);
  return machine;
}

std::string find_machine_floors(const std::string& dir, const json::Value& match) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->path().extension() == ".json") files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    json::Value doc;
    try {
      doc = json::parse(read_floor_text(file));
    } catch (const std::exception&) {  // not JSON, or not readable: not a floor file
      continue;
    }
    if (is_floor_format(doc) && same_value(member(doc, "match"), match)) return file;
  }
  return "";
}

}  // namespace xfer
