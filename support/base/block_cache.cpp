#include "base/block_cache.hpp"

#include <algorithm>

namespace xfer {
namespace {
std::mutex g_caches_mutex;
std::vector<BlockCache*>& caches() {
  static std::vector<BlockCache*> all;
  return all;
}
}  // namespace

BlockCache::BlockCache(FreeFn free_fn, std::size_t keep) : free_(free_fn), keep_(keep) {
  std::lock_guard<std::mutex> lock(g_caches_mutex);
  caches().push_back(this);
}

BlockCache::~BlockCache() {
  clear();
  std::lock_guard<std::mutex> lock(g_caches_mutex);
  caches().erase(std::remove(caches().begin(), caches().end(), this), caches().end());
}

void release_kept_blocks() {
  std::lock_guard<std::mutex> lock(g_caches_mutex);
  for (BlockCache* cache : caches()) cache->clear();
}

namespace {
std::size_t g_largest_block = 0;
}

void set_largest_block(std::size_t bytes) { g_largest_block = bytes; }

std::size_t block_size_for(std::size_t bytes) {
  constexpr std::size_t kBig = std::size_t{64} << 20;
  return bytes > kBig ? std::max(bytes, g_largest_block) : bytes;
}

void* BlockCache::take(std::size_t bytes, std::size_t* size) {
  std::vector<Block> to_free;
  void* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->size >= bytes && (best == kept_.end() || it->size < best->size)) best = it;
    }
    if (best != kept_.end()) {
      found = best->p;
      *size = best->size;
      kept_.erase(best);
    } else {
      to_free.swap(kept_);
    }
  }
  for (const Block& b : to_free) free_(b.p);
  return found;
}

void BlockCache::give(void* p, std::size_t size) {
  if (!p) return;
  void* evicted = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.push_back({p, size});
    if (kept_.size() > keep_) {
      const auto smallest =
          std::min_element(kept_.begin(), kept_.end(),
                           [](const Block& a, const Block& b) { return a.size < b.size; });
      evicted = smallest->p;
      kept_.erase(smallest);
    }
  }
  if (evicted) free_(evicted);
}

void BlockCache::clear() {
  std::vector<Block> to_free;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    to_free.swap(kept_);
  }
  for (const Block& b : to_free) free_(b.p);
}

}  // namespace xfer
