#include "base/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/pattern.hpp"

namespace xfer {

double t95(std::size_t df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  constexpr std::size_t kRows = sizeof(kTable) / sizeof(kTable[0]);
  if (df == 0) return std::numeric_limits<double>::infinity();
  if (df <= kRows) return kTable[df - 1];
  // Cornish-Fisher expansion around the normal quantile: within 1e-4 of the exact value here.
  const double z = 1.959963985;
  const double n = static_cast<double>(df);
  const double z3 = z * z * z;
  const double z5 = z3 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n);
}

namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b), evaluated by
// the modified Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  const auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1;
  double d = 1 / guard(1 - (a + b) * x / (a + 1));
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 / guard(1 + even * d);
    c = guard(1 + even / c);
    h *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 / guard(1 + odd * d);
    c = guard(1 + odd / c);
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-14) break;
  }
  return h;
}

// I_x(a, b): P(X <= x) for X ~ Beta(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double f_upper_tail(double x, double d1, double d2) {
  if (!(x > 0)) return 1;
  if (std::isinf(x)) return 0;
  return incomplete_beta(d2 / 2, d1 / 2, d2 / (d2 + d1 * x));
}

void SampleSet::add(double value) {
  ++count_;
  if (count_ == 1) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  const double delta = value - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (value - mean_);

  if (kept_.size() < kKept) {
    kept_.push_back(value);
    return;
  }
  draw_ = mix64(draw_ + count_);
  const std::uint64_t slot = draw_ % count_;
  if (slot < kKept) kept_[slot] = value;
}

void SampleSet::merge(const SampleSet& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  // Chan et al.'s pairwise update of the mean and the sum of squared distances.
  const double n_a = static_cast<double>(count_);
  const double n_b = static_cast<double>(other.count_);
  const double delta = other.mean_ - mean_;
  const double n = n_a + n_b;
  mean_ += delta * n_b / n;
  m2_ += other.m2_ + delta * delta * n_a * n_b / n;
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  kept_.insert(kept_.end(), other.kept_.begin(), other.kept_.end());
  while (kept_.size() > kKept) {  // drop random ones until kKept remain
    draw_ = mix64(draw_ + kept_.size());
    kept_[draw_ % kept_.size()] = kept_.back();
    kept_.pop_back();
  }
}

double SampleSet::stddev() const {
  return count_ < 2 ? 0.0 : std::sqrt(m2_ / static_cast<double>(count_ - 1));
}

double SampleSet::ci95_pct() const {
  if (count_ < 2 || !(mean_ > 0)) return std::numeric_limits<double>::infinity();
  return t95(count_ - 1) * stddev() / std::sqrt(static_cast<double>(count_)) / mean_ * 100.0;
}

std::vector<double> SampleSet::quantiles(const std::vector<double>& qs) const {
  std::vector<double> out(qs.size(), 0.0);
  if (kept_.empty()) return out;
  std::vector<double> sorted = kept_;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double at = std::clamp(qs[i], 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(at));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    out[i] = sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
  }
  return out;
}

Stop should_stop(const SampleSet& samples, const Precision& precision, double elapsed_s,
                 double timed_s, std::int64_t messages) {
  if (timed_s < precision.min_time_s || messages < precision.min_messages) return Stop::No;
  if (samples.count() >= Precision::kMinSamples && samples.ci95_pct() <= precision.target_pct)
    return Stop::Precise;
  const double limit = std::max(precision.max_time_s, precision.min_time_s);
  const double per_sample =
      elapsed_s / static_cast<double>(std::max<std::size_t>(1, samples.count()));
  if (samples.count() >= std::max<std::size_t>(1, precision.min_samples_on_time) &&
      elapsed_s + per_sample / 2 >= limit)
    return Stop::TimeLimit;
  return Stop::No;
}

double between_ci95_pct(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  SampleSet set;
  for (const double v : values) set.add(v);
  return set.ci95_pct();
}

}  // namespace xfer
