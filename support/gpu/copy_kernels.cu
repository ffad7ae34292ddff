#include "gpu/copy_kernels.hpp"
#include "gpu/cuda.hpp"

namespace xfer::gpu {
namespace {

// One job's share of the copy, by a thread that is `index` of `stride` threads on it: 16-byte
// vectors in a grid-stride loop, four in flight a thread where it can (loads before stores), then
// the tail bytes, one a thread.
__device__ void copy_share(const CopyJob& job, std::uint64_t vectors, unsigned tail,
                           std::uint64_t index, std::uint64_t stride) {
  auto* dst = static_cast<uint4*>(job.dst);
  const auto* src = static_cast<const uint4*>(job.src);
  std::uint64_t i = index;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 v0 = src[i];
    const uint4 v1 = src[i + stride];
    const uint4 v2 = src[i + 2 * stride];
    const uint4 v3 = src[i + 3 * stride];
    dst[i] = v0;
    dst[i + stride] = v1;
    dst[i + 2 * stride] = v2;
    dst[i + 3 * stride] = v3;
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
  if (index < tail) {
    const std::uint64_t at = vectors * 16 + index;
    static_cast<unsigned char*>(job.dst)[at] = static_cast<const unsigned char*>(job.src)[at];
  }
}

__global__ void copy_kernel(CopyJob a, CopyJob b, std::uint64_t vectors, unsigned tail, int jobs) {
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t threads = std::uint64_t{gridDim.x} * blockDim.x;
  if (jobs == 1) {
    copy_share(a, vectors, tail, thread, threads);
    return;
  }
  // Warps alternate between the jobs, so both directions run on every SM at once.
  const std::uint64_t warp = thread / 32;
  const std::uint64_t index = (warp / 2) * 32 + thread % 32;
  copy_share(warp % 2 == 0 ? a : b, vectors, tail, index, threads / 2);
}

__global__ void chain_kernel(void** nodes, std::uint64_t count, std::uint64_t stride) {
  const std::uint64_t step = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += step)
    nodes[i] = &nodes[(i + stride) % count];
}

// volatile: every load goes to memory as written, none is merged or moved.
__global__ void chase_kernel(void** cursor, std::int64_t loads) {
  const volatile std::uintptr_t* p = static_cast<const volatile std::uintptr_t*>(*cursor);
  for (std::int64_t i = 0; i < loads; ++i) p = reinterpret_cast<const volatile std::uintptr_t*>(*p);
  *cursor = reinterpret_cast<void*>(const_cast<std::uintptr_t*>(p));
}

}  // namespace

int copy_blocks_per_sm(int device) {
  DeviceGuard guard(device);
  int blocks = 0;
  XFER_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_kernel, kCopyThreads, 0));
  return blocks > 0 ? blocks : 1;
}

int sm_count(int device) {
  int sms = 0;
  XFER_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

std::uint64_t l2_bytes(int device) {
  int bytes = 0;
  XFER_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return static_cast<std::uint64_t>(bytes > 0 ? bytes : 0);
}

void enable_peer_access(int from, int to) {
  DeviceGuard guard(from);
  const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
  if (rc == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // already as wanted; clear it so no later check sees it
  } else if (rc != cudaSuccess) {
    raise_cuda_error(rc, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
  }
}

void launch_copy(const CopyGrid& grid, CopyJob a, CopyJob b, int jobs, cudaStream_t stream) {
  copy_kernel<<<grid.blocks, grid.threads, 0, stream>>>(a, b, grid.vectors, grid.tail, jobs);
  XFER_CUDA_CHECK(cudaGetLastError());
}

void build_chain(void* nodes, cudaStream_t stream) {
  chain_kernel<<<64, 256, 0, stream>>>(static_cast<void**>(nodes), kChaseNodes, kChaseStride);
  XFER_CUDA_CHECK(cudaGetLastError());
}

void launch_chase(void** cursor, std::int64_t loads, cudaStream_t stream) {
  chase_kernel<<<1, 1, 0, stream>>>(cursor, loads);
  XFER_CUDA_CHECK(cudaGetLastError());
}

}  // namespace xfer::gpu
