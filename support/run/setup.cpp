#include "run/setup.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <regex>

#include "base/block_cache.hpp"
#include "base/error.hpp"
#include "base/host_memory.hpp"
#include "base/stop.hpp"
#include "harness/context.hpp"
#include "harness/selection.hpp"
#include "jobs/machine_plan.hpp"
#include "jobs/merge.hpp"
#include "links/routes.hpp"
#include "run/fleet.hpp"
#include "run/preflight.hpp"
#include "run/runner.hpp"

namespace xfer {
namespace {

// Test only: XFER_TEST_MEMORY=BYTES makes this rank believe its node has that much memory (an
// environment variable, not a flag, so that one rank alone can be given it).
std::uint64_t test_memory() {
  const char* value = std::getenv("XFER_TEST_MEMORY");
  return value ? std::strtoull(value, nullptr, 10) : 0;
}

bool filter_names_a_skipped_path(const std::string& filter, const Registry& registry) {
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

// How long a SIGINT or SIGTERM gives the visit under way to end, so that the run stops after
// it and writes what it measured; past it (a peer that will never answer) the process ends
// with the file of the last rewrite. Open MPI's mpirun passes a SIGTERM on and kills the
// ranks a few seconds later anyway.
constexpr unsigned kStopGrace_s = 10;

// A run asked to measure that measured nothing fails: a CI job that forgot the launcher, or
// selected only paths that cannot run here, must not pass on no data. Listing the rows is not
// a run.
int measured_nothing(const RankZeroReporter& reporter, const Registry& registry, const World& world,
                     const std::string& why) {
  const int status = exit_status(reporter, registry, world);
  if (registry.config().list_tests) return status;
  if (world.is_root()) std::fprintf(stderr, "xferbench: nothing was measured: %s\n", why.c_str());
  return std::max(status, 1);
}

int nothing_selected(const RankZeroReporter& reporter, const Registry& registry, const World& world,
                     const Selection& selection) {
  const Config& config = registry.config();
  // Fine when the filter names a path skipped here; otherwise a typo that must not let a CI
  // job pass on no data.
  if (selection.hint.empty() && filter_names_a_skipped_path(config.filter, registry))
    return measured_nothing(
        reporter, registry, world,
        "--benchmark_filter=" + config.filter + " selects only paths skipped here");
  if (world.is_root())
    std::fprintf(stderr, "xferbench: --benchmark_filter=%s matches no benchmark here%s%s\n",
                 config.filter.c_str(), selection.hint.empty() ? "" : "; ", selection.hint.c_str());
  return 2;
}

}  // namespace

int exit_status(const RankZeroReporter& reporter, const Registry& registry, const World& world) {
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
                                   [&](const Skip& s) { return s.path == required; });
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

std::optional<int> prepare_links(Registry& registry, const World& world) {
  const Config& config = registry.config();
  std::unique_ptr<links::LinkAnswers> answers;
  if (world.is_root() || !config.test_links.empty()) {
    try {
      answers = links::answers_for_run(config.test_links);
    } catch (const UsageError& e) {  // the same directory on every rank
      if (world.is_root()) std::fprintf(stderr, "xferbench: --xfer_test_links: %s\n", e.what());
      return 2;
    }
  }
  if (!world.is_root() && config.dump_links.empty()) return std::nullopt;
  const json::Value& context = registry.context();
  if (!config.dump_links.empty()) {
    std::uint64_t status = 0;
    if (world.is_root()) {
      std::vector<std::string> buses;
      for (const auto& d : json::member(json::member(context, "cuda"), "devices").items())
        buses.push_back(json::text_of(d, "pci_bus_id"));
      try {
        const auto files = links::record_answers(*answers, buses, config.dump_links);
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
  links::Book& book = registry.links();
  book.set_answers(std::move(answers));
  std::vector<links::FamilyCrossing> families;
  for (const auto& row : registry.rows()) {
    if (families.empty() || families.back().family != row.family)
      families.push_back({row.family, row.crossing});
  }
  links::route_families(book, context, families, links::transports_from(std::getenv));
  return std::nullopt;
}

std::uint64_t agreed_seed(const Config& config, const World& world) {
  if (config.seed != 0) return config.seed;
  std::uint64_t seed = 0;
  if (world.is_root()) {
    std::random_device device;
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    seed =
        ((std::uint64_t{device()} << 32 ^ device() ^ static_cast<std::uint64_t>(now)) & kMaxSeed) |
        1;
  }
  return world.broadcast(seed, 0);
}

MachineFileAgreement agreed_machine_file(const Config& config, const json::Value& context,
                                         const World& world) {
  enum Kind : std::uint64_t { kNone, kFile, kRefused };
  std::uint64_t kind = kNone;
  MachineFileAgreement out;
  std::string path, text;
  if (world.is_root() && config.floor_pct < 0) {
    try {
      out.machine = load_machine_file(
          config.floor_file, machine_match(context, benchmark::CPUInfo::Get().num_cpus), &text);
      if (!out.machine.file().empty()) kind = kFile;
      path = out.machine.file();
    } catch (const UsageError& e) {
      kind = kRefused;
      out.refused = e.what();
    }
  }
  kind = world.broadcast(kind, 0);
  if (kind == kRefused) {
    out.refused = world.broadcast(out.refused, 0);
  } else if (kind == kFile) {
    path = world.broadcast(path, 0);
    text = world.broadcast(text, 0);
    if (!world.is_root()) out.machine = MachineFile(path, text, json::Value());
  }
  return out;
}

std::vector<double> row_floors(const Config& config, const Registry& registry,
                               const std::vector<std::size_t>& selected, const MachineFile& machine,
                               json::Value& context) {
  json::Value record = json::Value::object();
  record.set("file", machine.file().empty() ? json::Value() : machine.file());
  if (config.floor_pct >= 0) record.set("pct", config.floor_pct);
  json::Value families = json::Value::object();
  std::vector<double> out;
  for (const std::size_t i : selected) {
    const std::string& name = registry.rows()[i].name;
    const double from_file = machine.pct(name);
    const char* source = config.floor_pct >= 0 ? "flag" : from_file >= 0 ? "machine" : "built-in";
    out.push_back(config.floor_pct >= 0 ? config.floor_pct
                  : from_file >= 0      ? from_file
                                        : measured_floor_pct(name));
    const auto at = name.find("/bytes:");
    json::Value* family = families.find(name.substr(0, at));
    if (!family) family = &families.set(name.substr(0, at), json::Value::object());
    json::Value* sizes = family->find(source);
    if (!sizes) sizes = &family->set(source, json::Value::array());
    sizes->push(json::Value(std::strtod(name.c_str() + at + 7, nullptr)));
  }
  record.set("families", families);
  context.set("floor", record);
  return out;
}

void prepare_process(const Config& config, const World& world) {
  arm_fail_point(config.test_fail, world.rank());
  set_host_page_policy(parse_page_policy("--xfer_test_host_pages", config.test_host_pages));
  set_largest_block(*std::max_element(config.sizes.begin(), config.sizes.end()));
  if (!config.test_rank_dump.empty()) {  // start each rank's dump afresh
    std::remove((config.test_rank_dump + "/rank" + std::to_string(world.rank()) + ".txt").c_str());
  }
}

std::optional<int> register_paths(Registry& registry, const World& world,
                                  const std::vector<Path>& paths) {
  try {
    for (const Path& path : paths) path.add(registry);
  } catch (const FatalError& e) {  // agreed: the same on every rank
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  return std::nullopt;
}

void record_peers(Registry& registry, const World& world, Watchdog& watchdog,
                  json::Value& context) {
  const std::vector<std::string> hosts = world.all_gather(world.host());  // collective
  if (const auto role = role_of(registry.pairs(), world.rank()); role.active())
    watchdog.name_peer("rank " + std::to_string(role.peer) + " on " +
                       hosts[static_cast<std::size_t>(role.peer)]);
  std::vector<int> gpus;
  const json::Value* gpu = registry.rank_info().find("gpu");
  for (const auto& text : world.all_gather(gpu && !gpu->is_null() ? gpu->dump(0) : "-1"))
    gpus.push_back(std::atoi(text.c_str()));
  context.set("pairs", pairs_context(registry.pairs(), hosts, gpus));
  if (world.is_root()) {
    for (const auto& line : summary_lines(registry, world, hosts))
      std::fprintf(stderr, "%s\n", line.c_str());
  }
}

int run_benchmarks(int argc, char** argv, const CommandLine& cl,
                   std::chrono::steady_clock::time_point started, const std::vector<Path>& paths) {
  World world(&argc, &argv);
  catch_stop_signals(kStopGrace_s);
  const Config& config = cl.config;
  const Preflight checked = preflight(cl, world, test_memory());
  if (!checked.refusal.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", checked.refusal.c_str());
    // No rank exits before rank 0 has said why: a rank exiting 2 first can make the launcher
    // end the job before rank 0's line reaches it (mpi.test_modes lost it once under load).
    world.barrier();
    return 2;
  }
  prepare_process(config, world);
  const std::uint64_t seed = agreed_seed(config, world);

  Watchdog watchdog(config.timeout_s);
  json::Value context = base_context(config, world, seed);
  Registry registry(config, world, checked.pairs, context);
  registry.rank_info() = base_rank_info(world);
  if (const auto status = register_paths(registry, world, paths)) return *status;
  finish_context(context, registry, world);
  record_peers(registry, world, watchdog, context);
  if (const auto status = prepare_links(registry, world)) return *status;
  if (world.is_root()) {
    for (const auto& line : registry.links().lines()) std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }

  Selection selection;
  try {
    selection =
        select_rows(registry.rows(), config.filter, config.modes, config.modes_given, config.sizes);
  } catch (const UsageError& e) {  // the same filter on every rank
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  if (config.fleet())  // every pair, in rounds
    return run_fleet(registry, selection, Harness{config, world, watchdog, checked.pairs}, context,
                     seed, started);
  // The machine file gives the floors, and to --xfer_jobs=auto the jobs and the rows' times.
  const MachineFileAgreement file = agreed_machine_file(config, context, world);  // collective
  if (!file.refused.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", file.refused.c_str());
    return 2;
  }
  const MachineFile& machine = file.machine;
  if (world.is_root() && !machine.file().empty())
    std::fprintf(stderr, "xferbench: floor of this machine from %s\n", machine.file().c_str());
  std::vector<std::string> names;
  for (const std::size_t i : selection.rows) names.push_back(registry.rows()[i].name);
  const JobsAndTimes jobs_and_times = plan_jobs_and_times(config, machine, names);
  record_jobs_and_times(*context.find("plan"), jobs_and_times, machine);
  const VisitPlan plan{
      config.visits, jobs_and_times.jobs,      config.repetitions, config.interleave,
      seed,          jobs_and_times.max_time_s};
  const std::vector<double> floors = row_floors(config, registry, selection.rows, machine, context);
  Runner runner(registry, selection.rows, floors, plan,
                Harness{config, world, watchdog, checked.pairs}, started);
  runner.register_rows();
  RankZeroReporter reporter(config, world, context, registry.skips(), started, &runner);
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
    return nothing_selected(reporter, registry, world, selection);
  }
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const auto& line : registry.links().problems())  // read while the rows ran
    std::fprintf(stderr, "xferbench: %s\n", line.c_str());
  release_kept_blocks();  // before MPI and CUDA go away
  const int status = exit_status(reporter, registry, world);
  if (runner.stop().interrupted()) return kInterruptedStatus;
  return runner.stop().stopped() ? std::max(1, status) : status;
}

// The merge of jobs: read and check the files, add the machine's run level, report.
int run_merge(int argc, char** argv, const CommandLine& cl,
              std::chrono::steady_clock::time_point started) {
  World world(&argc, &argv);
  const Config& config = cl.config;
  if (const std::string error = preflight_output(config, world); !error.empty()) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", error.c_str());
    return 2;
  }
  std::unique_ptr<Merge> merged;
  try {
    merged = std::make_unique<Merge>(config.merge);
    // The run level of the jobs' machine, from its floor file (--xfer_floor=PCT: none).
    if (config.floor_pct < 0) {
      const MachineFile machine = load_machine_file(config.floor_file, merged->machine_match());
      if (!machine.file().empty()) {
        merged->add_run_level(machine);
        if (world.is_root())
          std::fprintf(stderr, "xferbench: spread between runs of this machine from %s\n",
                       machine.file().c_str());
      }
    }
  } catch (const UsageError& e) {
    if (world.is_root()) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  merged->register_rows();
  // The summary's wall time is the whole run's: the jobs' and the merge's.
  const auto whole_run = started - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       std::chrono::duration<double>(merged->jobs_wall_s()));
  const FinishedRun progress(merged->visits_json());
  RankZeroReporter reporter(config, world, merged->context(), merged->skips(), whole_run,
                            &progress);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (const std::string why = merged->incomplete_reason(); !why.empty() && world.is_root())
    std::fprintf(stderr, "xferbench: --xfer_merge: the merged result is incomplete: %s\n",
                 why.c_str());
  return reporter.failed_rows().empty() && !reporter.output_failed() ? 0 : 1;
}

}  // namespace xfer
