#include "host_memory.hpp"

#include "error.hpp"
#include "sizes.hpp"

namespace xfer {

HostPages allocate_pages(std::size_t bytes, const std::string& what) {
  constexpr std::size_t kPage = 4096;
  if (void* p = std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage))
    return HostPages(static_cast<char*>(p));
  throw Error("cannot allocate " + format_size(bytes) + " of " + what +
              " (the system refused: out of memory, or a limit such as ulimit -v)");
}

}  // namespace xfer
