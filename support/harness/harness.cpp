#include "harness/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>
#include <thread>

#include "base/error.hpp"
#include "base/pattern.hpp"

namespace xfer {

void Visit::record(Measurement m, std::int64_t batch, int directions, int pairs) {
  m_ = std::move(m);
  batch_ = batch;
  directions_ = directions;
  pairs_ = pairs;
  measured_ = true;
}

Registry::Registry(const Config& config, const World& world, const RankPairs& pairs,
                   json::Value& context)
    : config_(config), world_(world), pairs_(pairs), context_(context) {}

void Registry::skip(const std::string& path, const std::string& reason) {
  skips_.push_back({path, reason});
}

bool FamilySizes::in_default(std::uint64_t bytes) const {
  return all_by_default ||
         std::find(by_default.begin(), by_default.end(), bytes) != by_default.end();
}

void Registry::add(const std::string& path, const std::string& family, BenchFn fn,
                   BigWarmUp big_warm_up, links::Crossing crossing, const FamilySizes& sizes) {
  ++families_;
  for (const std::uint64_t bytes : sizes.own.empty() ? config_.sizes : sizes.own) {
    const std::uint64_t seed = pattern_seed(bytes, rows_.size() + 1);
    rows_.push_back({family + "/bytes:" + std::to_string(bytes), family, path, bytes, seed, fn,
                     big_warm_up, crossing, sizes.in_default(bytes)});
  }
}

namespace {
std::string labelled(const Row& row, const std::string& message) {
  return row.name + ": " + message;
}

// This rank's failure in a visit, before the ranks agree on it: its message, and whether it
// only repeats another rank's (World::first_message tells those last). The watchdog hears of it
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

bool all_ok(Visit& visit, const Harness& h, const Row& row, const char* what,
            const std::function<void()>& step) {
  Failure failure;
  try {
    step();
  } catch (const std::exception& e) {
    failure = Failure(h, e, std::string(what) + ": ");
  }
  const std::string first = failure.first(h);
  if (first.empty()) return true;
  visit.fail(labelled(row, first));
  return false;
}

bool check_ok(Visit& visit, const Harness& h, const Row& row, const char* what,
              const std::function<void()>& step) {
  const double start = MPI_Wtime();
  const bool ok = all_ok(visit, h, row, what, step);
  visit.check_s += MPI_Wtime() - start;
  return ok;
}

int warmup_for(const Config& config, const Row& row) {
  const std::uint64_t bytes = row.bytes;
  if (config.warmup == 0 || (bytes > kLargeRowBytes && !row.warm_large)) return 0;
  const std::uint64_t worth =
      std::max<std::uint64_t>(1, kLargeRowBytes / std::max<std::uint64_t>(bytes, 1));
  return static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(config.warmup), worth));
}

namespace {

// --xfer_test_noise: a known spread on the timing ranks' clocks, from a fixed seed.
double noisy(double seconds, double percent, std::uint64_t& draw) {
  if (percent <= 0) return seconds;
  draw = mix64(draw);
  return seconds * random_factor(percent, draw);
}

}  // namespace

bool measure(Visit& visit, const Harness& h, const Row& row, std::int64_t batch, bool time,
             const std::function<double()>& timed_batch, Measurement& m) {
  const bool slow = h.config.test_slow_rank == h.world.rank();
  if (h.config.test_hang_rank == h.world.rank()) {  // a peer that died without a word
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  std::uint64_t draw = row.seed;
  const auto start = std::chrono::steady_clock::now();
  double own_seconds = 0;  // this rank's own timed total (Row::per_pair)
  while (true) {
    double seconds = 0;
    Failure failure;
    try {
      seconds = noisy(timed_batch(), time ? h.config.test_noise_pct : 0, draw) *
                (time ? row.test_scale : 1);
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
      visit.fail(labelled(row, failure.first(h)));
      return false;
    }
    if (time) own_seconds += seconds;
    // From here on every rank holds the same figures and so takes the same decision.
    m.per_message.add(verdict.slowest / static_cast<double>(batch));
    m.seconds += verdict.slowest;
    m.fastest += verdict.fastest;
    m.messages += batch;
    Stop stop = Stop::No;
    if (row.messages == 0) {
      stop = should_stop(m.per_message, row.precision, verdict.elapsed, m.seconds, m.messages);
    } else if (m.messages >= row.messages && m.seconds >= row.precision.min_time_s) {
      // A later visit times as many messages as the first, and, where that was quicker, on
      // until it has timed its share of --benchmark_min_time too: every visit times its share,
      // so the row's visits together time at least the minimum the user asked for.
      stop = m.per_message.ci95_pct() <= row.precision.target_pct ? Stop::Precise : Stop::TimeLimit;
    }
    if (stop != Stop::No) {
      m.time_limited = stop == Stop::TimeLimit;
      if (row.per_pair) {  // every rank stops here, after the same batch: one more collective
        const std::vector<double> all = h.world.all_gather(own_seconds);
        for (const auto& pair : h.pairs)
          m.pair_seconds.push_back(all[static_cast<std::size_t>(pair.first)]);
      }
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

void report_row(Visit& visit, const Row&, Measurement m, std::int64_t batch, int directions,
                int pairs) {
  if (m.messages == 0 || m.seconds <= 0) return;
  visit.record(std::move(m), batch, directions, pairs);
}

bool corrupt_here(const Harness& h, const Row& row) {
  return h.config.test_corrupt == row.path &&
         (h.config.test_corrupt_round < 0 || h.config.test_corrupt_round == row.round);
}

double random_factor(double percent, std::uint64_t draw) {
  const double unit = static_cast<double>(draw >> 11) / 9007199254740992.0;  // [0, 1)
  return 1 + percent / 100 * (2 * unit - 1);
}

}  // namespace xfer
