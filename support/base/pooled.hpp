// A merged row's interval from the spread between its jobs, pooled over its family's rows.
//
// A job's time for a row moves by a per-process amount (the same for every row of the family in
// that job) and by the row's own amount; both are between-job variance. With 3 jobs a row alone
// has 2 degrees of freedom for that variance (t = 4.30); rows of one family within a factor of
// kPoolSizeFactor in size move alike (log time), so their spreads are pooled. The degrees of
// freedom count the family's shared per-job shift once (Satterthwaite), not once per row. A row
// whose own jobs spread significantly more than its pool (an F test at kNoisierAlpha) keeps the
// interval its own jobs give. What no run's jobs can see, a shift of the whole run, is added
// from the spread of the run means of this machine's runs, this one included, pooled over the
// same window in the same way (run_level_of, with_run_level).
// docs/reproducibility.md, "A merged row's interval", says more.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xfer {

// A row pools with the rows of its family whose size is within this factor of its own.
constexpr double kPoolSizeFactor = 8;
// A row whose own between-job variance exceeds its pool's at this level keeps its own interval.
constexpr double kNoisierAlpha = 0.05;
// A run level is known from this many runs on (this one included): from 2, its 1-2 degrees of
// freedom made the second run of a fresh H200 state 1.5x what its reruns needed.
constexpr std::size_t kRunLevelRuns = 3;

// Whether rows of one family of sizes `a` and `b` pool: within kPoolSizeFactor of each other.
bool pools_with(std::uint64_t a, std::uint64_t b);

// One row's jobs as the pool sees them.
struct JobTimes {
  std::string family;           // the row's name up to "/bytes:"
  std::uint64_t bytes = 0;      // its message size
  std::vector<double> seconds;  // each job's time, in job order; empty: not pooled (a job failed)
  std::vector<int> jobs;        // which job each is (rows pool only with rows of the same jobs)
};

// The between-job variance of log time of one job's figure, as a row's window estimates it.
struct Pool {
  double variance = 0;  // of ln(time) between jobs
  double df = 0;        // its degrees of freedom
  int rows = 0;         // rows pooled (0: none)
};

// For each row, its window's pool: the rows of its family measured by the same jobs (a job cut
// short measured fewer rows), sizes within kPoolSizeFactor of its own (itself included).
std::vector<Pool> pool_between_jobs(const std::vector<JobTimes>& rows);

// The 95% interval of the mean of a row's job times (`seconds`) from the spread between jobs.
struct BetweenJobs {
  double ci95_pct = 0;    // relative half-width, in percent
  double df = 0;          // degrees of freedom of the t quantile that made it
  int rows = 0;           // rows whose spread made it: 1 for the row's own jobs alone
  double sd_pct = 0;      // the sd of ln time of one job's figure it rests on, in percent
  double run_sd_pct = 0;  // the run level with_run_level added to it (0: none)
};

// From `pool` (t with the pool's degrees of freedom), unless the pool holds the row alone or the
// row's own jobs are significantly noisier than it: then from the row's jobs alone (t with
// jobs - 1 degrees of freedom). 0 below 2 jobs.
BetweenJobs between_jobs_ci95(const std::vector<double>& seconds, const Pool& pool);

// The spread of a run's mean between runs that its jobs' spread cannot see: sd of ln time in
// percent, and its degrees of freedom (0: none known).
struct RunLevel {
  double sd_pct = 0;
  double df = 0;
};

// One run's mean of a row: the mean of ln time over its jobs, and the variance of that mean
// its jobs' spread explains (their sample variance of ln time / jobs).
struct RunMean {
  double mean_ln = 0;
  double explained = 0;
};

// The run level of a window of rows (one family, sizes within kPoolSizeFactor), each measured
// by the same n >= kRunLevelRuns runs (window[row][run]): the variance of a run's mean, pooled over
// the rows as the jobs are (a shift of the whole family in a run shared by the rows, each row's own
// move), less the part the runs' jobs explain (their mean `explained`), at least 0; its degrees
// of freedom those of the pooled variance. None (df 0) with fewer runs.
RunLevel run_level_of(const std::vector<std::vector<RunMean>>& window);

// `between` with the run level added: the variance of the jobs' mean it rests on, V_b =
// (ci95_pct / 100 / t95(df_b))^2, plus sd_R^2, with Satterthwaite's degrees of freedom
// V^2 / (V_b^2 / df_b + sd_R^4 / df_R) and half-width t95(floor(df)) sqrt(V); where that is
// narrower than `between` alone (a run part of many df lowers the t quantile), `between` as it
// was, with the run level named. Unchanged without a run level or a between-job part (fewer
// than 2 jobs).
BetweenJobs with_run_level(const BetweenJobs& between, const RunLevel& run);

}  // namespace xfer
