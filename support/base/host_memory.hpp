// Page-aligned host memory, as the peer tools' buffers are, left uninitialised, that may not be
// there: a refusal names what was asked for. Host slots of the exchange paths and pageable
// staging buffers of the GPU paths take it from here.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>

namespace xfer {

// Gives the pages back for the next visit (block_cache.hpp), or to the system.
struct FreeHost {
  std::size_t size = 0;
  bool keep = true;
  void operator()(char* p) const noexcept;
};
using HostPages = std::unique_ptr<char, FreeHost>;

// `bytes` in whole 4 KiB pages, possibly pages an earlier visit used (then `*fresh` is set
// false: they have been touched). Throws xfer::Error "cannot allocate 4 GiB of WHAT (the system
// refused: ...)" when the system says no.
HostPages allocate_pages(std::size_t bytes, const std::string& what, bool* fresh = nullptr);

// Transparent huge pages for buffers from this size up (allocate_pages, and the page-locked
// memory of support/gpu/cuda.cpp): a fresh GiB then faults in 512 times instead of 262144.
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Fresh memory for `bytes`, untouched, its size rounded up to whole pages in *size: 2 MiB
// transparent huge pages (aligned, madvise) where `huge`, else 4 KiB pages. Not kept: the
// caller frees it with std::free. nullptr where the system refuses.
void* new_pages(std::size_t bytes, bool huge, std::size_t* size);

// Test only (--xfer_test_host_pages), for the experiments of docs/reproducibility.md: what the
// host buffers of allocate_pages are asked to be. Default: transparent huge pages (2 MiB
// aligned, madvise) from 2 MiB up, kept for the next visit; the others are not kept: huge pages
// at every size, never huge pages, or locked in memory (mlock).
enum class PagePolicy { Default, Huge, NoHuge, Locked };
void set_host_page_policy(PagePolicy policy);
PagePolicy parse_page_policy(const std::string& flag, const std::string& value);

}  // namespace xfer
