#include <atomic>
#include <cstdio>

#include "gpu/stream_hold.hpp"

namespace xfer::gpu {
namespace {

__device__ unsigned long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// One thread polls the host-mapped flag. The iteration cap is a second line of defence should
// %globaltimer not advance (each poll is a PCIe read of far more than 100 ns).
__global__ void hold_kernel(volatile int* release, volatile int* timed_out,
                            unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  const unsigned long long max_polls = timeout_ns / 100;
  for (unsigned long long polls = 0; *release == 0; ++polls) {
    if (global_ns() - start > timeout_ns || polls > max_polls) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
    __nanosleep(256);
  }
}

}  // namespace

StreamHold::StreamHold(int device, double timeout_s)
    : device_(device),
      timeout_s_(timeout_s),
      flags_(sizeof(Flags), cudaHostAllocMapped),
      exited_(device, false) {
  auto* flags = static_cast<volatile Flags*>(flags_.data());
  flags->release = 1;
  flags->timed_out = 0;
  DeviceGuard guard(device);
  void* mapped = nullptr;
  XFER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, flags_.data(), 0));
  device_flags_ = static_cast<Flags*>(mapped);
}

StreamHold::~StreamHold() {
  release();
  if (launched_) cudaEventSynchronize(exited_.get());  // the flag must outlive the kernel
}

void StreamHold::hold(cudaStream_t stream) {
  if (pending_) release();
  if (launched_) XFER_CUDA_CHECK(cudaEventSynchronize(exited_.get()));  // flags are ours again
  auto* flags = static_cast<volatile Flags*>(flags_.data());
  flags->release = 0;
  flags->timed_out = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  DeviceGuard guard(device_);
  hold_kernel<<<1, 1, 0, stream>>>(&device_flags_->release, &device_flags_->timed_out,
                                   static_cast<unsigned long long>(timeout_s_ * 1e9));
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) {
    flags->release = 1;
    raise_cuda_error(launched, "hold_kernel<<<1, 1, 0, stream>>>", __FILE__, __LINE__);
  }
  pending_ = true;
  launched_ = true;
  exited_.record(stream);
}

void StreamHold::release() noexcept {
  if (!pending_) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // everything queued before the release
  static_cast<volatile Flags*>(flags_.data())->release = 1;
  pending_ = false;
}

bool StreamHold::timed_out() {
  if (!launched_) return false;
  release();
  XFER_CUDA_CHECK(cudaEventSynchronize(exited_.get()));
  return static_cast<volatile Flags*>(flags_.data())->timed_out != 0;
}

void StreamHold::check() {
  if (!timed_out()) return;
  char text[256];
  std::snprintf(text, sizeof text,
                "the kernel holding the stream gave up after %.1f s before the host had queued "
                "the timed batch (was queueing blocked?): enqueue time would leak into the "
                "measurement, so none is reported",
                timeout_s_);
  throw Error(rank_prefix() + text);
}

void note_hold_gave_up(const std::string& row) {
  std::fprintf(stderr,
               "xferbench: %s: queueing blocked behind the stream hold; this family is timed "
               "without it from now on\n",
               row.c_str());
}

}  // namespace xfer::gpu
