#include "reporter.hpp"

#include <cerrno>
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
  ContextJsonReporter(std::ostream* target, std::string context_json)
      : target_(target), context_json_(std::move(context_json)) {
    SetOutputStream(&buffer_);
    SetErrorStream(&buffer_);
  }
  void Finalize() override {
    benchmark::JSONReporter::Finalize();
    *target_ << splice_context(buffer_.str(), context_json_);
    target_->flush();
  }

 private:
  std::ostream* target_;
  std::string context_json_;
  std::ostringstream buffer_;
};

std::unique_ptr<benchmark::BenchmarkReporter> make_file_reporter(const std::string& format,
                                                                 std::ostream* out,
                                                                 const std::string& context) {
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

RankZeroReporter::RankZeroReporter(const Config& config, const World& world,
                                   std::string context_json)
    : config_(config), root_(world.is_root()), context_json_(std::move(context_json)) {
  if (!root_) {  // other ranks never print, never open the result file
    SetOutputStream(&null_);
    SetErrorStream(&null_);
    return;
  }
  if (config.display_format == "json") {
    display_ = std::make_unique<ContextJsonReporter>(&std::cout, context_json_);
  } else {
    display_.reset(benchmark::CreateDefaultDisplayReporter());
  }
  if (!config.out_path.empty())
    file_ = make_file_reporter(config.out_format, &file_buffer_, context_json_);
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
  }
  if (!root_) return;
  display_->ReportRuns(runs);
  if (file_) file_->ReportRuns(runs);
}

void RankZeroReporter::Finalize() {
  if (!root_) return;
  display_->Finalize();
  if (!file_) return;
  file_->Finalize();
  write_output(file_buffer_.str());
}

void RankZeroReporter::write_without_runs() {
  if (!root_) return;
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
