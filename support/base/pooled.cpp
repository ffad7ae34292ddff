#include "base/pooled.hpp"

#include <algorithm>
#include <cmath>

#include "base/stats.hpp"

namespace xfer {

bool pools_with(std::uint64_t a, std::uint64_t b) {
  const double x = static_cast<double>(a);
  const double y = static_cast<double>(b);
  return x <= y * kPoolSizeFactor && y <= x * kPoolSizeFactor;
}

namespace {

// Two-way analysis of variance of ln(time) `y` over the window's rows (k) and jobs or runs (n):
// a job's shift shared by the rows, and each row's own. The variance of one job's figure is
// their sum; Satterthwaite's degrees of freedom count the shared shift's n - 1 once.
Pool pool_of_logs(const std::vector<std::vector<double>>& y) {
  const std::size_t k = y.size();
  const std::size_t n = y.front().size();
  std::vector<double> row_mean(k, 0), job_mean(n, 0);
  double grand = 0;
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      row_mean[i] += y[i][j] / static_cast<double>(n);
      job_mean[j] += y[i][j] / static_cast<double>(k);
      grand += y[i][j] / static_cast<double>(k * n);
    }
  }
  double ss_job = 0, ss_rest = 0;
  for (std::size_t j = 0; j < n; ++j)
    ss_job += static_cast<double>(k) * std::pow(job_mean[j] - grand, 2);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < n; ++j)
      ss_rest += std::pow(y[i][j] - row_mean[i] - job_mean[j] + grand, 2);
  const double df_job = static_cast<double>(n - 1);
  const double df_rest = df_job * static_cast<double>(k - 1);
  Pool pool;
  pool.rows = static_cast<int>(k);
  pool.variance = (ss_job + ss_rest) / (static_cast<double>(k) * df_job);
  if (k == 1) {
    pool.df = df_job;
    return pool;
  }
  const double shared = ss_job / df_job / static_cast<double>(k);
  const double own = ss_rest / df_rest * static_cast<double>(k - 1) / static_cast<double>(k);
  pool.df = shared + own > 0
                ? std::pow(shared + own, 2) / (shared * shared / df_job + own * own / df_rest)
                : df_job + df_rest;
  return pool;
}

Pool pool_of(const std::vector<const std::vector<double>*>& window) {
  std::vector<std::vector<double>> y;
  for (const std::vector<double>* seconds : window) {
    y.emplace_back();
    for (const double s : *seconds) y.back().push_back(std::log(s));
  }
  return pool_of_logs(y);
}

}  // namespace

std::vector<Pool> pool_between_jobs(const std::vector<JobTimes>& rows) {
  std::vector<Pool> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const JobTimes& row = rows[i];
    if (row.seconds.size() < 2) continue;
    std::vector<const std::vector<double>*> window;
    for (const JobTimes& other : rows) {
      if (other.family == row.family && other.seconds.size() == row.seconds.size() &&
          other.jobs == row.jobs && pools_with(other.bytes, row.bytes))
        window.push_back(&other.seconds);
    }
    out[i] = pool_of(window);
  }
  return out;
}

BetweenJobs between_jobs_ci95(const std::vector<double>& seconds, const Pool& pool) {
  const std::size_t n = seconds.size();
  if (n < 2) return {};
  SampleSet logs;
  for (const double s : seconds) logs.add(std::log(s));
  const double own = logs.stddev() * logs.stddev();
  const BetweenJobs alone{between_ci95_pct(seconds), static_cast<double>(n - 1), 1,
                          logs.stddev() * 100};
  if (pool.rows < 2 || !(pool.variance > 0)) return alone;
  if (f_upper_tail(own / pool.variance, static_cast<double>(n - 1), pool.df) < kNoisierAlpha)
    return alone;
  // Whole degrees of freedom only, rounded down: the t quantile a little wider, never narrower.
  const auto df = static_cast<std::size_t>(std::floor(pool.df));
  const double half = t95(df) * std::sqrt(pool.variance / static_cast<double>(n)) * 100;
  return {half, pool.df, pool.rows, std::sqrt(pool.variance) * 100};
}

RunLevel run_level_of(const std::vector<std::vector<RunMean>>& window) {
  if (window.empty() || window.front().size() < kRunLevelRuns) return {};
  std::vector<std::vector<double>> y;
  double explained = 0;
  for (const std::vector<RunMean>& row : window) {
    y.emplace_back();
    for (const RunMean& run : row) {
      y.back().push_back(run.mean_ln);
      explained += run.explained;
    }
  }
  const Pool pool = pool_of_logs(y);
  explained /= static_cast<double>(window.size() * window.front().size());
  return {std::sqrt(std::max(0.0, pool.variance - explained)) * 100, pool.df};
}

BetweenJobs with_run_level(const BetweenJobs& between, const RunLevel& run) {
  if (!(run.df > 0) || !(run.sd_pct > 0) || !(between.df > 0)) return between;
  // The t quantile between_jobs_ci95 used: whole degrees of freedom, rounded down.
  const double t_b = t95(static_cast<std::size_t>(std::floor(between.df)));
  const double v_b = std::pow(between.ci95_pct / 100 / t_b, 2);
  const double v_r = std::pow(run.sd_pct / 100, 2);
  const double v = v_b + v_r;
  BetweenJobs out = between;
  out.run_sd_pct = run.sd_pct;
  const double df = v * v / (v_b * v_b / between.df + v_r * v_r / run.df);
  const double half = t95(static_cast<std::size_t>(std::floor(df))) * std::sqrt(v) * 100;
  // More variance never states a narrower interval, though its t quantile may be lower.
  if (half < between.ci95_pct) return out;
  out.df = df;
  out.ci95_pct = half;
  return out;
}

}  // namespace xfer
