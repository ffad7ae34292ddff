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
#include <string>
#include <vector>

#include "config.hpp"
#include "json.hpp"
#include "watchdog.hpp"
#include "world.hpp"

namespace xfer {

struct Harness {
  const Config& config;
  const World& world;
};

// One benchmark run of one row: Google Benchmark may call a family several times per size
// while it settles the iteration count; every call gets a fresh seed, identical on all ranks.
struct Row {
  std::string name;     // e.g. "mpi_host/bytes:1024"
  std::string path;     // e.g. "mpi_host"
  std::uint64_t bytes;  // message size
  std::uint64_t seed;   // pattern seed for this call
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

 private:
  Harness harness_;
  Watchdog& watchdog_;
  json::Value& context_;
  json::Value rank_info_ = json::Value::object();
  std::vector<Skip> skips_;
  std::size_t families_ = 0;
  std::uint64_t calls_ = 0;
};

// Runs `step` (setup, validation, ...) on this rank, then agrees with all ranks. If any rank
// failed, every rank marks the row failed with the first failing rank's message, and this
// returns false: the caller returns without touching MPI again.
bool all_ok(benchmark::State& state, const Harness& h, const Row& row, const char* what,
            const std::function<void()>& step);

// Accumulated, agreed time of a row.
struct Tally {
  double seconds = 0;  // sum of one-way (or per-copy) time, as fed to Google Benchmark
  std::int64_t messages = 0;
};

// Messages per clock reading for ping-pong paths: tiny messages are timed in batches so the
// clock and the per-batch agreement stay negligible; large ones one at a time.
std::int64_t batch_for(std::uint64_t bytes);

// The timed loop every path uses. `timed_batch` moves `batch` messages and returns the
// seconds they took on this rank, one-way (ping-pong: half the round trips' time). Only rank
// 0's figure is fed to Google Benchmark, on every rank, so all ranks choose the same
// iteration counts. Exceptions become an agreed failed row.
void timed_loop(benchmark::State& state, const Harness& h, const Row& row, std::int64_t batch,
                const std::function<double()>& timed_batch, Tally& tally);

// The ping-pong paths' timed loop: on ranks 0 and 1 (`active`), `batch` calls of `round_trip`
// timed with the host clock, then `complete` (e.g. wait for queued GPU work) inside the timed
// region; one-way time is half of that. Other ranks only take part in the agreement.
void timed_round_trips(benchmark::State& state, const Harness& h, const Row& row,
                       std::int64_t batch, bool active, const std::function<void()>& round_trip,
                       Tally& tally, const std::function<void()>& complete = nullptr);

// Sets the row's bytes_per_second and the GB/s, latency_us and batch counters.
// `directions` is 2 for bidirectional rows (bandwidth is the sum of both directions).
void report_row(benchmark::State& state, const Row& row, const Tally& tally, std::int64_t batch,
                int directions = 1);

// Test-only: true where --xfer_test_corrupt names this row's path (flip a byte before checks).
bool corrupt_here(const Harness& h, const Row& row);

}  // namespace xfer
