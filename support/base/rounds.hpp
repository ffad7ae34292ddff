// Every pair of N ranks in N-1 rounds of disjoint pairs (the circle method), for --xfer_fleet:
// each rank meets every other once, and in a round no rank is in two pairs, so a round's
// pairs are measured at once. tools/xfertools/fleet/model.py makes the same rounds (the judge reads
// them back from the relabel the result records); tests/fixtures/fleet/schedules.json holds
// cases both languages are tested against.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/pairs.hpp"

namespace xfer {

// One step of splitmix64: advances `state` and returns the next output (all mod 2^64).
std::uint64_t splitmix64(std::uint64_t& state);

// The position each of `n` ranks plays in pass `pass`: 0, 1, ..., n-1 in pass 0; in a later
// pass a Fisher-Yates shuffle driven by splitmix64 from seed ^ (pass * 0x9E3779B97F4A7C15),
// so that a second pass puts other pairs in a round together.
std::vector<int> pass_relabel(int n, int pass, std::uint64_t seed);

// The rounds: M = n (even) or n + 1 (odd: position M-1 is a bye, its partner idles) positions,
// M - 1 rounds. Round r pairs position M-1 with r, and for k = 1..M/2-1 position (r+k) mod
// (M-1) with (r-k) mod (M-1); rank x plays position relabel[x]. Pairs are (a, b), a < b, in
// that order. Empty below 2 ranks.
std::vector<RankPairs> circle_rounds(int n, const std::vector<int>& relabel);

// Index of pair (a, b), a < b, of n ranks in upper-triangle order (0,1),(0,2)..(n-2,n-1).
std::size_t upper_index(int n, int a, int b);

}  // namespace xfer
