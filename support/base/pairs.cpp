#include "base/pairs.hpp"

#include <limits>
#include <set>
#include <sstream>

#include "base/error.hpp"

namespace xfer {

std::vector<std::pair<int, int>> parse_pair_list(const std::string& text, std::size_t max_digits,
                                                 int highest, bool skip_empty,
                                                 const PairListRefusal& refuse) {
  const auto number = [&](const std::string& part) {
    const bool digits = !part.empty() && part.size() <= max_digits &&
                        part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(part) > highest) refuse(part, false);
    return std::stoi(part);
  };
  std::vector<std::pair<int, int>> pairs;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty() && skip_empty) continue;
    const auto colon = item.find(':');
    if (colon == std::string::npos) refuse(text, true);
    const int a = number(item.substr(0, colon));
    const int b = number(item.substr(colon + 1));
    pairs.emplace_back(a, b);
  }
  if (pairs.empty()) refuse(text, true);
  return pairs;
}

RankPairs resolve_pairs(const std::string& text, int world_size, const std::string& flag) {
  if (text == "halves") {
    if (world_size % 2 != 0 || world_size < 2)
      throw UsageError(flag + "=halves: needs an even number of ranks (world size is " +
                       std::to_string(world_size) + ")");
    RankPairs pairs;
    for (int r = 0; r < world_size / 2; ++r) pairs.emplace_back(r, r + world_size / 2);
    return pairs;
  }
  const RankPairs pairs = parse_pair_list(
      text, 7, std::numeric_limits<int>::max(), false, [&](const std::string&, bool) {
        throw UsageError(flag + "='" + text +
                         "': expected 0:1 (the default), halves, or rank pairs like 0:2,1:3");
      });
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
