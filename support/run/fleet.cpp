#include "run/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>

#include "base/error.hpp"
#include "base/fields.hpp"
#include "base/files.hpp"
#include "base/failpoint.hpp"
#include "base/pattern.hpp"
#include "base/rounds.hpp"
#include "base/stats.hpp"
#include "base/stop.hpp"
#include "report/displays.hpp"

namespace xfer {
namespace {

constexpr const char* kFormat = "xferbench-fleet/1";
constexpr const char* kRoundsFormat = "xferbench-fleet-rounds/1";
const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kFinalizeBound_s = 10;
constexpr int kRoundOfUpTo = 64;  // ranks up to which each pair's round is written out

bool between_ranks(const links::Crossing& c) {
  using K = links::Crossing::Kind;
  return c.kind == K::RankHostMemory || c.kind == K::RankHostStaged || c.kind == K::RankGpuMemory;
}

// The rounds of a --xfer_fleet_rounds file, checked against `ranks`; throws UsageError naming
// the file and what is wrong.
std::vector<RankPairs> parse_rounds(const std::string& file, const std::string& text, int ranks) {
  const std::string where = "--xfer_fleet_rounds=" + file + ": ";
  json::Value doc;
  try {
    doc = json::parse(text);
  } catch (const std::exception& e) {
    throw UsageError(where + "not JSON (" + e.what() + ")");
  }
  const json::Value* format = doc.find("format");
  if (!format || format->text() != kRoundsFormat)
    throw UsageError(where + "expected a \"format\": \"" + kRoundsFormat +
                     "\" object (tools/fleet judge --rounds-out writes one)");
  const json::Value* n = doc.find("ranks");
  if (!n || n->number() != ranks)
    throw UsageError(where + "written for " + (n ? n->dump(0) : std::string("unknown")) +
                     " ranks; this run has " + std::to_string(ranks));
  const json::Value* rounds = doc.find("rounds");
  if (!rounds || !rounds->is_array())
    throw UsageError(where + "expected \"rounds\": [[[A, B], ...], ...]");
  std::vector<RankPairs> out;
  std::size_t pairs = 0;
  for (const auto& round : rounds->items()) {
    RankPairs these;
    std::set<int> busy;
    for (const auto& pair : round.items()) {
      const auto& ab = pair.items();
      const auto whole = [&](std::size_t i) {
        return ab.size() == 2 && ab[i].is_number() && ab[i].number() >= 0 &&
               ab[i].number() < ranks && ab[i].number() == std::floor(ab[i].number());
      };
      if (!whole(0) || !whole(1) || ab[0].number() == ab[1].number())
        throw UsageError(where + "round " + std::to_string(out.size()) + ": " + pair.dump(0) +
                         " is not a pair of two ranks from 0 to " + std::to_string(ranks - 1));
      const int a = static_cast<int>(ab[0].number());
      const int b = static_cast<int>(ab[1].number());
      if (!busy.insert(a).second || !busy.insert(b).second)
        throw UsageError(where + "round " + std::to_string(out.size()) +
                         " has a rank in two pairs (the pairs of a round run at once)");
      these.emplace_back(std::min(a, b), std::max(a, b));
    }
    pairs += these.size();
    if (!these.empty()) out.push_back(these);
  }
  if (pairs == 0) throw UsageError(where + "no pair to measure");
  return out;
}

// What one series (a selected row between ranks) measured.
struct Series {
  std::size_t row = 0;                        // index into the registry's rows
  std::vector<std::vector<double>> time_us;   // [pass][upper_index]: NaN not measured
  std::vector<std::vector<int>> round_of;     // [pass][upper_index]: -1 none
  json::Value retests = json::Value::array();  // --xfer_fleet_rounds: one entry per round
  std::vector<double> times_us;               // every pair figure, for the row
  std::int64_t messages = 0;
  bool time_limited = false;
};

// Times in us to the nanosecond (a pair's figure is no finer), so that a fleet of 1,024 hosts,
// 523,776 pairs a series and pass, writes about 10 bytes a pair rather than 19.
json::Value numbers(const std::vector<double>& values) {
  json::Value out = json::Value::array();
  for (const double v : values)
    out.push(std::isfinite(v) ? json::Value(std::round(v * 1e3) / 1e3) : json::Value());
  return out;
}

class Fleet : public RunProgress {
 public:
  Fleet(const Registry& registry, std::vector<std::size_t> rows, const Harness& h,
        std::uint64_t seed, std::vector<std::vector<RankPairs>> passes,
        std::vector<std::vector<int>> relabels, bool retest)
      : registry_(registry),
        h_(h),
        seed_(seed),
        passes_(std::move(passes)),
        relabels_(std::move(relabels)),
        retest_(retest) {
    const int n = h.world.size();
    const std::size_t upper = static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2;
    for (const std::size_t row : rows) {
      Series s;
      s.row = row;
      if (!retest_) {
        s.time_us.assign(passes_.size(), std::vector<double>(upper, kNaN));
        s.round_of.assign(passes_.size(), std::vector<int>(upper, -1));
      }
      series_.push_back(std::move(s));
    }
    for (const auto& pass : passes_) planned_ += static_cast<int>(pass.size());
    hosts_of_ranks_ = h.world.all_gather(h.world.host());  // collective
  }

  // Every round of every pass, each series once a round; `after_round` after each (rank 0
  // keeps the file current). Stops after the round in which a visit failed or a rank was asked
  // to stop.
  void measure(const std::function<void()>& after_round) {
    for (std::size_t p = 0; p < passes_.size() && !ended(); ++p) {
      for (std::size_t r = 0; r < passes_[p].size() && !ended(); ++r) {
        const auto begin = std::chrono::steady_clock::now();
        measure_round(static_cast<int>(p), static_cast<int>(r), passes_[p][r]);
        round_s_.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
        ++measured_;
        stop_ = h_.world.first_stop(stop_here());
        after_round();
      }
    }
  }

  bool ended() const { return stop_.stopped() || !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  int measured() const { return measured_; }
  int planned() const { return planned_; }
  std::size_t series() const { return series_.size(); }

  // Why the schedule is not whole ("" when it is).
  std::string incomplete() const {
    if (measured_ == planned_) return "";
    std::string why = "measured " + std::to_string(measured_) + " of " + std::to_string(planned_) +
                      " rounds: ";
    return why + (!failure_.empty() ? failure_ : stop_.stopped() ? stop_.reason : "under way");
  }

  json::Value to_json() const {
    json::Value out = json::Value::object();
    out.set("format", kFormat);
    const int n = h_.world.size();
    out.set("ranks", n);
    json::Value hosts = json::Value::array();
    json::Value host_of = json::Value::array();
    std::vector<std::string> seen;
    for (const auto& host : hosts_of_ranks_) {
      auto at = std::find(seen.begin(), seen.end(), host);
      if (at == seen.end()) {
        seen.push_back(host);
        hosts.push(host);
        at = seen.end() - 1;
      }
      host_of.push(static_cast<int>(at - seen.begin()));
    }
    out.set("hosts", hosts);
    out.set("host_of", host_of);
    out.set("seed", seed_);
    json::Value passes = json::Value::array();
    for (std::size_t p = 0; p < relabels_.size(); ++p) {
      json::Value pass = json::Value::object();
      pass.set("pass", static_cast<int>(p));
      json::Value relabel = json::Value::array();
      for (const int x : relabels_[p]) relabel.push(x);
      pass.set("relabel", relabel);
      passes.push(pass);
    }
    out.set("passes", passes);
    json::Value series = json::Value::array();
    json::Value retests = json::Value::array();
    for (const Series& s : series_) {
      const RowSpec& spec = registry_.rows()[s.row];
      for (std::size_t p = 0; p < s.time_us.size(); ++p) {
        json::Value one = json::Value::object();
        one.set("path", spec.path);
        one.set("family", spec.family);
        one.set("bytes", spec.bytes);
        one.set("pass", static_cast<int>(p));
        one.set("time_us", numbers(s.time_us[p]));
        if (n <= kRoundOfUpTo) {  // beyond, the judge makes them from the pass's relabel
          json::Value round_of = json::Value::array();
          for (const int r : s.round_of[p]) round_of.push(r);
          one.set("round_of", round_of);
        }
        series.push(one);
      }
      for (const auto& r : s.retests.items()) retests.push(r);
    }
    out.set("series", series);
    out.set("retests", retests);
    json::Value rounds = json::Value::object();
    rounds.set("planned", planned_);
    rounds.set("measured", measured_);
    rounds.set("wall_s", numbers(round_s_));  // each round's, all its series (rank 0's clock)
    out.set("rounds", rounds);
    out.set("lost", json::Value::array());
    const std::string why = incomplete();
    out.set("incomplete", why.empty() ? json::Value() : json::Value(why));
    return out;
  }

  // The series' row: the median pair's figure, its interval from the pairs' spread.
  Figure figure(std::size_t i) const {
    const Series& s = series_[i];
    if (s.times_us.empty()) return Figure{failure_.empty() ? std::string(kNotMeasured) : failure_};
    SampleSet pairs;  // the row's quantiles as a visit's samples give them (stats.hpp)
    for (const double t : s.times_us) pairs.add(t);
    const std::vector<double> q = pairs.quantiles({0.5, 0.9, 0.99});
    const double median = q[0];
    Figure f;
    f.one_way_s = median * 1e-6;
    f.fastest_s = pairs.min() * 1e-6;
    f.messages = s.messages;
    f.visits = 1;
    f.time_limited = s.time_limited;
    f.samples = pairs.count();
    f.median_s = median * 1e-6;
    f.min_s = f.fastest_s;
    f.max_s = pairs.max() * 1e-6;
    f.p90_s = q[1] * 1e-6;
    f.p99_s = q[2] * 1e-6;
    // The median of n pairs: its standard error is about 1.2533 sd / sqrt(n), the sd of log
    // time taken robustly from the pairs' MAD.
    if (pairs.count() >= 3) {
      SampleSet dev;
      for (const double t : s.times_us) dev.add(std::fabs(std::log(t / median)));
      const double sd = 1.4826 * dev.quantile(0.5);
      f.ci95_pct = 100 * std::expm1(1.96 * 1.2533 * sd / std::sqrt(pairs.count()));
    } else {
      f.ci95_pct = 100;
    }
    return f;
  }

  const RowSpec& spec(std::size_t i) const { return registry_.rows()[series_[i].row]; }

  const RunStop& stop() const override { return stop_; }
  std::vector<KeptFigure> kept(std::vector<std::string>* not_measured) const override {
    std::vector<KeptFigure> out;
    for (std::size_t i = 0; i < series_.size(); ++i) {
      if (series_[i].times_us.empty()) {
        if (not_measured) not_measured->push_back(spec(i).family + "/fleet:median");
        continue;
      }
      out.push_back({spec(i).family + "/fleet:median", spec(i).bytes, 0, 1, figure(i)});
    }
    return out;
  }
  int round_reached() const override { return measured_ - 1; }
  int rounds() const override { return planned_; }
  json::Value visits_json() const override { return json::Value::object(); }

 private:
  void measure_round(int pass, int round, const RankPairs& pairs) {
    const Harness h{h_.config, h_.world, h_.watchdog, pairs};
    const int n = h_.world.size();
    // A peer that goes silent in this round is this round's partner (the watchdog names it).
    if (const PairRole role = role_of(pairs, h_.world.rank()); role.active())
      h_.watchdog.name_peer("rank " + std::to_string(role.peer) + " on " +
                            hosts_of_ranks_[static_cast<std::size_t>(role.peer)]);
    for (Series& s : series_) {
      const RowSpec& spec = registry_.rows()[s.row];
      Row row{spec.name, spec.path, spec.bytes,
              mix64(spec.seed ^ mix64(static_cast<std::uint64_t>(pass * 100003 + round))),
              h_.config.precision};
      row.round = round;
      row.per_pair = true;
      Visit visit;
      const std::string name = spec.name + " (fleet pass " + std::to_string(pass) + " round " +
                               std::to_string(round) + ")";
      h_.watchdog.arm(name);
      set_current_row_bytes(row.bytes);
      try {
        spec.fn(visit, h, row);
      } catch (const std::exception& e) {
        visit.fail(row.name + ": " + rank_prefix() + e.what());
      }
      set_current_row_bytes(0);
      h_.watchdog.disarm();
      if (visit.failed() || !visit.measured()) {  // agreed: the same on every rank
        failure_ = "pass " + std::to_string(pass) + " round " + std::to_string(round) + ": " +
                   (visit.failed() ? visit.error() : spec.name + " measured nothing");
        return;
      }
      const Measurement& m = visit.measurement();
      s.messages += m.messages;
      s.time_limited = s.time_limited || m.time_limited;
      json::Value times = json::Value::array();
      json::Value measured_pairs = json::Value::array();
      for (std::size_t k = 0; k < pairs.size() && k < m.pair_seconds.size(); ++k) {
        const double us = m.pair_seconds[k] / static_cast<double>(m.messages) * 1e6;
        const auto [a, b] = pairs[k];
        s.times_us.push_back(us);
        if (retest_) {
          json::Value pair = json::Value::array();
          pair.push(a);
          pair.push(b);
          measured_pairs.push(pair);
          times.push(us);
        } else {
          const std::size_t at = upper_index(n, a, b);
          s.time_us[static_cast<std::size_t>(pass)][at] = us;
          s.round_of[static_cast<std::size_t>(pass)][at] = round;
        }
      }
      if (retest_) {
        json::Value entry = json::Value::object();
        entry.set("path", spec.path);
        entry.set("family", spec.family);
        entry.set("bytes", spec.bytes);
        entry.set("round", round);
        entry.set("pairs", measured_pairs);
        entry.set("time_us", times);
        s.retests.push(entry);
      }
    }
  }

  const Registry& registry_;
  const Harness& h_;
  std::uint64_t seed_;
  std::vector<std::vector<RankPairs>> passes_;
  std::vector<std::vector<int>> relabels_;
  bool retest_;
  std::vector<Series> series_;
  std::vector<std::string> hosts_of_ranks_;
  std::vector<double> round_s_;
  int planned_ = 0;
  int measured_ = 0;
  std::string failure_;
  RunStop stop_;
};

// Rank 0 rewrites the result file with what the rounds so far measured, marked incomplete,
// so that a run killed outright keeps them (a plain JSON file only, as the reporter's
// checkpoints).
void keep_current(const Config& config, const World& world, const json::Value& context,
                  const Fleet& fleet) {
  if (!world.is_root() || config.out_path.empty() || config.out_format != "json" ||
      config.out_path.rfind("/dev/", 0) == 0 || fleet.measured() == fleet.planned())
    return;
  json::Value ctx = context;
  ctx.set("fleet", fleet.to_json());
  json::Value incomplete = json::Value::object();
  incomplete.set(fields::kReason,
                 "the fleet did not finish: it was stopped (a signal, a lost rank, the watchdog) "
                 "after this document was written, " +
                     std::to_string(fleet.measured()) + " of " +
                     std::to_string(fleet.planned()) + " rounds measured");
  ctx.set(fields::kIncomplete, incomplete);
  std::vector<std::string> rows;
  for (const KeptFigure& k : fleet.kept(nullptr)) rows.push_back(kept_row_json(k).dump(2));
  if (const std::string error = write_whole(config.out_path, rows_document(rows, ctx.dump(2)));
      !error.empty())
    std::fprintf(stderr, "xferbench: --benchmark_out=%s: %s\n", config.out_path.c_str(),
                 error.c_str());
}

// The rounds to measure: every pair in each pass, or the file's. Agreed: rank 0 reads the
// file, every rank checks the same text. Throws UsageError.
void plan_rounds(const Config& config, const World& world, std::uint64_t seed,
                 std::vector<std::vector<RankPairs>>& passes,
                 std::vector<std::vector<int>>& relabels) {
  const int n = world.size();
  if (config.fleet_rounds.empty()) {
    for (int p = 0; p < config.fleet_passes; ++p) {
      relabels.push_back(pass_relabel(n, p, seed));
      passes.push_back(circle_rounds(n, relabels.back()));
    }
    return;
  }
  std::string text;
  std::uint64_t readable = 1;
  if (world.is_root()) {
    std::ifstream in(config.fleet_rounds);
    std::ostringstream read;
    read << in.rdbuf();
    readable = in ? 1 : 0;
    text = read.str();
  }
  if (world.broadcast(readable, 0) == 0)
    throw UsageError("--xfer_fleet_rounds=" + config.fleet_rounds +
                     ": cannot read it (a rounds file from tools/fleet judge --rounds-out)");
  passes.push_back(parse_rounds(config.fleet_rounds, world.broadcast(text, 0), n));
}

}  // namespace

int run_fleet(const Registry& registry, const Selection& selection, const Harness& harness,
              json::Value context, std::uint64_t seed,
              std::chrono::steady_clock::time_point started) {
  const Config& config = harness.config;
  const World& world = harness.world;
  const bool root = world.is_root();
  std::vector<std::size_t> rows;
  for (const std::size_t i : selection.rows)
    if (between_ranks(registry.rows()[i].crossing)) rows.push_back(i);
  if (rows.empty()) {
    if (root)
      std::fprintf(stderr,
                   "xferbench: nothing was measured: --xfer_fleet measures paths between ranks "
                   "(mpi_host, mpi_staged, mpi_cuda_aware, nccl_sendrecv), and none of them is "
                   "selected and can run here\n");
    return 1;
  }
  std::vector<std::vector<RankPairs>> passes;
  std::vector<std::vector<int>> relabels;
  try {
    plan_rounds(config, world, seed, passes, relabels);
  } catch (const UsageError& e) {
    if (root) std::fprintf(stderr, "xferbench: %s\n", e.what());
    return 2;
  }
  Fleet fleet(registry, rows, harness, seed, passes, relabels, !config.fleet_rounds.empty());
  if (root) {
    std::fprintf(stderr,
                 "xferbench: fleet of %d ranks: %d round(s)%s, %zu series, all pairs of a round "
                 "at once\n",
                 world.size(), fleet.planned(),
                 config.fleet_rounds.empty()
                     ? (" in " + std::to_string(passes.size()) + " pass(es)").c_str()
                     : (" from " + config.fleet_rounds).c_str(),
                 rows.size());
    std::fflush(stderr);
  }
  fleet.measure([&] {
    keep_current(config, world, context, fleet);
    if (root && !config.list_tests)
      std::fprintf(stderr, "xferbench: fleet round %d of %d measured\n", fleet.measured(),
                   fleet.planned());
  });
  for (std::size_t i = 0; i < fleet.series(); ++i) {
    const KeptFigure k{fleet.spec(i).family + "/fleet:median", fleet.spec(i).bytes, 0, 1,
                       fleet.figure(i)};
    register_row(k.family, k.bytes, [k](benchmark::State& state) {
      if (!k.figure.error.empty()) {
        state.SkipWithError(k.figure.error.c_str());
        return;
      }
      report_figure(state, k.bytes, k.figure);
    });
  }
  RankZeroReporter reporter(config, world, context, registry.skips(), started, &fleet);
  reporter.add_late_field("fleet", [&fleet] { return fleet.to_json(); });
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (root && !fleet.failure().empty())
    std::fprintf(stderr, "xferbench: the fleet stopped after a failed visit, %s\n",
                 fleet.incomplete().c_str());
  if (root && reporter.failed_rows().empty() && !config.out_path.empty())
    std::fprintf(stderr, "xferbench: judge it with: tools/fleet judge %s%s\n",
                 config.fleet_rounds.empty() ? "" : "FLEET.json --retest ",
                 config.out_path.c_str());
  int status = 0;
  if (fleet.stop().interrupted())
    status = kInterruptedStatus;
  else if (fleet.stop().stopped() || !fleet.failure().empty() || !reporter.failed_rows().empty() ||
           reporter.output_failed())
    status = 1;
  // Every rank has talked to every other: a finalize that hangs (world.hpp) must not hold the
  // written result hostage.
  world.bound_finalize(kFinalizeBound_s, root ? status : 0);
  return status;
}

}  // namespace xfer
