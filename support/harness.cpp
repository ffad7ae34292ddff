#include "harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

#include "error.hpp"
#include "failpoint.hpp"
#include "pattern.hpp"

namespace xfer {

Registry::Registry(const Config& config, const World& world, Watchdog& watchdog,
                   json::Value& context)
    : harness_{config, world, cache_, watchdog}, watchdog_(watchdog), context_(context) {}

void Registry::skip(const std::string& path, const std::string& reason) {
  skips_.push_back({path, reason});
}

void Registry::add(const std::string& path, const std::string& family, BenchFn fn) {
  ++families_;
  for (const std::uint64_t bytes : harness_.config.sizes) {
    const std::string name = family + "/bytes:" + std::to_string(bytes);
    const std::uint64_t seed = pattern_seed(bytes, ++rows_);
    auto run = [this, fn, path, name, bytes, seed](benchmark::State& state) {
      const Row row{name, path, bytes, seed};
      if (!stop_reason_.empty()) throw FatalError(stop_reason_);  // on every rank alike
      watchdog_.arm(name);
      set_current_row_bytes(bytes);
      const std::uint64_t setups = cache_.setups();
      try {
        fn(state, harness_, row);
      } catch (const std::exception& e) {  // a path bug, not a measurement: still a failed row
        state.SkipWithError((name + ": " + rank_prefix() + e.what()).c_str());
      }
      set_current_row_bytes(0);
      // Can every rank go on? (A GPU fault leaves a process unable to use its GPU again.)
      stop_reason_ = harness_.world.first_message(fatal_note());
      watchdog_.disarm();
      if (!harness_.config.test_rank_dump.empty()) {
        std::ofstream dump(harness_.config.test_rank_dump + "/rank" +
                               std::to_string(harness_.world.rank()) + ".txt",
                           std::ios::app);
        dump << name << " " << state.iterations() << "\n";
        if (cache_.setups() != setups) dump << "setup " << name << "\n";
      }
    };
    benchmark::RegisterBenchmark(family.c_str(), run)
        ->Arg(static_cast<std::int64_t>(bytes))
        ->ArgName("bytes")
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

namespace {
std::string labelled(const Row& row, const std::string& message) {
  return row.name + ": " + message;
}

// This rank's failure in a row, before the ranks agree on it: its message, and whether it only
// repeats another rank's (World::first_message tells those last). The watchdog hears of it
// first, in case a peer waits for this rank and never reaches the agreement.
struct Failure {
  std::string message;  // "" when this rank did not fail
  bool secondhand = false;

  Failure() = default;
  Failure(const Harness& h, const std::exception& e, const std::string& what)
      : message(rank_prefix() + what + e.what()),
        secondhand(dynamic_cast<const PeerFailure*>(&e) != nullptr) {
    h.watchdog.after_failure(message);
  }
  std::string first(const Harness& h) const { return h.world.first_message(message, secondhand); }
};
}  // namespace

bool all_ok(benchmark::State& state, const Harness& h, const Row& row, const char* what,
            const std::function<void()>& step) {
  Failure failure;
  try {
    step();
  } catch (const std::exception& e) {
    failure = Failure(h, e, std::string(what) + ": ");
  }
  const std::string first = failure.first(h);
  if (first.empty()) return true;
  state.SkipWithError(labelled(row, first).c_str());
  return false;
}

std::int64_t batch_for(std::uint64_t bytes) {
  constexpr std::uint64_t kBatchBytes = 1 << 20;
  return static_cast<std::int64_t>(std::clamp<std::uint64_t>(kBatchBytes / bytes, 1, 100));
}

int warmup_for(const Config& config, std::uint64_t bytes) {
  constexpr std::uint64_t kWarmupBytes = std::uint64_t{64} << 20;
  if (config.warmup == 0) return 0;
  const std::uint64_t worth =
      std::max<std::uint64_t>(1, kWarmupBytes / std::max<std::uint64_t>(bytes, 1));
  return static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(config.warmup), worth));
}

namespace {

// --xfer_test_noise: a known spread on the timing ranks' clocks, from a fixed seed.
double noisy(double seconds, double percent, std::uint64_t& draw) {
  if (percent <= 0) return seconds;
  draw = mix64(draw);
  const double unit = static_cast<double>(draw >> 11) / 9007199254740992.0;  // [0, 1)
  return seconds * (1 + percent / 100 * (2 * unit - 1));
}

}  // namespace

bool measure(benchmark::State& state, const Harness& h, const Row& row, std::int64_t batch,
             bool time, const std::function<double()>& timed_batch, Measurement& m) {
  const bool slow = h.config.test_slow_rank == h.world.rank();
  if (h.config.test_hang_rank == h.world.rank()) {  // a peer that died without a word
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  std::uint64_t draw = row.seed;
  const std::int64_t fixed = h.cache.messages(row.name);
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    double seconds = 0;
    Failure failure;
    try {
      seconds = noisy(timed_batch(), time ? h.config.test_noise_pct : 0, draw);
      if (slow) {  // this rank's own clock runs long; the decisions must not depend on it
        const auto begin = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      }
    } catch (const std::exception& e) {
      failure = Failure(h, e, "");
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const World::Verdict verdict =
        h.world.agree_batch(seconds, time, !failure.message.empty(), elapsed);
    if (verdict.failed) {
      state.SkipWithError(labelled(row, failure.first(h)).c_str());
      return false;
    }
    // From here on every rank holds the same figures and so takes the same decision.
    m.per_message.add(verdict.slowest / static_cast<double>(batch));
    m.seconds += verdict.slowest;
    m.fastest += verdict.fastest;
    m.messages += batch;
    Stop stop = Stop::No;
    if (fixed == 0) {
      stop = should_stop(m.per_message, h.config.precision, verdict.elapsed, m.seconds, m.messages);
    } else if (m.messages >= fixed) {
      stop = m.per_message.ci95_pct() <= h.config.precision.target_pct ? Stop::Precise
                                                                       : Stop::TimeLimit;
    }
    if (stop != Stop::No) {
      m.time_limited = stop == Stop::TimeLimit;
      h.cache.set_messages(row.name, m.messages);
      return true;
    }
  }
}

double host_timed(std::int64_t batch, const std::function<void()>& step,
                  const std::function<void()>& complete, double divisor) {
  const double start = MPI_Wtime();
  for (std::int64_t i = 0; i < batch; ++i) step();
  if (complete) complete();
  return (MPI_Wtime() - start) / divisor;
}

namespace {

std::string precision_label(double ci95_pct, bool time_limited) {
  char text[64];
  std::snprintf(text, sizeof text, ci95_pct < 1 ? "\u00b1%.2f%%" : "\u00b1%.1f%%", ci95_pct);
  return std::string(text) + (time_limited ? " time-limited" : "");
}

}  // namespace

void report_row(benchmark::State& state, const Row& row, const Measurement& m, std::int64_t batch,
                int directions, int pairs) {
  if (m.messages == 0 || m.seconds <= 0) return;
  // One pass of Google Benchmark's loop counts every timed message: iterations = messages and
  // real_time = the mean one-way time per message.
  while (state.KeepRunningBatch(m.messages)) state.SetIterationTime(m.seconds);
  const double moved = static_cast<double>(row.bytes) * directions * pairs;
  state.SetBytesProcessed(
      static_cast<std::int64_t>(moved * static_cast<double>(state.iterations())));
  const SampleSet& s = m.per_message;
  const double one_way = m.seconds / static_cast<double>(m.messages);
  // Infinite only below 2 samples, which no stop allows; JSON has no infinity.
  const double ci95 = std::isfinite(s.ci95_pct()) ? s.ci95_pct() : 100.0;
  const auto us = [](double seconds) { return benchmark::Counter(seconds * 1e6); };
  state.counters["GB/s"] = benchmark::Counter(moved / one_way / 1e9);
  state.counters["latency_us"] = us(one_way);
  state.counters["batch"] = benchmark::Counter(static_cast<double>(batch));
  state.counters["samples"] = benchmark::Counter(static_cast<double>(s.count()));
  const std::vector<double> q = s.quantiles({0.5, 0.9, 0.99});
  state.counters["median_us"] = us(q[0]);
  state.counters["min_us"] = us(s.min());
  state.counters["max_us"] = us(s.max());
  state.counters["p90_us"] = us(q[1]);
  state.counters["p99_us"] = us(q[2]);
  state.counters["ci95_pct"] = benchmark::Counter(ci95);
  state.counters["time_limited"] = benchmark::Counter(m.time_limited ? 1 : 0);
  if (pairs > 1) {
    const double pair_bytes = static_cast<double>(row.bytes) * directions;
    state.counters["pairs"] = benchmark::Counter(pairs);
    state.counters["pair_gbps_min"] = benchmark::Counter(pair_bytes / one_way / 1e9);
    state.counters["pair_gbps_max"] =
        benchmark::Counter(pair_bytes / (m.fastest / static_cast<double>(m.messages)) / 1e9);
  }
  state.SetLabel(precision_label(ci95, m.time_limited));
}

bool corrupt_here(const Harness& h, const Row& row) { return h.config.test_corrupt == row.path; }

}  // namespace xfer
