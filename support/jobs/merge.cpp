#include "jobs/merge.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "base/error.hpp"
#include "base/fields.hpp"
#include "base/stats.hpp"

namespace xfer {
namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

json::Value read_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) throw UsageError("--xfer_merge: " + path + ": cannot read it");
  try {
    return json::parse(text.str());
  } catch (const std::exception& e) {
    throw UsageError("--xfer_merge: " + path + ": " + e.what());
  }
}

using json::text_of;

// The row's failure message, "" for a measured row (Google Benchmark 1.7 and 1.8 spellings).
std::string error_of(const json::Value& row) {
  const json::Value* occurred = row.find(fields::kErrorOccurred);
  if (occurred && occurred->is_true()) return text_of(row, fields::kErrorMessage);
  const json::Value* skipped = row.find(fields::kSkipped);
  if (skipped && (skipped->is_true() || skipped->number() > 0)) {
    const std::string message = text_of(row, "skip_message");
    return message.empty() ? text_of(row, fields::kErrorMessage) : message;
  }
  return "";
}

Merge::JobFigure job_figure(const json::Value& row, std::uint64_t bytes) {
  Merge::JobFigure f;
  f.error = error_of(row);
  if (!f.error.empty()) return f;
  const double us = 1e-6;
  f.one_way_s = json::number_of(row, fields::kLatencyUs) * us;
  f.messages = static_cast<std::int64_t>(json::number_of(row, fields::kIterations));
  f.batch = static_cast<std::int64_t>(json::number_of(row, fields::kBatch, 1));
  f.pairs = static_cast<int>(json::number_of(row, fields::kPairs, 1));
  f.visits = static_cast<int>(json::number_of(row, fields::kVisits, 1));
  f.time_limited = json::number_of(row, fields::kTimeLimited) > 0;
  f.ci95_pct = json::number_of(row, fields::kCi95Pct, 100);
  f.floor_pct = json::number_of(row, fields::kFloorPct);
  f.samples = static_cast<std::size_t>(json::number_of(row, fields::kSamples));
  f.median_s = json::number_of(row, fields::kMedianUs) * us;
  f.min_s = json::number_of(row, fields::kMinUs) * us;
  f.max_s = json::number_of(row, fields::kMaxUs) * us;
  f.p90_s = json::number_of(row, fields::kP90Us) * us;
  f.p99_s = json::number_of(row, fields::kP99Us) * us;
  f.link_gbps = json::number_of(row, fields::kLinkGbps);
  f.fastest_s = f.one_way_s;
  if (const double best = json::number_of(row, fields::kPairGbpsMax); best > 0 && f.pairs > 1)
    f.fastest_s = f.one_way_s * json::number_of(row, fields::kPairGbpsMin, best) / best;
  if (!(f.one_way_s > 0) || f.messages <= 0) f.error = "the result file holds no time for it";
  // The directions the job's GB/s counted, as its file states them (the bytes its GB/s moved in
  // one message's time, over the row's bytes and pairs): 2 for every row that moves both ways
  // at once, whatever its name says (mode:bidir, memcpy_peer's dir:bi).
  const double moved = json::number_of(row, fields::kGbps) * 1e9 * f.one_way_s;
  if (bytes > 0 && moved > 0)
    f.directions = std::max(1, static_cast<int>(std::lround(moved / bytes / f.pairs)));
  return f;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// What must agree for files to be jobs of one run: the build, the machine and the settings.
std::string make_up(const json::Value& x) {
  std::string out;
  for (const char* key : {"git_revision", "world_size", "mpi", "cuda", "nccl", "sizes", "warmup"}) {
    if (const json::Value* v = x.find(key)) out += std::string(key) + "=" + v->dump(0) + "\n";
  }
  return out;
}

}  // namespace

Merge::Merge(const std::vector<std::string>& files) {
  if (files.empty())
    throw UsageError("--xfer_merge: expected 2 or more result files, comma-separated");
  Reading reading;
  for (std::size_t job = 0; job < files.size(); ++job) read_job(files, job, reading);
  jobs_ = files.size();
  check_cut_short_rows(reading);
  mark_incomplete(reading.all_rows);
  if (files.size() < 2 && !incomplete_)  // one file of a run stopped early is still merged
    throw UsageError("--xfer_merge=" + files[0] +
                     ": expected FILE,FILE[,...]: one file is merged only as what a run stopped "
                     "early kept (one of --xfer_jobs=N, or cut short)");
  record_merged(reading);
}

void Merge::read_job(const std::vector<std::string>& files, std::size_t job, Reading& reading) {
  const std::string& path = files[job];
  const json::Value doc = read_document(path);
  const json::Value* context = doc.is_object() ? doc.find("context") : nullptr;
  const json::Value* x = context ? context->find("xferbench") : nullptr;
  const json::Value* benchmarks = doc.is_object() ? doc.find("benchmarks") : nullptr;
  if (!x || !x->is_object() || !benchmarks || !benchmarks->is_array())
    throw UsageError("--xfer_merge: " + path + ": not an xferbench result file");
  const bool cut_short = note_cut_short(job, path, *x);
  read_plan(files, job, *x, reading);
  jobs_wall_s_ += json::number_of(json::member(*x, fields::kSummary), fields::kWallTimeS);
  reading.sources.push(base_name(path));
  const std::vector<std::string> names = read_rows(job, path, *benchmarks);
  check_same_run(files, job, *context, *x, cut_short, names, reading);
  reading.all_rows.push_back({path, names, cut_short});
  add_visits(job, *x);
}

bool Merge::note_cut_short(std::size_t job, const std::string& path, const json::Value& x) {
  // A job cut short is merged with the rows it kept (each from the visits it had): the
  // merged result says so, as the job's own file did.
  const json::Value* incomplete = x.find(fields::kIncomplete);
  const bool cut_short = incomplete && incomplete->is_object();
  if (cut_short) {
    const json::Value* reason = incomplete->find(fields::kReason);
    cut_short_.push_back("job " + std::to_string(job + 1) + " (" + base_name(path) +
                         ") stopped early: " + (reason ? reason->text() : "no reason given"));
    if (const json::Value* missing = incomplete->find(fields::kNotMeasured);
        missing && missing->is_array())
      for (const json::Value& name : missing->items()) not_measured_.insert(name.text());
  }
  return cut_short;
}

void Merge::read_plan(const std::vector<std::string>& files, std::size_t job, const json::Value& x,
                      Reading& reading) {
  const std::string& path = files[job];
  const json::Value* plan = x.find(fields::kPlan);
  const json::Value* seed = plan ? plan->find(fields::kSeed) : nullptr;
  const json::Value* planned_jobs = plan ? plan->find(fields::kJobs) : nullptr;
  // Fewer files than planned jobs: a run stopped between jobs (the result says so); more is
  // a mix-up.
  if (planned_jobs && planned_jobs->number() > 1 &&
      static_cast<std::size_t>(planned_jobs->number()) < files.size())
    throw UsageError("--xfer_merge: " + path + ": made as one of " + planned_jobs->dump(0) +
                     " jobs (--xfer_jobs), not of " + std::to_string(files.size()));
  if (planned_jobs)
    planned_jobs_ = std::max(planned_jobs_, static_cast<std::size_t>(planned_jobs->number()));
  if (const json::Value* visits = plan ? plan->find(fields::kVisits) : nullptr)
    planned_visits_ = static_cast<int>(visits->number());
  const double seed_value = seed ? seed->number() : 0;
  if (seed_value > 0 && std::find(reading.seen_seeds.begin(), reading.seen_seeds.end(),
                                  seed_value) != reading.seen_seeds.end())
    throw UsageError("--xfer_merge: " + path +
                     ": the same run as an earlier file (same --xfer_seed); jobs must be runs of "
                     "their own");
  reading.seen_seeds.push_back(seed_value);
  reading.seeds.push(seed ? *seed : json::Value());
}

std::vector<std::string> Merge::read_rows(std::size_t job, const std::string& path,
                                          const json::Value& benchmarks) {
  std::vector<std::string> names;
  for (const json::Value& row : benchmarks.items()) {
    if (!row.is_object() || text_of(row, fields::kRunType) == "aggregate") continue;
    std::string name = text_of(row, fields::kRunName);
    if (name.empty()) name = text_of(row, fields::kName);
    const auto suffix = name.find("/manual_time");
    if (suffix != std::string::npos) name.erase(suffix);
    const auto at = name.find("/bytes:");
    if (at == std::string::npos)
      throw UsageError("--xfer_merge: " + path + ": row '" + name + "' names no size");
    const auto repetition =
        static_cast<std::size_t>(json::number_of(row, fields::kRepetitionIndex));
    Row& r = rows_[name];
    if (r.by_repetition.empty() && r.family.empty()) {
      order_.push_back(name);
      r.family = name.substr(0, at);
      r.bytes = std::strtoull(name.c_str() + at + 7, nullptr, 10);
    }
    if (r.by_repetition.size() <= repetition) r.by_repetition.resize(repetition + 1);
    r.by_repetition[repetition].push_back(job_figure(row, r.bytes));
    r.by_repetition[repetition].back().job = static_cast<int>(job);
    names.push_back(name + "#" + std::to_string(repetition));
  }
  std::sort(names.begin(), names.end());
  return names;
}

void Merge::check_same_run(const std::vector<std::string>& files, std::size_t job,
                           const json::Value& context, const json::Value& x, bool cut_short,
                           const std::vector<std::string>& names, Reading& reading) {
  const std::string& path = files[job];
  if (job == 0) {
    reading.first_make_up = make_up(x);
    context_ = x;
    num_cpus_ = static_cast<int>(json::number_of(context, "num_cpus"));
  } else if (make_up(x) != reading.first_make_up) {
    throw UsageError("--xfer_merge: " + path +
                     ": not made by the same build on the same machine "
                     "with the same settings as " +
                     files[0]);
  }
  // Whole jobs measured the same rows; a job cut short, some of them.
  if (!cut_short && reading.first_whole.empty()) {
    reading.first_rows = names;
    reading.first_whole = path;
  } else if (!cut_short && names != reading.first_rows) {
    throw UsageError("--xfer_merge: " + path + ": measured other rows than " + reading.first_whole);
  }
  // Jobs of one run time their rows alike (machine_plan.hpp): a job given other row times
  // (--xfer_max_time, or the plan of a machine file that changed between jobs) is another run.
  const std::string digest = json::text_of(json::member(x, fields::kPlan), fields::kTimesDigest);
  if (job == 0) {
    reading.first_digest = digest;
  } else if (digest != reading.first_digest) {
    throw UsageError("--xfer_merge: " + path + ": its rows were given other times than " +
                     files[0] +
                     "'s (context.xferbench.plan.times_digest differs: --xfer_max_time, or "
                     "the plan of --xfer_jobs=auto); the jobs of one run must measure alike");
  }
}

void Merge::add_visits(std::size_t job, const json::Value& x) {
  if (const json::Value* visits = x.find(fields::kVisits); visits && visits->is_object()) {
    for (std::size_t i = 0; i < visits->keys().size(); ++i) {
      json::Value* list = visits_.find(visits->keys()[i]);
      if (!list) list = &visits_.set(visits->keys()[i], json::Value::array());
      for (json::Value visit : visits->items()[i].items()) {
        visit.set("job", static_cast<int>(job));
        list->push(visit);
      }
    }
  }
}

void Merge::check_cut_short_rows(const Reading& reading) const {
  for (const auto& [path, names, cut_short] : reading.all_rows) {
    if (!cut_short || reading.first_whole.empty()) continue;
    for (const std::string& name : names) {
      if (!std::binary_search(reading.first_rows.begin(), reading.first_rows.end(), name))
        throw UsageError("--xfer_merge: " + path + ": measured other rows than " +
                         reading.first_whole);
    }
  }
}

void Merge::record_merged(const Reading& reading) {
  json::Value merged = json::Value::object();
  merged.set(fields::kJobs, jobs_);
  merged.set("sources", reading.sources);
  merged.set("seeds", reading.seeds);
  // How a row's interval was made (pooled.hpp): the pool's size window and the noisier-row test.
  json::Value interval = json::Value::object();
  interval.set("rule", "between-job variance of log time pooled over the family's rows");
  interval.set("size_factor", kPoolSizeFactor);
  interval.set("noisier_alpha", kNoisierAlpha);
  interval.set("run_floors", json::Value());  // add_run_level: the machine file
  merged.set("interval", interval);
  context_.set(fields::kJobs, jobs_);
  context_.set("merged", merged);
  context_.set(fields::kSummary, json::Value());
}

json::Value Merge::machine_match() const { return xfer::machine_match(context_, num_cpus_); }

namespace {

// A run's position among the machine's runs: its index in the file's history; this run last.
using RunSeries = std::vector<std::pair<std::size_t, RunMean>>;

// This run's mean of a row from its jobs (ln of latency in us, as the file's history holds
// them); none unless 2 or more jobs measured it and none failed.
std::optional<RunMean> this_run_mean(const std::vector<Merge::JobFigure>& jobs) {
  SampleSet logs;
  for (const Merge::JobFigure& j : jobs) {
    if (!j.error.empty()) return std::nullopt;
    logs.add(std::log(j.one_way_s * 1e6));
  }
  if (logs.count() < 2) return std::nullopt;
  const double n = static_cast<double>(logs.count());
  return RunMean{logs.mean(), logs.stddev() * logs.stddev() / n};
}

// `other`'s means in exactly the runs of `runs`, in their order; fewer where it lacks one.
std::vector<RunMean> in_runs(const RunSeries& other, const RunSeries& runs) {
  std::vector<RunMean> picked;
  for (const auto& [run, unused] : runs) {
    const auto at = std::find_if(other.begin(), other.end(),
                                 [run = run](const auto& point) { return point.first == run; });
    if (at == other.end()) break;
    picked.push_back(at->second);
  }
  return picked;
}

}  // namespace

void Merge::add_run_level(const MachineFile& machine) {
  // Each row's means over the machine's earlier runs and this one (repetition 0).
  std::map<std::string, RunSeries> series;
  for (const auto& [name, row] : rows_) {
    if (row.by_repetition.empty()) continue;
    const std::optional<RunMean> now = this_run_mean(row.by_repetition.front());
    if (!now) continue;
    RunSeries runs = machine.run_means(row.family, row.bytes);
    runs.push_back({std::numeric_limits<std::size_t>::max(), *now});
    series.emplace(name, std::move(runs));
  }
  // A row's window: its family's rows near its size that were measured in all of its runs.
  std::map<std::string, std::vector<const std::string*>> by_family;
  for (const auto& [name, runs] : series) by_family[rows_.at(name).family].push_back(&name);
  for (const auto& [name, runs] : series) {
    Row& row = rows_.at(name);
    std::vector<std::vector<RunMean>> window;
    for (const std::string* other_name : by_family.at(row.family)) {
      if (!pools_with(rows_.at(*other_name).bytes, row.bytes)) continue;
      std::vector<RunMean> picked = in_runs(series.at(*other_name), runs);
      if (picked.size() == runs.size()) window.push_back(std::move(picked));
    }
    row.run = run_level_of(window);
  }
  context_.find("merged")->find("interval")->set("run_floors", machine.file());
}

void Merge::mark_incomplete(const std::vector<JobRows>& jobs) {
  std::vector<std::string> why = cut_short_;
  if (planned_jobs_ > jobs.size())
    why.push_back(std::to_string(jobs.size()) + " of " + std::to_string(planned_jobs_) +
                  " planned jobs merged (the run stopped before the others)");
  if (why.empty()) {
    context_.set(fields::kIncomplete, json::Value());
    return;
  }
  std::string reason = "merged from jobs cut short";
  for (const auto& w : why) reason += "; " + w;
  json::Value incomplete = json::Value::object();
  incomplete.set(fields::kReason, reason);
  incomplete.set(fields::kJobs, jobs.size());
  incomplete.set("jobs_planned", std::max(planned_jobs_, jobs.size()));
  incomplete.set("rows", order_.size());
  json::Value missing = json::Value::array();
  for (const std::string& name : not_measured_) {  // by no job at all
    if (rows_.count(name.substr(0, name.find(" (repetition"))) == 0) missing.push(name);
  }
  incomplete.set(fields::kNotMeasured, missing);
  context_.set(fields::kIncomplete, incomplete);
  incomplete_ = true;
}

std::string Merge::incomplete_reason() const {
  return json::text_of(json::member(context_, fields::kIncomplete), fields::kReason);
}

std::vector<Skip> Merge::skips() const {
  std::vector<Skip> out;
  if (const json::Value* skipped = context_.find(fields::kSkipped);
      skipped && skipped->is_array()) {
    for (const json::Value& s : skipped->items()) {
      const json::Value* path = s.find("path");
      const json::Value* reason = s.find(fields::kReason);
      if (path && reason) out.push_back({path->text(), reason->text()});
    }
  }
  return out;
}

void Merge::pool_rows() {
  std::size_t repetitions = 0;
  for (const auto& [name, row] : rows_)
    repetitions = std::max(repetitions, row.by_repetition.size());
  for (std::size_t repetition = 0; repetition < repetitions; ++repetition) {
    std::vector<JobTimes> times;
    std::vector<Row*> owners;
    for (const std::string& name : order_) {
      Row& row = rows_.at(name);
      if (repetition >= row.by_repetition.size()) continue;
      JobTimes t{row.family, row.bytes, {}, {}};
      const auto& jobs = row.by_repetition[repetition];
      const bool failed = std::any_of(jobs.begin(), jobs.end(),
                                      [](const JobFigure& j) { return !j.error.empty(); });
      if (!failed)
        for (const JobFigure& j : jobs) {
          t.seconds.push_back(j.one_way_s);
          t.jobs.push_back(j.job);
        }
      times.push_back(std::move(t));
      owners.push_back(&row);
    }
    const std::vector<Pool> pools = pool_between_jobs(times);
    for (std::size_t i = 0; i < owners.size(); ++i) {
      owners[i]->pools.resize(repetitions);
      owners[i]->pools[repetition] = pools[i];
    }
  }
}

Figure Merge::combine_jobs(const std::vector<JobFigure>& jobs, int directions, const Pool& pool,
                           const RunLevel& run) {
  Figure f;
  f.directions = directions;
  f.jobs = static_cast<int>(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (!jobs[j].error.empty()) {
      f.error = "job " + std::to_string(j + 1) + " of " + std::to_string(jobs.size()) + ": " +
                jobs[j].error;
      return f;
    }
  }
  std::vector<double> means, medians, p90s, p99s;
  double fastest = 0;
  double within_var = 0, within_df = 0;
  int with_spread = 0;
  double floor = 0;
  f.min_s = jobs.front().min_s;
  for (const JobFigure& j : jobs) {
    means.push_back(j.one_way_s);
    fastest += j.fastest_s;
    // A job's own interval without the floor it added: the spread of its visits. A job of one
    // visit of one sample (a 1 GiB round trip in its share of the time) has none: it states
    // 100%, which says "unknown", not a spread, so it adds nothing here; the spread between
    // the jobs, which holds that message's own variation, speaks for it.
    // As a variance: its own t quantile (visits - 1 degrees of freedom, samples - 1 for a job of
    // one visit) taken out, so that a visit of 2 samples (t = 12.7) does not bound the merged
    // interval at 6.5 times its spread.
    if (j.visits != 1 || j.samples != 1) {
      const double visits_pct =
          std::sqrt(std::max(0.0, j.ci95_pct * j.ci95_pct - j.floor_pct * j.floor_pct));
      const double df = j.visits > 1 ? j.visits - 1.0 : std::max(1.0, j.samples - 1.0);
      within_var += std::pow(visits_pct / 100 / t95(static_cast<std::size_t>(df)) * j.one_way_s, 2);
      within_df += df;
      ++with_spread;
    }
    floor = std::max(floor, j.floor_pct);
    f.messages += j.messages;
    f.visits += j.visits;
    f.samples += j.samples;
    f.time_limited = f.time_limited || j.time_limited;
    f.min_s = std::min(f.min_s, j.min_s);
    f.max_s = std::max(f.max_s, j.max_s);
    medians.push_back(j.median_s);
    p90s.push_back(j.p90_s);
    p99s.push_back(j.p99_s);
    // Each job read its links while it ran: the slowest reading bounds them all.
    if (j.link_gbps > 0)
      f.link_gbps = f.link_gbps > 0 ? std::min(f.link_gbps, j.link_gbps) : j.link_gbps;
  }
  if (f.link_gbps > 0) f.links = "the links the jobs recorded (context.xferbench.links)";
  const auto n = static_cast<double>(jobs.size());
  double sum = 0;
  for (const double m : means) sum += m;
  f.one_way_s = sum / n;
  f.fastest_s = fastest / n;
  f.batch = jobs.front().batch;
  f.pairs = jobs.front().pairs;
  f.floor_pct = jobs.size() >= 3 ? 0 : floor;
  const BetweenJobs between = with_run_level(between_jobs_ci95(means, pool), run);
  // The jobs with a spread of their own stand for all n in the mean's within-visit term. It
  // bounds the interval where the spread between jobs says little (fewer than 3 jobs, or a
  // row's own jobs alone), not where that spread is pooled over the family's rows: then it
  // measures all of a job's variance, its samples' part included (on one H200, visits of 13
  // samples that spread 7% while their jobs agreed to 1%, samples that alternate, stated 2x
  // what reruns needed).
  const double within_pct = with_spread == 0 || (jobs.size() >= 3 && between.rows >= 2)
                                ? 0
                                : t95(static_cast<std::size_t>(within_df)) *
                                      std::sqrt(within_var / with_spread / n) / f.one_way_s * 100;
  f.ci95_rows = between.ci95_pct >= within_pct ? between.rows : 0;
  f.ci95_df = f.ci95_rows > 0 ? between.df : 0;
  f.between_sd_pct = between.sd_pct;
  f.run_sd_pct = between.run_sd_pct;
  f.ci95_pct = stated_ci95_pct(between.ci95_pct, within_pct, f.floor_pct);
  // Quantiles of the merged samples are not in the files; the jobs' median stands for them.
  f.median_s = median_of(medians);
  f.p90_s = median_of(p90s);
  f.p99_s = median_of(p99s);
  return f;
}

void Merge::register_rows() {
  pool_rows();
  for (const std::string& name : order_) {
    Row* row = &rows_.at(name);
    // In a merge of jobs cut short, a row's visits of the planned ones (report_figure's label).
    const int planned_visits = incomplete_ ? planned_visits_ * static_cast<int>(planned_jobs_) : 0;
    register_row(row->family, row->bytes, [row, planned_visits](benchmark::State& state) {
      const auto repetition = static_cast<std::size_t>(row->calls++);
      Figure figure{"no such repetition in the merged files"};
      if (repetition < row->by_repetition.size()) {
        const auto& jobs = row->by_repetition[repetition];
        int directions = 1;
        for (const JobFigure& j : jobs) directions = std::max(directions, j.directions);
        figure = combine_jobs(jobs, directions, row->pools[repetition], row->run);
      }
      if (planned_visits > 0) figure.visits_planned = planned_visits;
      if (!figure.error.empty()) {
        state.SkipWithError(figure.error.c_str());
        return;
      }
      report_figure(state, row->bytes, figure);
    });
  }
}

}  // namespace xfer
