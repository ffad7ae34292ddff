// A machine's floor file (/1: floors; /2: also run_floors and a plan) and what --xfer_jobs=auto
// takes from its plan. The run level a merge adds to a row's interval: test_pooled.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "jobs/floor.hpp"
#include "jobs/machine_plan.hpp"

namespace xfer {
namespace {

const char* const kHost = "mpi_host/mode:pingpong";

std::string floor_v1() {
  return R"({"format": "xferbench-floor/1", "match": {"world_size": 2},
             "floors": {"mpi_host/mode:pingpong": [[8, 9.5], [4096, 4.2]]}})";
}

// A /2 file with `run_floors` and `plan` as given (JSON text).
std::string floor_v2(const std::string& run_floors, const std::string& plan) {
  return R"({"format": "xferbench-floor/2", "match": {"world_size": 2},
             "floors": {"mpi_host/mode:pingpong": [[8, 9.5], [4096, 4.2]]},
             "run_floors": )" +
         run_floors + R"(, "plan": )" + plan + "}";
}

const std::string kRunFloors = R"({"mpi_host/mode:pingpong": [[8, 2.5, 4], [65536, 1.5, 2]]})";
const std::string kPlan =
    R"({"jobs": 5, "rows": {"mpi_host/mode:pingpong": [[8, 0.5], [4096, 0.01]]},
        "budget_s": 60, "predicted_wall_s": 52.5, "runs": 4, "rule": "Neyman"})";

// What reading `text` as F.json says: "(accepted)" or the UsageError.
std::string refusal(const std::string& text) {
  try {
    MachineFile("F.json", text, json::Value());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string name(std::uint64_t bytes, const char* family = kHost) {
  return std::string(family) + "/bytes:" + std::to_string(bytes);
}

TEST(FloorFile, FormatOneHoldsFloorsOnly) {
  const MachineFile m("F.json", floor_v1(), json::Value());
  EXPECT_EQ(m.pct(name(8)), 9.5);
  EXPECT_EQ(m.pct(name(16)), 9.5);      // the nearest size within 8x
  EXPECT_EQ(m.pct(name(1 << 20)), -1);  // none that near: the built-in floor stays
  EXPECT_EQ(m.run_level(name(8)).df, 0);
  EXPECT_EQ(m.plan_jobs(), 0);
  EXPECT_EQ(m.plan_seconds(name(8)), -1);
}

TEST(FloorFile, FormatTwoHoldsRunFloorsAndAPlan) {
  const MachineFile m("F.json", floor_v2(kRunFloors, kPlan), json::Value());
  EXPECT_EQ(m.pct(name(4096)), 4.2);
  const RunLevel small = m.run_level(name(32));  // nearest: 8 B
  EXPECT_EQ(small.sd_pct, 2.5);
  EXPECT_EQ(small.df, 4);
  EXPECT_EQ(m.run_level(name(262144)).sd_pct, 1.5);  // nearest: 64 KiB
  EXPECT_EQ(m.run_level(name(4096)).df, 0);          // 8x from neither: no run term
  EXPECT_EQ(m.run_level(name(8, "mpi_host/mode:stream")).df, 0);
  EXPECT_EQ(m.plan_jobs(), 5);
  // A row's time is its own: its family at exactly its size, no nearest size.
  EXPECT_EQ(m.plan_seconds(name(8)), 0.5);
  EXPECT_EQ(m.plan_seconds(name(4096)), 0.01);
  EXPECT_EQ(m.plan_seconds(name(16)), -1);
  EXPECT_EQ(m.plan_seconds(name(8, "mpi_host/mode:stream")), -1);
}

TEST(FloorFile, FormatTwoBeforeAPlanIsMade) {
  const MachineFile m("F.json", floor_v2("{}", "null"), json::Value());
  EXPECT_EQ(m.pct(name(8)), 9.5);
  EXPECT_EQ(m.run_level(name(8)).df, 0);
  EXPECT_EQ(m.plan_jobs(), 0);
  EXPECT_TRUE(m.plan().is_null());
}

TEST(FloorFile, BadShapesNameTheFileAndTheMember) {
  const auto expect_refused = [](const std::string& text, const std::string& says) {
    const std::string message = refusal(text);
    EXPECT_EQ(message.rfind("--xfer_floor: F.json: ", 0), 0u) << message;
    EXPECT_NE(message.find(says), std::string::npos) << message;
  };
  expect_refused(R"({"format": "xferbench-floor/3", "floors": {}})", "not a floor file");
  expect_refused("{", "F.json");
  expect_refused(R"({"format": "xferbench-floor/1", "floors": {"a": [[8]]}})",
                 "floors[\"a\"][0] is [8]: expected [bytes, pct]");
  expect_refused(R"({"format": "xferbench-floor/1", "floors": {"a": [[8, -1]]}})",
                 "floors[\"a\"][0]");
  expect_refused(R"({"format": "xferbench-floor/1", "floors": []})", "floors: expected");
  expect_refused(R"({"format": "xferbench-floor/2", "floors": {}})",
                 "holds \"run_floors\" and \"plan\"");
  expect_refused(floor_v2(R"({"a": [[8, 2.5]]})", "null"),
                 "run_floors[\"a\"][0] is [8,2.5]: expected [bytes, sd_pct, df]");
  expect_refused(floor_v2(R"({"a": [[8, 2.5, 0]]})", "null"), "df >= 1");
  expect_refused(floor_v2(R"({"a": [[0.5, 2.5, 3]]})", "null"), "run_floors[\"a\"][0]");
  expect_refused(floor_v2("{}", "[]"), "plan: expected null or an object");
  expect_refused(floor_v2("{}", R"({"jobs": 2, "rows": {}})"),
                 "plan.jobs is 2: expected a whole number from 3 to 64");
  expect_refused(floor_v2("{}", R"({"jobs": 4.5, "rows": {}})"), "plan.jobs");
  expect_refused(floor_v2("{}", R"({"jobs": 4})"), "plan.rows: expected");
  expect_refused(floor_v2("{}", R"({"jobs": 4, "rows": {"a": [[8, 0]]}})"),
                 "plan.rows[\"a\"][0] is [8,0]: expected [bytes, seconds]");
  expect_refused(floor_v2("{}", R"({"jobs": 4, "rows": {}, "budget_s": "60"})"),
                 "plan.budget_s is \"60\": expected seconds or null");
  EXPECT_EQ(refusal(floor_v2("{}", R"({"jobs": 4, "rows": {}})")), "(accepted)");
}

TEST(FloorFile, AnotherMachinesFileIsRefused) {
  json::Value mine = json::Value::object();
  mine.set("world_size", 2);
  EXPECT_NO_THROW(MachineFile("F.json", floor_v1(), mine));
  mine.set("world_size", 4);
  EXPECT_THROW(MachineFile("F.json", floor_v1(), mine), UsageError);
}

TEST(FloorFile, ThisMachinesMalformedFileIsFoundSoThatReadingItSaysWhy) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("floor_plan_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto write = [&dir](const char* file, const std::string& text) {
    std::ofstream(dir / file) << text;
  };
  write("a-not-json.json", "not json");
  std::string other = floor_v1();
  other.replace(other.find("\"world_size\": 2"), 15, "\"world_size\": 4");
  write("b-other.json", other);
  write("c-mine.json", floor_v2("{}", R"({"jobs": 1, "rows": {}})"));
  json::Value mine = json::Value::object();
  mine.set("world_size", 2);
  const std::string found = find_machine_floors(dir.string(), mine);
  EXPECT_EQ(found, (dir / "c-mine.json").string());
  EXPECT_THROW(MachineFile(found, read_floor_text(found), mine), UsageError);
  mine.set("world_size", 8);
  EXPECT_EQ(find_machine_floors(dir.string(), mine), "");
  fs::remove_all(dir);
}

Config auto_config(bool max_time_given = false) {
  Config c;
  c.jobs_auto = true;
  c.precision.max_time_s = 0.1;
  c.max_time_given = max_time_given;
  return c;
}

TEST(JobsAndTimes, AutoTakesThePlansJobsAndRowTimes) {
  const MachineFile m("F.json", floor_v2(kRunFloors, kPlan), json::Value());
  const std::vector<std::string> rows = {name(8), name(16), name(4096)};
  const JobsAndTimes chosen = plan_jobs_and_times(auto_config(), m, rows);
  EXPECT_EQ(chosen.jobs, 5);
  EXPECT_EQ(chosen.source, "machine");
  EXPECT_EQ(chosen.times, "machine");
  // 16 B is not in the plan: --xfer_max_time.
  EXPECT_EQ(chosen.max_time_s, (std::vector<double>{0.5, 0.1, 0.01}));

  json::Value plan = json::Value::object();
  record_jobs_and_times(plan, chosen, m);
  EXPECT_EQ(plan.dump(0), R"({"jobs":5,"source":"machine","file":"F.json","budget_s":60,)"
                          R"("predicted_wall_s":52.5,"times":"machine","times_digest":")" +
                              chosen.times_digest + R"("})");
}

TEST(JobsAndTimes, AGivenMaxTimeKeepsEveryRowsTimeButNotTheJobs) {
  const MachineFile m("F.json", floor_v2(kRunFloors, kPlan), json::Value());
  const std::vector<std::string> rows = {name(8), name(4096)};
  Config c = auto_config(true);
  c.precision.max_time_s = 0.2;
  const JobsAndTimes chosen = plan_jobs_and_times(c, m, rows);
  EXPECT_EQ(chosen.jobs, 5);
  EXPECT_EQ(chosen.source, "machine");
  EXPECT_EQ(chosen.times, "flag");
  EXPECT_EQ(chosen.max_time_s, (std::vector<double>{0.2, 0.2}));
}

TEST(JobsAndTimes, AutoWithoutAPlanRunsThreeJobsOfTheFlagsTime) {
  const std::vector<std::string> rows = {name(8)};
  for (const MachineFile& m : {MachineFile(), MachineFile("F.json", floor_v1(), json::Value()),
                               MachineFile("F.json", floor_v2("{}", "null"), json::Value())}) {
    const JobsAndTimes chosen = plan_jobs_and_times(auto_config(), m, rows);
    EXPECT_EQ(chosen.jobs, 3);
    EXPECT_EQ(chosen.source, "default");
    EXPECT_EQ(chosen.times, "flag");
    EXPECT_EQ(chosen.max_time_s, (std::vector<double>{0.1}));
    json::Value plan = json::Value::object();
    record_jobs_and_times(plan, chosen, m);
    EXPECT_TRUE(plan.find("budget_s")->is_null());
    EXPECT_EQ(plan.find("file")->is_null(), m.file().empty());
  }
}

TEST(JobsAndTimes, GivenJobsIgnoreThePlan) {
  const MachineFile m("F.json", floor_v2(kRunFloors, kPlan), json::Value());
  Config c;
  c.jobs = 4;
  const JobsAndTimes chosen = plan_jobs_and_times(c, m, {name(8)});
  EXPECT_EQ(chosen.jobs, 4);
  EXPECT_EQ(chosen.source, "flag");
  EXPECT_EQ(chosen.times, "flag");
  EXPECT_EQ(chosen.max_time_s, (std::vector<double>{0.1}));
}

TEST(JobsAndTimes, TheDigestChangesWithAnyRowsTime) {
  const std::vector<std::string> rows = {name(8), name(16)};
  const std::string digest = times_digest(rows, {0.5, 0.1});
  EXPECT_EQ(digest.size(), 16u);
  EXPECT_EQ(times_digest(rows, {0.5, 0.1}), digest);
  EXPECT_NE(times_digest(rows, {0.5, 0.1000001}), digest);
  EXPECT_NE(times_digest({name(8), name(32)}, {0.5, 0.1}), digest);
}

}  // namespace
}  // namespace xfer
