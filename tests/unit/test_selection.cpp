// Which rows --benchmark_filter selects, and the hint when it selects none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/selection.hpp"

namespace xfer {
namespace {

RowSpec row(const std::string& family, std::uint64_t bytes) {
  RowSpec r{};
  r.family = family;
  r.name = family + "/bytes:" + std::to_string(bytes);
  r.path = family.substr(0, family.find('/'));
  r.bytes = bytes;
  return r;
}

// The rows of a run on two ranks and a GPU each, at 8 and 64 bytes.
std::vector<RowSpec> registry_rows() {
  std::vector<RowSpec> rows;
  for (const char* family :
       {"mpi_host/mode:pingpong", "mpi_host/mode:stream", "mpi_host/mode:bidir",
        "mpi_staged/host:pinned/staging:pipelined/mode:pingpong", "memcpy_peer/p2p:on/pair:0to1"}) {
    for (const std::uint64_t bytes : {8, 64}) rows.push_back(row(family, bytes));
  }
  return rows;
}

Selection select(const std::string& filter) {
  return select_rows(registry_rows(), filter, {"pingpong"}, false, {8, 64});
}

std::vector<std::string> names(const Selection& s) {
  std::vector<std::string> out;
  for (const auto i : s.rows) out.push_back(registry_rows()[i].name);
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Selection, FilterReadsTheFullRunName) {
  EXPECT_EQ(
      names(select("bytes:8/manual_time$")),
      (std::vector<std::string>{"mpi_host/mode:pingpong/bytes:8",
                                "mpi_staged/host:pinned/staging:pipelined/mode:pingpong/bytes:8",
                                "memcpy_peer/p2p:on/pair:0to1/bytes:8"}));
  EXPECT_EQ(names(select("mpi_host/mode:stream/bytes:64")),
            (std::vector<std::string>{"mpi_host/mode:stream/bytes:64"}));
  EXPECT_TRUE(select("bytes:8/manual_time$").hint.empty());
}

TEST(Selection, DollarBeforeManualTimeNamesTheRowItMeant) {
  const Selection s = select("mpi_host.*bytes:8$");
  EXPECT_TRUE(s.rows.empty());
  EXPECT_TRUE(contains(s.hint, "it probably meant mpi_host/mode:pingpong/bytes:8/manual_time:"))
      << s.hint;
  EXPECT_TRUE(contains(s.hint, "end the filter with /manual_time$")) << s.hint;
  EXPECT_FALSE(contains(s.hint, "older")) << s.hint;
  // Every row it meant is counted; a mode the filter names is kept.
  EXPECT_TRUE(contains(select("bytes:64$").hint,
                       "it probably meant mpi_host/mode:pingpong/bytes:64/manual_time (and 2 "
                       "more rows)"))
      << select("bytes:64$").hint;
  EXPECT_TRUE(contains(select("mode:stream/bytes:8$").hint,
                       "it probably meant mpi_host/mode:stream/bytes:8/manual_time:"));
}

TEST(Selection, OlderNameFormNamesTheRowItMeant) {
  const Selection host = select("mpi_host/bytes:8/");
  EXPECT_TRUE(host.rows.empty());
  EXPECT_EQ(host.hint,
            "it probably meant mpi_host/mode:pingpong/bytes:8/manual_time: older result files "
            "name it mpi_host/bytes:8/manual_time");
  const Selection staged = select("mpi_staged/host:pinned/mode:pipelined/bytes:64");
  EXPECT_EQ(staged.hint,
            "it probably meant "
            "mpi_staged/host:pinned/staging:pipelined/mode:pingpong/bytes:64/manual_time: older "
            "result files name it mpi_staged/host:pinned/mode:pipelined/bytes:64/manual_time");
}

TEST(Selection, OlderNameFormWithDollarSaysBoth) {
  const std::string hint = select("^mpi_host/bytes:8$").hint;
  EXPECT_TRUE(contains(hint,
                       "it probably meant mpi_host/mode:pingpong/bytes:8/manual_time: "
                       "older result files name it mpi_host/bytes:8/manual_time; row "
                       "names end in /manual_time"))
      << hint;
}

TEST(Selection, TypoAndNegativeFilterGetNoHint) {
  EXPECT_TRUE(select("mpi_hots").hint.empty());
  EXPECT_TRUE(select("bytes:9$").hint.empty());
  const Selection negative = select("-manual_time");
  EXPECT_TRUE(negative.rows.empty());
  EXPECT_TRUE(negative.hint.empty()) << negative.hint;
}

TEST(Selection, ModeLeftOutByXferModesStillNamesTheFlag) {
  const Selection s =
      select_rows(registry_rows(), "mpi_host/mode:stream", {"pingpong"}, true, {8, 64});
  EXPECT_TRUE(s.rows.empty());
  EXPECT_TRUE(contains(s.hint, "add --xfer_modes=stream")) << s.hint;
}

// A family that keeps rows out of the default run (harness.hpp: FamilySizes): ce_copy at 8 B
// only by default, sm_copy at none.
std::vector<RowSpec> rows_with_extras() {
  std::vector<RowSpec> rows = {row("mpi_host/mode:pingpong", 8)};
  for (const std::uint64_t bytes : {8, 64}) {
    RowSpec ce = row("ce_copy/host:pinned/dir:h2d/gpu:0", bytes);
    ce.by_default = bytes == 8;
    rows.push_back(ce);
    RowSpec sm = row("sm_copy/host:mapped/dir:h2d/gpu:0", bytes);
    sm.by_default = false;
    rows.push_back(sm);
  }
  return rows;
}

std::vector<std::string> picked(const std::string& filter) {
  const auto rows = rows_with_extras();
  std::vector<std::string> out;
  for (const auto i : select_rows(rows, filter, {"pingpong"}, false, {8, 64}).rows)
    out.push_back(rows[i].name);
  return out;
}

TEST(Selection, RowsKeptOutOfTheDefaultRunOnlyWithoutAFilter) {
  EXPECT_EQ(picked(""), (std::vector<std::string>{"mpi_host/mode:pingpong/bytes:8",
                                                  "ce_copy/host:pinned/dir:h2d/gpu:0/bytes:8"}));
}

TEST(Selection, AFilterReachesRowsKeptOutOfTheDefaultRun) {
  EXPECT_EQ(picked("sm_copy"),
            (std::vector<std::string>{"sm_copy/host:mapped/dir:h2d/gpu:0/bytes:8",
                                      "sm_copy/host:mapped/dir:h2d/gpu:0/bytes:64"}));
  EXPECT_EQ(picked("all").size(), 5u);
  EXPECT_EQ(picked("ce_copy/.*/bytes:64/").size(), 1u);
}

}  // namespace
}  // namespace xfer
