// xferbench: the wiring. Parse the flags, answer --version and --help, start Google Benchmark,
// and hand the paths (paths.hpp) to the run (support/run/setup.hpp), which brings up MPI, lets
// every path register (or say why it cannot run here), runs every rank and lets rank 0 report.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "config/config.hpp"
#include "harness/context.hpp"
#include "paths.hpp"
#include "run/setup.hpp"

namespace {

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

// A usage error, before MPI is up: rank 0 (or a rank started without a launcher) says why and
// exits 2. The other ranks exit 0: one exiting 2 first can make Open MPI's mpirun end the job
// before rank 0's line reaches it (CI lost '--benchmark_min_warmup_time: not supported' so
// with 3 ranks); mpirun still exits with rank 0's 2.
int refuse(bool speak, const char* why) {
  if (!speak) return 0;
  std::fprintf(stderr, "xferbench: %s\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  const xfer::EnvLookup env = [](const char* name) { return std::getenv(name); };
  const bool speak = xfer::launcher_rank(env) <= 0;  // usage errors and --help print once
  xfer::CommandLine cl;
  try {
    cl = xfer::parse_command_line(argc, argv, env);
  } catch (const xfer::UsageError& e) {
    return refuse(speak, e.what());
  }
  if (cl.version) {
    if (speak) std::printf("%s\n", xfer::version_line().c_str());
    return 0;
  }
  try {
    xfer::check_required_paths(cl.config, xfer::path_names());
  } catch (const xfer::UsageError& e) {
    return refuse(speak, e.what());
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
  if (!initialize_benchmark(benchmark_args)) return speak ? 2 : 0;  // each rank said it
  try {
    const int status = cl.config.merge.empty()
                           ? xfer::run_benchmarks(argc, argv, cl, started, xfer::all_paths())
                           : xfer::run_merge(argc, argv, cl, started);
    // Rank 0 speaks for the job: it prints the outcome every rank agreed on, and its status
    // is the job's. Were another rank to exit non-zero first, Open MPI's mpirun would abort
    // the job at once and could drop rank 0's last lines unread (CI once saw a refused
    // --xfer_pairs exit 2 with nothing printed), so the other ranks end with 0.
    return speak ? status : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 1;
  }
}
