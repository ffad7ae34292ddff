// What rank 0 shows and writes: the console's compact table, and Google Benchmark's own file
// reporters, the JSON one with context.xferbench spliced into its context.
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace xfer {

// Inserts `"xferbench": <context_json>,` as the first member of the "context" object.
std::string splice_context(const std::string& gb_json, const std::string& context_json);

// A result document of `rows` (each a row's JSON) and context.xferbench `context_json`, for a
// checkpoint written before Google Benchmark has stated its own context.
std::string rows_document(const std::vector<std::string>& rows, const std::string& context_json);

// Counters the console shows (the file keeps them all); the label shows the precision.
bool shown_on_console(const std::string& counter);

// Google Benchmark's JSON reporter, buffered so the finished document can get our context
// before it is written anywhere.
class ContextJsonReporter : public benchmark::JSONReporter {
 public:
  // `context_json` is read at Finalize, so it may still change while the rows run.
  ContextJsonReporter(std::ostream* target, const std::string* context_json);
  bool ReportContext(const Context& context) override;
  void Finalize() override;
  // A whole document of Google Benchmark's context and `rows` (JSON objects, dumped).
  std::string with_rows(const std::vector<std::string>& rows,
                        const std::string& context_json) const;

 private:
  std::string header_;  // what Google Benchmark wrote before the first row
  std::ostream* target_;
  const std::string* context_json_;
  std::ostringstream buffer_;
};

// The console: --benchmark_format=json shows the document (with `context_json`), any other the
// compact table (CompactDisplay, displays.cpp).
std::unique_ptr<benchmark::BenchmarkReporter> make_display(const std::string& format,
                                                           const std::string* context_json);
// The reporter of --benchmark_out_format's `format` writing to `out` (JSON: a
// ContextJsonReporter with `context_json`).
std::unique_ptr<benchmark::BenchmarkReporter> make_file_reporter(const std::string& format,
                                                                 std::ostream* out,
                                                                 const std::string* context_json);

}  // namespace xfer
