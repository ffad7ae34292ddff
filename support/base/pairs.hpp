// Which ranks talk to which (--xfer_pairs), for the paths between ranks: "0:1" (the default),
// "halves" (rank i with rank i + N/2, as osu_mbw_mr pairs them), or a list such as "0:2,1:3".
// All pairs run at the same time. The first rank of a pair leads: it sends first (ping-pong,
// stream) and its clock times the pair. Every rank resolves the same text against the same
// world size, so every rank reaches the same answer, or the same error, without talking.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace xfer {

// What a list of pairs found wrong, for the caller's message: `whole` when an item has no colon
// or the list has no item (`part` is then the whole list), else `part` is the number that is
// not one (the text before or after an item's colon). It must throw.
using PairListRefusal = std::function<void(const std::string& part, bool whole)>;

// "A:B[,A:B...]" (--xfer_pairs, --xfer_gpus): the pairs of whole numbers, in order, each of at
// most `max_digits` digits and at most `highest`. `skip_empty`: an empty item (",,") is left out
// rather than refused. Calls `refuse` for what is wrong.
std::vector<std::pair<int, int>> parse_pair_list(const std::string& text, std::size_t max_digits,
                                                 int highest, bool skip_empty,
                                                 const PairListRefusal& refuse);

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
