// Page-aligned host memory, as the peer tools' buffers are, left uninitialised, that may not be
// there: a refusal names what was asked for. Host slots of the exchange paths and pageable
// staging buffers of the GPU paths take it from here.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>

namespace xfer {

struct FreeHost {
  void operator()(char* p) const noexcept { std::free(p); }
};
using HostPages = std::unique_ptr<char, FreeHost>;

// `bytes` in whole 4 KiB pages. Throws xfer::Error "cannot allocate 4 GiB of WHAT (the system
// refused: ...)" when the system says no.
HostPages allocate_pages(std::size_t bytes, const std::string& what);

}  // namespace xfer
