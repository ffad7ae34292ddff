#include "host_memory.hpp"

#include <sys/mman.h>

#include "error.hpp"
#include "sizes.hpp"

namespace xfer {
namespace {
PagePolicy g_policy = PagePolicy::Default;
}  // namespace

void set_host_page_policy(PagePolicy policy) { g_policy = policy; }

PagePolicy parse_page_policy(const std::string& flag, const std::string& value) {
  if (value == "default") return PagePolicy::Default;
  if (value == "huge") return PagePolicy::Huge;
  if (value == "nohuge") return PagePolicy::NoHuge;
  if (value == "locked") return PagePolicy::Locked;
  throw UsageError(flag + "='" + value + "': expected default, huge, nohuge or locked");
}

HostPages allocate_pages(std::size_t bytes, const std::string& what) {
  constexpr std::size_t kPage = 4096;
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t align = g_policy == PagePolicy::Huge ? kHugePage : kPage;
  const std::size_t size = (bytes + align - 1) / align * align;
  if (void* p = std::aligned_alloc(align, size)) {
    if (g_policy == PagePolicy::Huge) madvise(p, size, MADV_HUGEPAGE);
    if (g_policy == PagePolicy::NoHuge) madvise(p, size, MADV_NOHUGEPAGE);
    if (g_policy == PagePolicy::Locked) mlock(p, size);
    return HostPages(static_cast<char*>(p));
  }
  throw Error("cannot allocate " + format_size(bytes) + " of " + what +
              " (the system refused: out of memory, or a limit such as ulimit -v)");
}

}  // namespace xfer
