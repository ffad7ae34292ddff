// BlockCache: big buffers kept from one visit for the next, never more than the largest visit
// needs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "base/block_cache.hpp"

namespace xfer {
namespace {

std::vector<void*> g_freed;

void record_free(void* p) {
  g_freed.push_back(p);
  std::free(p);
}

class BlockCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { g_freed.clear(); }
  static void* block(std::size_t bytes) { return std::malloc(bytes); }
};

TEST_F(BlockCacheTest, AnEmptyCacheHasNothingToGive) {
  BlockCache cache(record_free, 4);
  std::size_t size = 0;
  EXPECT_EQ(cache.take(1024, &size), nullptr);
  EXPECT_TRUE(g_freed.empty());
}

TEST_F(BlockCacheTest, TakesTheSmallestKeptBlockThatIsLargeEnough) {
  BlockCache cache(record_free, 4);
  void* small = block(100);
  void* middle = block(200);
  void* large = block(300);
  cache.give(large, 300);
  cache.give(small, 100);
  cache.give(middle, 200);
  std::size_t size = 0;
  EXPECT_EQ(cache.take(150, &size), middle);
  EXPECT_EQ(size, 200u);
  EXPECT_EQ(cache.take(100, &size), small);
  EXPECT_EQ(size, 100u);
  EXPECT_TRUE(g_freed.empty());
  cache.give(small, 100);
  cache.give(middle, 200);
}

TEST_F(BlockCacheTest, ARequestNoBlockFitsFreesEveryKeptBlockFirst) {
  // So that a process holds no more than its largest visit needs: the caller allocates anew.
  BlockCache cache(record_free, 4);
  void* a = block(100);
  void* b = block(200);
  cache.give(a, 100);
  cache.give(b, 200);
  std::size_t size = 0;
  EXPECT_EQ(cache.take(1000, &size), nullptr);
  EXPECT_EQ(g_freed.size(), 2u);
  EXPECT_EQ(cache.take(50, &size), nullptr);  // nothing is kept any more
}

TEST_F(BlockCacheTest, PastItsLimitTheSmallestBlockIsFreed) {
  BlockCache cache(record_free, 2);
  void* a = block(300);
  void* b = block(100);
  void* c = block(200);
  cache.give(a, 300);
  cache.give(b, 100);
  EXPECT_TRUE(g_freed.empty());
  cache.give(c, 200);
  EXPECT_EQ(g_freed, std::vector<void*>{b});
  std::size_t size = 0;
  EXPECT_EQ(cache.take(150, &size), c);
  EXPECT_EQ(cache.take(150, &size), a);
  std::free(a);  // taken: the caller's again
  std::free(c);
}

TEST_F(BlockCacheTest, ReleaseAndDestructionFreeWhatIsKept) {
  {
    BlockCache cache(record_free, 4);
    cache.give(block(10), 10);
    cache.give(block(20), 20);
    release_kept_blocks();  // every cache's: before MPI and CUDA go away
    EXPECT_EQ(g_freed.size(), 2u);
    cache.give(block(30), 30);
    cache.give(nullptr, 40);  // nothing to keep
  }
  EXPECT_EQ(g_freed.size(), 3u);
}

TEST_F(BlockCacheTest, BigBlocksAreMadeAtTheRunsLargestSizeSoEveryLaterBigVisitFits) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  set_largest_block(1024 * MiB);
  EXPECT_EQ(block_size_for(4096), 4096u);             // small: as asked
  EXPECT_EQ(block_size_for(64 * MiB), 64 * MiB);      // up to 64 MiB: as asked
  EXPECT_EQ(block_size_for(128 * MiB), 1024 * MiB);   // above: the largest message
  EXPECT_EQ(block_size_for(2048 * MiB), 2048 * MiB);  // never smaller than asked
  // A block made for a 128 MiB visit is then taken by a 1 GiB one.
  BlockCache cache(record_free, 4);
  cache.give(block(1), block_size_for(128 * MiB));
  std::size_t size = 0;
  void* p = cache.take(1024 * MiB, &size);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(size, 1024 * MiB);
  std::free(p);
  set_largest_block(0);
  EXPECT_EQ(block_size_for(128 * MiB), 128 * MiB);  // no run's size known: as asked
}

}  // namespace
}  // namespace xfer
