#include "run/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/pattern.hpp"

namespace xfer {

namespace {
// Rank 0's figure, on every rank (0: no known link), bit for bit.
double share_ceiling(const World& world, double mine) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &mine, sizeof bits);
  bits = world.broadcast(bits, 0);
  std::memcpy(&mine, &bits, sizeof mine);
  return mine;
}
}  // namespace

std::vector<ScheduledVisit> schedule(std::size_t rows, const VisitPlan& plan) {
  std::vector<ScheduledVisit> order;
  for (int round = 0; round < plan.visits; ++round) {
    const std::size_t begin = order.size();
    for (std::size_t row = 0; row < rows; ++row) {
      for (int repetition = 0; repetition < plan.repetitions; ++repetition)
        order.push_back({row, repetition, round});
    }
    if ((round + 1 < plan.visits || plan.shuffle_last) && order.size() - begin > 1) {
      // Fisher-Yates with the run's seed: the same order on every rank and every machine.
      std::uint64_t draw = mix64(plan.seed ^ mix64(static_cast<std::uint64_t>(round) + 1));
      for (std::size_t i = order.size() - 1; i > begin; --i) {
        draw = mix64(draw);
        std::swap(order[i], order[begin + draw % (i - begin + 1)]);
      }
    }
  }
  return order;
}

Runner::Runner(const Registry& registry, std::vector<std::size_t> selected,
               std::vector<double> floor_pct, const VisitPlan& plan, const Harness& harness,
               std::chrono::steady_clock::time_point started)
    : registry_(registry),
      selected_(std::move(selected)),
      floor_pct_(std::move(floor_pct)),
      plan_(plan),
      h_(harness),
      started_(started),
      schedule_(schedule(selected_.size(), plan)),
      visits_(selected_.size(), std::vector<std::vector<VisitRecord>>(plan.repetitions)),
      calls_(selected_.size(), 0),
      messages_(selected_.size(), 0),
      last_(selected_.size(), std::vector<std::size_t>(plan.repetitions, 0)) {
  for (std::size_t at = 0; at < schedule_.size(); ++at)
    last_[schedule_[at].row][schedule_[at].repetition] = at;
  if (!h_.config.test_slowdown.empty()) {
    const Slowdown slowdown = parse_slowdown("--xfer_test_slowdown", h_.config.test_slowdown);
    slowdown_ = std::make_unique<std::regex>(slowdown.pattern, std::regex::extended);
    slowdown_pct_ = slowdown.pct;
  }
}

void Runner::register_rows() {
  for (std::size_t i = 0; i < selected_.size(); ++i) {
    const RowSpec& spec = registry_.rows()[selected_[i]];
    register_row(spec.family, spec.bytes, [this, i](benchmark::State& state) { report(state, i); });
  }
}

Row Runner::row_for(const ScheduledVisit& scheduled) const {
  const RowSpec& spec = registry_.rows()[selected_[scheduled.row]];
  // Each visit gets its share of the row's time and minimums, and a pattern of its own.
  Precision share = h_.config.precision;
  if (scheduled.row < plan_.max_time_s.size()) share.max_time_s = plan_.max_time_s[scheduled.row];
  const double visits = plan_.visits * plan_.jobs;  // the row's visits in all jobs together
  share.max_time_s /= visits;
  share.min_time_s /= visits;
  share.min_messages =
      static_cast<std::int64_t>(std::ceil(static_cast<double>(share.min_messages) / visits));
  share.min_samples_on_time = visits >= 3 ? 1 : 2;
  // The visits' mean is known to the target once each visit is known to target * sqrt(visits).
  share.target_pct *= std::sqrt(visits);
  const auto ordinal =
      static_cast<std::uint64_t>(scheduled.round * plan_.repetitions + scheduled.repetition);
  const std::uint64_t seed = mix64(spec.seed + ordinal);
  double scale = random_factor(h_.config.test_shift_pct, mix64(seed ^ 0x5EEDULL));
  if (slowdown_ && std::regex_search(spec.name, *slowdown_)) scale *= 1 + slowdown_pct_ / 100;
  // Whether a row above kLargeRowBytes warms up: its path's BigWarmUp (harness.hpp).
  const bool family_new = warmed_.count(spec.family) == 0;
  const bool warm_large =
      spec.big_warm_up == BigWarmUp::EveryVisit || family_new ||
      (spec.big_warm_up == BigWarmUp::FirstInProcess && warmed_large_.count(spec.family) == 0);
  Row row{spec.name, spec.path, spec.bytes, seed, share, messages_[scheduled.row],
          scale,     warm_large};
  row.round = scheduled.round;
  return row;
}

void Runner::visit(const ScheduledVisit& scheduled) {
  auto& done = visits_[scheduled.row][scheduled.repetition];
  // After a failed visit the figure is failed: the rest of its visits would change nothing.
  if (stop_.stopped() ||
      std::any_of(done.begin(), done.end(), [](const VisitRecord& r) { return r.visit.failed(); }))
    return;
  const Row row = row_for(scheduled);
  const RowSpec& spec = registry_.rows()[selected_[scheduled.row]];
  VisitRecord record;
  record.round = scheduled.round;
  record.repetition = scheduled.repetition;
  record.after = last_row_;
  const auto begin = std::chrono::steady_clock::now();
  record.at_s = std::chrono::duration<double>(begin - started_).count();
  h_.watchdog.arm(row.name);
  set_current_row_bytes(row.bytes);
  try {
    std::optional<links::RunningReader> reading;  // rank 0 holds the link answers
    if (registry_.links().wants_running_read(spec.family))
      reading.emplace(registry_.links(), spec.family);
    spec.fn(record.visit, h_, row);
  } catch (const std::exception& e) {  // a path bug, not a measurement: still a failed visit
    record.visit.fail(row.name + ": " + rank_prefix() + e.what());
  }
  set_current_row_bytes(0);
  // Can every rank go on? (A GPU fault leaves a process unable to use its GPU again; a
  // signal asks the run to stop.) One rank's answer stops every rank after the same visit.
  stop_ = h_.world.first_stop(stop_here());
  h_.watchdog.disarm();
  record.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (record.visit.measured() && messages_[scheduled.row] == 0)
    messages_[scheduled.row] = record.visit.measurement().messages;
  if (!h_.config.test_rank_dump.empty()) {
    std::ofstream dump(
        h_.config.test_rank_dump + "/rank" + std::to_string(h_.world.rank()) + ".txt",
        std::ios::app);
    dump << row.name << " round:" << scheduled.round << " repetition:" << scheduled.repetition
         << " messages:" << (record.visit.measured() ? record.visit.measurement().messages : 0)
         << "\n";
  }
  last_row_ = row.name;
  if (record.visit.measured()) {
    warmed_.insert(spec.family);
    if (spec.bytes > kLargeRowBytes) warmed_large_.insert(spec.family);
  }
  done.push_back(std::move(record));
  if (observer_)
    observer_->visited(next_ == schedule_.size() || schedule_[next_].round != scheduled.round ||
                       stop_.stopped());
}

void Runner::run_until(std::size_t index, int repetition) {
  const std::size_t last = last_[index][repetition];
  while (next_ <= last && !stop_.stopped()) visit(schedule_[next_++]);
}

void Runner::report(benchmark::State& state, std::size_t index) {
  const int repetition = calls_[index]++;
  if (repetition >= plan_.repetitions) {  // a call the schedule has no visits for
    const std::string error = "Google Benchmark called this row " + std::to_string(repetition + 1) +
                              " times; xferbench planned " + std::to_string(plan_.repetitions) +
                              " (one per repetition): not reported";
    state.SkipWithError(error.c_str());
    return;
  }
  run_until(index, repetition);  // nothing more runs once the run has stopped
  // After a stop, a figure reports the visits it had (the file is marked incomplete); one that
  // had none is left out of the results.
  const auto& visits = visits_[index][repetition];
  if (visits.empty()) {
    state.SkipWithError(kNotMeasured);
    return;
  }
  Figure figure = combine(visits, floor_pct_[index]);
  figure.visits_planned = plan_.visits;
  if (!figure.error.empty()) {
    state.SkipWithError(figure.error.c_str());
    return;
  }
  const RowSpec& spec = registry_.rows()[selected_[index]];
  // Rank 0 knows the links; every rank takes its ceiling, so all decide alike.
  figure.link_gbps = share_ceiling(
      h_.world, registry_.links().row_ceiling_gbps(spec.family, figure.directions, figure.pairs));
  figure.links = registry_.links().route_text(spec.family);
  report_figure(state, spec.bytes, figure);
}

std::vector<KeptFigure> Runner::kept(std::vector<std::string>* not_measured) const {
  std::vector<KeptFigure> out;
  for (std::size_t i = 0; i < selected_.size(); ++i) {
    const RowSpec& spec = registry_.rows()[selected_[i]];
    for (int repetition = 0; repetition < plan_.repetitions; ++repetition) {
      const auto& visits = visits_[i][static_cast<std::size_t>(repetition)];
      if (visits.empty()) {
        if (not_measured)
          not_measured->push_back(
              spec.name +
              (plan_.repetitions > 1 ? " (repetition " + std::to_string(repetition) + ")" : ""));
        continue;
      }
      KeptFigure k{spec.family, spec.bytes, repetition, plan_.repetitions,
                   combine(visits, floor_pct_[i])};
      k.figure.visits_planned = plan_.visits;
      out.push_back(std::move(k));
    }
  }
  return out;
}

json::Value Runner::visits_json() const {
  json::Value out = json::Value::object();
  for (std::size_t i = 0; i < selected_.size(); ++i) {
    json::Value list = json::Value::array();
    for (const auto& repetition : visits_[i]) {
      for (const auto& record : repetition) list.push(visit_json(record));
    }
    out.set(registry_.rows()[selected_[i]].name, list);
  }
  return out;
}

}  // namespace xfer
