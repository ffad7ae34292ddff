#include "harness.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "error.hpp"
#include "pattern.hpp"

namespace xfer {

Registry::Registry(const Config& config, const World& world, Watchdog& watchdog,
                   json::Value& context)
    : harness_{config, world}, watchdog_(watchdog), context_(context) {}

void Registry::skip(const std::string& path, const std::string& reason) {
  skips_.push_back({path, reason});
}

void Registry::add(const std::string& path, const std::string& family, BenchFn fn) {
  ++families_;
  for (const std::uint64_t bytes : harness_.config.sizes) {
    const std::string name = family + "/bytes:" + std::to_string(bytes);
    auto run = [this, fn, path, name, bytes](benchmark::State& state) {
      const Row row{name, path, bytes, pattern_seed(bytes, ++calls_)};
      watchdog_.arm(name);
      try {
        fn(state, harness_, row);
      } catch (const std::exception& e) {  // a path bug, not a measurement: still a failed row
        state.SkipWithError((name + ": " + rank_prefix() + e.what()).c_str());
      }
      watchdog_.disarm();
      if (!harness_.config.test_rank_dump.empty()) {
        std::ofstream dump(harness_.config.test_rank_dump + "/rank" +
                               std::to_string(harness_.world.rank()) + ".txt",
                           std::ios::app);
        dump << name << " " << state.iterations() << "\n";
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
}  // namespace

bool all_ok(benchmark::State& state, const Harness& h, const Row& row, const char* what,
            const std::function<void()>& step) {
  std::string error;
  try {
    step();
  } catch (const std::exception& e) {
    error = rank_prefix() + what + ": " + e.what();
  }
  const std::string first = h.world.first_message(error);
  if (first.empty()) return true;
  state.SkipWithError(labelled(row, first).c_str());
  return false;
}

std::int64_t batch_for(std::uint64_t bytes) {
  constexpr std::uint64_t kBatchBytes = 1 << 20;
  return static_cast<std::int64_t>(std::clamp<std::uint64_t>(kBatchBytes / bytes, 1, 100));
}

void timed_loop(benchmark::State& state, const Harness& h, const Row& row, std::int64_t batch,
                const std::function<double()>& timed_batch, Tally& tally) {
  const bool slow = h.config.test_slow_rank == h.world.rank();
  if (h.config.test_hang_rank == h.world.rank()) {  // a peer that died without a word
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  while (state.KeepRunningBatch(batch)) {
    double seconds = 0;
    std::string error;
    try {
      seconds = timed_batch();
      if (slow) {  // this rank's own clock runs long; rank 0's figure must still rule
        const auto start = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    } catch (const std::exception& e) {
      error = rank_prefix() + e.what();
    }
    const auto verdict = h.world.agree_iteration(seconds, !error.empty());
    if (verdict.failed) {
      state.SkipWithError(labelled(row, h.world.first_message(error)).c_str());
      continue;  // KeepRunningBatch now returns false
    }
    state.SetIterationTime(verdict.seconds);
    tally.seconds += verdict.seconds;
    tally.messages += batch;
  }
}

void timed_round_trips(benchmark::State& state, const Harness& h, const Row& row,
                       std::int64_t batch, bool active, const std::function<void()>& round_trip,
                       Tally& tally, const std::function<void()>& complete) {
  timed_loop(
      state, h, row, batch,
      [&] {
        if (!active) return 0.0;
        const double start = MPI_Wtime();
        for (std::int64_t i = 0; i < batch; ++i) round_trip();
        if (complete) complete();
        return (MPI_Wtime() - start) / 2;  // one-way: half the round trips' time
      },
      tally);
}

void report_row(benchmark::State& state, const Row& row, const Tally& tally, std::int64_t batch,
                int directions) {
  if (tally.messages == 0 || tally.seconds <= 0) return;
  const double moved = static_cast<double>(row.bytes) * directions;
  state.SetBytesProcessed(
      static_cast<std::int64_t>(moved * static_cast<double>(state.iterations())));
  const double one_way = tally.seconds / static_cast<double>(tally.messages);
  state.counters["GB/s"] = benchmark::Counter(moved / one_way / 1e9);
  state.counters["latency_us"] = benchmark::Counter(one_way * 1e6);
  state.counters["batch"] = benchmark::Counter(static_cast<double>(batch));
}

bool corrupt_here(const Harness& h, const Row& row) { return h.config.test_corrupt == row.path; }

}  // namespace xfer
