#include "base/rounds.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/pattern.hpp"

namespace xfer {

namespace {
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  const std::uint64_t out = mix64(state);  // mix64 adds the increment itself
  state += kGolden;
  return out;
}

std::vector<int> pass_relabel(int n, int pass, std::uint64_t seed) {
  std::vector<int> perm(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  if (pass == 0) return perm;
  std::uint64_t state = seed ^ (static_cast<std::uint64_t>(pass) * kGolden);
  for (int i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(splitmix64(state) % static_cast<std::uint64_t>(i + 1));
    std::swap(perm[static_cast<std::size_t>(i)], perm[j]);
  }
  return perm;
}

std::vector<RankPairs> circle_rounds(int n, const std::vector<int>& relabel) {
  if (n < 2) return {};
  if (static_cast<int>(relabel.size()) != n)
    throw std::invalid_argument("circle_rounds: relabel has the wrong size");
  const int m = n % 2 == 0 ? n : n + 1;
  std::vector<int> rank_at(static_cast<std::size_t>(m), -1);
  for (int rank = 0; rank < n; ++rank) rank_at[static_cast<std::size_t>(relabel[rank])] = rank;
  std::vector<RankPairs> rounds;
  const auto add = [&](RankPairs& round, int p, int s) {
    const int a = rank_at[static_cast<std::size_t>(p)];
    const int b = rank_at[static_cast<std::size_t>(s)];
    if (a >= 0 && b >= 0) round.emplace_back(std::min(a, b), std::max(a, b));
  };
  for (int r = 0; r < m - 1; ++r) {
    RankPairs round;
    add(round, m - 1, r);
    for (int k = 1; k < m / 2; ++k) add(round, (r + k) % (m - 1), (r - k + (m - 1)) % (m - 1));
    rounds.push_back(round);
  }
  return rounds;
}

std::size_t upper_index(int n, int a, int b) {
  const auto sa = static_cast<std::size_t>(a);
  const auto sn = static_cast<std::size_t>(n);
  return sa * sn - sa * (sa + 1) / 2 + static_cast<std::size_t>(b - a - 1);
}

}  // namespace xfer
