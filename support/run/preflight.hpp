// The checks before the first row, each agreed by every rank, so that a run that cannot go on
// stops on every rank with one message and exit status 2 before any rank talks to another:
// the rank pairs against the world size, the same settings on every rank, memory on every
// node, a result file that can be written.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "mpi/world.hpp"

namespace xfer {

// What the checks leave: "" or the first refusal, the same on every rank; and --xfer_pairs
// resolved against the world size.
struct Preflight {
  std::string refusal;
  RankPairs pairs;
};
// `test_memory`: this rank's node memory as a test pretends it (0: the real one).
Preflight preflight(const CommandLine& cl, const World& world, std::uint64_t test_memory);

// Only the last check: "" or why --benchmark_out cannot be written (for --xfer_merge).
std::string preflight_output(const Config& config, const World& world);

}  // namespace xfer
