// Test only (--xfer_test_fail=fault): a real GPU fault, so the harness's handling of a GPU that
// becomes unusable in the middle of a run is exercised with what CUDA really returns.
#include "gpu/cuda.hpp"

namespace xfer::gpu {
namespace {
__global__ void trap_kernel() { __trap(); }
}  // namespace

cudaError_t launch_trap() {
  trap_kernel<<<1, 1>>>();
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) return launched;
  return cudaDeviceSynchronize();
}

}  // namespace xfer::gpu
