// How a row's visits become the figure Google Benchmark reports.
//
// A visit measures the row once, with resources of its own, at its own place in the run. The
// row's time is the mean of its visits' mean one-way times, each visit one replica; its stated
// uncertainty (ci95_pct) is the 95% interval of that mean from the spread between the visits
// (Student's t with visits - 1 degrees of freedom), never narrower than what the visits' own
// samples allow, with the floor added: the spread between processes that visits inside one
// process cannot see (docs/reproducibility.md).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "harness/harness.hpp"

namespace xfer {

// One visit as the runner keeps it.
struct VisitRecord {
  int round = 0;       // place in the run's schedule (0-based)
  int repetition = 0;  // Google Benchmark's repetition it counts towards
  double at_s = 0;     // when it began: seconds since the run began
  double wall_s = 0;   // how long it took, setup and validation included
  std::string after;   // the row visited just before it ("" for the run's first)
  Visit visit;
};

// A row's figure for one repetition: its visits combined (or, in a merge, its jobs').
struct Figure {
  std::string error;          // the first failed visit's message; "" if none failed
  double one_way_s = 0;       // mean over visits of their mean one-way time
  double fastest_s = 0;       // the same for the fastest pair
  std::int64_t messages = 0;  // timed in all visits together
  std::int64_t batch = 1;
  int directions = 1;
  int pairs = 1;
  int visits = 0;
  int visits_planned = 0;  // set when the run stopped before all of them: `visits` of these
  int jobs = 1;
  bool time_limited = false;  // a visit stopped on its time share before --xfer_precision
  double ci95_pct = 0;        // stated uncertainty of one_way_s, floor included
  double floor_pct = 0;
  // In a merged file, what made ci95_pct: the rows whose jobs' spread was pooled (1: the row's
  // own jobs alone; 0: the jobs' own samples, which said more) and the t quantile's degrees of
  // freedom (0 with ci95_rows 0).
  int ci95_rows = 0;
  double ci95_df = 0;
  // And the spread of one job's figure between jobs (sd of ln time, percent) that the rows
  // pooled state: what a single process cannot see (a machine's floor, tools/track floor).
  double between_sd_pct = 0;
  // And the run-level sd of ln time (percent) from the machine's earlier runs that ci95_pct
  // holds besides (pooled.hpp, with_run_level; 0: none).
  double run_sd_pct = 0;
  // The per-message samples of every visit: how many, and their quantiles in seconds.
  std::size_t samples = 0;
  double median_s = 0, min_s = 0, max_s = 0, p90_s = 0, p99_s = 0;
  // The line rate of the links the row crosses, in its directions and pairs (links.hpp), and
  // those links in words; 0 and "" where no link is known.
  double link_gbps = 0;
  std::string links = "";
};

// Combines a row's visits for one repetition; `floor_pct` is added in quadrature.
Figure combine(const std::vector<VisitRecord>& visits, double floor_pct);

// Hands `figure` to Google Benchmark (iterations = messages, time = one-way time per message)
// and sets bytes_per_second and the counters: GB/s, latency_us, batch, samples,
// median/min/max/p90/p99 in us, ci95_pct, floor_pct, visits, jobs, time_limited (ci95_rows,
// ci95_df, between_sd_pct and run_sd_pct in a merged file; pairs, pair_gbps_min, pair_gbps_max with
// several pairs; link_gbps and pct_of_link where the link is known); the label shows the precision.
// A row above 100% of its link_gbps fails instead: that is an error in the measurement or in the
// peak, not a result.
void report_figure(benchmark::State& state, std::uint64_t bytes, const Figure& figure);

// A row's figure for one repetition from the visits it had when the run stopped (or so far,
// while it runs), for the result file a run cut short leaves.
struct KeptFigure {
  std::string family;
  std::uint64_t bytes = 0;
  int repetition = 0;
  int repetitions = 1;
  Figure figure;  // figure.visits < figure.visits_planned: cut short
};

// The row as Google Benchmark's JSON reporter writes one (name, run_name, run_type, iterations,
// real_time in the run's time unit, bytes_per_second, the counters of report_figure, label;
// error_occurred and error_message for a failed one), so --xfer_merge and the tools read it.
json::Value kept_row_json(const KeptFigure& kept);

// A visit as context.xferbench.visits keeps it.
json::Value visit_json(const VisitRecord& record);

// Registers one row (`family` at `bytes`) with Google Benchmark; `report` is its call.
void register_row(const std::string& family, std::uint64_t bytes,
                  std::function<void(benchmark::State&)> report);

// The stated uncertainty: the wider of the interval from the spread between replicas
// (`between_pct`) and the one their own figures give (`within_pct`), with `floor_pct` added in
// quadrature; 100 where it is not finite.
double stated_ci95_pct(double between_pct, double within_pct, double floor_pct);

}  // namespace xfer
