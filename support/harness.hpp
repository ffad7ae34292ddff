// The narrow interface between "what is measured" (bench/) and "how it is run" (support/).
//
// A path registers itself with a Registry: either a skip with a reason a user can read, or
// one benchmark family per variant, run over every message size. Its benchmark function gets
// the Harness (configuration, MPI world) and the Row (size, pattern seed, name), and builds
// its measurement from the helpers below: agree on setup, time batches, validate, report.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "json.hpp"
#include "stats.hpp"
#include "watchdog.hpp"
#include "world.hpp"

namespace xfer {

// What a row keeps between Google Benchmark's calls of it (--benchmark_repetitions): its
// buffers, filled and warmed up. Kept until the next row starts, so one row's memory is free
// before the next row allocates; released at the end of the run.
class RowCache {
 public:
  template <class T>
  T* find(const std::string& row) const {
    return row == row_ ? static_cast<T*>(held_.get()) : nullptr;
  }
  template <class T>
  T* keep(const std::string& row, std::unique_ptr<T> value) {
    release();
    T* kept = value.get();
    held_ = std::shared_ptr<T>(std::move(value));
    row_ = row;
    messages_ = 0;
    ++setups_;
    return kept;
  }
  void release() {
    held_.reset();
    row_.clear();
    messages_ = 0;
  }
  // Messages the row's first measured call timed: its later calls time exactly as many, so
  // Google Benchmark's repetitions are the same measurement repeated (and its statistics over
  // them, which need equal iteration counts, hold). 0 before the first.
  std::int64_t messages(const std::string& row) const { return row == row_ ? messages_ : 0; }
  void set_messages(const std::string& row, std::int64_t messages) {
    if (row == row_ && messages_ == 0) messages_ = messages;
  }
  std::uint64_t setups() const { return setups_; }  // rows set up so far in this run

 private:
  std::string row_;
  std::shared_ptr<void> held_;
  std::int64_t messages_ = 0;
  std::uint64_t setups_ = 0;
};

struct Harness {
  const Config& config;
  const World& world;
  RowCache& cache;
  Watchdog& watchdog;  // a rank that fails tells it (after_failure) before agreeing
};

// One call of one row. Its pattern seed is the row's, the same on every call and every rank.
struct Row {
  std::string name;     // e.g. "mpi_host/bytes:1024"
  std::string path;     // e.g. "mpi_host"
  std::uint64_t bytes;  // message size
  std::uint64_t seed;   // pattern seed of this row
};

using BenchFn = std::function<void(benchmark::State&, const Harness&, const Row&)>;

struct Skip {
  std::string path;
  std::string reason;
};

class Registry {
 public:
  Registry(const Config& config, const World& world, Watchdog& watchdog, json::Value& context);

  const Config& config() const { return harness_.config; }
  const World& world() const { return harness_.world; }
  // Paths add what they learn about the machine (GPUs, NCCL, MPI's CUDA support) here.
  json::Value& context() { return context_; }
  const json::Value& context() const { return context_; }
  // This rank's entry in context.ranks (host and local rank are there; GPU paths add "gpu").
  json::Value& rank_info() { return rank_info_; }

  // This path cannot run here; `reason` is what the user reads ("needs 2 ranks").
  void skip(const std::string& path, const std::string& reason);
  // Registers `family` (a path, optionally with "/key:value" variant parts) for every size.
  void add(const std::string& path, const std::string& family, BenchFn fn);

  const std::vector<Skip>& skips() const { return skips_; }
  std::size_t families() const { return families_; }
  // Frees what the last row kept (call before MPI and CUDA go away).
  void release_rows() { cache_.release(); }
  // Why the run stopped before its last row ("" if it did not): a rank's process could not go
  // on (error.hpp: note_fatal), agreed after the row in which it happened. The next row then
  // throws FatalError on every rank instead of running.
  const std::string& stop_reason() const { return stop_reason_; }

 private:
  RowCache cache_;
  Harness harness_;
  Watchdog& watchdog_;
  json::Value& context_;
  json::Value rank_info_ = json::Value::object();
  std::vector<Skip> skips_;
  std::size_t families_ = 0;
  std::uint64_t rows_ = 0;
  std::string stop_reason_;
};

// Runs `step` (setup, validation, ...) on this rank, then agrees with all ranks. If any rank
// failed, every rank marks the row failed with the first failing rank's message, and this
// returns false: the caller returns without touching MPI again.
bool all_ok(benchmark::State& state, const Harness& h, const Row& row, const char* what,
            const std::function<void()>& step);

// The row's resources. On its first call `make` allocates and fills on every rank (ranks that
// take no part may return an empty object, never nullptr), then, once every rank has them,
// `warm_up` runs on every rank; later calls of the row (repetitions) get the same object.
// nullptr, with the row failed on every rank, if any rank's step threw.
template <class T>
T* setup_once(benchmark::State& state, const Harness& h, const Row& row,
              const std::function<std::unique_ptr<T>()>& make,
              const std::function<void(T&)>& warm_up) {
  if (T* kept = h.cache.find<T>(row.name)) return kept;
  h.cache.release();
  std::unique_ptr<T> made;
  if (!all_ok(state, h, row, "setup", [&] { made = make(); })) return nullptr;
  if (!all_ok(state, h, row, "warm-up", [&] { warm_up(*made); })) return nullptr;
  return h.cache.keep(row.name, std::move(made));
}

// Messages per clock reading for ping-pong paths: tiny messages are timed in batches so the
// clock and the per-batch agreement stay negligible; large ones one at a time.
std::int64_t batch_for(std::uint64_t bytes);

// Warm-up messages before a row's first timed loop: --xfer_warmup, but no more than 64 MiB
// worth (at least one), so a 1 GiB row warms up with one message instead of five.
int warmup_for(const Config& config, std::uint64_t bytes);

// What a row's timed loop measured, identical on every rank (all hold rank 0's figures).
struct Measurement {
  SampleSet per_message;  // seconds per message, one sample per batch (the slowest pair's)
  double seconds = 0;     // timed one-way time of all messages (the slowest pair's)
  double fastest = 0;     // the same for the fastest pair (equal with one pair)
  std::int64_t messages = 0;
  bool time_limited = false;  // stopped short of --xfer_precision: its time (or, in a later
                              // repetition, its fixed message count) ran out
};

// The timed loop every path uses. `timed_batch` moves `batch` messages and returns the seconds
// they took on this rank, one-way (ping-pong: half the round trips' time); only the figures of
// ranks that `time` count (a pair's leader; rank 0 for one-process paths). After every batch
// the ranks agree in one collective on the slowest and fastest figure and on rank 0's elapsed
// time, and each rank takes the same decision to go on or stop (stats.hpp: should_stop; a
// repetition of a row stops at the message count of its first call), so every rank runs the
// same batches. False, with the row failed on every rank, if any rank's batch threw.
bool measure(benchmark::State& state, const Harness& h, const Row& row, std::int64_t batch,
             bool time, const std::function<double()>& timed_batch, Measurement& m);

// Times `batch` calls of `step` on this rank with the host clock, then `complete` (e.g. wait for
// queued GPU work) inside the timed region; returns seconds / `per_message_divisor` (2 for a
// round trip: the one-way time).
double host_timed(std::int64_t batch, const std::function<void()>& step,
                  const std::function<void()>& complete = nullptr, double divisor = 1);

// Hands the measurement to Google Benchmark (iterations = messages, time = one-way per message)
// and sets bytes_per_second and the counters: GB/s, latency_us (the mean), batch, samples,
// median/min/max/p90/p99 in us, ci95_pct and time_limited; the label shows the precision.
// `directions` is 2 for bidirectional rows (bandwidth is the sum of both directions). With
// several `pairs`, GB/s is their aggregate and pair_gbps_min / pair_gbps_max the slowest and
// fastest pair.
void report_row(benchmark::State& state, const Row& row, const Measurement& m, std::int64_t batch,
                int directions = 1, int pairs = 1);

// Test-only: true where --xfer_test_corrupt names this row's path (flip a byte before checks).
bool corrupt_here(const Harness& h, const Row& row);

}  // namespace xfer
