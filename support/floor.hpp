// The floor a row's stated uncertainty carries: the spread between processes (separate MPI jobs
// on the same machine) that the visits of one process cannot see. This machine's own, where
// tools/run or `tools/track floor` measured it (a floor file); else measured per path and host
// memory on the GPU machines (docs/reproducibility.md says how). tools/run merges several
// jobs, whose spread then speaks for itself, and drops it.
#pragma once

#include <string>
#include <vector>

#include "json.hpp"

namespace xfer {

// In percent, for the row `name` ("host_staging/host:pageable/.../bytes:8"): the built-in one.
double measured_floor_pct(const std::string& name);

// What of a run's context (context.xferbench, and Google Benchmark's CPU count) a floor file's
// "match" must equal for the file to be this machine's: GPU models, GPU links, CUDA driver and
// runtime, NCCL, MPI library and CUDA-awareness, world size, CPUs (tools/xfertools/floors.py).
json::Value machine_match(const json::Value& xferbench, int num_cpus);

// A machine's floor file: {"format": "xferbench-floor/1", "match": {...}, "floors": {family:
// [[bytes, pct], ...]}, ...}.
class MachineFloors {
 public:
  MachineFloors() = default;
  // Parses `text` read from `file`; throws UsageError "--xfer_floor: FILE: ..." when it is not
  // a floor file, or (with `match` not null) one of another machine.
  MachineFloors(const std::string& file, const std::string& text, const json::Value& match);

  const std::string& file() const { return file_; }
  // The row's floor from the file (its family's, at the nearest size measured within a factor
  // of 8), or -1 when the file holds none that near.
  double pct(const std::string& name) const;

 private:
  std::string file_;
  json::Value floors_ = json::Value::object();
};

// A floor file's text; throws UsageError "--xfer_floor: FILE: cannot read it".
std::string read_floor_text(const std::string& path);

// The floor file under `dir` whose "match" equals `match` (the first in name order), "" if none.
// Files that are not floor files are passed over.
std::string find_machine_floors(const std::string& dir, const json::Value& match);

}  // namespace xfer
