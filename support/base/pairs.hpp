// Which ranks talk to which (--xfer_pairs), for the paths between ranks: "0:1" (the default),
// "halves" (rank i with rank i + N/2, as osu_mbw_mr pairs them), or a list such as "0:2,1:3".
// All pairs run at the same time. The first rank of a pair leads: it sends first (ping-pong,
// stream) and its clock times the pair. Every rank resolves the same text against the same
// world size, so every rank reaches the same answer, or the same error, without talking.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace xfer {

using RankPairs = std::vector<std::pair<int, int>>;

// Throws UsageError naming `flag`: an odd world size for halves, a rank out of range, a rank
// in two pairs or paired with itself, a malformed list.
RankPairs resolve_pairs(const std::string& text, int world_size, const std::string& flag);

struct PairRole {
  int pair = -1;  // index into the pairs; -1: this rank only takes part in the agreements
  int peer = -1;
  bool leader = false;
  bool active() const { return pair >= 0; }
};
PairRole role_of(const RankPairs& pairs, int rank);

}  // namespace xfer
