#include "gpu/cuda.hpp"

#include <cstdlib>
#include <cstring>

#include "base/block_cache.hpp"
#include "base/failpoint.hpp"
#include "base/host_memory.hpp"
#include "base/pattern.hpp"
#include "base/sizes.hpp"

namespace xfer::gpu {

std::string error_text(cudaError_t rc) {
  return std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc);
}

void raise_cuda_error(cudaError_t rc, const char* call, const char* file, int line) {
  cudaGetLastError();  // a non-sticky error must not resurface in the next unrelated check
  if (is_sticky(rc)) {
    int device = -1;
    cudaGetDevice(&device);
    note_fatal(rank_prefix() + "GPU " + std::to_string(device) + " cannot be used any more after " +
               error_text(rc) + " in " + call + "; only a new process can use it again");
  }
  raise_call_error(error_text(rc), call, file, line);
}

bool is_sticky(cudaError_t rc) {
  switch (rc) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
      return true;
    default:
      return false;
  }
}

cudaError_t injected_error(const char* call) {
  if (fail_point_is_fault()) {
    disarm_fail_point();  // one fault is enough: the GPU is unusable from here on
    return launch_trap();
  }
  const std::string name(call);
  if (name.rfind("cudaMalloc", 0) == 0 || name.rfind("cudaHostAlloc", 0) == 0 ||
      name.rfind("cudaHostRegister", 0) == 0)
    return cudaErrorMemoryAllocation;
  if (name.rfind("cudaSetDevice", 0) == 0) return cudaErrorDevicesUnavailable;
  return cudaErrorInvalidValue;
}

DeviceGuard::DeviceGuard(int device) {
  XFER_CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) XFER_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : size_(bytes), device_(device) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  try {
    XFER_CUDA_CHECK(cudaMalloc(&data_, bytes));
  } catch (const Error& e) {
    data_ = nullptr;
    throw Error("cannot allocate " + format_size(bytes) + " of device memory on GPU " +
                std::to_string(device) + ": " + e.what());
  }
}

void DeviceBuffer::reset() noexcept {
  if (data_) {
    int previous = -1;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaFree(data_);
    if (previous >= 0) cudaSetDevice(previous);
  }
  data_ = nullptr;
  size_ = 0;
  device_ = -1;
}

namespace {
// Page-locked memory is made as ordinary memory, in transparent huge pages from 2 MiB up,
// touched by several threads and then registered with the driver: 52-70 ms a GiB on the H100
// and H200 VMs, where cudaHostAlloc took 350-510 ms and cudaFreeHost 91-168 ms; copies run at
// the same 55 GB/s from either (docs/results/2026-11-24-pinned-and-warm). Returns the block
// (its whole size registered, in *size), or nullptr where malloc refuses; a refused
// registration throws, as any CUDA call does. (Where the system overcommits memory, as Linux
// does by default, a shortage shows only when the pages are touched: the out-of-memory killer
// ends the rank, as it would for the row's own size.)
void* pin_new(std::size_t bytes, std::size_t* size) {
  void* p = new_pages(bytes, bytes >= kHugePageBytes, size);
  if (!p) return nullptr;
  try {
    fill_bytes(p, *size, 0);  // the first touch, in parallel: the driver faults pages one by one
    XFER_CUDA_CHECK(cudaHostRegister(p, *size, cudaHostRegisterPortable));
  } catch (...) {
    // A failure injected by a test comes after a registration that worked: undo it, or the
    // next block at this address would be refused as "already registered".
    cudaHostUnregister(p);
    cudaGetLastError();
    std::free(p);
    throw;
  }
  return p;
}

void unpin(void* p) {
  cudaHostUnregister(p);
  std::free(p);
}

BlockCache& kept_pinned() {
  static BlockCache cache(unpin, 4);
  return cache;
}
}  // namespace

PinnedBuffer::PinnedBuffer(std::size_t bytes, unsigned flags)
    : size_(bytes),
      registered_(flags == cudaHostAllocDefault),
      keep_(registered_ && !detail::fail_point_armed) {
  if (bytes == 0) return;
  if (keep_ && (data_ = kept_pinned().take(bytes, &block_))) return;
  try {
    if (!registered_) {  // mapped or write-combined memory only cudaHostAlloc makes
      XFER_CUDA_CHECK(cudaHostAlloc(&data_, bytes, flags | cudaHostAllocPortable));
      block_ = bytes;
      return;
    }
    // A rounded-up block the system refuses is asked for again at the size the visit needs.
    const std::size_t block = keep_ ? block_size_for(bytes) : bytes;
    if (block > bytes) {
      try {
        data_ = pin_new(block, &block_);
      } catch (const Error&) {
        data_ = nullptr;
      }
    }
    if (!data_) data_ = pin_new(bytes, &block_);
    if (!data_)
      throw Error("the system refused the memory: out of memory, or a limit such as ulimit -v");
  } catch (const Error& e) {
    data_ = nullptr;
    throw Error("cannot allocate " + format_size(bytes) + " of pinned host memory: " + e.what());
  }
}

void PinnedBuffer::reset() noexcept {
  if (data_ && keep_)
    kept_pinned().give(data_, block_);
  else if (data_ && registered_)
    unpin(data_);
  else if (data_)
    cudaFreeHost(data_);
  data_ = nullptr;
  size_ = 0;
  block_ = 0;
}

PageableBuffer::PageableBuffer(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  bool fresh = true;
  pages_ = allocate_pages(bytes, "pageable host memory", &fresh);
  if (fresh) fill_bytes(pages_.get(), bytes, 0);
}

Stream::Stream(int device) : device_(device) {
  DeviceGuard guard(device);
  XFER_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

void Stream::synchronize() const { XFER_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void Stream::reset() noexcept {
  if (stream_) {
    int previous = -1;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
    if (previous >= 0) cudaSetDevice(previous);
  }
  stream_ = nullptr;
  device_ = -1;
}

Event::Event(int device, bool timing) : device_(device) {
  DeviceGuard guard(device);
  XFER_CUDA_CHECK(
      cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming));
}

void Event::record(cudaStream_t stream) const { XFER_CUDA_CHECK(cudaEventRecord(event_, stream)); }

void Event::synchronize() const { XFER_CUDA_CHECK(cudaEventSynchronize(event_)); }

void Event::reset() noexcept {
  if (event_) {
    int previous = -1;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaEventDestroy(event_);
    if (previous >= 0) cudaSetDevice(previous);
  }
  event_ = nullptr;
  device_ = -1;
}

void wait(cudaStream_t stream, const Event& event) {
  XFER_CUDA_CHECK(cudaStreamWaitEvent(stream, event.get(), 0));
}

double elapsed_seconds(const Event& start, const Event& stop) {
  float ms = 0;
  XFER_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

}  // namespace xfer::gpu
