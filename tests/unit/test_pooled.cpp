// A merged row's interval from between-job variance pooled over its family's rows (pooled.hpp),
// checked on synthetic jobs whose variance components are known: the stated 95% intervals must
// cover the truth at about their stated rate, and be narrower than a row's own jobs give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/pooled.hpp"
#include "base/stats.hpp"
#include "jobs/merge.hpp"

namespace xfer {
namespace {

// A family of 28 rows, 8 B to 1 GiB, measured by `jobs` jobs. A job's time for a row is
// exp(mu + shift + own): `shift_sd` is the job's shift of the whole family (one per job),
// `row_sd(bytes)` a row's own move in that job (both sd of ln time).
struct Family {
  double shift_sd;
  double (*row_sd)(std::uint64_t bytes);
  int jobs = 3;
};

struct Tally {
  int covered = 0, compared = 0;
  std::vector<double> widths, own_widths;
  std::vector<int> covered_by_row = std::vector<int>(28), trials_by_row = std::vector<int>(28);
  double rate() const { return static_cast<double>(covered) / compared; }
  double median_width() {
    std::sort(widths.begin(), widths.end());
    return widths[widths.size() / 2];
  }
  double median_own_width() {
    std::sort(own_widths.begin(), own_widths.end());
    return own_widths[own_widths.size() / 2];
  }
};

// Merges `trials` synthetic runs through pool_between_jobs and Merge::combine_jobs; a row's
// interval covers when the merged figure lies within it of the mean a job's time has.
Tally simulate(const Family& family, int trials, std::uint64_t seed) {
  std::mt19937_64 draw(seed);
  std::normal_distribution<double> normal(0, 1);
  Tally tally;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<double> shifts;
    for (int j = 0; j < family.jobs; ++j) shifts.push_back(family.shift_sd * normal(draw));
    std::vector<JobTimes> rows;
    std::vector<double> truth;
    for (int i = 0; i < 28; ++i) {
      const std::uint64_t bytes = std::uint64_t{8} << i;
      const double mu = std::log(1e-6 + 1e-11 * static_cast<double>(bytes));
      const double sd = family.row_sd(bytes);
      JobTimes row{"mpi_host", bytes, {}, {}};
      for (int j = 0; j < family.jobs; ++j)
        row.seconds.push_back(
            std::exp(mu + shifts[static_cast<std::size_t>(j)] + sd * normal(draw)));
      rows.push_back(row);
      truth.push_back(std::exp(mu + (family.shift_sd * family.shift_sd + sd * sd) / 2));
    }
    const std::vector<Pool> pools = pool_between_jobs(rows);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::vector<Merge::JobFigure> jobs;
      for (const double s : rows[i].seconds) {
        Merge::JobFigure f;
        f.one_way_s = s;
        f.messages = 1;
        f.visits = 1;
        f.samples = 1;  // a lone sample: no spread of its own, the jobs' spread alone speaks
        jobs.push_back(f);
      }
      const Figure merged = Merge::combine_jobs(jobs, 1, pools[i]);
      const bool in = std::fabs(std::log(merged.one_way_s / truth[i])) * 100 <= merged.ci95_pct;
      tally.covered += in;
      ++tally.compared;
      tally.covered_by_row[i] += in;
      ++tally.trials_by_row[i];
      tally.widths.push_back(merged.ci95_pct);
      tally.own_widths.push_back(Merge::combine_jobs(jobs, 1).ci95_pct);
    }
  }
  return tally;
}

double steady(std::uint64_t) { return 0.095; }  // mpi_host's 9.5% a row
double little(std::uint64_t) { return 0.01; }   // a row moves 1% by itself
double noisier_above_1mib(std::uint64_t b) { return b >= (1u << 20) ? 0.15 : 0.05; }

// Three jobs of one sample each, 10% apart: no spread of their own, only between them.
std::vector<Merge::JobFigure> three_jobs() {
  std::vector<Merge::JobFigure> jobs(3);
  const double times[] = {1.0e-5, 1.1e-5, 0.9e-5};
  for (int j = 0; j < 3; ++j) {
    jobs[j].one_way_s = times[j];
    jobs[j].messages = 10;
    jobs[j].samples = 1;
  }
  return jobs;
}

}  // namespace

TEST(FUpperTail, MatchesKnownQuantiles) {
  // d1 = 2 has a closed form: P(F > x) = (1 + 2x / d2)^(-d2 / 2).
  EXPECT_NEAR(f_upper_tail(3.74, 2, 14), std::pow(1 + 2 * 3.74 / 14, -7.0), 1e-10);
  EXPECT_NEAR(f_upper_tail(2.711, 5, 20), 0.05, 2e-4);          // F(5, 20) 95% quantile
  EXPECT_NEAR(f_upper_tail(2.228 * 2.228, 1, 10), 0.05, 2e-4);  // F(1, d) = t(d)^2
  EXPECT_NEAR(f_upper_tail(1, 7, 7), 0.5, 1e-9);
  EXPECT_EQ(f_upper_tail(0, 2, 14), 1);
}

TEST(PooledInterval, CoversAtTheStatedRateWhenRowsMoveAlike) {
  // mpi_host as the H200 showed it: the family shifts 4% a job, each row 9.5% by itself.
  Tally t = simulate({0.04, steady}, 3000, 1);
  EXPECT_GT(t.rate(), 0.935);
  EXPECT_LT(t.rate(), 0.975);
  // Pooled over up to 7 rows (df about 12), not t(2) = 4.30 from the row alone.
  EXPECT_LT(t.median_width(), 0.65 * t.median_own_width());
}

TEST(PooledInterval, CountsTheFamilysSharedShiftOnce) {
  // The family's shift dominates: every row's jobs move together, so 7 rows hold barely more
  // than 2 degrees of freedom. Counting 2 per row (t of 14 df) would cover about 80%.
  Tally t = simulate({0.04, little}, 3000, 2);
  EXPECT_GT(t.rate(), 0.935);
  EXPECT_LT(t.rate(), 0.985);
}

TEST(PooledInterval, RowsAmongQuieterNeighboursStillCover) {
  // Rows of 1 MiB and more move 3x as much as the smaller ones; those at the boundary pool
  // with quieter rows and are the first to be under-stated (1 MiB: about 89% covered; an F
  // test of a row's 2 degrees of freedom against its pool rarely tells it apart).
  Tally t = simulate({0.02, noisier_above_1mib}, 3000, 3);
  EXPECT_GT(t.rate(), 0.93);
  for (std::size_t i = 0; i < t.covered_by_row.size(); ++i)
    EXPECT_GT(static_cast<double>(t.covered_by_row[i]) / t.trials_by_row[i], 0.87) << "row " << i;
}

TEST(PooledInterval, AnObviouslyNoisierRowKeepsItsOwnInterval) {
  std::vector<JobTimes> rows;
  for (int i = 0; i < 7; ++i) {
    const std::uint64_t bytes = std::uint64_t{1024} << i;
    rows.push_back({"mpi_host", bytes, {1.00e-5, 1.01e-5, 0.99e-5}});
  }
  rows[3].seconds = {1.0e-5, 1.5e-5, 0.7e-5};  // 40% apart among rows 1% apart
  const std::vector<Pool> pools = pool_between_jobs(rows);
  EXPECT_EQ(pools[3].rows, 7);
  const BetweenJobs noisy = between_jobs_ci95(rows[3].seconds, pools[3]);
  EXPECT_EQ(noisy.rows, 1);
  EXPECT_EQ(noisy.df, 2);
  EXPECT_NEAR(noisy.ci95_pct, between_ci95_pct(rows[3].seconds), 1e-9);
  const BetweenJobs quiet = between_jobs_ci95(rows[0].seconds, pools[0]);
  EXPECT_EQ(quiet.rows, 4);  // 1, 2, 4 and 8 KiB: within a factor of 8
  EXPECT_GT(quiet.df, 2);
}

TEST(PooledInterval, PoolsOnlyItsOwnFamilyAndItsJobs) {
  std::vector<JobTimes> rows = {{"a", 8, {1, 1.1, 0.9}},   {"a", 16, {1, 1.1, 0.9}},
                                {"b", 16, {1, 1.1, 0.9}},  {"a", 32, {1, 1.1}},
                                {"a", 128, {1, 1.1, 0.9}}, {"a", 4096, {}}};
  const std::vector<Pool> pools = pool_between_jobs(rows);
  EXPECT_EQ(pools[0].rows, 2);  // 8 and 16 B of a; not b, not the 2-job row, not 128 B (x16)
  EXPECT_EQ(pools[2].rows, 1);
  EXPECT_EQ(pools[3].rows, 1);
  EXPECT_EQ(pools[4].rows, 2);  // 16 and 128 B
  EXPECT_EQ(pools[5].rows, 0);  // a failed job: no figure to pool
  // Jobs cut short measured fewer rows: a row pools only with rows of the same jobs.
  const std::vector<Pool> cut = pool_between_jobs(
      {{"c", 8, {1, 1.1}, {0, 1}}, {"c", 16, {1, 1.1}, {0, 2}}, {"c", 32, {1, 1.2}, {0, 1}}});
  EXPECT_EQ(cut[0].rows, 2);
  EXPECT_EQ(cut[1].rows, 1);
}

TEST(CombineJobs, StatesWhichRuleAndHowManyDegreesOfFreedom) {
  const std::vector<Merge::JobFigure> jobs = three_jobs();
  const Figure own = Merge::combine_jobs(jobs, 1);
  EXPECT_EQ(own.ci95_rows, 1);
  EXPECT_EQ(own.ci95_df, 2);
  const Figure pooled = Merge::combine_jobs(jobs, 1, Pool{0.01, 12.5, 6});
  EXPECT_EQ(pooled.ci95_rows, 6);
  EXPECT_EQ(pooled.ci95_df, 12.5);
  EXPECT_NEAR(pooled.ci95_pct, t95(12) * std::sqrt(0.01 / 3) * 100, 1e-9);
}

TEST(RunLevel, AddsTheRunPartBySatterthwaite) {
  // Pooled between-job variance 0.01 of ln time over 12.5 df, 3 jobs: V_b = 0.01 / 3. A run
  // level of 8% over 4 df: V = 0.0033333 + 0.0064 = 0.0097333, df = V^2 / (V_b^2 / 12.5 +
  // 0.0064^2 / 4) = 8.51, t(8) = 2.306: 2.306 x sqrt(V) = 22.75%.
  const BetweenJobs pooled{t95(12) * std::sqrt(0.01 / 3) * 100, 12.5, 6, 10};
  const BetweenJobs with = with_run_level(pooled, RunLevel{8, 4});
  EXPECT_NEAR(with.df, 8.5128, 1e-4);
  EXPECT_NEAR(with.ci95_pct, 22.750, 1e-3);
  EXPECT_EQ(with.run_sd_pct, 8);
  EXPECT_EQ(with.rows, 6);
  EXPECT_EQ(with.sd_pct, 10);  // the between-job sd stays what the jobs' spread says
}

TEST(RunLevel, NeverNarrowsTheInterval) {
  // A row's own 3 jobs (2 df), 10% apart, and a run level of 3% over 2 df: Satterthwaite says
  // 3.0 df (t 3.18, 20.7%), narrower than the jobs alone (24.8%): the jobs' interval stands,
  // with the run level named.
  const BetweenJobs alone = between_jobs_ci95({1.0, 1.1, 0.9}, Pool{});
  ASSERT_NEAR(alone.ci95_pct, 24.843, 1e-3);
  const BetweenJobs with = with_run_level(alone, RunLevel{3, 2});
  EXPECT_EQ(with.df, 2);
  EXPECT_NEAR(with.ci95_pct, 24.843, 1e-3);
  EXPECT_EQ(with.run_sd_pct, 3);
  // A run level of many df lowers the t quantile: the jobs' 2 df and 20% over 30 df give
  // 31.9 df, t(31) 2.040 x sqrt(0.01 / 3 + 0.04) = 42.5%, wider than the jobs alone.
  const BetweenJobs wide = with_run_level(alone, RunLevel{20, 30});
  EXPECT_NEAR(wide.df, 31.9, 0.1);
  EXPECT_NEAR(wide.ci95_pct, 42.46, 0.05);
}

TEST(RunLevel, NoneLeavesTheIntervalAsItWas) {
  const BetweenJobs alone = between_jobs_ci95({1.0, 1.1, 0.9}, Pool{});
  for (const RunLevel run : {RunLevel{}, RunLevel{0, 5}, RunLevel{3, 0}}) {
    const BetweenJobs with = with_run_level(alone, run);
    EXPECT_EQ(with.ci95_pct, alone.ci95_pct);
    EXPECT_EQ(with.df, alone.df);
    EXPECT_EQ(with.run_sd_pct, 0);
  }
  // Jobs that agree exactly: the run part alone, with its own df.
  const BetweenJobs same = with_run_level(between_jobs_ci95({1.0, 1.0, 1.0}, Pool{}), {3, 4});
  EXPECT_NEAR(same.ci95_pct, t95(4) * 3, 1e-9);
}

// Runs of a family of 7 rows (8 B .. 512 B), each run shifting the whole family by `shift_sd`
// and each row by `own_sd` (sd of ln time), its jobs explaining `explained` of a run's mean.
std::vector<std::vector<RunMean>> runs_of(int runs, double shift_sd, double own_sd,
                                          double explained, std::uint64_t seed) {
  std::mt19937_64 draw(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> shifts;
  for (int r = 0; r < runs; ++r) shifts.push_back(shift_sd * normal(draw));
  std::vector<std::vector<RunMean>> window(7);
  for (int i = 0; i < 7; ++i)
    for (int r = 0; r < runs; ++r)
      window[i].push_back({-10.0 + i + shifts[r] + own_sd * normal(draw), explained});
  return window;
}

TEST(RunLevelOf, NeedsThreeRuns) {
  EXPECT_EQ(run_level_of({}).df, 0);
  EXPECT_EQ(run_level_of(runs_of(1, 0.05, 0.02, 0, 1)).df, 0);
  EXPECT_EQ(run_level_of(runs_of(2, 0.05, 0.02, 0, 1)).df, 0);
  EXPECT_GT(run_level_of(runs_of(3, 0.05, 0.02, 0, 1)).df, 0);
}

TEST(RunLevelOf, IsTheRunMeansSpreadLessWhatTheJobsExplain) {
  // Rows moving by themselves only (no shared shift): their run means' variance over many
  // runs and rows is own_sd^2; less the jobs' part 0.0004, sqrt(0.0025 - 0.0004) = 4.58%.
  const RunLevel level = run_level_of(runs_of(200, 0, 0.05, 0.0004, 7));
  EXPECT_NEAR(level.sd_pct, 4.58, 0.25);
  EXPECT_GT(level.df, 1000);  // (runs - 1) x rows: the rows tell about it independently
  // All of it explained by the jobs: none left, never negative.
  EXPECT_EQ(run_level_of(runs_of(50, 0, 0.02, 0.01, 7)).sd_pct, 0);
}

TEST(RunLevelOf, CountsTheFamilysSharedShiftOnce) {
  // A shift of the whole family in each run: 7 rows do not tell 7 times as much about it, so
  // the degrees of freedom stay near runs - 1.
  const RunLevel level = run_level_of(runs_of(5, 0.05, 0.001, 0, 3));
  EXPECT_GT(level.df, 3.5);
  EXPECT_LT(level.df, 5);
}

TEST(RunLevel, AMergedRowStatesItsRunTermAndTheCombinedDf) {
  const std::vector<Merge::JobFigure> jobs = three_jobs();
  const Pool pool{0.01, 12.5, 6};
  const Figure without = Merge::combine_jobs(jobs, 1, pool);
  const Figure with = Merge::combine_jobs(jobs, 1, pool, RunLevel{8, 4});
  EXPECT_EQ(without.run_sd_pct, 0);
  EXPECT_EQ(with.run_sd_pct, 8);
  EXPECT_NEAR(with.ci95_df, 8.5128, 1e-4);
  EXPECT_NEAR(with.ci95_pct, 22.750, 1e-3);
  EXPECT_GT(with.ci95_pct, without.ci95_pct);
  EXPECT_EQ(with.ci95_rows, 6);
  EXPECT_EQ(with.floor_pct, 0);
}

}  // namespace xfer
