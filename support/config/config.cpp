#include "config/config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "base/error.hpp"
#include "base/sizes.hpp"
#include "config/flags.hpp"

namespace xfer {
namespace {

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
  const std::string form = "expected ordered GPU pairs like 0:1 or 0:1,1:0, or all";
  gpus.pairs = parse_pair_list(text, 9, 1023, true, [&](const std::string& part, bool whole) {
    // A number that is not one is named alone, as parse_int names it (its "expected " too).
    throw UsageError(flag + "='" + part + "': " + (whole ? "" : "expected ") + form);
  });
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

// Google Benchmark's warm-up would call a row once more than its visits: each visit warms up
// itself, untimed, before its timed loop.
[[noreturn]] static void refuse_min_warmup_time(const std::string& flag) {
  throw UsageError(flag +
                   ": not supported: every visit warms up before it is timed (--xfer_warmup=N "
                   "round trips or copies, 5 by default); Google Benchmark's warm-up would "
                   "run a row outside its visits");
}

// A fleet (--xfer_fleet, --xfer_fleet_rounds) measures pairs of its own rounds: --xfer_pairs
// and --xfer_merge say something else; unless asked otherwise it measures a latency size and
// a bandwidth size in ping-pong, so that one round takes seconds (run/fleet.hpp).
static void complete_fleet(Config& c) {
  if (!c.fleet()) return;
  const std::string flag = c.fleet_passes > 0 ? "--xfer_fleet" : "--xfer_fleet_rounds";
  if (c.fleet_passes > 0 && !c.fleet_rounds.empty())
    throw UsageError("--xfer_fleet and --xfer_fleet_rounds: give one (a re-test measures only "
                     "the rounds in its file)");
  if (!c.merge.empty()) throw UsageError(flag + " measures; --xfer_merge merges: give one");
  if (c.pairs != "0:1")
    throw UsageError(flag + " pairs every rank with every other in rounds: --xfer_pairs=" +
                     c.pairs + " cannot be given with it");
  if (!c.sizes_given) c.sizes = {8, std::uint64_t{4} << 20};
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
  complete_fleet(c);
  return cl;
}

}  // namespace xfer
