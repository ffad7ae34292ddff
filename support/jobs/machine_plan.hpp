// How many jobs a run is made of and how long each row runs: the flags' (--xfer_jobs=N,
// --xfer_max_time), or this machine's plan (--xfer_jobs=auto), which tools/track floor makes
// from the machine's earlier runs and keeps in its floor file (floor.hpp): more, shorter jobs
// where the spread between jobs is the larger part of a row's interval, and each row's time
// where its sampling part can still narrow.
#pragma once

#include <string>
#include <vector>

#include "base/json.hpp"
#include "config/config.hpp"
#include "jobs/floor.hpp"

namespace xfer {

// --xfer_jobs=auto without a plan: the jobs tools/run ran before plans (a merge of 3 or more
// jobs carries no floor).
constexpr int kDefaultAutoJobs = 3;

struct JobsAndTimes {
  int jobs = 1;
  std::string source = "flag";     // "machine": the plan's; "default": kDefaultAutoJobs; "flag"
  std::string times = "flag";      // "machine": rows the plan lists got its seconds
  std::vector<double> max_time_s;  // per row: its --xfer_max_time, all visits and jobs together
  std::string times_digest;        // of the rows' names and max_time_s: jobs of a run must agree
};

// For the rows named `rows` (in the run's order): with --xfer_jobs=auto, the jobs of the
// machine file's plan (else kDefaultAutoJobs) and, unless --xfer_max_time was given, the
// plan's seconds for every row it lists (its family at exactly its size); every other row
// --xfer_max_time.
JobsAndTimes plan_jobs_and_times(const Config& config, const MachineFile& machine,
                                 const std::vector<std::string>& rows);

// A digest of each row's name and seconds, 16 hex digits (FNV-1a, 64 bits): equal for runs
// whose rows get the same times.
std::string times_digest(const std::vector<std::string>& rows, const std::vector<double>& seconds);

// Sets context.xferbench.plan's "jobs", "source", "file" (the machine file found, or null),
// "budget_s" and "predicted_wall_s" (the plan's where its jobs were used, else null), "times"
// and "times_digest".
void record_jobs_and_times(json::Value& plan, const JobsAndTimes& chosen,
                           const MachineFile& machine);

}  // namespace xfer
