#include "report/reporter.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>

#include "base/fields.hpp"
#include "base/files.hpp"
#include "base/stop.hpp"

namespace xfer {
namespace {

double run_counter(const benchmark::BenchmarkReporter::Run& run, const char* name) {
  const auto it = run.counters.find(name);
  return it == run.counters.end() ? 0.0 : it->second.value;
}

}  // namespace

std::vector<benchmark::BenchmarkReporter::Run> without_non_finite_counters(
    const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  std::vector<benchmark::BenchmarkReporter::Run> out = runs;
  for (auto& run : out) {
    for (auto it = run.counters.begin(); it != run.counters.end();) {
      it = std::isfinite(it->second.value) ? std::next(it) : run.counters.erase(it);
    }
  }
  return out;
}

bool run_failed(const benchmark::BenchmarkReporter::Run& run) {
#if XFER_GB_HAS_ERROR_OCCURRED
  return run.error_occurred;
#else
  return run.skipped == benchmark::internal::SkippedWithError;
#endif
}

std::string run_message(const benchmark::BenchmarkReporter::Run& run) {
#if XFER_GB_HAS_ERROR_OCCURRED
  return run.error_message;
#else
  return run.skip_message;
#endif
}

RankZeroReporter::RankZeroReporter(const Config& config, const World& world, json::Value context,
                                   std::vector<Skip> skips,
                                   std::chrono::steady_clock::time_point started,
                                   const RunProgress* progress)
    : config_(config),
      root_(world.is_root()),
      context_(std::move(context)),
      context_json_(context_.dump(2)),
      skips_(std::move(skips)),
      started_(started),
      progress_(progress) {
  if (!root_) {  // other ranks never print, never open the result file
    SetOutputStream(&null_);
    SetErrorStream(&null_);
    return;
  }
  display_ = make_display(config.display_format, &context_json_);
  if (!config.out_path.empty()) {
    special_out_ = is_special_file(config.out_path);
    file_ = make_file_reporter(config.out_format, &file_buffer_, &context_json_);
    json_file_ = dynamic_cast<ContextJsonReporter*>(file_.get());
  }
}

RankZeroReporter::~RankZeroReporter() = default;

void RankZeroReporter::add_late_field(std::string key, std::function<json::Value()> value) {
  late_fields_.emplace_back(std::move(key), std::move(value));
}

bool RankZeroReporter::ReportContext(const Context& context) {
  if (!root_) return true;
  bool ok = display_->ReportContext(context);
  if (file_) ok = file_->ReportContext(context) && ok;
  return ok;
}

void RankZeroReporter::ReportRuns(const std::vector<Run>& all_runs) {
  // A row the run stopped before is no result: it is left out, as a row never registered.
  std::vector<Run> runs;
  for (const auto& run : all_runs) {
    if (!run_failed(run) || run_message(run) != kNotMeasured) runs.push_back(run);
  }
  if (runs.empty()) return;
  for (const auto& run : runs) {
    const std::string name = run.benchmark_name();
    paths_reported_.insert(name.substr(0, name.find('/')));
    if (run_failed(run)) failed_.push_back(name + ": " + run_message(run));
    if (run.run_type == Run::RT_Iteration)
      summary_.add({name, run_failed(run), run_counter(run, fields::kTimeLimited) > 0,
                    run_counter(run, fields::kGbps), run_counter(run, fields::kLatencyUs)});
  }
  if (!root_) return;
  const std::vector<Run> finite = without_non_finite_counters(runs);
  display_->ReportRuns(finite);
  if (file_) file_->ReportRuns(finite);
}

void RankZeroReporter::summarise() {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  context_.set(fields::kSummary, summary_.to_json(wall, skips_));
  if (progress_) context_.set(fields::kVisits, progress_->visits_json());
  for (const auto& [key, value] : late_fields_) context_.set(key, value());
  context_json_ = context_.dump(2);
  std::FILE* to = config_.display_format == "console" ? stdout : stderr;
  std::fflush(stdout);
  for (const auto& line : summary_.lines(wall, skips_)) std::fprintf(to, "%s\n", line.c_str());
  std::fflush(to);
}

void RankZeroReporter::Finalize() {
  if (!root_) return;
  const RunStop stop = progress_ ? progress_->stop() : RunStop{};
  if (stop.stopped()) {
    json::Value incomplete = json::Value::object();  // for a JSON display (the file: write_kept)
    incomplete.set(fields::kReason, stop.reason);
    context_.set(fields::kIncomplete, incomplete);
  }
  if (config_.display_format != "console") summarise();  // before the JSON display closes
  display_->Finalize();
  if (config_.display_format == "console") summarise();
  if (stop.stopped()) {
    stop_early(stop.reason);  // the file keeps the rows so far, marked incomplete
    return;
  }
  if (!file_) return;
  file_->Finalize();
  write_output(file_buffer_.str());
  if (!output_failed_) set_cut_short_note("");  // the file is whole now
}

void RankZeroReporter::write_without_runs() {
  if (!root_) return;
  summarise();
  const std::string doc = "{\n  \"context\": {},\n  \"benchmarks\": []\n}\n";
  if (config_.display_format == "json") std::cout << splice_context(doc, context_json_);
  if (!config_.out_path.empty())
    write_output(config_.out_format == "json" ? splice_context(doc, context_json_) : "");
}

void RankZeroReporter::write_output(const std::string& text) {
  if (special_out_) {
    if (!write_straight(config_.out_path, text)) {
      std::fprintf(stderr, "xferbench: --benchmark_out=%s: cannot write there\n",
                   config_.out_path.c_str());
      output_failed_ = true;
    }
    return;
  }
  if (const std::string error = write_whole(config_.out_path, text); !error.empty()) {
    std::fprintf(stderr, "xferbench: --benchmark_out=%s: %s\n", config_.out_path.c_str(),
                 error.c_str());
    output_failed_ = true;
  }
}

}  // namespace xfer
