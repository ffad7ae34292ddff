// The fleet's schedule (base/rounds.hpp) against the cases tools/xfertools/fleet/model.py is tested
// against too (tests/fixtures/fleet/schedules.json): the judge rebuilds each pass's rounds from
// the relabel the result records, so both languages must make the same ones.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "base/json.hpp"
#include "base/rounds.hpp"

namespace xfer {
namespace {

json::Value fixture() {
  std::ifstream in(std::string(XFER_FIXTURES) + "/fleet/schedules.json");
  std::ostringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

TEST(Rounds, Splitmix64MatchesTheFixture) {
  const json::Value all = fixture();
  const json::Value& check = *all.find("splitmix64_check");
  std::uint64_t state = static_cast<std::uint64_t>(check.find("state")->number());
  for (const auto& out : check.find("outputs")->items())
    EXPECT_EQ(std::to_string(splitmix64(state)), out.text());
}

TEST(Rounds, RelabelsAndRoundsMatchTheFixture) {
  const json::Value all = fixture();
  int cases = 0;
  for (const auto& c : all.find("cases")->items()) {
    const int n = static_cast<int>(c.find("n")->number());
    const int pass = static_cast<int>(c.find("pass")->number());
    const auto seed = static_cast<std::uint64_t>(c.find("seed")->number());
    const std::vector<int> relabel = pass_relabel(n, pass, seed);
    std::vector<int> expected;
    for (const auto& x : c.find("relabel")->items()) expected.push_back(static_cast<int>(x.number()));
    EXPECT_EQ(relabel, expected) << "n " << n << " pass " << pass;
    std::vector<RankPairs> want;
    for (const auto& round : c.find("rounds")->items()) {
      RankPairs pairs;
      for (const auto& p : round.items())
        pairs.emplace_back(static_cast<int>(p.items()[0].number()),
                           static_cast<int>(p.items()[1].number()));
      want.push_back(pairs);
    }
    EXPECT_EQ(circle_rounds(n, relabel), want) << "n " << n << " pass " << pass;
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

// Every pair once, no rank twice in a round, N-1 rounds (N even) or N (odd, one rank idle).
TEST(Rounds, EveryPairOnceInDisjointRounds) {
  for (int n : {2, 3, 5, 8, 9, 64, 101}) {
    const auto rounds = circle_rounds(n, pass_relabel(n, 1, 77));
    EXPECT_EQ(static_cast<int>(rounds.size()), n % 2 == 0 ? n - 1 : n);
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_TRUE(busy.insert(a).second && busy.insert(b).second) << "n " << n;
        EXPECT_TRUE(seen.insert({a, b}).second) << "n " << n;
      }
      EXPECT_EQ(static_cast<int>(round.size()), n / 2);
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(n * (n - 1) / 2));
  }
  EXPECT_TRUE(circle_rounds(1, {0}).empty());
}

TEST(Rounds, UpperIndexCountsPairsInOrder) {
  const int n = 7;
  std::size_t k = 0;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) EXPECT_EQ(upper_index(n, a, b), k++);
}

}  // namespace
}  // namespace xfer
