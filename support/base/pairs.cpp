#include "base/pairs.hpp"

#include <set>
#include <sstream>

#include "base/error.hpp"

namespace xfer {

namespace {

int parse_rank(const std::string& text, const std::string& flag, const std::string& whole) {
  const bool digits =
      !text.empty() && text.size() < 8 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits)
    throw UsageError(flag + "='" + whole +
                     "': expected 0:1 (the default), halves, or rank pairs like 0:2,1:3");
  return std::stoi(text);
}

}  // namespace

RankPairs resolve_pairs(const std::string& text, int world_size, const std::string& flag) {
  RankPairs pairs;
  if (text == "halves") {
    if (world_size % 2 != 0 || world_size < 2)
      throw UsageError(flag + "=halves: needs an even number of ranks (world size is " +
                       std::to_string(world_size) + ")");
    for (int r = 0; r < world_size / 2; ++r) pairs.emplace_back(r, r + world_size / 2);
    return pairs;
  }
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) parse_rank("", flag, text);
    pairs.emplace_back(parse_rank(item.substr(0, colon), flag, text),
                       parse_rank(item.substr(colon + 1), flag, text));
  }
  if (pairs.empty()) parse_rank("", flag, text);
  std::set<int> seen;
  for (const auto& [a, b] : pairs) {
    for (const int r : {a, b}) {
      if (r >= world_size)
        throw UsageError(flag + "='" + text + "': rank " + std::to_string(r) +
                         " is out of range (world size is " + std::to_string(world_size) + ")");
      if (!seen.insert(r).second)
        throw UsageError(flag + "='" + text + "': rank " + std::to_string(r) +
                         " is in two pairs (or paired with itself); each rank takes one role");
    }
  }
  return pairs;
}

PairRole role_of(const RankPairs& pairs, int rank) {
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].first == rank) return {static_cast<int>(i), pairs[i].second, true};
    if (pairs[i].second == rank) return {static_cast<int>(i), pairs[i].first, false};
  }
  return {};
}

}  // namespace xfer
