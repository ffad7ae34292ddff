#include <algorithm>
#include <climits>

#include "gpu/cuda.hpp"
#include "gpu/device_pattern.hpp"

namespace xfer::gpu {
namespace {

constexpr int kThreads = 256;

struct Summary {
  unsigned long long count;
  unsigned long long first;
};

// Grid-stride kernels: words of 8 bytes where the pointer allows it, bytes otherwise.
__global__ void fill_kernel(unsigned char* dst, std::size_t bytes, std::uint64_t seed,
                            bool aligned) {
  const std::size_t id = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t tail = 0;
  if (aligned) {
    auto* words = reinterpret_cast<std::uint64_t*>(dst);
    const std::size_t count = bytes / 8;
    for (std::size_t w = id; w < count; w += stride) words[w] = mix64(seed ^ w);
    tail = 8 * count;
  }
  for (std::size_t i = tail + id; i < bytes; i += stride) dst[i] = pattern_byte(seed, i);
}

__device__ void note(unsigned long long offset, unsigned long long& count,
                     unsigned long long& first) {
  ++count;
  first = offset < first ? offset : first;
}

__global__ void count_kernel(const unsigned char* data, std::size_t bytes, std::uint64_t seed,
                             bool aligned, Summary* out) {
  const std::size_t id = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long count = 0;
  unsigned long long first = ULLONG_MAX;
  std::size_t tail = 0;
  if (aligned) {
    const auto* words = reinterpret_cast<const std::uint64_t*>(data);
    const std::size_t n = bytes / 8;
    for (std::size_t w = id; w < n; w += stride) {
      const std::uint64_t diff = words[w] ^ mix64(seed ^ w);
      if (diff == 0) continue;
      for (int k = 0; k < 8; ++k) {
        if ((diff >> (8 * k)) & 0xFF) note(8 * w + k, count, first);
      }
    }
    tail = 8 * n;
  }
  for (std::size_t i = tail + id; i < bytes; i += stride) {
    if (data[i] != pattern_byte(seed, i)) note(i, count, first);
  }
  // Every lane reaches this point (no early exits), so full-mask shuffles are safe.
  for (int offset = 16; offset > 0; offset /= 2) {
    count += __shfl_down_sync(0xFFFFFFFFu, count, offset);
    const unsigned long long other = __shfl_down_sync(0xFFFFFFFFu, first, offset);
    first = other < first ? other : first;
  }
  if ((threadIdx.x & 31) == 0 && count > 0) {
    atomicAdd(&out->count, count);
    atomicMin(&out->first, first);
  }
}

__global__ void flip_kernel(unsigned char* data, std::size_t offset) {
  data[offset] = static_cast<unsigned char>(~data[offset]);
}

int device_of(const void* pointer) {
  cudaPointerAttributes attributes{};
  XFER_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    throw Error(rank_prefix() + "device pattern: pointer is not device memory");
  return attributes.device;
}

unsigned grid_for(std::size_t items, int device) {
  int sms = 0;
  XFER_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t needed = (items + kThreads - 1) / kThreads;
  const std::size_t most = static_cast<std::size_t>(std::max(sms, 1)) * 16;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(needed, most)));
}

bool word_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 8 == 0;
}

void fill(void* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  if (bytes == 0) return;
  const int device = device_of(dst);
  DeviceGuard guard(device);
  const bool aligned = word_aligned(dst);
  const unsigned grid = grid_for(aligned ? bytes / 8 + 1 : bytes, device);
  fill_kernel<<<grid, kThreads, 0, stream>>>(static_cast<unsigned char*>(dst), bytes, seed,
                                             aligned);
  XFER_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void fill_pattern_device(void* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  fill(dst, bytes, seed, stream);
}

void poison_device(void* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  fill(dst, bytes, poison_seed(seed), stream);
}

Mismatch count_mismatches_device(const void* data, std::size_t bytes, std::uint64_t seed,
                                 cudaStream_t stream) {
  Mismatch m;
  if (bytes == 0) return m;
  const int device = device_of(data);
  DeviceGuard guard(device);
  DeviceBuffer summary(device, sizeof(Summary));
  auto* out = static_cast<Summary*>(summary.data());
  XFER_CUDA_CHECK(cudaMemsetAsync(&out->count, 0, sizeof out->count, stream));
  XFER_CUDA_CHECK(cudaMemsetAsync(&out->first, 0xFF, sizeof out->first, stream));
  const bool aligned = word_aligned(data);
  const unsigned grid = grid_for(aligned ? bytes / 8 + 1 : bytes, device);
  count_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const unsigned char*>(data), bytes, seed,
                                              aligned, out);
  XFER_CUDA_CHECK(cudaGetLastError());
  Summary result{};
  XFER_CUDA_CHECK(cudaMemcpyAsync(&result, out, sizeof result, cudaMemcpyDeviceToHost, stream));
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (result.count == 0) return m;
  m.count = static_cast<std::size_t>(result.count);
  m.first = static_cast<std::size_t>(result.first);
  m.expected = pattern_byte(seed, m.first);
  XFER_CUDA_CHECK(cudaMemcpyAsync(&m.found, static_cast<const unsigned char*>(data) + m.first, 1,
                                  cudaMemcpyDeviceToHost, stream));
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream));
  return m;
}

void flip_byte_device(void* data, std::size_t offset, cudaStream_t stream) {
  const int device = device_of(data);
  DeviceGuard guard(device);
  flip_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned char*>(data), offset);
  XFER_CUDA_CHECK(cudaGetLastError());
}

}  // namespace xfer::gpu
