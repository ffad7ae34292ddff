// --xfer_fleet: every pair of the run's ranks in rounds of disjoint pairs (base/rounds.hpp),
// all pairs of a round measured at once, each pair's own time kept; --xfer_fleet_rounds: only
// the rounds of a file (the re-test of an earlier verdict's suspects). The binary measures and
// records; tools/fleet judges (which host, which link) and plans the re-test (docs/fleet.md).
//
// The series are the selected rows of the paths between ranks (by default 8 B and 4 MiB in
// ping-pong: a latency size and a bandwidth size). In each round every series is measured
// once, as a visit of its row with the round's pairs, the row's --xfer_max_time and
// --xfer_precision; a pair's figure is its leader's own one-way time per message.
//
// The result is an ordinary result file: a row per series ("FAMILY/fleet:median/bytes:N", the
// median pair's figure, its interval from the pairs' spread) for tools/compare.py and
// tools/track, and context.xferbench.fleet (format "xferbench-fleet/1", documented in
// docs/fleet.md), the matrix of every pair's time, rewritten after every round so
// that a run that is killed keeps what it measured, marked incomplete.
#pragma once

#include <chrono>
#include <vector>

#include "harness/harness.hpp"
#include "harness/selection.hpp"
#include "report/reporter.hpp"

namespace xfer {

// Measures the fleet of `selection`'s rows that run between ranks, then reports it. Returns
// the exit status: 0 every round measured, 1 a visit failed (the rounds before it are kept) or
// nothing could be measured, 2 a bad --xfer_fleet_rounds file, 130 interrupted.
int run_fleet(const Registry& registry, const Selection& selection, const Harness& harness,
              json::Value context, std::uint64_t seed,
              std::chrono::steady_clock::time_point started);

}  // namespace xfer
