#include <gtest/gtest.h>

#include <vector>

#include "base/pattern.hpp"

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

// From 16 MiB a buffer is filled and checked by several threads, each its own part: the bytes
// must be the ones one thread writes (the GPU kernels and the peer rank compute them so), and a
// flipped byte must be found whichever part holds it, with the first one named first.
TEST(Pattern, SplitAcrossThreadsGivesTheSameBytesAndFindings) {
  const std::size_t bytes = (std::size_t{16} << 20) + 13;  // whole words and a tail
  std::vector<unsigned char> one(bytes);
  fill_pattern(one.data(), bytes, 5, 1);
  for (std::size_t i : {std::size_t{0}, std::size_t{12345}, bytes / 2 + 3, bytes - 1})
    ASSERT_EQ(one[i], pattern_byte(5, i)) << i;
  for (const unsigned threads : {2u, 3u, 8u}) {
    std::vector<unsigned char> many(bytes);
    fill_pattern(many.data(), bytes, 5, threads);
    EXPECT_TRUE(many == one) << threads << " threads";
    EXPECT_EQ(find_mismatches(many.data(), bytes, 5, threads).count, 0u);
    // One byte in the last part and one in the first: both counted, the first named.
    const std::size_t early = 9;
    const std::size_t late = bytes - 20;
    many[late] ^= 0x01;
    many[early] ^= 0x80;
    Mismatch m = find_mismatches(many.data(), bytes, 5, threads);
    EXPECT_EQ(m.count, 2u) << threads;
    EXPECT_EQ(m.first, early) << threads;
    EXPECT_EQ(m.found, m.expected ^ 0x80);
    // And one in the tail after the whole words, alone and with another.
    many[early] ^= 0x80;
    many[late] ^= 0x01;
    many[bytes - 1] ^= 0x02;
    m = find_mismatches(many.data(), bytes, 5, threads);
    EXPECT_EQ(m.count, 1u);
    EXPECT_EQ(m.first, bytes - 1);
    many[late] ^= 0x01;
    m = find_mismatches(many.data(), bytes, 5, threads);
    EXPECT_EQ(m.count, 2u);
    EXPECT_EQ(m.first, late);
  }
  // What the machine's own split (0 threads: by size and cores) finds is the same.
  one[bytes / 3] ^= 0x04;
  EXPECT_EQ(find_mismatches(one.data(), bytes, 5).count, 1u);
  EXPECT_EQ(find_mismatches(one.data(), bytes, 5).first, bytes / 3);
}

TEST(Pattern, DescribeNamesCountOffsetAndBytes) {
  Mismatch m{3, 17, 0x3a, 0x00};
  EXPECT_EQ(describe(m, 1024),
            "validation: 3 of 1024 bytes differ, first at offset 17 (expected 0x3a, found 0x00)");
}

}  // namespace
}  // namespace xfer
