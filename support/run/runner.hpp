// The run: in which order the selected rows' visits come, and how Google Benchmark reports them.
//
// Every row is measured in --xfer_visits visits per reported figure (per repetition). The
// visits come in rounds: each round visits every row once per repetition, rounds before the
// last in an order shuffled with the run's seed (the same on every rank), the last round in
// the rows' own order so that rows are reported as they finish. With
// --benchmark_enable_random_interleaving the last round is shuffled too, and rows are reported
// once all of them are done. Google Benchmark calls each row in its own order, once per
// repetition; the call runs the schedule on until that figure's visits are done, then reports
// them combined (support/harness/visits.hpp). All ranks make the same calls in the same order, so they
// run the same visits in lockstep.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "harness/harness.hpp"
#include "harness/progress.hpp"
#include "harness/visits.hpp"

namespace xfer {

struct VisitPlan {
  int visits = 1;       // per reported figure
  int jobs = 1;         // separate jobs whose figures will be merged: each gets 1/jobs of the time
  int repetitions = 1;  // Google Benchmark's --benchmark_repetitions
  bool shuffle_last = false;  // --benchmark_enable_random_interleaving
  std::uint64_t seed = 0;
  // Per selected row: its --xfer_max_time, all visits and jobs together (machine_plan.hpp);
  // empty: --xfer_max_time for every row.
  std::vector<double> max_time_s;
};

// The order of the visits: (index into the selected rows, repetition), round after round.
struct ScheduledVisit {
  std::size_t row;
  int repetition;
  int round;
};
std::vector<ScheduledVisit> schedule(std::size_t rows, const VisitPlan& plan);

class Runner : public RunProgress {
 public:
  // `selected`: indices into registry.rows(), in the order rows are reported. `floor_pct`: per
  // selected row, the floor its figure carries.
  Runner(const Registry& registry, std::vector<std::size_t> selected, std::vector<double> floor_pct,
         const VisitPlan& plan, const Harness& harness,
         std::chrono::steady_clock::time_point started);

  // Registers the selected rows with Google Benchmark.
  void register_rows();
  // Why the run stopped before its last visit (none if it did not): a rank's process could
  // not go on (stop.hpp: note_fatal) or was asked to stop (a signal), agreed after the visit in
  // which it happened. The next call of a row then reports nothing.
  const RunStop& stop() const override { return stop_; }
  std::vector<KeptFigure> kept(std::vector<std::string>* not_measured) const override;
  int round_reached() const override { return next_ == 0 ? -1 : schedule_[next_ - 1].round; }
  int rounds() const override { return plan_.visits; }
  json::Value visits_json() const override;
  // Told after every visit (the reporter: keep_current); may be null.
  void observe(VisitObserver* observer) { observer_ = observer; }

 private:
  void report(benchmark::State& state, std::size_t index);
  void run_until(std::size_t index, int repetition);
  void visit(const ScheduledVisit& scheduled);
  Row row_for(const ScheduledVisit& scheduled) const;

  const Registry& registry_;
  std::vector<std::size_t> selected_;
  std::vector<double> floor_pct_;
  VisitPlan plan_;
  Harness h_;  // by value: it is three references
  std::chrono::steady_clock::time_point started_;
  std::vector<ScheduledVisit> schedule_;
  std::size_t next_ = 0;
  // Per selected row: its visits by repetition, how many times Google Benchmark has called it,
  // and the message count its first measured visit timed (the later ones time as many, or more
  // where they need them to time their share of --benchmark_min_time).
  std::vector<std::vector<std::vector<VisitRecord>>> visits_;
  std::vector<int> calls_;
  std::vector<std::int64_t> messages_;
  std::vector<std::vector<std::size_t>> last_;  // [row][repetition]: its last place in schedule_
  std::unique_ptr<std::regex> slowdown_;        // --xfer_test_slowdown
  double slowdown_pct_ = 0;
  std::string last_row_;
  std::set<std::string> warmed_;        // families with a row measured in this process (any size)
  std::set<std::string> warmed_large_;  // ... with a row above kLargeRowBytes measured
  RunStop stop_;
  VisitObserver* observer_ = nullptr;
};

}  // namespace xfer
