// xferbench: parse flags, bring up MPI, let every path register (or say why it cannot run
// here), run Google Benchmark on every rank, and let rank 0 alone report.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "base/block_cache.hpp"
#include "base/error.hpp"
#include "base/host_memory.hpp"
#include "base/stop.hpp"
#include "harness/context.hpp"
#include "harness/selection.hpp"
#include "jobs/floor.hpp"
#include "jobs/machine_plan.hpp"
#include "jobs/merge.hpp"
#include "links/routes.hpp"
#include "paths.hpp"
#include "report/reporter.hpp"
#include "run/preflight.hpp"
#include "run/runner.hpp"

namespace {

// Test only: XFER_TEST_MEMORY=BYTES makes this rank believe its node has that much memory (an
// environment variable, not a flag, so that one rank alone can be given it).
std::uint64_t test_memory() {
  const char* value = std::getenv("XFER_TEST_MEMORY");
  return value ? std::strtoull(value, nullptr, 10) : 0;
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

// The links the rows cross (support/routes.hpp): rank 0 reads them and routes every family;
// --xfer_dump_links records them instead. An exit status when the run ends here.
std::optional<int> prepare_links(xfer::Registry& registry, const xfer::World& world) {
  const xfer::Config& config = registry.config();
  std::unique_ptr<xfer::links::LinkAnswers> answers;
  if (world.is_root() || !config.test_links.empty()) {
    try {
      answers = xfer::links::answers_for_run(config.test_links);
    } catch (const xfer::UsageError& e) {  // the same directory on every rank
      if (world.is_root()) std::fprintf(stderr, "xferbench: --xfer_test_links: %s\n", e.what());
      return 2;
    }
  }
  if (!world.is_root() && config.dump_links.empty()) return std::nullopt;
  const xfer::json::Value& context = registry.context();
  if (!config.dump_links.empty()) {
    std::uint64_t status = 0;
    if (world.is_root()) {
      std::vector<std::string> buses;
      const xfer::json::Value* cuda = context.find("cuda");
      const xfer::json::Value* devices =
          cuda && cuda->is_object() ? cuda->find("devices") : nullptr;
      for (const auto& d : devices ? devices->items() : std::vector<xfer::json::Value>{})
        buses.push_back(d.find("pci_bus_id") ? d.find("pci_bus_id")->text() : "");
      try {
        const auto files = xfer::links::record_answers(*answers, buses, config.dump_links);
        std::fprintf(stderr,
                     "xferbench: recorded %zu file(s) of link answers for %zu GPU(s) in %s\n",
                     files.size(), buses.size(), config.dump_links.c_str());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "xferbench: --xfer_dump_links=%s: %s\n", config.dump_links.c_str(),
                     e.what());
        status = 2;
      }
    }
    return static_cast<int>(world.broadcast(status));
  }
  xfer::links::Book& book = registry.links();
  book.set_answers(std::move(answers));
  std::vector<std::string> families;
  for (const auto& row : registry.rows()) {
    if (families.empty() || families.back() != row.family) families.push_back(row.family);
  }
  xfer::links::route_families(book, context, families, xfer::links::transports_from(std::getenv));
  return std::nullopt;
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

// This machine's file (floor.hpp), read and checked by rank 0 and sent to every rank (other
// nodes may not see it): an empty one where there is none. A file that was asked for and cannot
// be used leaves its message in `refused`, on every rank.
xfer::MachineFloors agreed_machine_floors(const xfer::Config& config,
                                          const xfer::json::Value& context,
                                          const xfer::World& world, std::string& refused) {
  std::string choice = "N";  // "N" none; "F" path, newline, text; "E" and the message
  xfer::MachineFloors machine;
  if (world.is_root() && config.floor_pct < 0) {
    try {
      std::string text;
      machine = xfer::load_machine_floors(
          config.floor_file, xfer::machine_match(context, benchmark::CPUInfo::Get().num_cpus),
          &text);
      if (!machine.file().empty()) choice = "F" + machine.file() + "\n" + text;
    } catch (const xfer::UsageError& e) {
      choice = std::string("E") + e.what();
    }
  }
  choice = world.broadcast(choice, 0);
  if (choice[0] == 'E') {
    refused = choice.substr(1);
  } else if (choice[0] == 'F' && !world.is_root()) {
    const auto newline = choice.find('\n');
    machine = xfer::MachineFloors(choice.substr(1, newline - 1), choice.substr(newline + 1),
                                  xfer::json::Value());
  }
  return machine;
}

// The floor each selected row's figure carries: --xfer_floor=PCT; else this machine's floor
// file (--xfer_floor=FILE.json, or the one tools/run wrote for this machine) for the families
// it holds; else the path's built-in one. context.xferbench.floor says which: per family, the
// sizes whose floor came from "flag", "machine" or "built-in".
std::vector<double> floors(const xfer::Config& config, const xfer::Registry& registry,
                           const std::vector<std::size_t>& selected,
                           const xfer::MachineFloors& machine, xfer::json::Value& context) {
  xfer::json::Value record = xfer::json::Value::object();
  record.set("file", machine.file().empty() ? xfer::json::Value() : machine.file());
  if (config.floor_pct >= 0) record.set("pct", config.floor_pct);
  xfer::json::Value families = xfer::json::Value::object();
  std::vector<double> out;
  for (const std::size_t i : selected) {
    const std::string& name = registry.rows()[i].name;
    const double from_file = machine.pct(name);
    const char* source = config.floor_pct >= 0 ? "flag" : from_file >= 0 ? "machine" : "built-in";
    out.push_back(config.floor_pct >= 0 ? config.floor_pct
                  : from_file >= 0      ? from_file
                                        : xfer::measured_floor_pct(name));
    const auto at = name.find("/bytes:");
    xfer::json::Value* family = families.find(name.substr(0, at));
    if (!family) family = &families.set(name.substr(0, at), xfer::json::Value::object());
    xfer::json::Value* sizes = family->find(source);
    if (!sizes) sizes = &family->set(source, xfer::json::Value::array());
    sizes->push(xfer::json::Value(std::strtod(name.c_str() + at + 7, nullptr)));
  }
  record.set("families", families);
  context.set("floor", record);
  return out;
}

// How long a SIGINT or SIGTERM gives the visit under way to end, so that the run stops after
// it and writes what it measured; past it (a peer that will never answer) the process ends
// with the file of the last rewrite. Open MPI's mpirun passes a SIGTERM on and kills the
// ranks a few seconds later anyway.
constexpr unsigned kStopGrace_s = 10;

// A run asked to measure that measured nothing fails: a CI job that forgot the launcher, or
// selected only paths that cannot run here, must not pass on no data. Listing the rows is not
// a run.
int measured_nothing(const xfer::RankZeroReporter& reporter, const xfer::Registry& registry,
                     const xfer::World& world, const std::string& why) {
  const int status = exit_status(reporter, registry, world);
  if (registry.config().list_tests) return status;
  if (world.is_root()) std::fprintf(stderr, "xferbench: nothing was measured: %s\n", why.c_str());
  return std::max(status, 1);
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
  xfer::set_host_page_policy(
      xfer::parse_page_policy("--xfer_test_host_pages", config.test_host_pages));
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
  if (const auto status = prepare_links(registry, world)) return *status;
  if (world.is_root()) {
    for (const auto& line : xfer::summary_lines(registry, world, hosts))
      std::fprintf(stderr, "%s\n", line.c_str());
    for (const auto& line : registry.links().lines()) std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }

  xfer::Selection selection;
  try {
    selection = xfer::select_rows(registry.rows(), config.filter, config.modes, config.modes_given,
                                  config.sizes);
  } catch (const xfer::UsageError& e) {  // the same filter on every rank
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  // The machine file gives the floors, and to --xfer_jobs=auto the jobs and the rows' times.
  std::string refused;
  const xfer::MachineFloors machine =
      agreed_machine_floors(config, context, world, refused);  // collective
  if (!refused.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", refused.c_str());
    return 2;
  }
  if (world.is_root() && !machine.file().empty())
    std::fprintf(stderr, "xferbench: floor of this machine from %s\n", machine.file().c_str());
  std::vector<std::string> names;
  for (const std::size_t i : selection.rows) names.push_back(registry.rows()[i].name);
  const xfer::JobsAndTimes jobs_and_times = xfer::plan_jobs_and_times(config, machine, names);
  config.jobs = jobs_and_times.jobs;
  xfer::record_jobs_and_times(*context.find("plan"), jobs_and_times, machine);
  const xfer::Plan plan{config.visits,     config.jobs, config.repetitions,
                        config.interleave, config.seed, jobs_and_times.max_time_s};
  const std::vector<double> row_floors = floors(config, registry, selection.rows, machine, context);
  xfer::Runner runner(registry, selection.rows, row_floors, plan,
                      xfer::Harness{config, world, watchdog}, started);
  runner.register_rows();
  xfer::RankZeroReporter reporter(config, world, context, registry.skips(), started, &runner);
  if (registry.links().has_answers())
    reporter.add_late_field("links", [&registry] { return registry.links().to_json(); });
  runner.observe(&reporter);
  if (registry.families() == 0) {
    reporter.write_without_runs();
    return measured_nothing(reporter, registry, world,
                            world.size() == 1 ? "no path can run here with one rank (launch 2 "
                                                "or more: mpirun -np 2)"
                                              : "no path can run here");
  }
  if (selection.rows.empty()) {
    reporter.write_without_runs();
    // Fine when the filter names a path skipped here; otherwise a typo that must not let a CI
    // job pass on no data.
    if (selection.hint.empty() && filter_names_a_skipped_path(config.filter, registry))
      return measured_nothing(
          reporter, registry, world,
          "--benchmark_filter=" + config.filter + " selects only paths skipped here");
    if (world.is_root())
      std::fprintf(stderr, "xferbench: --benchmark_filter=%s matches no benchmark here%s%s\n",
                   config.filter.c_str(), selection.hint.empty() ? "" : "; ",
                   selection.hint.c_str());
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const auto& line : registry.links().problems())  // read while the rows ran
    std::fprintf(stderr, "xferbench: %s\n", line.c_str());
  xfer::release_kept_blocks();  // before MPI and CUDA go away
  const int status = exit_status(reporter, registry, world);
  if (runner.stop().interrupted()) return xfer::kInterruptedStatus;
  return runner.stop().stopped() ? std::max(1, status) : status;
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
    // The run level of the jobs' machine, from its floor file (--xfer_floor=PCT: none).
    if (config.floor_pct < 0) {
      const xfer::MachineFloors machine =
          xfer::load_machine_floors(config.floor_file, merged->machine_match());
      if (!machine.file().empty()) {
        merged->add_run_level(machine);
        if (world.is_root())
          std::fprintf(stderr, "xferbench: spread between runs of this machine from %s\n",
                       machine.file().c_str());
      }
    }
  } catch (const xfer::UsageError& e) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  merged->register_rows();
  // The summary's wall time is the whole run's: the jobs' and the merge's.
  const auto whole_run = started - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       std::chrono::duration<double>(merged->jobs_wall_s()));
  const xfer::FinishedRun progress(merged->visits_json());
  xfer::RankZeroReporter reporter(config, world, merged->context(), merged->skips(), whole_run,
                                  &progress);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (const std::string why = merged->incomplete_reason(); !why.empty() && world.is_root())
    std::fprintf(stderr, "xferbench: --xfer_merge: the merged result is incomplete: %s\n",
                 why.c_str());
  return reporter.failed_rows().empty() && !reporter.output_failed() ? 0 : 1;
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
    const int status =
        cl.config.merge.empty() ? run(argc, argv, cl, started) : merge(argc, argv, cl, started);
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
