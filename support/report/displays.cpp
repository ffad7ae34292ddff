#include "report/displays.hpp"

#include <iostream>
#include <iterator>

#include "base/fields.hpp"

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

}  // namespace

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

std::string rows_document(const std::vector<std::string>& rows, const std::string& context_json) {
  std::string text = "{\n  \"context\": {},\n  \"benchmarks\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i)
    text += (i ? ",\n    " : "    ") + indent_continuation(rows[i], "    ");
  return splice_context(text + "\n  ]\n}\n", context_json);
}

bool shown_on_console(const std::string& counter) {
  return counter == fields::kGbps || counter == fields::kLatencyUs || counter == fields::kSamples;
}

ContextJsonReporter::ContextJsonReporter(std::ostream* target, const std::string* context_json)
    : target_(target), context_json_(context_json) {
  SetOutputStream(&buffer_);
  SetErrorStream(&buffer_);
}

bool ContextJsonReporter::ReportContext(const Context& context) {
  const bool ok = benchmark::JSONReporter::ReportContext(context);
  header_ = buffer_.str();
  return ok;
}

void ContextJsonReporter::Finalize() {
  benchmark::JSONReporter::Finalize();
  *target_ << splice_context(buffer_.str(), *context_json_);
  target_->flush();
}

std::string ContextJsonReporter::with_rows(const std::vector<std::string>& rows,
                                           const std::string& context_json) const {
  std::string text = header_;
  for (std::size_t i = 0; i < rows.size(); ++i)
    text += (i ? ",\n    " : "    ") + indent_continuation(rows[i], "    ");
  return splice_context(text + "\n  ]\n}\n", context_json);
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display(const std::string& format,
                                                           const std::string* context_json) {
  if (format == "json") return std::make_unique<ContextJsonReporter>(&std::cout, context_json);
  return std::make_unique<CompactDisplay>(benchmark::CreateDefaultDisplayReporter());
}

std::unique_ptr<benchmark::BenchmarkReporter> make_file_reporter(const std::string& format,
                                                                 std::ostream* out,
                                                                 const std::string* context_json) {
  std::unique_ptr<benchmark::BenchmarkReporter> reporter;
  if (format == "json") return std::make_unique<ContextJsonReporter>(out, context_json);
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

}  // namespace xfer
