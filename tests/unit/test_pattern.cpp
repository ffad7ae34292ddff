#include <gtest/gtest.h>

#include <vector>

#include "pattern.hpp"

namespace xfer {
namespace {

TEST(Pattern, FillThenVerifyFindsNothing) {
  for (std::size_t bytes : {1u, 7u, 8u, 9u, 1000u, 4096u}) {
    std::vector<unsigned char> buf(bytes);
    fill_pattern(buf.data(), bytes, 42);
    EXPECT_EQ(find_mismatches(buf.data(), bytes, 42).count, 0u) << bytes;
  }
}

TEST(Pattern, CatchesOneFlippedBitAnywhere) {
  const std::size_t bytes = 1027;  // whole words and a tail
  for (std::size_t at : {std::size_t{0}, std::size_t{511}, bytes - 1}) {
    std::vector<unsigned char> buf(bytes);
    fill_pattern(buf.data(), bytes, 7);
    buf[at] ^= 0x10;
    const Mismatch m = find_mismatches(buf.data(), bytes, 7);
    EXPECT_EQ(m.count, 1u);
    EXPECT_EQ(m.first, at);
    EXPECT_EQ(m.found, m.expected ^ 0x10);
  }
}

TEST(Pattern, DependsOnSizeAndRun) {
  EXPECT_NE(pattern_seed(1024, 1), pattern_seed(1024, 2));
  EXPECT_NE(pattern_seed(1024, 1), pattern_seed(2048, 1));
  // A buffer left over from the previous run does not pass for this one.
  std::vector<unsigned char> buf(256);
  fill_pattern(buf.data(), buf.size(), pattern_seed(256, 1));
  EXPECT_GT(find_mismatches(buf.data(), buf.size(), pattern_seed(256, 2)).count, 200u);
}

TEST(Pattern, PoisonDiffersFromTheData) {
  std::vector<unsigned char> buf(64);
  fill_pattern(buf.data(), buf.size(), poison_seed(99));
  EXPECT_GT(find_mismatches(buf.data(), buf.size(), 99).count, 50u);
}

TEST(Pattern, DescribeNamesCountOffsetAndBytes) {
  Mismatch m{3, 17, 0x3a, 0x00};
  EXPECT_EQ(describe(m, 1024),
            "validation: 3 of 1024 bytes differ, first at offset 17 (expected 0x3a, found 0x00)");
}

}  // namespace
}  // namespace xfer
