// The run's schedule of visits (runner.hpp), how a row's visits become its figure (visits.hpp),
// and how the figures of separate jobs become one (merge.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "base/pooled.hpp"
#include "jobs/merge.hpp"
#include "run/runner.hpp"

namespace xfer {
namespace {

using Key = std::pair<std::size_t, int>;  // (row, repetition)

std::vector<Key> round_of(const std::vector<ScheduledVisit>& order, int round) {
  std::vector<Key> out;
  for (const ScheduledVisit& s : order)
    if (s.round == round) out.emplace_back(s.row, s.repetition);
  return out;
}

std::vector<Key> in_row_order(std::size_t rows, int repetitions) {
  std::vector<Key> out;
  for (std::size_t row = 0; row < rows; ++row)
    for (int repetition = 0; repetition < repetitions; ++repetition)
      out.emplace_back(row, repetition);
  return out;
}

TEST(Schedule, EveryFigureGetsOneVisitPerRoundRoundAfterRound) {
  VisitPlan plan;
  plan.visits = 3;
  plan.repetitions = 2;
  plan.seed = 12345;
  const std::vector<ScheduledVisit> order = schedule(10, plan);
  ASSERT_EQ(order.size(), 10u * 2 * 3);
  for (std::size_t i = 1; i < order.size(); ++i)
    EXPECT_LE(order[i - 1].round, order[i].round) << "rounds do not overlap";
  for (int round = 0; round < 3; ++round) {
    std::vector<Key> got = round_of(order, round);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, in_row_order(10, 2)) << "round " << round;
  }
}

TEST(Schedule, RoundsBeforeTheLastAreShuffledByTheSeedAlone) {
  VisitPlan plan;
  plan.visits = 3;
  plan.seed = 7;
  const std::vector<ScheduledVisit> order = schedule(12, plan);
  // Every rank computes it from the agreed seed: the same seed, the same order.
  const std::vector<ScheduledVisit> again = schedule(12, plan);
  for (int round = 0; round < 3; ++round) EXPECT_EQ(round_of(order, round), round_of(again, round));
  EXPECT_NE(round_of(order, 0), in_row_order(12, 1));
  EXPECT_NE(round_of(order, 1), in_row_order(12, 1));
  EXPECT_NE(round_of(order, 0), round_of(order, 1));  // each round its own order
  // The last round runs in the rows' order, so rows are reported as they finish.
  EXPECT_EQ(round_of(order, 2), in_row_order(12, 1));
  VisitPlan other = plan;
  other.seed = 8;
  EXPECT_NE(round_of(schedule(12, other), 0), round_of(order, 0));
}

TEST(Schedule, RandomInterleavingShufflesTheLastRoundToo) {
  VisitPlan plan;
  plan.visits = 1;
  plan.repetitions = 2;
  plan.seed = 99;
  EXPECT_EQ(round_of(schedule(8, plan), 0), in_row_order(8, 2));
  plan.shuffle_last = true;
  std::vector<Key> shuffled = round_of(schedule(8, plan), 0);
  EXPECT_NE(shuffled, in_row_order(8, 2));
  std::sort(shuffled.begin(), shuffled.end());
  EXPECT_EQ(shuffled, in_row_order(8, 2));
}

VisitRecord measured(double seconds_per_message, std::int64_t messages,
                     const std::vector<double>& samples) {
  VisitRecord r;
  Measurement m;
  for (const double s : samples) m.per_message.add(s);
  m.seconds = seconds_per_message * static_cast<double>(messages);
  m.fastest = m.seconds;
  m.messages = messages;
  r.visit.record(m, 1, 1, 1);
  return r;
}

TEST(Combine, TheFigureIsTheMeanOfTheVisitsAndItsIntervalCoversTheirSpread) {
  // Three quiet visits (tight samples each) that disagree by 10%: the interval must come from
  // the spread between them, not from the samples inside each.
  std::vector<VisitRecord> visits = {measured(1.0e-6, 100, {1.0e-6, 1.0001e-6, 0.9999e-6}),
                                     measured(1.1e-6, 100, {1.1e-6, 1.1001e-6, 1.0999e-6}),
                                     measured(0.9e-6, 100, {0.9e-6, 0.9001e-6, 0.8999e-6})};
  const Figure f = combine(visits, 0);
  EXPECT_TRUE(f.error.empty());
  EXPECT_EQ(f.visits, 3);
  EXPECT_EQ(f.messages, 300);
  EXPECT_NEAR(f.one_way_s, 1.0e-6, 1e-15);
  const double between = between_ci95_pct({1.0e-6, 1.1e-6, 0.9e-6});
  EXPECT_NEAR(between, 4.303 * 0.1 / std::sqrt(3.0) * 100, 0.1);  // t(2) = 4.303
  EXPECT_NEAR(f.ci95_pct, between, 1e-9);
  // A floor is added in quadrature.
  EXPECT_NEAR(combine(visits, 5).ci95_pct, std::hypot(between, 5.0), 1e-9);
  EXPECT_EQ(combine(visits, 5).floor_pct, 5);
}

TEST(Combine, AFailedVisitFailsTheFigure) {
  std::vector<VisitRecord> visits = {measured(1e-6, 10, {1e-6, 1e-6})};
  VisitRecord bad;
  bad.visit.fail("mpi_host/mode:pingpong/bytes:8: rank 1: validation: 1 of 8 bytes differ");
  visits.push_back(bad);
  visits.push_back(measured(1e-6, 10, {1e-6, 1e-6}));
  EXPECT_EQ(combine(visits, 0).error,
            "mpi_host/mode:pingpong/bytes:8: rank 1: validation: 1 of 8 bytes differ");
  EXPECT_FALSE(combine({}, 0).error.empty());  // nothing measured is no figure
}

TEST(Combine, AStatedIntervalIsAlwaysFinite) {
  // JSON has no infinity: a lone visit of one sample states 100%.
  const Figure f = combine({measured(1e-6, 1, {1e-6})}, 0);
  EXPECT_TRUE(std::isfinite(f.ci95_pct));
  EXPECT_EQ(f.ci95_pct, 100);
}

Merge::JobFigure job(double seconds, int visits, std::size_t samples, double ci95_pct,
                     double floor_pct) {
  Merge::JobFigure j;
  j.one_way_s = j.fastest_s = j.median_s = j.min_s = j.max_s = j.p90_s = j.p99_s = seconds;
  j.messages = static_cast<std::int64_t>(samples);
  j.visits = visits;
  j.samples = samples;
  j.ci95_pct = ci95_pct;
  j.floor_pct = floor_pct;
  return j;
}

TEST(CombineJobs, JobsOfOneMessageEachStateTheSpreadBetweenThem) {
  // tools/run's three jobs of a 1 GiB row: one round trip each, whose lone sample states 100%
  // (with the path's 8% floor). That says nothing of the row; the three messages' spread does.
  const std::vector<Merge::JobFigure> jobs = {job(1.00e-1, 1, 1, std::hypot(100.0, 8.0), 8),
                                              job(1.05e-1, 1, 1, std::hypot(100.0, 8.0), 8),
                                              job(0.95e-1, 1, 1, std::hypot(100.0, 8.0), 8)};
  const Figure f = Merge::combine_jobs(jobs, 1);
  EXPECT_TRUE(f.error.empty());
  EXPECT_NEAR(f.one_way_s, 1.0e-1, 1e-12);
  EXPECT_EQ(f.floor_pct, 0);  // three jobs measured the spread the floor stands for
  const double between = between_ci95_pct({1.00e-1, 1.05e-1, 0.95e-1});
  EXPECT_NEAR(between, 4.303 * 0.05 / std::sqrt(3.0) * 100, 0.1);  // t(2) = 4.303: 12.4%
  EXPECT_NEAR(f.ci95_pct, between, 1e-9);                          // was 100 / sqrt(3) = 57.7%
}

TEST(CombineJobs, JobsWithASpreadOfTheirOwnKeepItAsTheLeastTheyState) {
  // Three jobs that agree exactly but whose visits of 50 samples each spread 10% (sd of the
  // visit's mean 10 / t(49)): the merged interval is the mean's, t(147) x that / sqrt(3), not
  // the zero between them.
  const double mean_sd = 10 / t95(49) / std::sqrt(3.0);
  const std::vector<Merge::JobFigure> jobs = {job(2e-6, 1, 50, 10, 0), job(2e-6, 1, 50, 10, 0),
                                              job(2e-6, 1, 50, 10, 0)};
  EXPECT_NEAR(Merge::combine_jobs(jobs, 1).ci95_pct, t95(147) * mean_sd, 1e-9);
  // One job of a lone sample among them neither adds its 100% nor hides the others' spread.
  const std::vector<Merge::JobFigure> mixed = {job(2e-6, 1, 50, 10, 0), job(2e-6, 1, 1, 100, 0),
                                               job(2e-6, 1, 50, 10, 0)};
  EXPECT_NEAR(Merge::combine_jobs(mixed, 1).ci95_pct, t95(98) * mean_sd, 1e-9);
  // Visits of 2 samples state t(1) = 12.7 times their spread: taken out, not bounding the
  // merged interval at 6.5 times it.
  const std::vector<Merge::JobFigure> pairs = {
      job(2e-6, 1, 2, 12.706, 0), job(2e-6, 1, 2, 12.706, 0), job(2e-6, 1, 2, 12.706, 0)};
  EXPECT_NEAR(Merge::combine_jobs(pairs, 1).ci95_pct, t95(3) * 1 / std::sqrt(3.0), 1e-3);
}

TEST(CombineJobs, APooledSpreadBetweenJobsIsNotBoundByTheirSamples) {
  // The same three jobs with a pool of the family's rows behind them (7 rows, 20 df, 1%): the
  // pool measures a job's whole variance, its samples' part included.
  const std::vector<Merge::JobFigure> jobs = {job(2e-6, 1, 50, 10, 0), job(2e-6, 1, 50, 10, 0),
                                              job(2e-6, 1, 50, 10, 0)};
  const Figure f = Merge::combine_jobs(jobs, 1, Pool{0.01 * 0.01, 20, 7});
  EXPECT_NEAR(f.ci95_pct, t95(20) * 1 / std::sqrt(3.0), 1e-9);
  EXPECT_EQ(f.ci95_rows, 7);
}

}  // namespace
}  // namespace xfer
