#include "jobs/machine_plan.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include "base/fields.hpp"

namespace xfer {

JobsAndTimes plan_jobs_and_times(const Config& config, const MachineFile& machine,
                                 const std::vector<std::string>& rows) {
  JobsAndTimes out;
  out.jobs = config.jobs;
  const bool use_plan = config.jobs_auto && machine.plan_jobs() > 0;
  if (config.jobs_auto) {
    out.jobs = use_plan ? machine.plan_jobs() : kDefaultAutoJobs;
    out.source = use_plan ? "machine" : "default";
  }
  for (const std::string& name : rows) {
    const double planned = use_plan && !config.max_time_given ? machine.plan_seconds(name) : -1.0;
    out.max_time_s.push_back(planned > 0 ? planned : config.precision.max_time_s);
    if (planned > 0) out.times = "machine";
  }
  out.times_digest = times_digest(rows, out.max_time_s);
  return out;
}

std::string times_digest(const std::vector<std::string>& rows, const std::vector<double>& seconds) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto add = [&hash](const std::string& text) {
    for (const unsigned char c : text) {
      hash ^= c;
      hash *= 0x100000001b3ULL;
    }
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    char line[64];
    std::snprintf(line, sizeof line, " %.17g\n", i < seconds.size() ? seconds[i] : 0.0);
    add(rows[i]);
    add(line);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, hash);
  return text;
}

void record_jobs_and_times(json::Value& plan, const JobsAndTimes& chosen,
                           const MachineFile& machine) {
  const auto copied = [&machine, &chosen](const char* key) {
    return chosen.source == "machine" ? json::member(machine.plan(), key) : json::Value();
  };
  plan.set(fields::kJobs, chosen.jobs);
  plan.set("source", chosen.source);
  plan.set("file", machine.file().empty() ? json::Value() : json::Value(machine.file()));
  plan.set("budget_s", copied("budget_s"));
  plan.set("predicted_wall_s", copied("predicted_wall_s"));
  plan.set("times", chosen.times);
  plan.set(fields::kTimesDigest, chosen.times_digest);
}

}  // namespace xfer
