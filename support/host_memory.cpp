#include "host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>

#include "block_cache.hpp"
#include "error.hpp"
#include "sizes.hpp"

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

HostPages allocate_pages(std::size_t bytes, const std::string& what, bool* fresh) {
  constexpr std::size_t kPage = 4096;
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const bool keep = g_policy == PagePolicy::Default;  // the experiments' pages are their own
  // Transparent huge pages for buffers of 2 MiB and more: a fresh GiB then faults in 512 times
  // instead of 262144 (a second on the GPU VMs), and the experiment found no row moved by them
  // beyond its noise (docs/reproducibility.md).
  const bool huge = g_policy == PagePolicy::Huge ||
                    (g_policy == PagePolicy::Default && bytes >= kHugePage);
  const std::size_t align = huge ? kHugePage : kPage;
  const auto aligned = [align](std::size_t n) {
    return std::max<std::size_t>(align, (n + align - 1) / align * align);
  };
  std::size_t size = aligned(bytes);
  if (fresh) *fresh = true;
  std::size_t kept_size = 0;
  if (keep) {
    if (void* p = kept_pages().take(size, &kept_size)) {
      if (fresh) *fresh = false;
      return HostPages(static_cast<char*>(p), FreeHost{kept_size, true});
    }
    size = aligned(block_size_for(bytes));
  }
  void* p = std::aligned_alloc(align, size);
  if (!p && size > aligned(bytes)) p = std::aligned_alloc(align, size = aligned(bytes));
  if (p) {
    if (huge) madvise(p, size, MADV_HUGEPAGE);
    if (g_policy == PagePolicy::NoHuge) madvise(p, size, MADV_NOHUGEPAGE);
    if (g_policy == PagePolicy::Locked) mlock(p, size);
    return HostPages(static_cast<char*>(p), FreeHost{size, keep});
  }
  throw Error("cannot allocate " + format_size(bytes) + " of " + what +
              " (the system refused: out of memory, or a limit such as ulimit -v)");
}

}  // namespace xfer
