// The run, step by step: each function below is one step of a measuring run or of a merge of
// jobs, and each agreement between ranks has a type of its own. bench/main.cpp only parses the
// command line, starts Google Benchmark and calls run_benchmarks or run_merge.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "harness/harness.hpp"
#include "jobs/floor.hpp"
#include "mpi/world.hpp"
#include "report/reporter.hpp"

namespace xfer {

// A measuring run (no --xfer_merge) on every rank; its exit status.
int run_benchmarks(int argc, char** argv, const CommandLine& cl,
                   std::chrono::steady_clock::time_point started, const std::vector<Path>& paths);
// --xfer_merge: the result files of separate jobs become one result, reported as a run's.
int run_merge(int argc, char** argv, const CommandLine& cl,
              std::chrono::steady_clock::time_point started);

// The steps, in the order run_benchmarks takes them.

// This process's own settings: fail points, host page policy, the largest block, a fresh dump.
void prepare_process(const Config& config, const World& world);
// The order of the visits: --xfer_seed, or one rank 0 draws for this run (recorded in the
// context, so the run's order can be replayed).
std::uint64_t agreed_seed(const Config& config, const World& world);
// Every path registers its rows or says why it cannot run here; a status where it ends the run.
std::optional<int> register_paths(Registry& registry, const World& world,
                                  const std::vector<Path>& paths);
// Who each rank's peer is and where it runs: names the watchdog's peer, sets context.pairs;
// rank 0 prints the run's opening lines.
void record_peers(Registry& registry, const World& world, Watchdog& watchdog, json::Value& context);
// The links the rows cross (links/routes.hpp): rank 0 reads them and routes every family;
// --xfer_dump_links records them instead. An exit status where the run ends here.
std::optional<int> prepare_links(Registry& registry, const World& world);

// This machine's file (jobs/floor.hpp), read and checked by rank 0 and sent to every rank
// (other nodes may not see it): none where there is none; `refused` where one was asked for
// and cannot be used, on every rank.
struct MachineFileAgreement {
  MachineFile machine;
  std::string refused;
};
MachineFileAgreement agreed_machine_file(const Config& config, const json::Value& context,
                                         const World& world);

// The floor each selected row's figure carries: --xfer_floor=PCT; else this machine's floor
// file for the families it holds; else the path's built-in one. context.xferbench.floor says
// which: per family, the sizes whose floor came from "flag", "machine" or "built-in".
std::vector<double> row_floors(const Config& config, const Registry& registry,
                               const std::vector<std::size_t>& selected, const MachineFile& machine,
                               json::Value& context);

// The run's exit status from what the reporter saw: 1 for a failed row, a required path that
// was skipped or gave no rows, or a result file that could not be written.
int exit_status(const RankZeroReporter& reporter, const Registry& registry, const World& world);

}  // namespace xfer
