// The narrow interface between "what is measured" (bench/) and "how it is run" (support/).
//
// A path registers itself with a Registry: either a skip with a reason a user can read, or
// one benchmark family per variant, run over every message size. A row is measured in several
// visits (support/run/runner.hpp says when); each visit calls the path's function with the Harness
// (configuration, MPI world), the Row (size, pattern seed, name, how much to measure) and the
// Visit it reports into. The function builds its measurement from the helpers below: set up
// afresh, time batches, validate, report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "base/stats.hpp"
#include "base/watchdog.hpp"
#include "config/config.hpp"
#include "links/links.hpp"
#include "mpi/world.hpp"

namespace xfer {

struct Harness {
  const Config& config;
  const World& world;
  Watchdog& watchdog;      // a rank that fails tells it (after_failure) before agreeing
  const RankPairs& pairs;  // --xfer_pairs resolved against the world size
};

// Rows above this warm up with one message, and only where their path's BigWarmUp says
// (Runner::row_for sets Row::warm_large).
constexpr std::uint64_t kLargeRowBytes = std::uint64_t{64} << 20;

// When a path's rows above kLargeRowBytes warm up (a path says so in Registry::add). Warming up
// a big row costs a message of up to a GiB, so it is done only where a first message was seen
// to be slower than the rest (docs/results/2026-11-24-pinned-and-warm,
// docs/results/2026-11-25-robust-visits).
enum class BigWarmUp {
  EveryVisit,      // device buffers: a new one's first message maps it (CUDA IPC), and is cheap
  FirstInProcess,  // the first big row of the family in each process (mpi_host: its first big
                   // message took 1.06-1.77x the rest even after the family's small rows)
  NewFamily,       // only where the family has not run in this process yet
};

// One visit of one row. Its pattern seed is the visit's, the same on every rank.
struct Row {
  std::string name;           // e.g. "mpi_host/mode:pingpong/bytes:1024"
  std::string path;           // e.g. "mpi_host"
  std::uint64_t bytes;        // message size
  std::uint64_t seed;         // pattern seed of this visit
  Precision precision;        // this visit's share of the row's --xfer_max_time and minimums
  std::int64_t messages = 0;  // messages to time: the row's first visit decides (0: this is it)
  double test_scale = 1;      // test only: the timing ranks' clocks run this many times long
  bool warm_large = true;     // a row above kLargeRowBytes warms up (warmup_for)
  int round = 0;              // the visit's round in the run's schedule (runner.hpp)
  bool per_pair = false;      // keep each pair's own time too (Measurement::pair_seconds)
};

// What a row's timed loop measured, identical on every rank (all hold rank 0's figures).
struct Measurement {
  SampleSet per_message;  // seconds per message, one sample per batch (the slowest pair's)
  double seconds = 0;     // timed one-way time of all messages (the slowest pair's)
  double fastest = 0;     // the same for the fastest pair (equal with one pair)
  std::int64_t messages = 0;
  bool time_limited = false;  // stopped short of --xfer_precision: its time (or, in a later
                              // visit, its fixed message count) ran out
  // With Row::per_pair: each pair's own timed one-way time of all messages (its leader's
  // clock), in the order of Harness::pairs; gathered once, after the last batch.
  std::vector<double> pair_seconds;
};

// What one visit found: a measurement, or the message of the row's failure (agreed, the same
// on every rank). Paths report here; the runner combines a row's visits into its figure.
class Visit {
 public:
  void fail(const std::string& message) { error_ = message; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  // Called by report_row: the measurement and how to read it.
  void record(Measurement m, std::int64_t batch, int directions, int pairs);
  bool measured() const { return measured_; }
  const Measurement& measurement() const { return m_; }
  std::int64_t batch() const { return batch_; }
  int directions() const { return directions_; }
  int pairs() const { return pairs_; }

  double setup_s = 0;     // allocation, fill and warm-up (set_up)
  double warm_s = 0;      // the warm-up alone (part of setup_s)
  int warm_messages = 0;  // warm-up messages (or copies) of the visit: warmup_for
  double check_s = 0;     // poisoning what is received and validating it

 private:
  std::string error_;
  Measurement m_;
  bool measured_ = false;
  std::int64_t batch_ = 1;
  int directions_ = 1;
  int pairs_ = 1;
};

using BenchFn = std::function<void(Visit&, const Harness&, const Row&)>;

struct Skip {
  std::string path;
  std::string reason;
};

// Which sizes a family has, and which of its rows a run without --benchmark_filter holds
// (selection.hpp). By default: every size of --xfer_sizes, all in the default selection.
struct FamilySizes {
  std::vector<std::uint64_t> own;  // the family's own sizes, whatever --xfer_sizes says (e.g. a
                                   // pointer chase: one 8-byte load a message); empty: the run's
  bool all_by_default = true;      // every row in the default selection; else only...
  std::vector<std::uint64_t> by_default;  // ...the rows of these sizes (others: a filter away)
  bool in_default(std::uint64_t bytes) const;
};

// A row as registered: one family at one size.
struct RowSpec {
  std::string name;    // family + "/bytes:N"
  std::string family;  // path plus variant parts
  std::string path;
  std::uint64_t bytes;
  std::uint64_t seed;  // the row's; each visit's is derived from it
  BenchFn fn;
  BigWarmUp big_warm_up = BigWarmUp::NewFamily;
  links::Crossing crossing;  // what the family's bytes cross, as its path declared
  bool by_default = true;    // in the selection of a run without --benchmark_filter
};

class Registry {
 public:
  Registry(const Config& config, const World& world, const RankPairs& pairs, json::Value& context);

  const Config& config() const { return config_; }
  const RankPairs& pairs() const { return pairs_; }
  const World& world() const { return world_; }
  // Paths add what they learn about the machine (GPUs, NCCL, MPI's CUDA support) here.
  json::Value& context() { return context_; }
  const json::Value& context() const { return context_; }
  // This rank's entry in context.ranks (host and local rank are there; GPU paths add "gpu").
  json::Value& rank_info() { return rank_info_; }

  // This path cannot run here; `reason` is what the user reads ("needs 2 ranks").
  void skip(const std::string& path, const std::string& reason);
  // Adds `family` (a path, optionally with "/key:value" variant parts) at every size (or at
  // `sizes.own`), with what its bytes cross (links.hpp: Crossing). Which of these rows run is
  // for the selection (support/harness/selection.hpp) to say.
  void add(const std::string& path, const std::string& family, BenchFn fn,
           BigWarmUp big_warm_up = BigWarmUp::NewFamily, links::Crossing crossing = {},
           const FamilySizes& sizes = {});

  // The links rows cross (links.hpp): the GPU paths set answers and routes on rank 0; the
  // runner reads the links while rows run and reports each row's share of its route.
  links::Book& links() const { return *links_; }

  const std::vector<Skip>& skips() const { return skips_; }
  const std::vector<RowSpec>& rows() const { return rows_; }
  std::size_t families() const { return families_; }

 private:
  const Config& config_;
  const World& world_;
  const RankPairs& pairs_;
  json::Value& context_;
  json::Value rank_info_ = json::Value::object();
  std::vector<Skip> skips_;
  std::vector<RowSpec> rows_;
  std::size_t families_ = 0;
  std::shared_ptr<links::Book> links_ = std::make_shared<links::Book>();
};

// A transfer path (bench/): its name and how it registers its rows (or a skip) in a registry.
struct Path {
  const char* name;
  void (*add)(Registry&);
};

// Runs `step` (setup, validation, ...) on this rank, then agrees with all ranks. If any rank
// failed, every rank marks the visit failed with the first failing rank's message, and this
// returns false: the caller returns without touching MPI again.
bool all_ok(Visit& visit, const Harness& h, const Row& row, const char* what,
            const std::function<void()>& step);
// all_ok for poisoning what will be received and validating it: adds its time to the visit's
// check_s.
bool check_ok(Visit& visit, const Harness& h, const Row& row, const char* what,
              const std::function<void()>& step);

// The visit's resources, made afresh: `make` allocates and fills on every rank (ranks that take
// no part may return an empty object, never nullptr), then, once every rank has them,
// `warm_up(made, messages)` runs on every rank with warmup_for's count (Visit::warm_messages).
// They live as long as the pointer the caller holds: one visit. nullptr, with the visit failed
// on every rank, if any rank's step threw.
template <class T>
std::unique_ptr<T> set_up(Visit& visit, const Harness& h, const Row& row,
                          const std::function<std::unique_ptr<T>()>& make,
                          const std::function<void(T&, int messages)>& warm_up);

// Warm-up messages before a visit's timed loop: --xfer_warmup, but no more than 64 MiB worth
// (at least one), so a 1 GiB row warms up with one message instead of five; and a row above
// kLargeRowBytes warms up only where Row::warm_large says so (its path's BigWarmUp: its buffers
// are touched by the fill and the poison already, and one message of that size costs as much as
// the timed one).
int warmup_for(const Config& config, const Row& row);

// The timed loop every path uses. `timed_batch` moves `batch` messages and returns the seconds
// they took on this rank, one-way (ping-pong: half the round trips' time); only the figures of
// ranks that `time` count (a pair's leader; rank 0 for one-process paths). After every batch
// the ranks agree in one collective on the slowest and fastest figure and on rank 0's elapsed
// time, and each rank takes the same decision to go on or stop (stats.hpp: should_stop, with
// the row's precision; a later visit stops at the message count of the row's first, or later
// where it has not timed its share of --benchmark_min_time by then), so every
// rank runs the same batches. False, with the visit failed on every rank, if any rank's batch
// threw.
bool measure(Visit& visit, const Harness& h, const Row& row, std::int64_t batch, bool time,
             const std::function<double()>& timed_batch, Measurement& m);

// Times `batch` calls of `step` on this rank with the host clock, then `complete` (e.g. wait for
// queued GPU work) inside the timed region; returns seconds / `per_message_divisor` (2 for a
// round trip: the one-way time).
double host_timed(std::int64_t batch, const std::function<void()>& step,
                  const std::function<void()>& complete = nullptr, double divisor = 1);

// The visit's result: `directions` is 2 for bidirectional rows (bandwidth is the sum of both
// directions); with several `pairs`, GB/s is their aggregate. How a row's visits become its
// figure and counters: support/harness/visits.hpp.
void report_row(Visit& visit, const Row& row, Measurement m, std::int64_t batch, int directions = 1,
                int pairs = 1);

// Test-only: true where --xfer_test_corrupt names this row's path, and this visit's round if it
// names one (flip a byte before checks).
bool corrupt_here(const Harness& h, const Row& row);

// Test-only: a factor uniform in 1 +- percent/100, from a 64-bit random `draw`.
double random_factor(double percent, std::uint64_t draw);

template <class T>
std::unique_ptr<T> set_up(Visit& visit, const Harness& h, const Row& row,
                          const std::function<std::unique_ptr<T>()>& make,
                          const std::function<void(T&, int messages)>& warm_up) {
  const double start = MPI_Wtime();
  std::unique_ptr<T> made;
  if (!all_ok(visit, h, row, "setup", [&] { made = make(); })) return nullptr;
  const double warm_start = MPI_Wtime();
  visit.warm_messages = warmup_for(h.config, row);
  if (!all_ok(visit, h, row, "warm-up", [&] { warm_up(*made, visit.warm_messages); }))
    return nullptr;
  visit.warm_s = MPI_Wtime() - warm_start;
  visit.setup_s = MPI_Wtime() - start;
  return made;
}

}  // namespace xfer
