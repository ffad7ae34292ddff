// Big buffers kept from one visit for the next. Allocating a GiB and touching it (or pinning it)
// costs about a second on the GPU VMs, and a run makes hundreds of visits; the experiment of
// docs/reproducibility.md found that which pages a buffer gets is not what moves a row between
// runs, so reusing them costs no honesty. A freed block is kept; a request takes the smallest
// kept block that is large enough; a request that none fits frees every kept block first, so a
// process holds no more than its largest visit needs.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace xfer {

class BlockCache {
 public:
  using FreeFn = void (*)(void*);
  BlockCache(FreeFn free_fn, std::size_t keep);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A kept block of at least `bytes` (its size in *size), or nullptr after freeing every kept
  // block: the caller allocates anew.
  void* take(std::size_t bytes, std::size_t* size);
  // Keeps `p` (of `size` bytes) for a later take; past `keep` blocks the smallest is freed.
  void give(void* p, std::size_t size);
  // Frees every kept block (before the library that made them goes away).
  void clear();

 private:
  struct Block {
    void* p;
    std::size_t size;
  };
  FreeFn free_;
  std::size_t keep_;
  std::mutex mutex_;
  std::vector<Block> kept_;
};

// Frees the blocks every cache keeps: call it before MPI and CUDA go away.
void release_kept_blocks();

// How big a block to allocate for a request of `bytes` that no kept block fits: above 64 MiB,
// the run's largest message (set_largest_block), so that a block kept from any big visit fits
// every later one. In a shuffled run big rows of different sizes come in any order, and
// allocating to size made a process allocate (and pin, or fault in) afresh most times a larger
// row came: 3-4 s of every job of the default run on the H200 VM went to it.
std::size_t block_size_for(std::size_t bytes);
void set_largest_block(std::size_t bytes);  // the run's largest message (0: no rounding)

}  // namespace xfer
