#include "harness/visits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "base/fields.hpp"
#include "links/links.hpp"

namespace xfer {

namespace {

// The interval the visits' own samples give the mean of their means. A visit of one sample has
// no spread of its own: with several visits, the spread between them speaks for it; alone, it
// states 100%.
double within_ci95_pct(const std::vector<VisitRecord>& visits, double mean) {
  double sum_sq = 0;
  int n = 0;
  int with_spread = 0;
  for (const auto& r : visits) {
    if (!r.visit.measured()) continue;
    ++n;
    const Measurement& m = r.visit.measurement();
    const double ci = m.per_message.ci95_pct();
    if (!std::isfinite(ci)) continue;
    const double half = ci / 100 * (m.seconds / static_cast<double>(m.messages));
    sum_sq += half * half;
    ++with_spread;
  }
  if (n == 0 || !(mean > 0)) return 0;
  if (with_spread == 0) return n == 1 ? 100 : 0;
  return std::sqrt(sum_sq) / with_spread / mean * 100;
}

std::string precision_label(const Figure& f) {
  char text[96];
  std::snprintf(text, sizeof text, f.ci95_pct < 1 ? "\u00b1%.2f%%" : "\u00b1%.1f%%", f.ci95_pct);
  std::string label = std::string(text) + (f.time_limited ? " time-limited" : "");
  if (f.visits_planned > f.visits) {
    std::snprintf(text, sizeof text, " %d of %d visits", f.visits, f.visits_planned);
    label += text;
  }
  return label;
}

// The counters report_figure sets, in one place for Google Benchmark's rows and kept ones.
std::vector<std::pair<std::string, double>> figure_counters(std::uint64_t bytes, const Figure& f) {
  const double moved = static_cast<double>(bytes) * f.directions * f.pairs;
  std::vector<std::pair<std::string, double>> out = {
      {fields::kGbps, moved / f.one_way_s / 1e9},
      {fields::kLatencyUs, f.one_way_s * 1e6},
      {fields::kBatch, static_cast<double>(f.batch)},
      {fields::kSamples, static_cast<double>(f.samples)},
      {fields::kMedianUs, f.median_s * 1e6},
      {fields::kMinUs, f.min_s * 1e6},
      {fields::kMaxUs, f.max_s * 1e6},
      {fields::kP90Us, f.p90_s * 1e6},
      {fields::kP99Us, f.p99_s * 1e6},
      {fields::kCi95Pct, f.ci95_pct},
      {fields::kFloorPct, f.floor_pct},
      {fields::kVisits, f.visits},
      {fields::kJobs, f.jobs},
      {fields::kTimeLimited, f.time_limited ? 1 : 0}};
  if (f.visits_planned > f.visits) out.emplace_back("visits_planned", f.visits_planned);
  if (f.jobs > 1) {
    out.emplace_back("ci95_rows", f.ci95_rows);
    out.emplace_back("ci95_df", f.ci95_df);
    out.emplace_back("between_sd_pct", f.between_sd_pct);
    out.emplace_back("run_sd_pct", f.run_sd_pct);
  }
  if (f.pairs > 1) {
    const double pair_bytes = static_cast<double>(bytes) * f.directions;
    out.emplace_back(fields::kPairs, f.pairs);
    out.emplace_back(fields::kPairGbpsMin, pair_bytes / f.one_way_s / 1e9);
    out.emplace_back(fields::kPairGbpsMax, pair_bytes / f.fastest_s / 1e9);
  }
  if (f.link_gbps > 0) {
    out.emplace_back(fields::kLinkGbps, f.link_gbps);
    out.emplace_back("pct_of_link", moved / f.one_way_s / 1e9 / f.link_gbps * 100);
  }
  return out;
}

}  // namespace

double stated_ci95_pct(double between_pct, double within_pct, double floor_pct) {
  const double stated = std::hypot(std::max(between_pct, within_pct), floor_pct);
  return std::isfinite(stated) ? stated : 100;  // JSON has no infinity
}

Figure combine(const std::vector<VisitRecord>& visits, double floor_pct) {
  Figure f;
  std::vector<double> means;
  double fastest = 0;
  SampleSet samples;
  for (const auto& r : visits) {
    const Visit& v = r.visit;
    if (v.failed()) {
      f.error = v.error();
      return f;
    }
    if (!v.measured()) continue;
    const Measurement& m = v.measurement();
    means.push_back(m.seconds / static_cast<double>(m.messages));
    fastest += m.fastest / static_cast<double>(m.messages);
    f.messages += m.messages;
    samples.merge(m.per_message);
    f.time_limited = f.time_limited || m.time_limited;
    f.batch = v.batch();
    f.directions = v.directions();
    f.pairs = v.pairs();
  }
  f.visits = static_cast<int>(means.size());
  if (means.empty()) {
    f.error = "nothing was measured";
    return f;
  }
  double sum = 0;
  for (const double t : means) sum += t;
  f.one_way_s = sum / static_cast<double>(means.size());
  f.fastest_s = fastest / static_cast<double>(means.size());
  f.floor_pct = floor_pct;
  f.ci95_pct =
      stated_ci95_pct(between_ci95_pct(means), within_ci95_pct(visits, f.one_way_s), floor_pct);
  f.samples = samples.count();
  const std::vector<double> q = samples.quantiles({0.5, 0.9, 0.99});
  f.median_s = q[0];
  f.p90_s = q[1];
  f.p99_s = q[2];
  f.min_s = samples.min();
  f.max_s = samples.max();
  return f;
}

void report_figure(benchmark::State& state, std::uint64_t bytes, const Figure& f) {
  const double moved_gbps = static_cast<double>(bytes) * f.directions * f.pairs / f.one_way_s / 1e9;
  if (const std::string over = links::over_line_rate(moved_gbps, f.link_gbps, f.links);
      !over.empty()) {
    state.SkipWithError(over.c_str());
    return;
  }
  // One pass of Google Benchmark's loop counts every timed message: iterations = messages and
  // real_time = the row's one-way time per message.
  const double seconds = f.one_way_s * static_cast<double>(f.messages);
  while (state.KeepRunningBatch(f.messages)) state.SetIterationTime(seconds);
  const double moved = static_cast<double>(bytes) * f.directions * f.pairs;
  state.SetBytesProcessed(
      static_cast<std::int64_t>(moved * static_cast<double>(state.iterations())));
  for (const auto& [name, value] : figure_counters(bytes, f))
    state.counters[name] = benchmark::Counter(value);
  state.SetLabel(precision_label(f));
}

json::Value kept_row_json(const KeptFigure& k) {
  const std::string name = k.family + "/bytes:" + std::to_string(k.bytes) + "/manual_time";
  json::Value row = json::Value::object();
  row.set(fields::kName, name);
  row.set(fields::kRunName, name);
  row.set(fields::kRunType, "iteration");
  row.set("repetitions", k.repetitions);
  row.set(fields::kRepetitionIndex, k.repetition);
  row.set("threads", 1);
  const Figure& f = k.figure;
  if (!f.error.empty()) {
    row.set(fields::kErrorOccurred, true);
    row.set(fields::kErrorMessage, f.error);
    return row;
  }
  row.set(fields::kIterations, f.messages);
  const benchmark::TimeUnit unit = benchmark::GetDefaultTimeUnit();  // as register_row's rows
  row.set("real_time", f.one_way_s * benchmark::GetTimeUnitMultiplier(unit));
  row.set("cpu_time", 0.0);  // Google Benchmark's is the report's own, next to nothing
  row.set("time_unit", benchmark::GetTimeUnitString(unit));
  row.set("bytes_per_second", static_cast<double>(k.bytes) * f.directions * f.pairs / f.one_way_s);
  for (const auto& [counter, value] : figure_counters(k.bytes, f)) row.set(counter, value);
  row.set("label", precision_label(f));
  return row;
}

void register_row(const std::string& family, std::uint64_t bytes,
                  std::function<void(benchmark::State&)> report) {
  benchmark::RegisterBenchmark(family.c_str(), std::move(report))
      ->Arg(static_cast<std::int64_t>(bytes))
      ->ArgName("bytes")
      ->UseManualTime();  // in the default unit: us, or --benchmark_time_unit (main.cpp)
}

json::Value visit_json(const VisitRecord& r) {
  json::Value out = json::Value::object();
  out.set("round", r.round);
  if (r.repetition > 0) out.set("repetition", r.repetition);
  out.set("at_s", r.at_s);
  out.set("wall_s", r.wall_s);
  out.set("setup_s", r.visit.setup_s);
  out.set("warm_s", r.visit.warm_s);
  out.set("warm_messages", r.visit.warm_messages);
  out.set("check_s", r.visit.check_s);
  out.set("after", r.after.empty() ? json::Value() : json::Value(r.after));
  if (r.visit.failed()) {
    out.set("error", r.visit.error());
    return out;
  }
  if (!r.visit.measured()) return out;
  const Measurement& m = r.visit.measurement();
  const double ci = m.per_message.ci95_pct();
  out.set(fields::kLatencyUs, m.seconds / static_cast<double>(m.messages) * 1e6);
  out.set("messages", m.messages);
  out.set(fields::kSamples, m.per_message.count());
  out.set(fields::kCi95Pct, std::isfinite(ci) ? ci : 100.0);
  out.set(fields::kTimeLimited, m.time_limited);
  return out;
}

}  // namespace xfer
