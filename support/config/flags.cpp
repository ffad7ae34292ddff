#include "config/flags.hpp"

#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "base/error.hpp"
#include "base/host_memory.hpp"
#include "base/sizes.hpp"

namespace xfer {
namespace {

std::uint64_t parse_seed(const std::string& flag, const std::string& value) {
  const bool digits = !value.empty() && value.size() <= 16 &&
                      value.find_first_not_of("0123456789") == std::string::npos;
  const std::uint64_t seed = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
  if (seed == 0 || seed > kMaxSeed)
    throw UsageError(flag + "='" + value + "': expected a whole number from 1 to " +
                     std::to_string(kMaxSeed));
  return seed;
}

}  // namespace

int parse_int(const std::string& flag, const std::string& value, int low, int high,
              const char* form) {
  const bool digits = !value.empty() && value.size() < 10 &&
                      value.find_first_not_of("0123456789") == std::string::npos;
  const int number = digits ? std::stoi(value) : -1;
  if (!digits || number < low || number > high)
    throw UsageError(flag + "='" + value + "': expected " + form);
  return number;
}

double parse_number(const std::string& flag, const std::string& value, double low, double high,
                    const char* form) {
  char* end = nullptr;
  const double number = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(number >= low && number <= high))
    throw UsageError(flag + "='" + value + "': expected " + form);
  return number;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
      {"xfer_sizes", "XFER_SIZES", "LIST",
       "message sizes: 8,1K,4MiB or ranges 8B:1GiB:x4 (default 8B:1GiB, powers of two)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.sizes = parse_size_list(v, f);
         c.sizes_given = true;
       }},
      {"xfer_require", "XFER_REQUIRE", "PATH[,PATH]",
       "paths that must run: if one is skipped, the run fails (for CI)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.require = split_list(v);
         if (c.require.empty()) throw UsageError(f + "='" + v + "': expected PATH[,PATH]");
       }},
      {"xfer_gpus", "XFER_GPUS", "A:B[,A:B]|all",
       "GPU pairs for memcpy_peer and host_staging, source:destination (default 0:1)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.gpus = parse_gpu_pairs(v, f);
       }},
      {"xfer_cuda_aware", "XFER_CUDA_AWARE", "auto|yes|no",
       "whether MPI takes device pointers: auto asks the MPI library; yes forces it",
       [](Config& c, const std::string& f, const std::string& v) {
         if (v == "auto")
           c.cuda_aware = CudaAwareMode::Auto;
         else if (v == "yes")
           c.cuda_aware = CudaAwareMode::Yes;
         else if (v == "no")
           c.cuda_aware = CudaAwareMode::No;
         else
           throw UsageError(f + "='" + v + "': expected auto, yes or no");
       }},
      {"xfer_pairs", "XFER_PAIRS", "A:B[,A:B]|halves",
       "rank pairs that exchange at the same time (default 0:1; halves: rank i with i + N/2)",
       [](Config& c, const std::string& f, const std::string& v) {
         if (v != "halves") resolve_pairs(v, 1 << 20, f);  // the form now, the ranks at start
         c.pairs = v;
       }},
      {"xfer_modes", "XFER_MODES", "LIST|all",
       "pingpong (latency; the default), stream (sustained bandwidth), bidir (both ways at "
       "once): for mpi_host, mpi_cuda_aware and nccl_sendrecv",
       [](Config& c, const std::string& f, const std::string& v) {
         c.modes =
             v == "all" ? std::vector<std::string>{"pingpong", "stream", "bidir"} : split_list(v);
         c.modes_given = true;
         if (c.modes.empty())
           throw UsageError(f + "='" + v + "': expected pingpong, stream, bidir or all");
         for (const auto& m : c.modes) {
           if (m != "pingpong" && m != "stream" && m != "bidir")
             throw UsageError(f + ": unknown mode '" + m +
                              "'; expected pingpong, stream, bidir (a list) or all");
         }
       }},
      {"xfer_visits", "XFER_VISITS", "N",
       "visits per row: each measures the row afresh at its own place in a shuffled run "
       "order; the row's figure and its +-% come from them all (default 3)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.visits = parse_int(f, v, 1, 1000, "a whole number from 1 to 1000");
       }},
      {"xfer_jobs", "XFER_JOBS", "N|auto",
       "this run is one of N separate MPI jobs whose results are merged (--xfer_merge): each "
       "visit gets 1/(visits x N) of a row's time (default 1; tools/run sets it); auto: N and "
       "the rows' times from the plan in this machine's floor file (--xfer_floor), else 3",
       [](Config& c, const std::string& f, const std::string& v) {
         c.jobs_auto = v == "auto";
         c.jobs = c.jobs_auto ? 1 : parse_int(f, v, 1, 64, "a whole number from 1 to 64, or auto");
       }},
      {"xfer_seed", "XFER_SEED", "N",
       "order of the visits (default: a new one each run, recorded in the result file)",
       [](Config& c, const std::string& f, const std::string& v) { c.seed = parse_seed(f, v); }},
      {"xfer_floor", "XFER_FLOOR", "PCT|auto|FILE.json",
       "spread between processes that one run's visits cannot see, added to every row's +-% "
       "(default auto: this machine's floor file under $XFER_FLOORS, else results/floors, that "
       "tools/run wrote; else measured per path; docs/reproducibility.md). The same file gives "
       "--xfer_jobs=auto its plan, and --xfer_merge the spread between runs (run_sd_pct) it "
       "adds to a merged row's +-%; a PCT gives neither",
       [](Config& c, const std::string& f, const std::string& v) {
         c.floor_pct = -1;
         c.floor_file.clear();
         const bool json_file = v.size() > 5 && v.compare(v.size() - 5, 5, ".json") == 0;
         if (json_file)
           c.floor_file = v;
         else if (v != "auto")
           c.floor_pct = parse_number(f, v, 0, 100,
                                      "a percentage from 0 to 100, auto, or a .json floor file");
       }},
      {"xfer_merge", "XFER_MERGE", "FILE,FILE[,...]",
       "measure nothing: merge result files of separate MPI jobs of one run into one result "
       "(tools/run does this; docs/reproducibility.md)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.merge = split_list(v);
         // One file is merged only as the one job a run stopped early kept (merge.hpp).
         if (c.merge.empty()) throw UsageError(f + "='" + v + "': expected FILE,FILE[,...]");
       }},
      {"xfer_fleet", "XFER_FLEET", "PASSES",
       "measure every pair of ranks (one rank per host, or one per GPU or NIC) in N-1 rounds "
       "of disjoint pairs, PASSES times (1 to 4; later passes in other orders), for tools/fleet "
       "to name the slow host and the slow link (docs/fleet.md); default sizes 8B,4MiB and "
       "mode pingpong",
       [](Config& c, const std::string& f, const std::string& v) {
         c.fleet_passes = parse_int(f, v, 1, 4, "a whole number from 1 to 4");
       }},
      {"xfer_fleet_rounds", "XFER_FLEET_ROUNDS", "FILE.json",
       "measure only these rounds of pairs (tools/fleet judge --rounds-out writes the file: the "
       "re-test of an earlier verdict's suspects)",
       [](Config& c, const std::string& f, const std::string& v) {
         if (v.empty()) throw UsageError(f + ": expected " + f + "=FILE.json");
         c.fleet_rounds = v;
       }},
      {"xfer_window", "XFER_WINDOW", "N",
       "messages in flight in mode:stream and mode:bidir (default 64, as osu_bw)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.window = parse_int(f, v, 1, 4096, "a whole number from 1 to 4096");
       }},
      {"xfer_ack", "XFER_ACK", "host|buffers",
       "where mode:stream's acknowledgement of a window travels, for mpi_host and "
       "mpi_cuda_aware: host (default: a host word, so a window times its messages) or buffers "
       "(the message buffers, as osu_bw: on device buffers every window then also pays a "
       "CUDA-aware 1-byte message; rows are named .../mode:stream/ack:buffers)",
       [](Config& c, const std::string& f, const std::string& v) {
         if (v != "host" && v != "buffers")
           throw UsageError(f + "='" + v + "': expected host or buffers");
         c.ack_in_buffers = v == "buffers";
       }},
      {"xfer_gpu_map", "XFER_GPU_MAP", "G[,G...]",
       "GPU of each node-local rank, in order (default: node-local rank % visible GPUs)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.gpu_map.clear();
         for (const auto& item : split_list(v))
           c.gpu_map.push_back(parse_int(f, item, 0, 1023, "GPU numbers like 0,1,2,3"));
         if (c.gpu_map.empty()) throw UsageError(f + "='" + v + "': expected GPU numbers like 0,1");
       }},
      {"xfer_warmup", "XFER_WARMUP", "N",
       "untimed round trips (or copies) before each timed loop (default 5)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.warmup = parse_int(f, v, 0, 1000000, "a whole number from 0 to 1000000");
       }},
      {"xfer_precision", "XFER_PRECISION", "PCT",
       "stop a row once its mean is known to +-PCT percent (95% confidence; default 1)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.precision.target_pct = parse_number(f, v, 0.001, 100, "a percentage above 0, up to 100");
       }},
      {"xfer_max_time", "XFER_MAX_TIME", "SECONDS",
       "or once its timed loops, all visits together, have run this long, marked time-limited "
       "(default 0.1; with --xfer_jobs=auto and no --xfer_max_time, a row the machine's plan "
       "lists gets the plan's time)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.precision.max_time_s = parse_number(f, v, 0.001, 86400, "seconds above 0, up to 86400");
         c.max_time_given = true;  // it then overrides the row times of --xfer_jobs=auto
       }},
      {"xfer_timeout", "XFER_TIMEOUT", "SECONDS",
       "watchdog: end the job (exit status 3) if one benchmark run, all its iterations "
       "together, takes longer than this (default 600)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.timeout_s = parse_int(f, v, 1, 86400, "whole seconds from 1 to 86400");
       }},
      {"xfer_test_slow_rank", "XFER_TEST_SLOW_RANK", "RANK",
       "test only: this rank sleeps inside its timed region every batch",
       [](Config& c, const std::string& f, const std::string& v) {
         c.test_slow_rank = parse_int(f, v, 0, 1 << 20, "a rank number");
       },
       true},
      {"xfer_test_hang_rank", "XFER_TEST_HANG_RANK", "RANK",
       "test only: this rank stops answering in its first timed batch (the watchdog must end "
       "the job)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.test_hang_rank = parse_int(f, v, 0, 1 << 20, "a rank number");
       },
       true},
      {"xfer_test_corrupt", "XFER_TEST_CORRUPT", "PATH[@ROUND]",
       "test only: flip one received byte before validation in this path (with @ROUND: only in "
       "the visits of that round of the schedule, 0 the first)",
       [](Config& c, const std::string& f, const std::string& v) {
         const auto at = v.find('@');
         c.test_corrupt = v.substr(0, at);
         c.test_corrupt_round = at == std::string::npos
                                    ? -1
                                    : parse_int(f, v.substr(at + 1), 0, 999, "a round number");
       },
       true},
      {"xfer_test_noise", "XFER_TEST_NOISE", "PCT",
       "test only: rank 0 scales every timed batch by a random factor within 1 +- PCT/100",
       [](Config& c, const std::string& f, const std::string& v) {
         c.test_noise_pct = parse_number(f, v, 0, 90, "a percentage from 0 to 90");
       },
       true},
      {"xfer_test_shift", "XFER_TEST_SHIFT", "PCT",
       "test only: every visit's times are scaled by its own random factor within 1 +- PCT/100",
       [](Config& c, const std::string& f, const std::string& v) {
         c.test_shift_pct = parse_number(f, v, 0, 90, "a percentage from 0 to 90");
       },
       true},
      {"xfer_test_slowdown", "XFER_TEST_SLOWDOWN", "REGEX:PCT",
       "test only: rows whose name matches REGEX time PCT percent longer (a planted "
       "regression)",
       [](Config& c, const std::string& f, const std::string& v) {
         parse_slowdown(f, v);
         c.test_slowdown = v;
       },
       true},
      {"xfer_test_host_pages", "XFER_TEST_HOST_PAGES", "default|huge|nohuge|locked",
       "test only: ask for transparent huge pages, none, or locked pages for host buffers",
       [](Config& c, const std::string& f, const std::string& v) {
         parse_page_policy(f, v);
         c.test_host_pages = v;
       },
       true},
      {"xfer_test_rank_dump", "XFER_TEST_RANK_DUMP", "DIR",
       "test only: every rank writes the iteration counts it ran, and each row it set up, to "
       "DIR/rank<N>.txt",
       [](Config& c, const std::string&, const std::string& v) { c.test_rank_dump = v; }, true},
      {"xfer_test_links", "XFER_TEST_LINKS", "DIR",
       "test only: read the links' NVML and sysfs answers recorded in DIR (tests/fixtures/links) "
       "instead of this machine's",
       [](Config& c, const std::string&, const std::string& v) { c.test_links = v; }, true},
      {"xfer_dump_links", "XFER_DUMP_LINKS", "DIR",
       "record what NVML and sysfs say of this machine's GPU links into DIR, in the format of "
       "tests/fixtures/links, and exit (docs/links.md)",
       [](Config& c, const std::string&, const std::string& v) { c.dump_links = v; }, true},
      {"xfer_test_fail", "XFER_TEST_FAIL", "CALL[@BYTES][#RANK]",
       "test only: the checked CUDA or NCCL call CALL (e.g. cudaMemcpyAsync, cudaMalloc, "
       "ncclSend) fails, in rows of BYTES, on rank RANK; CALL=fault makes a kernel trap",
       [](Config& c, const std::string& f, const std::string& v) {
         c.test_fail = parse_fail_point(v, f);
       },
       true},
  };
  return table;
}

}  // namespace xfer
