#include <gtest/gtest.h>

#include "base/json.hpp"
#include "harness/context.hpp"
#include "report/reporter.hpp"

namespace xfer {
namespace {

TEST(RecordedEnvironment, KeepsSettingsThatChangeResults) {
  EXPECT_TRUE(is_recorded_variable("CUDA_VISIBLE_DEVICES"));
  EXPECT_TRUE(is_recorded_variable("NCCL_P2P_LEVEL"));
  EXPECT_TRUE(is_recorded_variable("UCX_TLS"));
  EXPECT_TRUE(is_recorded_variable("OMPI_MCA_btl"));
  EXPECT_TRUE(is_recorded_variable("MPICH_GPU_SUPPORT_ENABLED"));
}

TEST(RecordedEnvironment, DropsLauncherBookkeepingAndEverythingElse) {
  EXPECT_FALSE(is_recorded_variable("OMPI_MCA_orte_hnp_uri"));
  EXPECT_FALSE(is_recorded_variable("OMPI_MCA_ess_base_jobid"));
  EXPECT_FALSE(is_recorded_variable("HOME"));
  EXPECT_FALSE(is_recorded_variable("AWS_SECRET_ACCESS_KEY"));
}

TEST(Json, WritesTypedValuesAndEscapesStrings) {
  json::Value v = json::Value::object();
  v.set("n", 3);
  v.set("x", 0.5);
  v.set("ok", true);
  v.set("none", nullptr);
  v.set("text", "a \"quoted\"\n\\line");
  json::Value list = json::Value::array();
  list.push(1);
  list.push(json::Value::raw("{\"r\":1}"));
  v.set("list", list);
  v.set("n", 4);  // replaces, keeps position
  EXPECT_EQ(v.dump(0),
            "{\"n\":4,\"x\":0.5,\"ok\":true,\"none\":null,\"text\":\"a \\\"quoted\\\"\\n\\\\line\","
            "\"list\":[1,{\"r\":1}]}");
}

TEST(Json, NonFiniteNumbersBecomeNull) {
  json::Value v = json::Value::array();
  v.push(1.0 / 0.0);
  EXPECT_EQ(v.dump(0), "[null]");
}

TEST(SpliceContext, PutsOurObjectFirstInGoogleBenchmarksContext) {
  const std::string gb =
      "{\n  \"context\": {\n    \"date\": \"x\"\n  },\n  \"benchmarks\": []\n}\n";
  const std::string out = splice_context(gb, "{\"a\": 1}");
  EXPECT_EQ(out,
            "{\n  \"context\": {\n    \"xferbench\": {\"a\": 1},\n    \"date\": \"x\"\n  },\n"
            "  \"benchmarks\": []\n}\n");
}

TEST(SpliceContext, EmptyContextGetsNoDanglingComma) {
  const std::string out = splice_context("{\n  \"context\": {},\n  \"benchmarks\": []\n}\n", "{}");
  EXPECT_EQ(out, "{\n  \"context\": {\n    \"xferbench\": {}},\n  \"benchmarks\": []\n}\n");
}

}  // namespace
}  // namespace xfer
