#include "visits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "links.hpp"

namespace xfer {

double between_ci95_pct(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  SampleSet set;
  for (const double v : values) set.add(v);
  return set.ci95_pct();
}

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

std::string precision_label(double ci95_pct, bool time_limited) {
  char text[64];
  std::snprintf(text, sizeof text, ci95_pct < 1 ? "\u00b1%.2f%%" : "\u00b1%.1f%%", ci95_pct);
  return std::string(text) + (time_limited ? " time-limited" : "");
}

}  // namespace

double stated_ci95_pct(const std::vector<double>& means, double within_pct, double floor_pct) {
  const double replicas = std::max(between_ci95_pct(means), within_pct);
  const double stated = std::sqrt(replicas * replicas + floor_pct * floor_pct);
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
  f.ci95_pct = stated_ci95_pct(means, within_ci95_pct(visits, f.one_way_s), floor_pct);
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
  const auto us = [](double s) { return benchmark::Counter(s * 1e6); };
  state.counters["GB/s"] = benchmark::Counter(moved / f.one_way_s / 1e9);
  state.counters["latency_us"] = us(f.one_way_s);
  state.counters["batch"] = benchmark::Counter(static_cast<double>(f.batch));
  state.counters["samples"] = benchmark::Counter(static_cast<double>(f.samples));
  state.counters["median_us"] = us(f.median_s);
  state.counters["min_us"] = us(f.min_s);
  state.counters["max_us"] = us(f.max_s);
  state.counters["p90_us"] = us(f.p90_s);
  state.counters["p99_us"] = us(f.p99_s);
  state.counters["ci95_pct"] = benchmark::Counter(f.ci95_pct);
  state.counters["floor_pct"] = benchmark::Counter(f.floor_pct);
  state.counters["visits"] = benchmark::Counter(f.visits);
  state.counters["jobs"] = benchmark::Counter(f.jobs);
  if (f.jobs > 1) {
    state.counters["ci95_rows"] = benchmark::Counter(f.ci95_rows);
    state.counters["ci95_df"] = benchmark::Counter(f.ci95_df);
    state.counters["between_sd_pct"] = benchmark::Counter(f.between_sd_pct);
  }
  state.counters["time_limited"] = benchmark::Counter(f.time_limited ? 1 : 0);
  if (f.pairs > 1) {
    const double pair_bytes = static_cast<double>(bytes) * f.directions;
    state.counters["pairs"] = benchmark::Counter(f.pairs);
    state.counters["pair_gbps_min"] = benchmark::Counter(pair_bytes / f.one_way_s / 1e9);
    state.counters["pair_gbps_max"] = benchmark::Counter(pair_bytes / f.fastest_s / 1e9);
  }
  if (f.link_gbps > 0) {
    state.counters["link_gbps"] = benchmark::Counter(f.link_gbps);
    state.counters["pct_of_link"] = benchmark::Counter(moved_gbps / f.link_gbps * 100);
  }
  state.SetLabel(precision_label(f.ci95_pct, f.time_limited));
}

void register_row(const std::string& family, std::uint64_t bytes,
                  std::function<void(benchmark::State&)> report) {
  benchmark::RegisterBenchmark(family.c_str(), std::move(report))
      ->Arg(static_cast<std::int64_t>(bytes))
      ->ArgName("bytes")
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
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
  out.set("latency_us", m.seconds / static_cast<double>(m.messages) * 1e6);
  out.set("messages", m.messages);
  out.set("samples", m.per_message.count());
  out.set("ci95_pct", std::isfinite(ci) ? ci : 100.0);
  out.set("time_limited", m.time_limited);
  return out;
}

}  // namespace xfer
