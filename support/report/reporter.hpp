// The MPI-aware reporter: one more Google Benchmark reporter strategy, not a fork of the
// runner. Every rank runs the same benchmarks and sees the same (agreed) results; only rank 0
// prints the table and writes --benchmark_out, atomically, with context.xferbench spliced into
// Google Benchmark's own JSON so its tools still read the file.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "config/config.hpp"
#include "harness/harness.hpp"
#include "harness/progress.hpp"
#include "harness/summary.hpp"
#include "mpi/world.hpp"
#include "report/displays.hpp"

namespace xfer {

// The runs without counters whose value is not a finite number (the coefficient of variation
// of a counter whose mean is 0, in --benchmark_repetitions' aggregates): JSON has no NaN, and
// the trackers that read result files refuse one.
std::vector<benchmark::BenchmarkReporter::Run> without_non_finite_counters(
    const std::vector<benchmark::BenchmarkReporter::Run>& runs);

// True if Google Benchmark marked this run failed (SkipWithError), in 1.7 and 1.8 alike.
bool run_failed(const benchmark::BenchmarkReporter::Run& run);
std::string run_message(const benchmark::BenchmarkReporter::Run& run);

class RankZeroReporter : public benchmark::BenchmarkReporter, public VisitObserver {
 public:
  // `started`: when the run began (for the summary's wall time); `skips`: paths skipped here;
  // `progress`: the run's visits so far (context.xferbench.visits), whether it stopped early
  // (the file is then marked incomplete) and the rows it kept; null where there is none.
  RankZeroReporter(const Config& config, const World& world, json::Value context,
                   std::vector<Skip> skips, std::chrono::steady_clock::time_point started,
                   const RunProgress* progress);
  ~RankZeroReporter() override;

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // A context member filled in as the document is written (context.xferbench.<key>), e.g.
  // what the links ran at while the rows ran.
  void add_late_field(std::string key, std::function<json::Value()> value);

  // For runs where no benchmark could be registered: the file still says why (skips).
  void write_without_runs();

  // Rank 0 (a JSON --benchmark_out that is a plain file): rewrites the result file, atomically,
  // with every row that has a visit so far, marked incomplete; after a round (`round_ended`)
  // or once kKeepEvery has passed since the last rewrite. A run killed outright (SIGKILL, a
  // launcher ending it) leaves that document, at most kKeepEvery plus one visit behind.
  void keep_current(bool round_ended);
  void visited(bool round_ended) override { keep_current(round_ended); }
  static constexpr double kKeepEvery = 2;

  const std::vector<std::string>& failed_rows() const { return failed_; }
  // Paths (first name component) that produced at least one row.
  const std::set<std::string>& paths_reported() const { return paths_reported_; }
  // Set when the result file could not be written (reported on stderr already).
  bool output_failed() const { return output_failed_; }

 private:
  // stop_early, write_kept and keep_current are the checkpoints (checkpoints.cpp).
  // The run ended before its last visit: the result file keeps every row with a visit, marked
  // incomplete with `reason`; rank 0 says so on stderr.
  void stop_early(const std::string& reason);
  void write_output(const std::string& text);
  // Writes the rows with a visit so far as the result file, marked incomplete with `reason`.
  void write_kept(const std::string& reason);
  // Rank 0: puts the summary into the context and prints it (stdout under the console table,
  // stderr when stdout carries JSON or CSV).
  void summarise();

  const Config& config_;
  bool root_;
  json::Value context_;
  std::string context_json_;  // what the JSON reporters splice in at Finalize
  std::vector<Skip> skips_;
  std::chrono::steady_clock::time_point started_;
  const RunProgress* progress_;
  std::vector<std::pair<std::string, std::function<json::Value()>>> late_fields_;
  Summary summary_;
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  std::unique_ptr<benchmark::BenchmarkReporter> file_;
  benchmark::BenchmarkReporter* json_file_ = nullptr;  // file_, when it writes JSON
  std::size_t rows_kept_ = 0;                          // in the last document write_kept wrote
  std::size_t rows_missing_ = 0;                       // ... and the rows it lists as not measured
  bool kept_written_ = false;
  std::chrono::steady_clock::time_point last_kept_{};
  bool special_out_ = false;  // --benchmark_out is a device or a pipe: one plain write
  std::ostringstream file_buffer_;
  std::ostringstream null_;
  std::vector<std::string> failed_;
  std::set<std::string> paths_reported_;
  bool output_failed_ = false;
};

}  // namespace xfer
