#include "run/preflight.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.hpp"
#include "base/files.hpp"

namespace xfer {
namespace {

// Every rank resolves the same text against the same world size: the same answer, or the same
// error on every rank. One rank and the default pair: no pair at all (the paths between ranks
// skip, saying why).
std::string resolve_rank_pairs(const Config& config, const World& world, RankPairs& pairs) {
  try {
    pairs = world.size() < 2 && config.pairs == "0:1"
                ? RankPairs{}
                : resolve_pairs(config.pairs, world.size(), "--xfer_pairs");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Ranks given different flags or environment would register different rows and deadlock.
std::string same_settings(const CommandLine& cl, const World& world) {
  const std::string mine = settings_fingerprint(cl);
  if (!world.any(mine != world.broadcast(mine, 0))) return "";
  return "the ranks were given different settings (flags, or XFER_* / BENCHMARK_* environment); "
         "every rank needs the same ones";
}

// Each rank checks its own node's memory; any refusal stops every rank.
std::string enough_memory(const Config& config, const World& world, std::uint64_t test_memory) {
  std::string short_of_memory = check_memory(config, test_memory);
  if (!short_of_memory.empty() && !world.is_root())
    short_of_memory = "rank " + std::to_string(world.rank()) + ": " + short_of_memory;
  return world.first_message(short_of_memory);
}

// Rank 0 checks --benchmark_out can be written before anything runs.
std::string output_writable(const Config& config, const World& world) {
  std::string error;
  if (world.is_root() && !config.out_path.empty() && is_special_file(config.out_path)) {
    if (::access(config.out_path.c_str(), W_OK) != 0)
      error = "--benchmark_out=" + config.out_path + ": cannot write there (" +
              std::strerror(errno) + ")";
  } else if (world.is_root() && !config.out_path.empty()) {
    const std::string temp = temp_path_for(config.out_path);
    std::FILE* f = std::fopen(temp.c_str(), "wb");
    if (!f) {
      error = "--benchmark_out=" + config.out_path + ": cannot create a file there (" +
              std::strerror(errno) + ")";
    } else {
      std::fclose(f);
      std::remove(temp.c_str());
    }
  }
  return world.broadcast(error, 0);
}

}  // namespace

Preflight preflight(const CommandLine& cl, const World& world, std::uint64_t test_memory) {
  // Every rank reaches the same refusal, so every rank runs the same collectives up to it.
  Preflight out;
  out.refusal = resolve_rank_pairs(cl.config, world, out.pairs);
  if (out.refusal.empty()) out.refusal = same_settings(cl, world);
  if (out.refusal.empty()) out.refusal = enough_memory(cl.config, world, test_memory);
  if (out.refusal.empty()) out.refusal = output_writable(cl.config, world);
  return out;
}

std::string preflight_output(const Config& config, const World& world) {
  return output_writable(config, world);
}

}  // namespace xfer
