// The closing lines of a run, like nccl-tests' last line: per path and variant the peak
// bandwidth (and the size that reached it) and the smallest one-way latency; how many rows ran,
// failed and stopped before reaching their precision; what was skipped; the wall time. Rank 0
// prints them after the table and records the same in context.xferbench.summary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "harness/harness.hpp"

namespace xfer {

// One finished run of one row, as the reporter saw it.
struct RowResult {
  std::string name;  // "mpi_host/bytes:8" (Google Benchmark's suffixes are dropped)
  bool failed = false;
  bool time_limited = false;
  double gbps = 0;
  double latency_us = 0;
};

// "mpi_staged/host:pinned/staging:pipelined/mode:stream" of
// "mpi_staged/host:pinned/staging:pipelined/mode:stream/bytes:8"
std::string family_of(const std::string& row);
// 8 of ".../bytes:8/manual_time"; 0 if the name has no size.
std::uint64_t bytes_of(const std::string& row);

class Summary {
 public:
  // Repetitions of a row count once: failed or time-limited if any repetition was.
  void add(const RowResult& result);

  json::Value to_json(double wall_s, const std::vector<Skip>& skips) const;
  std::vector<std::string> lines(double wall_s, const std::vector<Skip>& skips) const;

 private:
  struct Family {
    std::string name;
    double peak_gbps = 0;
    std::uint64_t peak_bytes = 0;
    double min_latency_us = 0;
    std::uint64_t min_latency_bytes = 0;
    bool measured = false;
    bool has_latency = true;  // false for stream and bidir rows (their time is 1 / throughput)
  };
  struct Seen {
    std::string name;
    bool failed;
    bool time_limited;
  };
  Family& family(const std::string& name);
  std::size_t count(bool Seen::*flag) const;

  std::vector<Family> families_;
  std::vector<Seen> rows_;
};

}  // namespace xfer
