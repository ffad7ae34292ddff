// What it costs to make page-locked host memory, two ways, and whether copies care which way it
// was made: cudaHostAlloc, against ordinary memory (transparent huge pages, or 4 KiB pages)
// touched by 8 threads and then registered with cudaHostRegister, as support/gpu/cuda.cpp makes
// it. One GiB each, on GPU 0; every figure is one wall-clock measurement, printed in ms.
//   nvcc -O2 -o pinned_alloc docs/results/tools/pinned_alloc.cu && ./pinned_alloc
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kBytes = std::size_t{1} << 30;

void timed(const char* what, const std::function<cudaError_t()>& step) {
  const auto start = std::chrono::steady_clock::now();
  const cudaError_t rc = step();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-40s %8.1f ms%s%s\n", what, ms, rc ? "  FAILED: " : "",
              rc ? cudaGetErrorString(rc) : "");
}

cudaError_t touch(void* p, std::size_t bytes, unsigned threads) {
  std::vector<std::thread> pool;
  const std::size_t per = bytes / threads;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([=] { std::memset(static_cast<char*>(p) + t * per, 0, per); });
  for (auto& thread : pool) thread.join();
  return cudaSuccess;
}

void copies(void* host, void* device, const char* kind) {
  char label[64];
  std::snprintf(label, sizeof label, "  copy to GPU, %s", kind);
  for (int i = 0; i < 2; ++i)
    timed(label, [&] { return cudaMemcpy(device, host, kBytes, cudaMemcpyHostToDevice); });
  std::snprintf(label, sizeof label, "  copy from GPU, %s", kind);
  for (int i = 0; i < 2; ++i)
    timed(label, [&] { return cudaMemcpy(host, device, kBytes, cudaMemcpyDeviceToHost); });
}

}  // namespace

int main() {
  timed("CUDA context (cudaFree(0))", [] { return cudaFree(nullptr); });
  void* device = nullptr;
  timed("cudaMalloc", [&] { return cudaMalloc(&device, kBytes); });
  for (int round = 1; round <= 2; ++round) {
    std::printf("cudaHostAlloc, round %d\n", round);
    void* p = nullptr;
    timed("  cudaHostAlloc", [&] { return cudaHostAlloc(&p, kBytes, cudaHostAllocPortable); });
    copies(p, device, "pinned");
    timed("  cudaFreeHost", [&] { return cudaFreeHost(p); });
  }
  for (const bool huge : {true, false}) {
    std::printf("aligned_alloc, %s, touched by 8 threads, registered\n",
                huge ? "transparent huge pages" : "4 KiB pages");
    void* p = std::aligned_alloc(std::size_t{2} << 20, kBytes);
    madvise(p, kBytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    timed("  touch", [&] { return touch(p, kBytes, 8); });
    timed("  cudaHostRegister",
          [&] { return cudaHostRegister(p, kBytes, cudaHostRegisterPortable); });
    copies(p, device, "registered");
    timed("  cudaHostUnregister", [&] { return cudaHostUnregister(p); });
    copies(p, device, "pageable");
    std::free(p);
  }
  cudaFree(device);
  return 0;
}
