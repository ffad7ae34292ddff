// json::parse: how --xfer_merge reads the result files of separate jobs back.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "base/json.hpp"

namespace xfer {
namespace {

std::string parse_error(const std::string& text) {
  try {
    json::parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(JsonParse, ReadsBackWhatDumpWrites) {
  json::Value v = json::Value::object();
  v.set("n", 4);
  v.set("x", 0.1);
  v.set("big", 12345678901234LL);
  v.set("ok", true);
  v.set("no", false);
  v.set("none", nullptr);
  v.set("text", "a \"quoted\"\n\\line\t\x01 caf\xc3\xa9");
  json::Value list = json::Value::array();
  list.push(-1);
  list.push(json::Value::array());
  list.push(json::Value::object());
  list.push(2.5e-7);
  v.set("list", list);
  for (const int indent : {0, 2}) {
    const json::Value back = json::parse(v.dump(indent));
    EXPECT_EQ(back.dump(0), v.dump(0)) << indent;
  }
  const json::Value back = json::parse(v.dump());
  EXPECT_EQ(back.keys(),
            (std::vector<std::string>{"n", "x", "big", "ok", "no", "none", "text", "list"}));
  EXPECT_EQ(back.find("x")->number(), 0.1);  // 17 digits: the same double
  EXPECT_EQ(back.find("big")->number(), 12345678901234.0);
  EXPECT_TRUE(back.find("ok")->is_true());
  EXPECT_TRUE(back.find("none")->is_null());
  EXPECT_EQ(back.find("text")->text(), "a \"quoted\"\n\\line\t\x01 caf\xc3\xa9");
}

TEST(JsonParse, EscapesBecomeUtf8) {
  EXPECT_EQ(json::parse(R"("\u00e9\/\b\f\r")").text(), "\xc3\xa9/\b\f\r");
  EXPECT_EQ(json::parse(R"("\u20AC")").text(), "\xe2\x82\xac");
  // A surrogate pair is one character outside the basic plane (U+1F600).
  EXPECT_EQ(json::parse(R"("\ud83d\ude00")").text(), "\xf0\x9f\x98\x80");
}

TEST(JsonParse, ReadsNonFiniteNumbersAsPythonWritesThem) {
  const json::Value v = json::parse("[NaN, Infinity, -Infinity, -0.5e1]");
  ASSERT_EQ(v.items().size(), 4u);
  EXPECT_TRUE(std::isnan(v.items()[0].number()));
  EXPECT_EQ(v.items()[1].number(), HUGE_VAL);
  EXPECT_EQ(v.items()[2].number(), -HUGE_VAL);
  EXPECT_EQ(v.items()[3].number(), -5.0);
}

TEST(JsonParse, RefusesWhatIsNotJsonNamingWhere) {
  EXPECT_EQ(parse_error(R"({"a": 1,})"), "not JSON at offset 8: expected a key");
  EXPECT_EQ(parse_error("[1 2]"), "not JSON at offset 3: expected ']'");
  EXPECT_EQ(parse_error("{} {}"), "not JSON at offset 3: text after the document");
  EXPECT_EQ(parse_error(""), "not JSON at offset 0: unexpected end");
  EXPECT_EQ(parse_error("old content old content"), "not JSON at offset 0: unexpected character");
  EXPECT_NE(parse_error(R"({"a": "unterminated)").find("unterminated string"), std::string::npos);
  EXPECT_NE(parse_error("\"a\nb\"").find("control character"), std::string::npos);
  EXPECT_NE(parse_error(R"("\q")").find("bad escape"), std::string::npos);
  EXPECT_NE(parse_error(R"("\u12")").find("\\u escape"), std::string::npos);
  EXPECT_NE(parse_error("[0x10]").find("not a JSON number"), std::string::npos);
  EXPECT_NE(parse_error("-"), "(accepted)");
  EXPECT_NE(parse_error("[-]"), "(accepted)");
  EXPECT_NE(parse_error("nul"), "(accepted)");
  // A high surrogate must be followed by a low one, not by any escape.
  EXPECT_NE(parse_error(R"("\ud83d\u0041")"), "(accepted)");
}

TEST(JsonParse, RefusesNestingDeeperThanAHundred) {
  const auto nested = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') +
           std::string(static_cast<std::size_t>(depth), ']');
  };
  EXPECT_NO_THROW(json::parse(nested(100)));
  EXPECT_NE(parse_error(nested(102)).find("nested more than 100 deep"), std::string::npos);
  // Deep enough to overflow the stack of a parser without the limit: refused, not a crash.
  EXPECT_NE(parse_error(nested(1000000)).find("nested more than 100 deep"), std::string::npos);
}

}  // namespace
}  // namespace xfer
