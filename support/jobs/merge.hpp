// Result files of one run made by separate MPI jobs (tools/run runs the sweep as several short
// jobs, as pyperf runs worker processes), merged into one result (--xfer_merge).
//
// A row's figure is the mean of its jobs' figures; its stated uncertainty comes from the spread
// between the jobs, pooled over the family's rows of nearby sizes (pooled.hpp; a row alone:
// Student's t with jobs - 1 degrees of freedom), never below what the jobs' own visits allow (a job
// of one visit of one sample has no spread of its own, and adds none). With 3 or more jobs that
// spread is the between-process spread the floor of a single job stands in for, so the merged row
// carries no floor. Where this machine's floor file states how a whole run moves between runs,
// which no run's jobs can see, the interval adds that (run_sd_pct). The merged document is written
// by Google Benchmark's own reporters, as a run's is; context.xferbench is the first file's, with
// "jobs", "merged" (sources, seeds, how intervals were made) and every job's visits.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "base/pooled.hpp"
#include "harness/harness.hpp"
#include "harness/visits.hpp"
#include "jobs/floor.hpp"

namespace xfer {

class Merge {
 public:
  // Reads and checks the files: each an xferbench result of the same build, machine and
  // settings; whole jobs of the same rows, jobs cut short (context.xferbench.incomplete) of
  // some of them. Fewer files than the jobs planned, or a job cut short, make the merged
  // result incomplete, saying which. Throws UsageError "--xfer_merge: FILE: ..." naming what
  // is wrong.
  explicit Merge(const std::vector<std::string>& files);

  // This run's machine as the floor files' "match" states it: job 1's context and CPUs.
  json::Value machine_match() const;
  // Adds to each row's interval the run-level spread that `machine`'s run_floors state for it
  // (pooled.hpp, with_run_level); context.xferbench.merged.interval.run_floors names the file.
  void add_run_level(const MachineFile& machine);

  // Registers every row with Google Benchmark, in the first file's order; each call reports
  // the merged figure of that row's next repetition.
  void register_rows();
  json::Value& context() { return context_; }
  std::vector<Skip> skips() const;
  json::Value visits_json() const { return visits_; }
  std::size_t jobs() const { return jobs_; }
  // Why the merged result is incomplete (jobs cut short, fewer jobs than planned); "" if whole.
  std::string incomplete_reason() const;
  // The jobs' own wall times together (their summaries'), for the merged summary.
  double jobs_wall_s() const { return jobs_wall_s_; }

  // One job's figure for one row and repetition, as its result file states it.
  struct JobFigure {
    int job = 0;  // which file (0-based)
    std::string error;
    double one_way_s = 0;
    double fastest_s = 0;
    std::int64_t messages = 0;
    std::int64_t batch = 1;
    int pairs = 1;
    int directions = 1;  // 2: the job's GB/s counted both ways at once
    int visits = 1;
    bool time_limited = false;
    double ci95_pct = 0;
    double floor_pct = 0;
    std::size_t samples = 0;
    double median_s = 0, min_s = 0, max_s = 0, p90_s = 0, p99_s = 0;
    double link_gbps = 0;  // 0: no known link
  };
  // The jobs' figures of one row combined (`directions` 2 for bidir rows); its interval from
  // `pool` (the between-job spread of its family's rows near its size), or without one from
  // its own jobs alone, with `run` (the machine's run level for the row) added.
  static Figure combine_jobs(const std::vector<JobFigure>& jobs, int directions,
                             const Pool& pool = Pool{}, const RunLevel& run = RunLevel{});

 private:
  struct Row {
    std::string family;
    std::uint64_t bytes = 0;
    std::vector<std::vector<JobFigure>> by_repetition;  // [repetition][job]
    std::vector<Pool> pools;                            // [repetition]
    RunLevel run;                                       // from the machine file
    int calls = 0;
  };
  struct JobRows {
    std::string path;
    std::vector<std::string> names;  // "row#repetition", sorted
    bool cut_short = false;
  };
  // What reading the files gathers for the checks between them and for "merged".
  struct Reading {
    std::string first_make_up;
    std::string first_digest;
    std::vector<std::string> first_rows;  // of the first whole job
    std::string first_whole;
    std::vector<JobRows> all_rows;
    json::Value seeds = json::Value::array();
    json::Value sources = json::Value::array();
    std::vector<double> seen_seeds;
  };
  // The constructor's steps, in order: each file (`job` of `files`) read and checked against
  // the others, then the rows of the jobs cut short, the incomplete mark and
  // context.xferbench.merged.
  void read_job(const std::vector<std::string>& files, std::size_t job, Reading& reading);
  // Notes a job cut short (its reason, the rows it did not measure); whether it was.
  bool note_cut_short(std::size_t job, const std::string& path, const json::Value& x);
  // The job's plan: the jobs and visits planned, its seed (a seed twice is one run twice).
  void read_plan(const std::vector<std::string>& files, std::size_t job, const json::Value& x,
                 Reading& reading);
  // The job's figures into rows_; the names of its rows ("row#repetition"), sorted.
  std::vector<std::string> read_rows(std::size_t job, const std::string& path,
                                     const json::Value& benchmarks);
  // The same build, machine, settings, rows and row times as the first job's.
  void check_same_run(const std::vector<std::string>& files, std::size_t job,
                      const json::Value& context, const json::Value& x, bool cut_short,
                      const std::vector<std::string>& names, Reading& reading);
  void add_visits(std::size_t job, const json::Value& x);
  // A job cut short measured only rows the whole jobs measured.
  void check_cut_short_rows(const Reading& reading) const;
  void record_merged(const Reading& reading);
  void mark_incomplete(const std::vector<JobRows>& jobs);

  std::size_t jobs_ = 0;
  std::size_t planned_jobs_ = 0;
  int planned_visits_ = 1;
  bool incomplete_ = false;
  std::vector<std::string> cut_short_;  // one line per job cut short
  std::set<std::string> not_measured_;  // rows a job cut short had not visited
  double jobs_wall_s_ = 0;
  int num_cpus_ = 0;                // job 1's, as Google Benchmark's context states it
  std::vector<std::string> order_;  // row names, in the first file's order
  std::map<std::string, Row> rows_;
  json::Value context_;
  json::Value visits_ = json::Value::object();

  // Each row's pool for each repetition, from every row's jobs (pool_between_jobs).
  void pool_rows();
};

}  // namespace xfer
