// xferbench: parse flags, bring up MPI, let every path register (or say why it cannot run
// here), run Google Benchmark on every rank, and let rank 0 alone report.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "block_cache.hpp"
#include "context.hpp"
#include "error.hpp"
#include "floor.hpp"
#include "host_memory.hpp"
#include "merge.hpp"
#include "paths.hpp"
#include "preflight.hpp"
#include "reporter.hpp"
#include "runner.hpp"
#include "selection.hpp"

namespace {

// Test only: XFER_TEST_MEMORY=BYTES makes this rank believe its node has that much memory (an
// environment variable, not a flag, so that one rank alone can be given it).
std::uint64_t test_memory() {
  const char* value = std::getenv("XFER_TEST_MEMORY");
  return value ? std::strtoull(value, nullptr, 10) : 0;
}

// The launcher's rank before MPI_Init, so usage errors and --help print once.
int launcher_rank() {
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

// Google Benchmark parses its own flags; it never sees --benchmark_out (rank 0 owns that).
// Google Benchmark keeps argv[0] for the report, so the strings must outlive the run.
bool initialize_benchmark(const std::vector<std::string>& args) {
  static std::vector<std::string> storage;
  storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  benchmark::SetDefaultTimeUnit(benchmark::kMicrosecond);  // --benchmark_time_unit overrides it
  benchmark::Initialize(&argc, argv.data());
  return !benchmark::ReportUnrecognizedArguments(argc, argv.data());
}

bool filter_names_a_skipped_path(const std::string& filter, const xfer::Registry& registry) {
  if (filter.empty() || filter[0] == '-') return true;  // negative filters exclude, never typo
  const std::string first = filter.substr(0, filter.find('/'));
  try {
    const std::regex pattern(first);
    for (const auto& skip : registry.skips()) {
      if (std::regex_search(skip.path, pattern)) return true;
    }
  } catch (const std::regex_error&) {
  }
  return false;
}

int exit_status(const xfer::RankZeroReporter& reporter, const xfer::Registry& registry,
                const xfer::World& world) {
  int status = 0;
  const bool speak = world.is_root();
  if (!reporter.failed_rows().empty()) {
    if (speak) {
      std::fprintf(stderr, "xferbench: %zu row(s) failed:\n", reporter.failed_rows().size());
      for (const auto& row : reporter.failed_rows()) std::fprintf(stderr, "  %s\n", row.c_str());
    }
    status = 1;
  }
  for (const auto& required : registry.config().require) {
    const auto skip = std::find_if(registry.skips().begin(), registry.skips().end(),
                                   [&](const xfer::Skip& s) { return s.path == required; });
    if (skip != registry.skips().end()) {
      if (speak)
        std::fprintf(stderr, "xferbench: required path %s was skipped: %s (--xfer_require)\n",
                     required.c_str(), skip->reason.c_str());
      status = 1;
    } else if (reporter.paths_reported().count(required) == 0) {
      if (speak)
        std::fprintf(stderr,
                     "xferbench: required path %s produced no rows (--xfer_require; check "
                     "--benchmark_filter)\n",
                     required.c_str());
      status = 1;
    }
  }
  if (reporter.output_failed()) status = 1;
  return status;
}

// The order of the visits: --xfer_seed, or one rank 0 draws for this run (recorded in the
// context, so the run's order can be replayed).
std::uint64_t agreed_seed(const xfer::Config& config, const xfer::World& world) {
  if (config.seed != 0) return config.seed;
  std::uint64_t seed = 0;
  if (world.is_root()) {
    std::random_device device;
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    seed = ((std::uint64_t{device()} << 32 ^ device() ^ static_cast<std::uint64_t>(now)) &
            xfer::kMaxSeed) |
           1;
  }
  return world.broadcast(seed, 0);
}

// The floor each selected row's figure carries: --xfer_floor, or the path's measured one.
std::vector<double> floors(const xfer::Config& config, const xfer::Registry& registry,
                           const std::vector<std::size_t>& selected) {
  std::vector<double> out;
  for (const std::size_t i : selected)
    out.push_back(config.floor_pct >= 0 ? config.floor_pct
                                        : xfer::measured_floor_pct(registry.rows()[i].name));
  return out;
}

// How long a SIGINT or SIGTERM gives the visit under way to end, so that the run stops after
// it and writes what it measured; past it (a peer that will never answer) the process ends
// with the file of the last rewrite. Open MPI's mpirun passes a SIGTERM on and kills the
// ranks a few seconds later anyway.
constexpr unsigned kStopGrace_s = 10;

// A run asked to measure that measured nothing fails: a CI job that forgot the launcher, or
// selected only paths that cannot run here, must not pass on no data.
int measured_nothing(const xfer::World& world, const std::string& why) {
  if (world.is_root()) std::fprintf(stderr, "xferbench: nothing was measured: %s\n", why.c_str());
  return 1;
}

int run(int argc, char** argv, const xfer::CommandLine& cl,
        std::chrono::steady_clock::time_point started) {
  xfer::World world(&argc, &argv);
  xfer::catch_stop_signals(kStopGrace_s);
  xfer::Config config = cl.config;
  if (const std::string refused = xfer::preflight(cl, config, world, test_memory());
      !refused.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", refused.c_str());
    return 2;
  }
  xfer::arm_fail_point(config.test_fail, world.rank());
  xfer::set_host_page_policy(xfer::parse_page_policy("--xfer_test_host_pages", config.test_host_pages));
  xfer::set_largest_block(*std::max_element(config.sizes.begin(), config.sizes.end()));
  if (!config.test_rank_dump.empty()) {  // start each rank's dump afresh
    std::remove((config.test_rank_dump + "/rank" + std::to_string(world.rank()) + ".txt").c_str());
  }
  config.seed = agreed_seed(config, world);

  xfer::Watchdog watchdog(config.timeout_s);
  xfer::json::Value context = xfer::base_context(config, world);
  xfer::Registry registry(config, world, context);
  registry.rank_info() = xfer::base_rank_info(world);
  try {
    for (const xfer::Path& path : xfer::all_paths()) path.add(registry);
  } catch (const xfer::FatalError& e) {  // agreed: the same on every rank
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  xfer::finish_context(context, registry, world);

  const std::vector<std::string> hosts = world.all_gather(world.host());  // collective
  if (const auto role = xfer::role_of(config.rank_pairs, world.rank()); role.active())
    watchdog.name_peer("rank " + std::to_string(role.peer) + " on " +
                       hosts[static_cast<std::size_t>(role.peer)]);
  std::vector<int> gpus;
  const xfer::json::Value* gpu = registry.rank_info().find("gpu");
  for (const auto& text : world.all_gather(gpu && !gpu->is_null() ? gpu->dump(0) : "-1"))
    gpus.push_back(std::atoi(text.c_str()));
  context.set("pairs", xfer::pairs_context(config.rank_pairs, hosts, gpus));
  if (world.is_root()) {
    for (const auto& line : xfer::summary_lines(registry, world, hosts))
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }

  xfer::Selection selection;
  try {
    selection = xfer::select_rows(registry.rows(), config.filter, config.modes,
                                  config.modes_given, config.sizes);
  } catch (const xfer::UsageError& e) {  // the same filter on every rank
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  const xfer::Plan plan{config.visits, config.jobs, config.repetitions, config.interleave,
                        config.seed};
  xfer::Runner runner(registry, selection.rows, floors(config, registry, selection.rows), plan,
                      xfer::Harness{config, world, watchdog}, started);
  runner.register_rows();
  xfer::RankZeroReporter reporter(
      config, world, context, registry.skips(), started, [&runner] { return runner.visits_json(); },
      [&runner] { return runner.stop_reason(); });
  reporter.keep_visits_of(runner);
  runner.on_visit([&reporter](bool round_ended) { reporter.keep_current(round_ended); });
  if (registry.families() == 0) {
    reporter.write_without_runs();
    const int status = exit_status(reporter, registry, world);
    if (config.list_tests) return status;
    const std::string why = world.size() == 1 ? "no path can run here with one rank (launch 2 "
                                                "or more: mpirun -np 2)"
                                              : "no path can run here";
    return std::max(status, measured_nothing(world, why));
  }
  if (selection.rows.empty()) {
    reporter.write_without_runs();
    // Fine when the filter names a path skipped here; otherwise a typo that must not let a CI
    // job pass on no data.
    if (selection.hint.empty() && filter_names_a_skipped_path(config.filter, registry)) {
      const int status = exit_status(reporter, registry, world);
      if (config.list_tests) return status;
      return std::max(status, measured_nothing(world, "--benchmark_filter=" + config.filter +
                                                          " selects only paths skipped here"));
    }
    if (world.is_root())
      std::fprintf(stderr, "xferbench: --benchmark_filter=%s matches no benchmark here%s%s\n",
                   config.filter.c_str(), selection.hint.empty() ? "" : "; ",
                   selection.hint.c_str());
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks(&reporter);
  xfer::release_kept_blocks();  // before MPI and CUDA go away
  const int status = exit_status(reporter, registry, world);
  if (runner.interrupted()) return xfer::kInterruptedStatus;
  return runner.stop_reason().empty() ? status : std::max(1, status);
}

// --xfer_merge: the result files of separate jobs become one result, reported as a run's.
int merge(int argc, char** argv, const xfer::CommandLine& cl,
          std::chrono::steady_clock::time_point started) {
  xfer::World world(&argc, &argv);
  const xfer::Config& config = cl.config;
  if (const std::string error = xfer::preflight_output(config, world); !error.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", error.c_str());
    return 2;
  }
  std::unique_ptr<xfer::Merge> merged;
  try {
    merged = std::make_unique<xfer::Merge>(config.merge);
  } catch (const xfer::UsageError& e) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  merged->register_rows();
  // The summary's wall time is the whole run's: the jobs' and the merge's.
  const auto whole_run =
      started - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(merged->jobs_wall_s()));
  xfer::RankZeroReporter reporter(config, world, merged->context(), merged->skips(), whole_run,
                                  [&merged] { return merged->visits_json(); });
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (const std::string why = merged->incomplete_reason(); !why.empty() && world.is_root())
    std::fprintf(stderr, "xferbench: --xfer_merge: the merged result is incomplete: %s\n",
                 why.c_str());
  return reporter.failed_rows().empty() && !reporter.output_failed() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  const bool speak = launcher_rank() == 0;
  xfer::CommandLine cl;
  try {
    cl = xfer::parse_command_line(argc, argv, [](const char* name) { return std::getenv(name); });
  } catch (const xfer::UsageError& e) {
    if (speak) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  if (cl.version) {
    if (speak) std::printf("%s\n", xfer::version_line().c_str());
    return 0;
  }
  try {
    xfer::check_required_paths(cl.config, xfer::path_names());
  } catch (const xfer::UsageError& e) {
    if (speak) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  if (cl.help) {
    if (!speak) return 0;
    std::cout << xfer::harness_help(xfer::path_names()) << std::endl;
    initialize_benchmark({argv[0], "--help"});  // prints Google Benchmark's flags and exits
    return 0;
  }
  // The harness owns the result file. Google Benchmark read BENCHMARK_OUT into its own flag
  // before main() ran; an explicit empty value keeps it from opening the file on any rank.
  std::vector<std::string> benchmark_args = cl.benchmark_args;
  benchmark_args.push_back("--benchmark_out=");
  if (!initialize_benchmark(benchmark_args)) return 2;
  try {
    if (!cl.config.merge.empty()) return merge(argc, argv, cl, started);
    return run(argc, argv, cl, started);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 1;
  }
}
