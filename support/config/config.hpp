// The run configuration: xferbench's own flags (--xfer_*), each with one definition, one
// default, a help line and an environment fallback, plus the Google Benchmark output flags
// the harness owns so that only rank 0 ever writes the result file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/failpoint.hpp"
#include "base/pairs.hpp"
#include "base/stats.hpp"

namespace xfer {

// GPU pairs for the one-process paths: "0:1,1:0" (ordered source:destination) or "all".
struct GpuPairs {
  bool all = false;
  std::vector<std::pair<int, int>> pairs{{0, 1}};
};
GpuPairs parse_gpu_pairs(const std::string& text, const std::string& flag);
// The ordered pairs to run with `devices` GPUs visible; "all" is every a != b.
std::vector<std::pair<int, int>> expand_pairs(const GpuPairs& gpus, int devices);

enum class CudaAwareMode { Auto, Yes, No };

// Seeds stay below 2^53 so that every JSON reader holds them exactly.
constexpr std::uint64_t kMaxSeed = (std::uint64_t{1} << 53) - 1;

struct Config {
  std::vector<std::uint64_t> sizes;
  bool sizes_given = false;          // --xfer_sizes was set (a fleet has its own default)
  std::vector<std::string> require;  // paths whose skip is a failure
  GpuPairs gpus;
  CudaAwareMode cuda_aware = CudaAwareMode::Auto;
  int warmup = 5;               // untimed round trips / copies before a row's first timed loop
  Precision precision;          // when a row has measured enough
  bool max_time_given = false;  // --xfer_max_time was set (flag or environment)
  std::string pairs = "0:1";    // --xfer_pairs as given; the run resolves it against the world size
                                // (run/setup.hpp: agreed_rank_pairs)
  int window = 64;              // messages in flight in mode:stream and mode:bidir
  bool ack_in_buffers = false;  // --xfer_ack=buffers: MPI stream acks travel in the buffers
  std::vector<std::string> modes{"pingpong"};  // of the paths between ranks (--xfer_modes)
  bool modes_given = false;  // --xfer_modes was set: a filter cannot add modes (selection.hpp)
  int visits = 3;            // visits per row (--xfer_visits; runner.hpp)
  int jobs = 1;              // jobs tools/run merges this run with (--xfer_jobs)
  bool jobs_auto = false;    // --xfer_jobs=auto: jobs (and row times) from this machine's plan
  std::uint64_t seed = 0;    // order of the visits (--xfer_seed); 0: rank 0 draws one
  double floor_pct = -1;     // --xfer_floor=PCT; below 0: each row's measured floor (floor.hpp)
  std::string floor_file;    // --xfer_floor=FILE.json: this machine's floor file, not looked up
  std::vector<std::string> merge;  // --xfer_merge: result files to merge instead of measuring
  int fleet_passes = 0;      // --xfer_fleet: passes of every pair (run/fleet.hpp); 0: no fleet
  std::string fleet_rounds;  // --xfer_fleet_rounds: a file of rounds to measure (a re-test)
  bool fleet() const { return fleet_passes > 0 || !fleet_rounds.empty(); }  // run/fleet.hpp
  // Google Benchmark flags xferbench acts on itself (it selects and orders the rows).
  std::string filter;        // --benchmark_filter as given
  int repetitions = 1;       // --benchmark_repetitions
  bool interleave = false;   // --benchmark_enable_random_interleaving
  bool list_tests = false;   // --benchmark_list_tests: names the rows, runs nothing
  std::vector<int> gpu_map;  // GPU per node-local rank (empty: local rank % visible GPUs)
  double timeout_s = 600;    // watchdog: longest one benchmark run may take
  std::string out_path;      // --benchmark_out
  std::string out_format = "json";
  std::string display_format = "console";
  std::string color = "auto";  // --benchmark_color: auto, true or false (color_choice())
  // Test-only switches: they make failures happen on purpose.
  int test_slow_rank = -1;
  int test_hang_rank = -1;
  std::string test_corrupt;     // PATH whose visits flip a received byte...
  int test_corrupt_round = -1;  // ...in this round of the schedule only (-1: in every visit)
  double test_noise_pct = 0;    // timing ranks scale each batch's time by 1 +- up to this percent
  double test_shift_pct = 0;    // and each visit's times by its own factor within 1 +- this
  std::string test_slowdown;    // REGEX:PCT: rows matching REGEX time PCT percent longer
  std::string test_host_pages = "default";  // host_memory.hpp: PagePolicy
  std::string test_rank_dump;
  std::string test_links;  // DIR: the links' answers recorded there instead of NVML and /sys
  std::string dump_links;  // DIR: record this machine's link answers there, and exit
  FailPoint test_fail;     // one checked CUDA or NCCL call fails on purpose (failpoint.hpp)
};

struct CommandLine {
  Config config;
  bool help = false;
  bool version = false;
  std::vector<std::string> benchmark_args;  // what Google Benchmark gets, argv[0] first
};

using EnvLookup = std::function<const char*(const char*)>;

// The rank a launcher (mpirun, mpiexec, srun) gave this process, read before MPI starts; -1 when
// no launcher started it.
int launcher_rank(const EnvLookup& env);

// What Google Benchmark's --benchmark_color gets: `asked` ("true", "false") when the user gave
// it; otherwise "false" under a launcher or with NO_COLOR set, else "auto" (colour when stdout
// is a terminal). Under mpirun, rank 0's stdout is a terminal that Open MPI made even when
// mpirun's own output goes to a file, so rank 0 cannot tell; tools/run asks for colour when its
// own output is a terminal.
std::string color_choice(const std::string& asked, const EnvLookup& env);

// Parses xferbench's flags and passes the rest on. Throws UsageError naming the flag and the
// expected form.
CommandLine parse_command_line(int argc, const char* const* argv, const EnvLookup& env);

// "" if this machine can hold the largest --xfer_sizes message twice; otherwise the message
// naming the flag. `memory_bytes`: this machine's memory (0: ask the operating system). Ranks
// agree on it after MPI starts, so a node with less memory stops every rank, not just its own.
std::string check_memory(const Config& config, std::uint64_t memory_bytes = 0);

// --help's text; `paths` are the transfer paths' names.
std::string harness_help(const std::vector<std::string>& paths);

// --benchmark_min_time, read by xferbench itself (a row's own loop honours it): seconds of timed
// time ("0.5", "0.5s") or a message count ("100x"). Throws UsageError naming `flag`.
// --xfer_test_slowdown=REGEX:PCT. Throws UsageError naming `flag`.
struct Slowdown {
  std::string pattern;  // POSIX extended, searched in the row name
  double pct = 0;
};
Slowdown parse_slowdown(const std::string& flag, const std::string& value);

struct MinTime {
  double seconds = 0;
  std::int64_t messages = 0;
};
MinTime parse_min_time(const std::string& flag, const std::string& value);

// What Google Benchmark itself gets instead: a tiny --benchmark_min_time, spelled for the
// version built against (1.8: "0.000001s", 1.7: "0.000001"), so it calls each row once.
std::string benchmark_min_time_arg(int gb_major, int gb_minor);

// Everything that decides which benchmarks run and how: ranks compare it before running, so
// a rank that got other flags or environment fails the launch instead of deadlocking it.
std::string settings_fingerprint(const CommandLine& cl);
// Throws UsageError naming --xfer_require if it names a path not among `paths`.
void check_required_paths(const Config& config, const std::vector<std::string>& paths);

}  // namespace xfer
