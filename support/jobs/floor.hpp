// The floor a row's stated uncertainty carries: the spread between processes (separate MPI jobs
// on the same machine) that the visits of one process cannot see. This machine's own, where
// tools/run or `tools/track floor` measured it (a floor file); else measured per path and host
// memory on the GPU machines (docs/reproducibility.md says how). tools/run merges several
// jobs, whose spread then speaks for itself, and drops it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/json.hpp"
#include "base/pooled.hpp"

namespace xfer {

// In percent, for the row `name` ("host_staging/host:pageable/.../bytes:8"): the built-in one.
double measured_floor_pct(const std::string& name);

// What of a run's context (context.xferbench, and Google Benchmark's CPU count) a floor file's
// "match" must equal for the file to be this machine's: GPU models, GPU links, CUDA driver and
// runtime, NCCL, MPI library and CUDA-awareness, world size, CPUs (tools/xfertools/machine/floors.py).
json::Value machine_match(const json::Value& xferbench, int num_cpus);

// A machine's floor file, written by tools/track floor from this machine's merged runs:
//   {"format": "xferbench-floor/1" or "/2", "match": {...}, "floors": {family: [[bytes, pct],
//   ...]}, ...}; a /2 file also holds "run_floors": {family: [[bytes, sd_pct, df], ...]} (the
//   spread of a run's mean between runs that its jobs cannot see) and "plan": null or {"jobs":
//   J, "rows": {family: [[bytes, seconds], ...]}, "budget_s": ..., "predicted_wall_s": ...}
//   (how tools/run should run this machine: --xfer_jobs=auto), and "history": the last runs,
//   oldest first, each {"jobs": J, "rows": {family: [[bytes, mean_ln, var_between, ...], ...]}}
//   (a run's mean of ln latency_us over its jobs and their sample variance).
class MachineFile {
 public:
  MachineFile() = default;
  // Parses `text` read from `file`; throws UsageError "--xfer_floor: FILE: ..." when it is not
  // a floor file, one of another machine (with `match` not null), or a member is not of the
  // shape above.
  MachineFile(const std::string& file, const std::string& text, const json::Value& match);

  const std::string& file() const { return file_; }
  // The row's floor from the file (its family's, at the nearest size measured within a factor
  // of 8), or -1 when the file holds none that near.
  double pct(const std::string& name) const;
  // The row's run-level spread, looked up as pct() is; df 0 when the file holds none that near.
  RunLevel run_level(const std::string& name) const;
  // The earlier runs of the row of `family` and `bytes` in the history, oldest first: for each
  // run that measured it with 2 or more jobs, its index in the history and its mean. Entries
  // and rows not of the shape above are passed over, as tools/track floor passes them over.
  std::vector<std::pair<std::size_t, RunMean>> run_means(const std::string& family,
                                                         std::uint64_t bytes) const;
  // The file's plan: null, or the object the file holds (jobs, rows, budget_s, ...).
  const json::Value& plan() const { return plan_; }
  // plan.jobs; 0 without a plan.
  int plan_jobs() const;
  // The row's seconds in plan.rows (its family at exactly its size), or -1 when not listed.
  double plan_seconds(const std::string& name) const;

 private:
  std::string file_;
  json::Value floors_ = json::Value::object();
  json::Value run_floors_ = json::Value::object();
  json::Value plan_;
  json::Value history_ = json::Value::array();
};

// This run's machine file: `named` (--xfer_floor=FILE.json) as given, else the floor file under
// $XFER_FLOORS (else results/floors) whose "match" equals `match`; read, and checked as the
// constructor checks it against `match`. An empty one (file() "") where there is none. `text`,
// if given, receives the file's text (for ranks that cannot read it).
MachineFile load_machine_file(const std::string& named, const json::Value& match,
                              std::string* text = nullptr);

// A floor file's text; throws UsageError "--xfer_floor: FILE: cannot read it".
std::string read_floor_text(const std::string& path);

// The floor file under `dir` whose "match" equals `match` (the first in name order), "" if none.
// Files that are not floor files, and other machines', are passed over; this machine's is
// returned even when a member is malformed, so that reading it says what is wrong.
std::string find_machine_floors(const std::string& dir, const json::Value& match);

}  // namespace xfer
