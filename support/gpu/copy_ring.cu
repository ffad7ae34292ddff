#include <algorithm>

#include "gpu/copy_ring.hpp"
#include "gpu/device_pattern.hpp"

namespace xfer::gpu {

std::uint64_t slot_seed(std::uint64_t seed, std::uint64_t slot) {
  return slot == 0 ? seed : mix64(seed + slot);
}

RingSide::RingSide(Memory memory, int device, const Ring& ring, std::size_t bytes)
    : memory_(memory), device_(device), ring_(ring), bytes_(bytes) {
  const std::size_t total = static_cast<std::size_t>(ring.bytes());
  switch (memory) {
    case Memory::Device:
      device_memory_ = DeviceBuffer(device, total);
      break;
    case Memory::Pinned:
      pinned_ = PinnedBuffer(total);
      break;
    case Memory::Mapped: {
      pinned_ = PinnedBuffer(total, cudaHostAllocMapped);
      DeviceGuard guard(device);
      void* mapped = nullptr;
      XFER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, pinned_.data(), 0));
      mapped_ = static_cast<char*>(mapped);
      break;
    }
    case Memory::Pageable:
      pageable_ = PageableBuffer(total);
      break;
  }
}

char* RingSide::base() const {
  switch (memory_) {
    case Memory::Device:
      return static_cast<char*>(device_memory_.data());
    case Memory::Pinned:
    case Memory::Mapped:
      return static_cast<char*>(pinned_.data());
    case Memory::Pageable:
      break;
  }
  return static_cast<char*>(pageable_.data());
}

void* RingSide::slot(std::uint64_t k) const {
  char* start = memory_ == Memory::Mapped ? mapped_ : base();
  return start + k * ring_.stride;
}

void RingSide::fill(std::uint64_t seed, cudaStream_t stream) {
  for (std::uint64_t k = 0; k < ring_.slots; ++k) {
    char* at = base() + k * ring_.stride;
    if (host())
      fill_pattern(at, bytes_, slot_seed(seed, k));
    else
      fill_pattern_device(at, bytes_, slot_seed(seed, k), stream);
  }
  if (!host()) XFER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void RingSide::poison(std::uint64_t seed, cudaStream_t stream) {
  if (host()) {
    fill_bytes(base(), static_cast<std::size_t>(ring_.bytes()), 0xA5);
    return;
  }
  for (std::uint64_t k = 0; k < ring_.slots; ++k)
    poison_device(base() + k * ring_.stride, bytes_, slot_seed(seed, k), stream);
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

Mismatch RingSide::check(std::uint64_t k, std::uint64_t seed, cudaStream_t stream) const {
  const char* at = base() + k * ring_.stride;
  if (host()) return find_mismatches(at, bytes_, slot_seed(seed, k));
  return count_mismatches_device(at, bytes_, slot_seed(seed, k), stream);
}

void RingSide::flip(std::uint64_t k, cudaStream_t stream) {
  char* at = base() + k * ring_.stride + bytes_ / 2;
  if (host()) {
    *at = static_cast<char>(~*at);
    return;
  }
  flip_byte_device(at, 0, stream);
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::string RingSide::where() const {
  switch (memory_) {
    case Memory::Device:
      return "GPU " + std::to_string(device_);
    case Memory::Pinned:
      return "pinned host memory";
    case Memory::Mapped:
      return "mapped host memory";
    case Memory::Pageable:
      break;
  }
  return "pageable host memory";
}

std::vector<std::uint64_t> RingCursor::written() const {
  const std::uint64_t n = std::min(written_, slots_);
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = n; i > 0; --i) out.push_back((next_ + slots_ - i) % slots_);
  return out;
}

}  // namespace xfer::gpu
