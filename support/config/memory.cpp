#include <unistd.h>

#include <cstdint>

#include "base/sizes.hpp"
#include "config/config.hpp"

namespace xfer {
namespace {

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

}  // namespace

std::string check_memory(const Config& config, std::uint64_t memory_bytes) {
  const std::uint64_t memory = memory_bytes ? memory_bytes : physical_memory();
  const std::uint64_t largest = config.sizes.back();
  if (memory == 0 || largest <= memory / 2) return "";
  return "--xfer_sizes: " + format_size(largest) +
         " needs two buffers of that size per rank, more than this machine's " +
         format_size(memory / (1 << 20) * (1 << 20)) + " of memory allows";
}

}  // namespace xfer
