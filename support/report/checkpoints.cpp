// The checkpoints of the result file: while the rows run, rank 0 rewrites it with the rows so
// far (keep_current), and a run that stops early leaves them there, marked incomplete.
#include <chrono>
#include <cstdio>

#include "base/fields.hpp"
#include "base/stop.hpp"
#include "report/displays.hpp"
#include "report/reporter.hpp"

namespace xfer {

void RankZeroReporter::stop_early(const std::string& reason) {
  if (!root_) return;
  const int round = progress_ ? progress_->round_reached() + 1 : 0;
  if (progress_)
    std::fprintf(stderr, "xferbench: the run stopped before its last row, in round %d of %d: %s\n",
                 round, progress_->rounds(), reason.c_str());
  else
    std::fprintf(stderr, "xferbench: the run stopped before its last row: %s\n", reason.c_str());
  if (json_file_ && !special_out_ && progress_) {
    write_kept(reason);
    if (!output_failed_)
      std::fprintf(stderr,
                   "xferbench: the run did not finish; the %zu row(s) measured so far are in %s "
                   "(each from the visits it had: counter visits of visits_planned); %zu row(s) "
                   "not measured (context.xferbench.incomplete)\n",
                   rows_kept_, config_.out_path.c_str(), rows_missing_);
  } else {
    std::fprintf(stderr,
                 "xferbench: the rows measured so far are in the table above only (a JSON "
                 "--benchmark_out keeps them in a file)\n");
  }
  set_cut_short_note("");  // said already
  std::fflush(stderr);
}

void RankZeroReporter::keep_current(bool round_ended) {
  if (!root_ || !json_file_ || special_out_ || !progress_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!round_ended && kept_written_ && now - last_kept_ < std::chrono::duration<double>(kKeepEvery))
    return;
  write_kept("");
}

void RankZeroReporter::write_kept(const std::string& reason) {
  // Every row with a visit, from the visits it had: a run that stops itself (a rank failed, a
  // signal) writes this with the reason; a run killed outright leaves the last rewrite.
  std::vector<std::string> not_measured;
  const std::vector<KeptFigure> kept = progress_->kept(&not_measured);
  std::vector<std::string> rows;
  for (const KeptFigure& k : kept) rows.push_back(kept_row_json(k).dump(2));
  json::Value incomplete = json::Value::object();
  incomplete.set(fields::kReason, !reason.empty()
                                      ? reason
                                      : "the run did not finish: it was stopped (a signal, a lost "
                                        "rank, the watchdog) after this document was written");
  incomplete.set("round", progress_->round_reached() + 1);
  incomplete.set("rounds", progress_->rounds());
  incomplete.set("rows", kept.size());
  json::Value missing = json::Value::array();
  for (const auto& name : not_measured) missing.push(name);
  incomplete.set(fields::kNotMeasured, missing);
  json::Value context = context_;
  if (progress_) context.set(fields::kVisits, progress_->visits_json());
  for (const auto& [key, value] : late_fields_) context.set(key, value());
  context.set(fields::kIncomplete, incomplete);
  write_output(static_cast<ContextJsonReporter*>(json_file_)->with_rows(rows, context.dump(2)));
  last_kept_ = std::chrono::steady_clock::now();
  kept_written_ = true;
  rows_kept_ = kept.size();
  rows_missing_ = not_measured.size();
  if (!output_failed_)
    set_cut_short_note("xferbench: the run did not finish; the " + std::to_string(rows_kept_) +
                       " row(s) measured so far are in " + config_.out_path +
                       " (as of its last rewrite, at most " +
                       std::to_string(static_cast<int>(kKeepEvery)) +
                       " s and a visit ago; context.xferbench.incomplete says so)\n");
}

}  // namespace xfer
