#include "reporter.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

namespace xfer {
namespace {

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
  void Finalize() override {
    benchmark::JSONReporter::Finalize();
    *target_ << splice_context(buffer_.str(), *context_json_);
    target_->flush();
  }

 private:
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

double counter(const benchmark::BenchmarkReporter::Run& run, const char* name) {
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

std::string indent_continuation(const std::string& text, const std::string& pad) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

}  // namespace

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
                                   std::chrono::steady_clock::time_point started)
    : config_(config),
      root_(world.is_root()),
      context_(std::move(context)),
      context_json_(context_.dump(2)),
      skips_(std::move(skips)),
      started_(started) {
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
  if (!config.out_path.empty())
    file_ = make_file_reporter(config.out_format, &file_buffer_, &context_json_);
}

RankZeroReporter::~RankZeroReporter() = default;

bool RankZeroReporter::ReportContext(const Context& context) {
  if (!root_) return true;
  bool ok = display_->ReportContext(context);
  if (file_) ok = file_->ReportContext(context) && ok;
  return ok;
}

void RankZeroReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const auto& run : runs) {
    const std::string name = run.benchmark_name();
    paths_reported_.insert(name.substr(0, name.find('/')));
    if (run_failed(run)) failed_.push_back(name + ": " + run_message(run));
    if (run.run_type == Run::RT_Iteration)
      summary_.add({name, run_failed(run), counter(run, "time_limited") > 0, counter(run, "GB/s"),
                    counter(run, "latency_us")});
  }
  if (!root_) return;
  display_->ReportRuns(runs);
  if (file_) file_->ReportRuns(runs);
}

void RankZeroReporter::summarise() {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  context_.set("summary", summary_.to_json(wall, skips_));
  context_json_ = context_.dump(2);
  std::FILE* to = config_.display_format == "console" ? stdout : stderr;
  std::fflush(stdout);
  for (const auto& line : summary_.lines(wall, skips_)) std::fprintf(to, "%s\n", line.c_str());
  std::fflush(to);
}

void RankZeroReporter::Finalize() {
  if (!root_) return;
  if (config_.display_format != "console") summarise();  // before the JSON display closes
  display_->Finalize();
  if (config_.display_format == "console") summarise();
  if (!file_) return;
  file_->Finalize();
  write_output(file_buffer_.str());
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
  // Write beside the target and rename: a reader never sees a half-written file.
  const std::string temp = config_.out_path + ".tmp";
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
}

std::string check_output_writable(const Config& config, const World& world) {
  std::string error;
  if (world.is_root() && !config.out_path.empty()) {
    const std::string temp = config.out_path + ".tmp";
    std::FILE* f = std::fopen(temp.c_str(), "wb");
    if (!f) {
      error = "--benchmark_out=" + config.out_path + ": cannot create a file there (" +
              std::strerror(errno) + ")";
    } else {
      std::fclose(f);
      std::remove(temp.c_str());
    }
  }
  return world.broadcast(error, 0);
}

}  // namespace xfer
