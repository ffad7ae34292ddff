#include "base/host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>

#include "base/block_cache.hpp"
#include "base/error.hpp"
#include "base/sizes.hpp"

namespace xfer {
namespace {
PagePolicy g_policy = PagePolicy::Default;

BlockCache& kept_pages() {
  static BlockCache cache([](void* p) { std::free(p); }, 4);
  return cache;
}
}  // namespace

void FreeHost::operator()(char* p) const noexcept {
  if (keep)
    kept_pages().give(p, size);
  else
    std::free(p);
}

void set_host_page_policy(PagePolicy policy) { g_policy = policy; }

PagePolicy parse_page_policy(const std::string& flag, const std::string& value) {
  if (value == "default") return PagePolicy::Default;
  if (value == "huge") return PagePolicy::Huge;
  if (value == "nohuge") return PagePolicy::NoHuge;
  if (value == "locked") return PagePolicy::Locked;
  throw UsageError(flag + "='" + value + "': expected default, huge, nohuge or locked");
}

void* new_pages(std::size_t bytes, bool huge, std::size_t* size) {
  constexpr std::size_t kPage = 4096;
  const std::size_t align = huge ? kHugePageBytes : kPage;
  *size = std::max<std::size_t>(align, (bytes + align - 1) / align * align);
  void* p = std::aligned_alloc(align, *size);
  if (p && huge) madvise(p, *size, MADV_HUGEPAGE);
  return p;
}

HostPages allocate_pages(std::size_t bytes, const std::string& what, bool* fresh) {
  const bool keep = g_policy == PagePolicy::Default;  // the experiments' pages are their own
  // Huge pages by default (kHugePageBytes and up): the experiment found no row moved by them
  // beyond its noise (docs/reproducibility.md).
  const bool huge =
      g_policy == PagePolicy::Huge || (g_policy == PagePolicy::Default && bytes >= kHugePageBytes);
  if (fresh) *fresh = true;
  if (keep) {
    std::size_t kept_size = 0;
    if (void* p = kept_pages().take(bytes, &kept_size)) {
      if (fresh) *fresh = false;
      return HostPages(static_cast<char*>(p), FreeHost{kept_size, true});
    }
  }
  // A rounded-up block the system refuses is asked for again at the size the visit needs.
  const std::size_t block = keep ? block_size_for(bytes) : bytes;
  std::size_t size = 0;
  void* p = new_pages(block, huge, &size);
  if (!p && block > bytes) p = new_pages(bytes, huge, &size);
  if (p) {
    if (g_policy == PagePolicy::NoHuge) madvise(p, size, MADV_NOHUGEPAGE);
    if (g_policy == PagePolicy::Locked) mlock(p, size);
    return HostPages(static_cast<char*>(p), FreeHost{size, keep});
  }
  throw Error("cannot allocate " + format_size(bytes) + " of " + what +
              " (the system refused: out of memory, or a limit such as ulimit -v)");
}

}  // namespace xfer
