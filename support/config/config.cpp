#include "config/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "base/error.hpp"
#include "base/host_memory.hpp"
#include "base/sizes.hpp"

namespace xfer {
namespace {

struct Flag {
  const char* name;   // without the leading "--"
  const char* env;    // environment fallback
  const char* value;  // the form of its value, for --help and errors
  const char* help;
  std::function<void(Config&, const std::string& flag, const std::string& value)> apply;
  bool test_only = false;
};

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

std::uint64_t parse_seed(const std::string& flag, const std::string& value) {
  const bool digits = !value.empty() && value.size() <= 16 &&
                      value.find_first_not_of("0123456789") == std::string::npos;
  const std::uint64_t seed = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
  if (seed == 0 || seed > kMaxSeed)
    throw UsageError(flag + "='" + value + "': expected a whole number from 1 to " +
                     std::to_string(kMaxSeed));
  return seed;
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
      {"xfer_sizes", "XFER_SIZES", "LIST",
       "message sizes: 8,1K,4MiB or ranges 8B:1GiB:x4 (default 8B:1GiB, powers of two)",
       [](Config& c, const std::string& f, const std::string& v) {
         c.sizes = parse_size_list(v, f);
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

bool truthy(const std::string& value) {
  return !(value == "false" || value == "0" || value == "no" || value == "f" || value == "n");
}

// Google Benchmark's version as built against ("1.7.1"), as major and minor numbers.
std::pair<int, int> benchmark_version() {
#ifdef XFER_BENCHMARK_VERSION
  const std::string v = XFER_BENCHMARK_VERSION;
#else
  const std::string v = "1.7";
#endif
  int major = 1;
  int minor = 7;
  std::sscanf(v.c_str(), "%d.%d", &major, &minor);
  return {major, minor};
}

// --benchmark_color's value as "auto", "true" or "false"; a bare --benchmark_color is "true".
std::string parse_color(const std::string& flag, const std::string& value) {
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (v == "auto") return v;
  for (const char* yes : {"", "true", "yes", "on", "1"}) {
    if (v == yes) return "true";
  }
  for (const char* no : {"false", "no", "off", "0"}) {
    if (v == no) return "false";
  }
  throw UsageError(flag + "='" + value + "': expected auto, true or false");
}

void check_format(const std::string& flag, const std::string& value) {
  if (value != "console" && value != "json" && value != "csv")
    throw UsageError(flag + "='" + value + "': expected console, json or csv");
}

void apply_min_time(Config& c, const std::string& flag, const std::string& value) {
  const MinTime min = parse_min_time(flag, value);
  c.precision.min_time_s = min.seconds;
  c.precision.min_messages = min.messages;
}

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

}  // namespace

Slowdown parse_slowdown(const std::string& flag, const std::string& value) {
  const char* form = "expected REGEX:PCT, e.g. mpi_host/mode:pingpong:10";
  const auto colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw UsageError(flag + "='" + value + "': " + form);
  Slowdown out{value.substr(0, colon), parse_number(flag, value.substr(colon + 1), 0, 1000, form)};
  try {
    std::regex check(out.pattern, std::regex::extended);
  } catch (const std::regex_error&) {
    throw UsageError(flag + "='" + value + "': " + form);
  }
  return out;
}

MinTime parse_min_time(const std::string& flag, const std::string& value) {
  const char* form = "expected seconds like 0.5 or 0.5s, or a message count like 100x";
  std::string number = value;
  char suffix = 0;
  if (!number.empty() && (number.back() == 's' || number.back() == 'x')) {
    suffix = number.back();
    number.pop_back();
  }
  char* end = nullptr;
  const double parsed = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !(parsed > 0) || !(parsed <= 1e9))
    throw UsageError(flag + "='" + value + "': " + form);
  MinTime min;
  if (suffix == 'x')
    min.messages = static_cast<std::int64_t>(std::ceil(parsed));
  else
    min.seconds = parsed;
  return min;
}

std::string benchmark_min_time_arg(int gb_major, int gb_minor) {
  const bool new_style = gb_major > 1 || (gb_major == 1 && gb_minor >= 8);
  return std::string("--benchmark_min_time=") + (new_style ? "0.000001s" : "0.000001");
}

std::string settings_fingerprint(const CommandLine& cl) {
  const Config& c = cl.config;
  std::ostringstream out;
  for (std::size_t i = 1; i < cl.benchmark_args.size(); ++i) {
    // Only rank 0 prints, and the colour is decided from each rank's own environment.
    if (cl.benchmark_args[i].rfind("--benchmark_color=", 0) != 0)
      out << cl.benchmark_args[i] << '\n';
  }
  for (const auto s : c.sizes) out << s << ',';
  out << '\n';
  for (const auto& r : c.require) out << r << ',';
  out << '\n' << c.gpus.all << ':';
  for (const auto& [a, b] : c.gpus.pairs) out << a << '>' << b << ',';
  out << '\n'
      << static_cast<int>(c.cuda_aware) << ' ' << c.warmup << ' ' << c.timeout_s << ' '
      << c.display_format << ' ' << c.test_slow_rank << ' ' << c.test_hang_rank << ' '
      << c.test_corrupt << '@' << c.test_corrupt_round << ' ' << c.test_noise_pct << '\n'
      << c.precision.target_pct << ' ' << c.precision.max_time_s << ' ' << c.precision.min_time_s
      << ' ' << c.precision.min_messages << '\n'
      << c.pairs << ' ' << c.window << ' ' << c.ack_in_buffers << ' ';
  for (const auto& m : c.modes) out << m << ',';
  for (const int g : c.gpu_map) out << g << ',';
  out << '\n' << c.test_fail.call << '@' << c.test_fail.bytes << '#' << c.test_fail.rank;
  out << '\n'
      << c.modes_given << ' ' << c.visits << ' ' << c.jobs << ' ' << c.jobs_auto << ' '
      << c.max_time_given << ' ' << c.seed << ' ' << c.floor_pct << ' ' << c.floor_file << ' '
      << c.repetitions << ' ' << c.interleave << ' ' << c.test_shift_pct << '\n'
      << c.filter << '\n'
      << c.test_slowdown << '\n'
      << c.test_host_pages;
  return out.str();
}

void check_required_paths(const Config& config, const std::vector<std::string>& paths) {
  for (const auto& p : config.require) {
    if (std::find(paths.begin(), paths.end(), p) != paths.end()) continue;
    std::string list;
    for (const auto& k : paths) list += (list.empty() ? "" : ", ") + k;
    throw UsageError("--xfer_require: unknown path '" + p + "'; expected one of " + list);
  }
}

int launcher_rank(const EnvLookup& env) {
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}) {
    if (const char* value = env(name)) return std::atoi(value);
  }
  return -1;
}

std::string color_choice(const std::string& asked, const EnvLookup& env) {
  if (asked != "auto") return asked;
  const char* no_color = env("NO_COLOR");  // no-color.org: any value but an empty one
  return launcher_rank(env) >= 0 || (no_color && *no_color) ? "false" : "auto";
}

GpuPairs parse_gpu_pairs(const std::string& text, const std::string& flag) {
  GpuPairs gpus;
  gpus.pairs.clear();
  if (text == "all") {
    gpus.all = true;
    return gpus;
  }
  const char* form = "expected ordered GPU pairs like 0:1 or 0:1,1:0, or all";
  for (const auto& item : split_list(text)) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) throw UsageError(flag + "='" + text + "': " + form);
    const int a = parse_int(flag, item.substr(0, colon), 0, 1023, form);
    const int b = parse_int(flag, item.substr(colon + 1), 0, 1023, form);
    gpus.pairs.emplace_back(a, b);
  }
  if (gpus.pairs.empty()) throw UsageError(flag + "='" + text + "': " + form);
  return gpus;
}

std::vector<std::pair<int, int>> expand_pairs(const GpuPairs& gpus, int devices) {
  if (!gpus.all) return gpus.pairs;
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < devices; ++a) {
    for (int b = 0; b < devices; ++b) {
      if (a != b) pairs.emplace_back(a, b);
    }
  }
  return pairs;
}

std::string check_memory(const Config& config, std::uint64_t memory_bytes) {
  const std::uint64_t memory = memory_bytes ? memory_bytes : physical_memory();
  const std::uint64_t largest = config.sizes.back();
  if (memory == 0 || largest <= memory / 2) return "";
  return "--xfer_sizes: " + format_size(largest) +
         " needs two buffers of that size per rank, more than this machine's " +
         format_size(memory / (1 << 20) * (1 << 20)) + " of memory allows";
}

// Google Benchmark's warm-up would call a row once more than its visits: each visit warms up
// itself, untimed, before its timed loop.
[[noreturn]] static void refuse_min_warmup_time(const std::string& flag) {
  throw UsageError(flag +
                   ": not supported: every visit warms up before it is timed (--xfer_warmup=N "
                   "round trips or copies, 5 by default); Google Benchmark's warm-up would "
                   "run a row outside its visits");
}

CommandLine parse_command_line(int argc, const char* const* argv, const EnvLookup& env) {
  CommandLine cl;
  Config& c = cl.config;
  c.sizes = default_sizes();
  cl.benchmark_args.push_back(argc > 0 ? argv[0] : "xferbench");

  // Environment first, so the command line wins.
  for (const auto& f : flags()) {
    if (const char* v = env(f.env)) f.apply(c, std::string(f.env), v);
  }
  if (const char* v = env("BENCHMARK_OUT")) c.out_path = v;
  if (const char* v = env("BENCHMARK_OUT_FORMAT")) c.out_format = v;
  if (const char* v = env("BENCHMARK_COLOR")) c.color = parse_color("BENCHMARK_COLOR", v);
  if (const char* v = env("BENCHMARK_FORMAT")) c.display_format = v;
  if (const char* v = env("BENCHMARK_ENABLE_RANDOM_INTERLEAVING")) c.interleave = truthy(v);
  if (const char* v = env("BENCHMARK_FILTER")) c.filter = v;
  if (const char* v = env("BENCHMARK_REPETITIONS"))
    c.repetitions = parse_int("BENCHMARK_REPETITIONS", v, 1, 1000000, "a whole number from 1");
  if (const char* v = env("BENCHMARK_MIN_TIME")) apply_min_time(c, "BENCHMARK_MIN_TIME", v);
  if (const char* v = env("BENCHMARK_LIST_TESTS")) c.list_tests = truthy(v);
  if (env("BENCHMARK_MIN_WARMUP_TIME")) refuse_min_warmup_time("BENCHMARK_MIN_WARMUP_TIME");

  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      cl.help = true;
      continue;
    }
    if (arg == "--version") {
      cl.version = true;
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (name == "--benchmark_out") {
      if (value.empty()) throw UsageError("--benchmark_out: expected --benchmark_out=FILE");
      c.out_path = value;
      continue;
    }
    if (name == "--benchmark_out_format") {
      c.out_format = value;
      continue;
    }
    if (name == "--benchmark_format") c.display_format = value;  // Google Benchmark reads it too
    // xferbench selects and orders the rows itself (selection.hpp, runner.hpp): Google
    // Benchmark's own shuffle would differ from rank to rank.
    if (name == "--benchmark_enable_random_interleaving") {
      c.interleave = eq == std::string::npos || truthy(value);
      continue;
    }
    if (name == "--benchmark_filter") {
      c.filter = value;
      continue;
    }
    if (name == "--benchmark_color") {
      c.color = parse_color(name, value);
      continue;
    }
    if (name == "--benchmark_repetitions")
      c.repetitions = parse_int(name, value, 1, 1000000, "a whole number from 1");
    if (name == "--benchmark_time_unit" && value != "ns" && value != "us" && value != "ms" &&
        value != "s")
      throw UsageError(name + "='" + value + "': expected ns, us, ms or s");
    if (name == "--benchmark_list_tests") c.list_tests = eq == std::string::npos || truthy(value);
    if (name == "--benchmark_min_warmup_time") refuse_min_warmup_time(name);
    if (name == "--benchmark_min_time") {  // xferbench's loop honours it (see min_time_arg)
      apply_min_time(c, name, value);
      continue;
    }
    if (name.rfind("--xfer_", 0) != 0) {
      cl.benchmark_args.push_back(arg);
      continue;
    }
    const auto flag = std::find_if(flags().begin(), flags().end(), [&](const Flag& f) {
      return name == std::string("--") + f.name;
    });
    if (flag == flags().end())
      throw UsageError("unknown flag " + name + "; see --help for xferbench's flags");
    if (eq == std::string::npos) throw UsageError(name + ": expected " + name + "=" + flag->value);
    flag->apply(c, name, value);
  }
  cl.benchmark_args.push_back("--benchmark_color=" + color_choice(c.color, env));
  // Google Benchmark calls a row once it has timed anything: the row's own loop decides.
  const auto [gb_major, gb_minor] = benchmark_version();
  cl.benchmark_args.push_back(benchmark_min_time_arg(gb_major, gb_minor));
  cl.benchmark_args.push_back("--benchmark_filter=.");  // only the selected rows are registered
  cl.benchmark_args.push_back("--benchmark_enable_random_interleaving=false");
  if (!c.merge.empty() && !c.filter.empty())
    throw UsageError(
        "--xfer_merge merges every row: filter the merged file instead "
        "(tools/compare.py --filter, tools/plot.py --filter)");
  check_format("--benchmark_out_format", c.out_format);
  check_format("--benchmark_format", c.display_format);

  return cl;
}

std::string harness_help(const std::vector<std::string>& paths) {
  std::ostringstream out;
  const auto line = [&out](const std::string& lhs, const std::string& help) {
    out << lhs << std::string(lhs.size() < 34 ? 34 - lhs.size() : 1, ' ') << help << "\n";
  };
  out << "xferbench: how fast bytes move between GPUs and between MPI ranks.\n\n"
      << "usage: mpirun -np 2 xferbench [xferbench flags] [Google Benchmark flags]\n\n"
      << "xferbench flags (environment fallback in brackets):\n";
  for (const auto& f : flags()) {
    if (!f.test_only)
      line(std::string("  --") + f.name + "=" + f.value, std::string(f.help) + " [" + f.env + "]");
  }
  line("  --benchmark_out=FILE", "result file, written by rank 0 only, atomically [BENCHMARK_OUT]");
  line("  --benchmark_out_format=FORMAT", "json (default), console or csv [BENCHMARK_OUT_FORMAT]");
  line("  --benchmark_color=WHEN",
       "console colour: true, false or auto (default: in a terminal, but not under an MPI "
       "launcher, whose terminal rank 0 cannot see, nor with NO_COLOR set) [BENCHMARK_COLOR]");
  line("  --version", "print versions and exit");
  out << "\ntesting switches (make failures happen on purpose):\n";
  for (const auto& f : flags()) {
    if (f.test_only) line(std::string("  --") + f.name + "=" + f.value, f.help);
  }
  out << "\nPaths: ";
  for (const auto& p : paths) out << p << (p == paths.back() ? "\n" : ", ");
  out << "Rows are PATH[/VARIANT]/bytes:N; time is the one-way time of one message; GB/s uses "
         "GB = 1e9 bytes.\n\nGoogle Benchmark's flags follow.\n";
  return out.str();
}

}  // namespace xfer
