// xferbench: parse flags, bring up MPI, let every path register (or say why it cannot run
// here), run Google Benchmark on every rank, and let rank 0 alone report.
#include <benchmark/benchmark.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "context.hpp"
#include "error.hpp"
#include "paths.hpp"
#include "reporter.hpp"

namespace {

// SIGINT or SIGTERM (Ctrl-C, the launcher passing one on, a batch system's time limit): rank 0
// says where the rows measured so far are (the result file holds them, marked incomplete).
extern "C" void on_stop_signal(int signal) {
  xfer::note_cut_short();
  std::_Exit(128 + signal);
}

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

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

void register_paths(xfer::Registry& registry) {
  xfer::register_memcpy_peer(registry);
  xfer::register_host_staging(registry);
  xfer::register_mpi_host(registry);
  xfer::register_mpi_staged(registry);
  xfer::register_mpi_cuda_aware(registry);
  xfer::register_nccl_sendrecv(registry);
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

int run(int argc, char** argv, const xfer::CommandLine& cl,
        std::chrono::steady_clock::time_point started) {
  xfer::World world(&argc, &argv);
  catch_stop_signals();
  xfer::Config config = cl.config;
  // Every rank resolves the same text against the same world size: the same answer, or the
  // same error on every rank, before any rank talks.
  try {
    // One rank and the default pair: no pair at all (the paths between ranks skip, saying why).
    config.rank_pairs = world.size() < 2 && config.pairs == "0:1"
                            ? xfer::RankPairs{}
                            : xfer::resolve_pairs(config.pairs, world.size(), "--xfer_pairs");
  } catch (const xfer::UsageError& e) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  xfer::arm_fail_point(config.test_fail, world.rank());
  // Ranks given different flags or environment would register different rows and deadlock.
  const std::string mine = xfer::settings_fingerprint(cl);
  if (world.any(mine != world.broadcast(mine, 0))) {
    if (world.is_root())
      std::fprintf(stderr,
                   "xferbench: the ranks were given different settings (flags, or XFER_* / "
                   "BENCHMARK_* environment); every rank needs the same ones\n");
    return 2;
  }
  // Each rank checks its own node's memory; any refusal stops every rank (no rank is left
  // waiting for one that gave up).
  std::string short_of_memory = xfer::check_memory(config, test_memory());
  if (!short_of_memory.empty() && !world.is_root())
    short_of_memory = "rank " + std::to_string(world.rank()) + ": " + short_of_memory;
  if (const std::string refused = world.first_message(short_of_memory); !refused.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", refused.c_str());
    return 2;
  }
  if (const auto error = xfer::check_output_writable(config, world); !error.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", error.c_str());
    return 2;
  }
  if (!config.test_rank_dump.empty()) {  // start each rank's dump afresh
    std::remove((config.test_rank_dump + "/rank" + std::to_string(world.rank()) + ".txt").c_str());
  }

  xfer::Watchdog watchdog(config.timeout_s);
  xfer::json::Value context = xfer::base_context(config, world);
  xfer::Registry registry(config, world, watchdog, context);
  registry.rank_info() = xfer::base_rank_info(world);
  try {
    register_paths(registry);
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

  xfer::RankZeroReporter reporter(config, world, context, registry.skips(), started);
  if (registry.families() == 0) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: no path can run here\n");
    reporter.write_without_runs();
  } else {
    std::size_t ran = 0;
    bool stopped = false;
    try {
      ran = benchmark::RunSpecifiedBenchmarks(&reporter);
    } catch (const xfer::FatalError& e) {  // thrown on every rank alike, at a row's start
      reporter.stop_early(e.what());
      stopped = true;
    }
    registry.release_rows();  // the last row's buffers, before MPI and CUDA go away
    if (stopped || !registry.stop_reason().empty()) {
      if (!stopped && world.is_root())  // it happened in the last row
        std::fprintf(stderr, "xferbench: %s\n", registry.stop_reason().c_str());
      return std::max(1, exit_status(reporter, registry, world));
    }
    // No row matched the filter: fine when it names a path skipped here; otherwise a typo that
    // must not let a CI job pass on no data.
    if (ran == 0) {
      reporter.write_without_runs();
      if (!filter_names_a_skipped_path(benchmark::GetBenchmarkFilter(), registry)) {
        if (world.is_root())
          std::fprintf(stderr, "xferbench: --benchmark_filter=%s matches no benchmark here\n",
                       benchmark::GetBenchmarkFilter().c_str());
        return 2;
      }
    }
  }
  return exit_status(reporter, registry, world);
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
  if (cl.help) {
    if (!speak) return 0;
    std::cout << xfer::harness_help() << std::endl;
    initialize_benchmark({argv[0], "--help"});  // prints Google Benchmark's flags and exits
    return 0;
  }
  // The harness owns the result file. Google Benchmark read BENCHMARK_OUT into its own flag
  // before main() ran; an explicit empty value keeps it from opening the file on any rank.
  std::vector<std::string> benchmark_args = cl.benchmark_args;
  benchmark_args.push_back("--benchmark_out=");
  if (!initialize_benchmark(benchmark_args)) return 2;
  try {
    return run(argc, argv, cl, started);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 1;
  }
}
