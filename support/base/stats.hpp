// What a row's timed samples say, and when a row has measured enough.
//
// A sample is the one-way time of one message, as one timed batch yields it (batched rows: the
// batch's mean per message). A row stops once the 95% confidence interval of its mean is
// narrow enough (Precision::target_pct), or once its time is up, whichever comes first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xfer {

// Two-sided 95% quantile of Student's t with `df` degrees of freedom (df >= 1).
double t95(std::size_t df);

// P(F > x) for Fisher's F with d1 and d2 degrees of freedom (d1, d2 > 0): the chance that the
// ratio of two independent variance estimates of one variance reaches x.
double f_upper_tail(double x, double d1, double d2);

// Every sample counts towards count, mean, spread, min and max; quantiles come from at most
// kKept samples (all of them up to that count, then a uniform random subset of fixed seed, so
// every rank holding the same samples holds the same subset).
class SampleSet {
 public:
  static constexpr std::size_t kKept = std::size_t{1} << 16;

  void add(double value);
  // Adds every sample `other` holds (count, mean and spread exactly; its kept samples join the
  // kept ones, thinned at random past kKept).
  void merge(const SampleSet& other);

  std::size_t count() const { return count_; }
  double mean() const { return mean_; }
  double stddev() const;  // sample standard deviation (n - 1); 0 below 2 samples
  double min() const { return min_; }
  double max() const { return max_; }
  // Relative half-width of the mean's 95% confidence interval, in percent: t95 * s / sqrt(n) /
  // mean * 100. Infinite below 2 samples (nothing is known about the spread yet).
  double ci95_pct() const;
  // Quantile q in [0, 1] of the kept samples, linearly interpolated; 0 when empty.
  double quantile(double q) const { return quantiles({q}).front(); }
  // Several at once, from one sort of the kept samples.
  std::vector<double> quantiles(const std::vector<double>& qs) const;

 private:
  std::size_t count_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // Welford: sum of squared distances from the running mean
  double min_ = 0;
  double max_ = 0;
  std::vector<double> kept_;
  std::uint64_t draw_ = 0;  // reservoir sampling's generator state
};

// How much a row measures (--xfer_precision, --xfer_max_time, --benchmark_min_time).
struct Precision {
  static constexpr std::size_t kMinSamples = 5;  // before precision may stop a row
  double target_pct = 1.0;                       // stop once ci95_pct <= this
  double max_time_s = 0.1;        // or once the timed loops have run this long (wall time)
  double min_time_s = 0;          // but never before this much timed time...
  std::int64_t min_messages = 0;  // ...and this many messages
  // Samples before the time limit may stop a row: 2 give it a spread of its own; a visit of a
  // row with 3 or more visits may stop at 1, the spread between visits being its measure.
  std::size_t min_samples_on_time = 2;
};

enum class Stop { No = 0, Precise = 1, TimeLimit = 2 };

// After a sample: `elapsed_s` is the wall time since the row's timed loop began, `timed_s` and
// `messages` what has been timed so far. The minimums always hold; precision needs
// kMinSamples; the time limit needs min_samples_on_time and is max(max_time_s, min_time_s),
// kept to the nearest whole sample: the loop stops once another sample (as long as its
// samples so far, on average) would end further past the limit than stopping now falls short
// of it. So a visit's length is its limit on average, as the machine's plan counts it, not its
// limit plus up to a sample (a visit given 1.05 samples' time ran 2).
Stop should_stop(const SampleSet& samples, const Precision& precision, double elapsed_s,
                 double timed_s, std::int64_t messages);

// Relative 95% half-width, in percent, of the mean of `values` from their spread (Student's t
// with n - 1 degrees of freedom); 0 below 2 values.
double between_ci95_pct(const std::vector<double>& values);

}  // namespace xfer
