#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/sizes.hpp"

namespace xfer {
namespace {

using Sizes = std::vector<std::uint64_t>;

TEST(SizeParser, PlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(parse_size("8", "--f"), 8u);
  EXPECT_EQ(parse_size("8B", "--f"), 8u);
  EXPECT_EQ(parse_size("1K", "--f"), 1024u);
  EXPECT_EQ(parse_size("4MiB", "--f"), 4u << 20);
  EXPECT_EQ(parse_size("1gib", "--f"), 1u << 30);
  EXPECT_EQ(parse_size("2T", "--f"), 2ULL << 40);
}

TEST(SizeParser, ListsAreSortedAndDeduplicated) {
  EXPECT_EQ(parse_size_list("8,1K,4MiB", "--f"), (Sizes{8, 1024, 4u << 20}));
  EXPECT_EQ(parse_size_list("1K,8,1024", "--f"), (Sizes{8, 1024}));
}

TEST(SizeParser, RangesWithMultiplier) {
  EXPECT_EQ(parse_size_list("8B:1KiB:x4", "--f"), (Sizes{8, 32, 128, 512}));
  EXPECT_EQ(parse_size_list("1K:8K", "--f"), (Sizes{1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_size_list("8:8", "--f"), (Sizes{8}));
  EXPECT_EQ(parse_size_list("8B:1GiB", "--f"), default_sizes());
}

TEST(SizeParser, DefaultSweepIsTheSeedsRange) {
  const auto sizes = default_sizes();
  ASSERT_EQ(sizes.size(), 28u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes.back(), 1u << 30);
}

// Each bad input names the flag and says what was expected.
void expect_usage_error(const std::string& text, const std::string& fragment) {
  try {
    parse_size_list(text, "--xfer_sizes");
    FAIL() << "accepted '" << text << "'";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--xfer_sizes"), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_NE(message.find("expected sizes like"), std::string::npos) << message;
  }
}

TEST(SizeParser, RejectsBadInputWithTheFlagName) {
  expect_usage_error("abc", "not a size");
  expect_usage_error("0", "at least 1 byte");
  expect_usage_error("-8", "positive");
  expect_usage_error("1GiB:8", "backwards");
  expect_usage_error("8:1K:x1", "at least x2");
  expect_usage_error("8:1K:+2", "multiplier");
  expect_usage_error("8:1K:x2:9", "too many");
  expect_usage_error("4KB", "ambiguous");
  expect_usage_error("4Q", "unknown size suffix");
  expect_usage_error("", "empty");
  expect_usage_error("8,,16", "not a size");
  expect_usage_error("99999999999999999999", "too large");
  expect_usage_error("17179869184G", "too large");
}

TEST(SizeFormat, ExactBinaryUnits) {
  EXPECT_EQ(format_size(8), "8 B");
  EXPECT_EQ(format_size(1536), "1536 B");
  EXPECT_EQ(format_size(64 << 10), "64 KiB");
  EXPECT_EQ(format_size(1u << 30), "1 GiB");
}

}  // namespace
}  // namespace xfer
