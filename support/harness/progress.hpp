// How the runner and the reporter talk, neither knowing the other (as Google Benchmark's runner
// hands runs to any BenchmarkReporter): the reporter reads the run's progress through
// RunProgress, and the runner tells an observer after each visit through VisitObserver.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/json.hpp"
#include "base/stop.hpp"
#include "harness/visits.hpp"

namespace xfer {

// The message of a row the run stopped before: the runner gives it, the reporter leaves the
// row out.
inline constexpr const char* kNotMeasured = "not measured: the run stopped before this row";

// What a run (run/runner.hpp) or a merge of jobs (jobs/merge.hpp) shows of itself.
class RunProgress {
 public:
  virtual ~RunProgress() = default;
  // Why the run stopped before its last visit, as every rank agreed (none while it goes on).
  virtual const RunStop& stop() const = 0;
  // Every row and repetition with at least one visit so far, its figure from those visits, in
  // the order rows are reported; `not_measured` gets the names of the rest.
  virtual std::vector<KeptFigure> kept(std::vector<std::string>* not_measured) const = 0;
  // The round of the last visit made (0-based; -1 before the first), of `rounds()`.
  virtual int round_reached() const = 0;
  virtual int rounds() const = 0;
  // context.xferbench.visits: every visit so far, by row name.
  virtual json::Value visits_json() const = 0;
};

// A run already whole (a merge of jobs): it never stopped early, and shows only its visits.
class FinishedRun : public RunProgress {
 public:
  explicit FinishedRun(json::Value visits) : visits_(std::move(visits)) {}
  const RunStop& stop() const override { return stop_; }
  std::vector<KeptFigure> kept(std::vector<std::string>* /*not_measured*/) const override {
    return {};
  }
  int round_reached() const override { return 0; }
  int rounds() const override { return 1; }
  json::Value visits_json() const override { return visits_; }

 private:
  json::Value visits_;
  RunStop stop_;
};

// Told on every rank after each visit, `round_ended` when it ended a round (the rank-0 reporter
// keeps the result file current with it).
class VisitObserver {
 public:
  virtual ~VisitObserver() = default;
  virtual void visited(bool round_ended) = 0;
};

}  // namespace xfer
