// The machine file's identity match (machine_match, and how a file's "match" is compared with a
// run's) and the model a merged row's interval follows (with_run_level; the floors and run
// floors a file holds, looked up within the pool's size factor) against the cases the Python
// tools are tested against too: tests/fixtures/machine-file/cases.json (README.md beside it),
// tests/tools/test_machine_file_cases.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.hpp"
#include "base/json.hpp"
#include "base/pooled.hpp"
#include "base/stats.hpp"
#include "jobs/floor.hpp"

namespace xfer {
namespace {

const json::Value& cases() {
  static const json::Value all = [] {
    std::ifstream in(std::string(XFER_FIXTURES) + "/machine-file/cases.json");
    std::ostringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
  }();
  return all;
}

const json::Value& at(const json::Value& object, const char* key) {
  static const json::Value none;
  const json::Value* found = object.find(key);
  return found ? *found : none;
}

double rel() { return at(at(cases(), "tolerance"), "rel").number(); }

void expect_near(double got, double expected, const std::string& what) {
  EXPECT_NEAR(got, expected, rel() * std::max(std::fabs(expected), 1e-12)) << what;
}

// An interval against a case's "expected" {"ci95_pct", "df"}.
void expect_interval(const BetweenJobs& got, const json::Value& c) {
  const std::string name = at(c, "name").text();
  expect_near(got.ci95_pct, at(at(c, "expected"), "ci95_pct").number(), name + ": ci95_pct");
  expect_near(got.df, at(at(c, "expected"), "df").number(), name + ": df");
}

// Whether a floor file whose "match" is `file_match` is read as this run's (`match`).
bool accepted(const json::Value& file_match, const json::Value& match) {
  json::Value file = json::Value::object();
  file.set("format", "xferbench-floor/1");
  file.set("match", file_match);
  file.set("floors", json::Value::object());
  try {
    MachineFile("cases.json", file.dump(0), match);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

TEST(MachineFileCases, TheFormatIsKnown) {
  EXPECT_EQ(at(cases(), "format").text(), "xferbench-machine-file-cases/1");
}

TEST(MachineFileCases, AContextGivesItsMatch) {
  ASSERT_FALSE(at(cases(), "match").items().empty());
  for (const json::Value& c : at(cases(), "match").items()) {
    const json::Value& context = at(c, "context");
    const json::Value got =
        machine_match(at(context, "xferbench"), static_cast<int>(at(context, "num_cpus").number()));
    EXPECT_EQ(got.dump(0), at(c, "match").dump(0)) << at(c, "name").text();
    EXPECT_TRUE(accepted(at(c, "match"), got)) << at(c, "name").text();
  }
}

TEST(MachineFileCases, AFileMatchesARunAsTheCasesSay) {
  ASSERT_FALSE(at(cases(), "same_machine").items().empty());
  for (const json::Value& c : at(cases(), "same_machine").items())
    EXPECT_EQ(accepted(at(c, "file_match"), at(c, "match")), at(c, "same").is_true())
        << at(c, "name").text();
}

TEST(MachineFileCases, TheRunLevelIsAddedToAMergedRow) {
  ASSERT_FALSE(at(cases(), "run_level").items().empty());
  for (const json::Value& c : at(cases(), "run_level").items()) {
    BetweenJobs between;
    between.ci95_pct = at(at(c, "between"), "ci95_pct").number();
    between.df = at(at(c, "between"), "df").number();
    const RunLevel run{at(at(c, "run"), "sd_pct").number(), at(at(c, "run"), "df").number()};
    expect_interval(with_run_level(between, run), c);
  }
}

// The interval the plan predicts for a row is the one the merge states: the jobs' part with
// q (J - 1) degrees of freedom, then the machine's run level.
TEST(MachineFileCases, TheMergeStatesTheIntervalThePlanPredicts) {
  ASSERT_FALSE(at(cases(), "interval").items().empty());
  for (const json::Value& c : at(cases(), "interval").items()) {
    const double jobs = at(c, "jobs").number();
    const double job_part =
        at(c, "process").number() / jobs + at(c, "visit").number() / at(c, "seconds").number();
    BetweenJobs between;
    between.df = at(c, "df_per_job_df").number() * (jobs - 1);
    between.ci95_pct =
        t95(static_cast<std::size_t>(std::floor(between.df))) * 100 * std::sqrt(job_part);
    RunLevel run;
    if (at(c, "run_level").is_number()) {
      run.sd_pct = 100 * std::sqrt(at(c, "run_level").number());
      run.df = at(c, "run_df").number();
    }
    expect_interval(with_run_level(between, run), c);
  }
}

// The run level of a window of rows from their run means, as the Python pools it.
TEST(MachineFileCases, TheRunLevelIsPooledFromRunMeans) {
  ASSERT_FALSE(at(cases(), "run_level_of").items().empty());
  for (const json::Value& c : at(cases(), "run_level_of").items()) {
    std::vector<std::vector<RunMean>> window;
    for (const json::Value& row : at(c, "window").items()) {
      window.emplace_back();
      for (const json::Value& run : row.items())
        window.back().push_back({run.items()[0].number(), run.items()[1].number()});
    }
    const RunLevel got = run_level_of(window);
    const std::string name = at(c, "name").text();
    expect_near(got.sd_pct, at(at(c, "expected"), "sd_pct").number(), name + ": sd_pct");
    expect_near(got.df, at(at(c, "expected"), "df").number(), name + ": df");
  }
}

// A file holding a row's floor and run floor gives them to the rows within the pool's size
// factor of it, and nothing to the rows beyond.
TEST(MachineFileCases, AFilesFloorsReachTheRowsItsPoolReaches) {
  ASSERT_FALSE(at(cases(), "floor").items().empty());
  for (const json::Value& c : at(cases(), "floor").items()) {
    const std::string family = at(c, "family").text();
    const json::Value& expected = at(c, "expected");
    json::Value point = json::Value::array();
    point.push(at(c, "bytes"));
    point.push(at(expected, "floor_pct"));
    json::Value points = json::Value::array();
    points.push(point);
    json::Value floors = json::Value::object();
    floors.set(family, points);
    json::Value run_floors = json::Value::object();
    const bool run_level = at(expected, "run_sd_pct").is_number();
    if (run_level) {
      json::Value run_point = json::Value::array();
      run_point.push(at(c, "bytes"));
      run_point.push(at(expected, "run_sd_pct"));
      run_point.push(at(expected, "run_df"));
      json::Value run_points = json::Value::array();
      run_points.push(run_point);
      run_floors.set(family, run_points);
    }
    json::Value file = json::Value::object();
    file.set("format", "xferbench-floor/2");
    file.set("match", json::Value::object());
    file.set("floors", floors);
    file.set("run_floors", run_floors);
    file.set("plan", json::Value());
    const MachineFile machine("cases.json", file.dump(0), json::Value());
    for (const json::Value& lookup : at(c, "lookups").items()) {
      const std::string row =
          family + "/bytes:" + std::to_string(static_cast<long long>(at(lookup, "bytes").number()));
      const bool found = at(lookup, "found").is_true();
      const std::string name = at(c, "name").text() + ": " + row;
      EXPECT_EQ(machine.pct(row), found ? at(expected, "floor_pct").number() : -1) << name;
      const RunLevel got = machine.run_level(row);
      EXPECT_EQ(got.df, found && run_level ? at(expected, "run_df").number() : 0) << name;
      EXPECT_EQ(got.sd_pct, found && run_level ? at(expected, "run_sd_pct").number() : 0) << name;
    }
  }
}

}  // namespace
}  // namespace xfer
