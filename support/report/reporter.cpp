#include "report/reporter.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "base/error.hpp"
#include "base/stop.hpp"

namespace xfer {
namespace {

std::string indent_continuation(const std::string& text, const std::string& pad) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// Google Benchmark's JSON reporter, buffered so the finished document can get our context
// before it is written anywhere.
class ContextJsonReporter : public benchmark::JSONReporter {
 public:
  // `context_json` is read at Finalize, so it may still change while the rows run.
  ContextJsonReporter(std::ostream* target, const std::string* context_json)
      : target_(target), context_json_(context_json) {
    SetOutputStream(&buffer_);
    SetErrorStream(&buffer_);
  }
  bool ReportContext(const Context& context) override {
    const bool ok = benchmark::JSONReporter::ReportContext(context);
    header_ = buffer_.str();
    return ok;
  }
  void Finalize() override {
    benchmark::JSONReporter::Finalize();
    *target_ << splice_context(buffer_.str(), *context_json_);
    target_->flush();
  }
  // A whole document of Google Benchmark's context and `rows` (JSON objects, dumped).
  std::string with_rows(const std::vector<std::string>& rows,
                        const std::string& context_json) const {
    std::string text = header_;
    for (std::size_t i = 0; i < rows.size(); ++i)
      text += (i ? ",\n    " : "    ") + indent_continuation(rows[i], "    ");
    return splice_context(text + "\n  ]\n}\n", context_json);
  }

 private:
  std::string header_;  // what Google Benchmark wrote before the first row
  std::ostream* target_;
  const std::string* context_json_;
  std::ostringstream buffer_;
};

// The console keeps a row to one readable line: bandwidth, latency, samples and the precision
// label; every counter still goes to the file.
class CompactDisplay : public benchmark::BenchmarkReporter {
 public:
  explicit CompactDisplay(benchmark::BenchmarkReporter* inner) : inner_(inner) {}
  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> shown = runs;
    for (auto& run : shown) {
      for (auto it = run.counters.begin(); it != run.counters.end();) {
        it = shown_on_console(it->first) ? std::next(it) : run.counters.erase(it);
      }
    }
    inner_->ReportRuns(shown);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
};

double run_counter(const benchmark::BenchmarkReporter::Run& run, const char* name) {
  const auto it = run.counters.find(name);
  return it == run.counters.end() ? 0.0 : it->second.value;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_file_reporter(const std::string& format,
                                                                 std::ostream* out,
                                                                 const std::string* context) {
  std::unique_ptr<benchmark::BenchmarkReporter> reporter;
  if (format == "json") return std::make_unique<ContextJsonReporter>(out, context);
  if (format == "csv") {
    // Deprecated upstream but still shipped; --benchmark_out_format=csv must keep working.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    reporter = std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  } else {
    reporter = std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None);
  }
  reporter->SetOutputStream(out);
  reporter->SetErrorStream(out);
  return reporter;
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

std::string temp_path_for(const std::string& out_path) {
  return out_path + ".tmp." + std::to_string(::getpid());
}

// /dev/null, a FIFO, a terminal: written straight to, once. Renaming a file over one of them
// would replace the device or the pipe itself (as root, /dev/null becomes a plain file).
bool is_special_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
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

std::string splice_context(const std::string& gb_json, const std::string& context_json) {
  const std::string key = "\"context\": {";
  const auto at = gb_json.find(key);
  if (at == std::string::npos) return gb_json;
  const auto insert_at = at + key.size();
  const auto next = gb_json.find_first_not_of(" \n", insert_at);
  const bool empty = next != std::string::npos && gb_json[next] == '}';
  return gb_json.substr(0, insert_at) +
         "\n    \"xferbench\": " + indent_continuation(context_json, "    ") + (empty ? "" : ",") +
         gb_json.substr(insert_at);
}

bool shown_on_console(const std::string& counter) {
  return counter == "GB/s" || counter == "latency_us" || counter == "samples";
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
  if (config.display_format == "json") {
    display_ = std::make_unique<ContextJsonReporter>(&std::cout, &context_json_);
  } else {
    display_ = std::make_unique<CompactDisplay>(benchmark::CreateDefaultDisplayReporter());
  }
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
      summary_.add({name, run_failed(run), run_counter(run, "time_limited") > 0,
                    run_counter(run, "GB/s"), run_counter(run, "latency_us")});
  }
  if (!root_) return;
  const std::vector<Run> finite = without_non_finite_counters(runs);
  display_->ReportRuns(finite);
  if (file_) file_->ReportRuns(finite);
}

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
  incomplete.set("reason", !reason.empty()
                               ? reason
                               : "the run did not finish: it was stopped (a signal, a lost "
                                 "rank, the watchdog) after this document was written");
  incomplete.set("round", progress_->round_reached() + 1);
  incomplete.set("rounds", progress_->rounds());
  incomplete.set("rows", kept.size());
  json::Value missing = json::Value::array();
  for (const auto& name : not_measured) missing.push(name);
  incomplete.set("not_measured", missing);
  json::Value context = context_;
  if (progress_) context.set("visits", progress_->visits_json());
  for (const auto& [key, value] : late_fields_) context.set(key, value());
  context.set("incomplete", incomplete);
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

void RankZeroReporter::summarise() {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  context_.set("summary", summary_.to_json(wall, skips_));
  if (progress_) context_.set("visits", progress_->visits_json());
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
    incomplete.set("reason", stop.reason);
    context_.set("incomplete", incomplete);
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
    std::ofstream out(config_.out_path, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      std::fprintf(stderr, "xferbench: --benchmark_out=%s: cannot write there\n",
                   config_.out_path.c_str());
      output_failed_ = true;
    }
    return;
  }
  // Write beside the target and rename: a reader never sees a half-written file, and two runs
  // writing the same file at once each rename a whole document of their own into place.
  const std::string temp = temp_path_for(config_.out_path);
  set_file_in_progress(temp);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::fprintf(stderr, "xferbench: --benchmark_out=%s: cannot write %s\n",
                   config_.out_path.c_str(), temp.c_str());
      output_failed_ = true;
      return;
    }
  }
  if (std::rename(temp.c_str(), config_.out_path.c_str()) != 0) {
    std::fprintf(stderr, "xferbench: --benchmark_out=%s: %s\n", config_.out_path.c_str(),
                 std::strerror(errno));
    std::remove(temp.c_str());
    output_failed_ = true;
  }
  set_file_in_progress("");
}

}  // namespace xfer
