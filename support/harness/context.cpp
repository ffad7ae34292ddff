#include "harness/context.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/fields.hpp"
#include "base/sizes.hpp"

extern char** environ;

namespace xfer {

#ifndef XFER_VERSION
#define XFER_VERSION "unknown"
#endif
#ifndef XFER_GIT_REVISION
#define XFER_GIT_REVISION "unknown"
#endif
#ifndef XFER_BENCHMARK_VERSION
#define XFER_BENCHMARK_VERSION "unknown"
#endif

bool is_recorded_variable(const std::string& name) {
  if (name == "CUDA_VISIBLE_DEVICES" || name == "CUDA_DEVICE_ORDER") return true;
  // Open MPI's launcher passes its own bookkeeping (job ids, URIs) as OMPI_MCA_*: not settings.
  for (const char* launcher : {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix",
                               "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME_QUERY_hint"}) {
    if (name.rfind(launcher, 0) == 0) return false;
  }
  for (const char* prefix : {"NCCL_", "UCX_", "OMPI_MCA_", "MPICH_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string version_line() {
  std::string mpi = mpi_library_version();
  mpi = mpi.substr(0, mpi.find_first_of(",\n"));
  return std::string("xferbench ") + XFER_VERSION + " (git " + XFER_GIT_REVISION +
         "), Google Benchmark " + XFER_BENCHMARK_VERSION + ", " + mpi;
}

json::Value base_rank_info(const World& world) {
  json::Value info = json::Value::object();
  info.set("rank", world.rank());
  info.set("host", world.host());
  info.set("local_rank", world.local_rank());
  info.set("gpu", nullptr);
  return info;
}

json::Value base_context(const Config& config, const World& world, std::uint64_t seed) {
  json::Value ctx = json::Value::object();
  ctx.set("harness_version", XFER_VERSION);
  ctx.set("git_revision", XFER_GIT_REVISION);
  ctx.set("benchmark_version", XFER_BENCHMARK_VERSION);
  ctx.set("world_size", world.size());
  ctx.set("ranks", json::Value::array());

  int major = 0;
  int minor = 0;
  MPI_Get_version(&major, &minor);
  json::Value mpi = json::Value::object();
  mpi.set("library", mpi_library_version());
  mpi.set("standard", std::to_string(major) + "." + std::to_string(minor));
  mpi.set("cuda_aware", nullptr);
  mpi.set("cuda_aware_source", nullptr);
  ctx.set("mpi", mpi);
  ctx.set("cuda", nullptr);
  ctx.set("nccl", nullptr);

  json::Value env = json::Value::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos && is_recorded_variable(entry.substr(0, eq)))
      env.set(entry.substr(0, eq), entry.substr(eq + 1));
  }
  ctx.set("env", env);

  json::Value sizes = json::Value::array();
  for (const auto s : config.sizes) sizes.push(s);
  ctx.set("sizes", sizes);
  ctx.set("warmup", config.warmup);
  json::Value plan = json::Value::object();  // how rows were visited (runner.hpp)
  plan.set(fields::kVisits, config.visits);
  plan.set(fields::kJobs, config.jobs);
  plan.set(fields::kSeed, seed);
  plan.set("repetitions", config.repetitions);
  plan.set("shuffle_last", config.interleave);
  ctx.set(fields::kPlan, plan);
  ctx.set(fields::kJobs, 1);
  ctx.set(fields::kSkipped, json::Value::array());
  ctx.set(fields::kIncomplete,
          nullptr);  // a document written before the run finished says why here
  return ctx;
}

void finish_context(json::Value& context, Registry& registry, const World& world) {
  json::Value ranks = json::Value::array();
  for (const auto& entry : world.all_gather(registry.rank_info().dump(0)))
    ranks.push(json::parse(entry));  // typed: the links' routes read each rank's host and GPU
  context.set("ranks", ranks);
  json::Value skipped = json::Value::array();
  for (const auto& s : registry.skips()) {
    json::Value item = json::Value::object();
    item.set("path", s.path);
    item.set(fields::kReason, s.reason);
    skipped.push(item);
  }
  context.set(fields::kSkipped, skipped);
}

json::Value pairs_context(const RankPairs& pairs, const std::vector<std::string>& hosts,
                          const std::vector<int>& gpus) {
  json::Value out = json::Value::array();
  for (const auto& [a, b] : pairs) {
    json::Value pair = json::Value::object();
    json::Value ranks = json::Value::array();
    json::Value pair_hosts = json::Value::array();
    json::Value pair_gpus = json::Value::array();
    for (const int r : {a, b}) {
      const auto i = static_cast<std::size_t>(r);
      ranks.push(r);
      pair_hosts.push(i < hosts.size() ? json::Value(hosts[i]) : json::Value());
      pair_gpus.push(i < gpus.size() && gpus[i] >= 0 ? json::Value(gpus[i]) : json::Value());
    }
    pair.set("ranks", ranks);
    pair.set("hosts", pair_hosts);
    pair.set("gpus", pair_gpus);
    const bool known = static_cast<std::size_t>(std::max(a, b)) < hosts.size();
    pair.set("inter_node", known ? json::Value(hosts[a] != hosts[b]) : json::Value());
    out.push(pair);
  }
  return out;
}

std::vector<std::string> summary_lines(const Registry& registry, const World& world,
                                       const std::vector<std::string>& hosts) {
  std::vector<std::string> lines;
  lines.push_back(version_line());
  std::string ranks =
      "world: " + std::to_string(world.size()) + " rank" + (world.size() == 1 ? "" : "s") + ":";
  for (std::size_t r = 0; r < hosts.size() && r < 8; ++r)
    ranks += " " + std::to_string(r) + "@" + hosts[r];
  if (hosts.size() > 8) ranks += " ...";
  lines.push_back(ranks);
  const json::Value& mpi = json::member(registry.context(), "mpi");
  const std::string aware = json::text_of(mpi, "cuda_aware");
  const std::string source = json::text_of(mpi, "cuda_aware_source");
  if (!aware.empty())
    lines.push_back("MPI CUDA-aware: " + aware + (source.empty() ? "" : " (" + source + ")"));
  const auto& sizes = registry.config().sizes;
  lines.push_back("sizes: " + std::to_string(sizes.size()) + " from " + format_size(sizes.front()) +
                  " to " + format_size(sizes.back()) +
                  "; time = one-way per message; GB/s with GB = 1e9 bytes");
  std::string pairs;
  for (const auto& [a, b] : registry.pairs()) {
    const bool inter =
        static_cast<std::size_t>(std::max(a, b)) < hosts.size() && hosts[a] != hosts[b];
    pairs += (pairs.empty() ? "" : ", ") + std::to_string(a) + ":" + std::to_string(b) +
             (inter ? " (inter-node)" : " (intra-node)");
  }
  const Config& config = registry.config();
  if (config.fleet())  // run/fleet.cpp says its own
    lines.push_back("rank pairs: every pair in rounds (--xfer_fleet" +
                    std::string(config.fleet_rounds.empty() ? "" : "_rounds") + ")");
  else if (world.size() > 1)
    lines.push_back("rank pairs: " + pairs);
  for (const auto& s : registry.skips()) lines.push_back("skipped " + s.path + ": " + s.reason);
  return lines;
}

}  // namespace xfer
