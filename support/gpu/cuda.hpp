// CUDA basics every GPU path shares: error checking and RAII owners for device memory, host
// memory, streams and events. Nothing here measures; the paths in bench/ compose these.
//
// API (namespace xfer::gpu; stable, other paths build on it):
//   XFER_CUDA_CHECK(call)         throws xfer::Error
//                                 "rank R: CALL failed: cudaErrorX: text (file:line)"
//   raise_cuda_error(rc, call, file, line)   what the macro calls; clears the last error
//   with_context(where, fn)       runs fn; an xfer::Error from it gets " [where]" appended
//                                 ("[GPU 0 -> GPU 1]"), so a failed row names its devices
//   DeviceGuard g(device)         cudaSetDevice(device); the previous device at scope end
//   DeviceBuffer(device, bytes)   cudaMalloc on `device`: data(), size(), device()
//   PinnedBuffer(bytes)           page-locked (cudaHostRegister, portable): data(), size()
//   PageableBuffer(bytes)         page-aligned malloc, pages touched: data(), size()
//   Stream(device)                non-blocking stream: get(), device(), synchronize()
//   Event(device, timing = true)  get(), record(stream), synchronize()
//   wait(stream, event)           stream waits for the event's last record (any device)
//   elapsed_seconds(start, stop)  seconds between two recorded timing events of one device
// All owners are movable, not copyable; a default-constructed one owns nothing. Destructors
// never throw (a failing free during unwinding is ignored: the first error is the one reported).
// Constructors switch to the owning device themselves (and switch back). Copies and event
// records need no current device (CUDA takes the stream's), so the hot paths never switch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/host_memory.hpp"
#include "base/stop.hpp"

#define XFER_CUDA_CHECK(call)                                                              \
  do {                                                                                     \
    cudaError_t xfer_cuda_rc_ = (call);                                                    \
    if (::xfer::fail_point_hit(#call)) xfer_cuda_rc_ = ::xfer::gpu::injected_error(#call); \
    if (xfer_cuda_rc_ != cudaSuccess)                                                      \
      ::xfer::gpu::raise_cuda_error(xfer_cuda_rc_, #call, __FILE__, __LINE__);             \
  } while (0)

namespace xfer::gpu {

// "cudaErrorInvalidValue: invalid argument"
std::string error_text(cudaError_t rc);

// Throws xfer::Error. An error that leaves the CUDA context unusable (is_sticky) is also
// noted as fatal (stop.hpp: note_fatal): the harness then ends the run after this row.
[[noreturn]] void raise_cuda_error(cudaError_t rc, const char* call, const char* file, int line);

// Errors after which every later CUDA call of this process fails too (a kernel fault, an
// uncorrectable ECC error, a lost device): only a new process can use the GPU again.
bool is_sticky(cudaError_t rc);

// Test only (--xfer_test_fail, failpoint.hpp): the error a fail point puts in place of `call`'s
// result. Allocations: cudaErrorMemoryAllocation; cudaSetDevice: cudaErrorDevicesUnavailable
// (what a GPU held in exclusive mode by another process answers); anything else:
// cudaErrorInvalidValue. For CALL=fault, a real one: a kernel that traps, on the current device,
// and whatever synchronizing with it returns (once; the GPU is unusable afterwards).
cudaError_t injected_error(const char* call);
cudaError_t launch_trap();  // fault.cu

// Runs `fn`; an xfer::Error escaping it is rethrown with " [where]" appended.
template <class Fn>
auto with_context(const std::string& where, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " [" + where + "]");
  }
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  int device() const { return device_; }
  void reset() noexcept;

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(device_, other.device_);
  }
  void* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;
};

// Page-locked host memory: ordinary pages registered with cudaHostRegister, or, where `flags`
// ask for more than plain pinned memory (mapped, write-combined), cudaHostAlloc's. Registered
// blocks are kept for the next visit when freed (block_cache.hpp), unless a fail point is armed
// (a test that makes cudaHostRegister fail must see every allocation).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // `flags` for cudaHostAlloc; cudaHostAllocPortable is always added.
  explicit PinnedBuffer(std::size_t bytes, unsigned flags = cudaHostAllocDefault);
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer&& other) noexcept { swap(other); }
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    PinnedBuffer(std::move(other)).swap(*this);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  void reset() noexcept;

 private:
  void swap(PinnedBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(block_, other.block_);
    std::swap(registered_, other.registered_);
    std::swap(keep_, other.keep_);
  }
  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t block_ = 0;    // what was allocated (a kept block may be larger than size_)
  bool registered_ = false;  // cudaHostRegister'ed (else cudaHostAlloc'ed)
  bool keep_ = false;
};

// Ordinary pageable host memory, page aligned, every page touched once so first-touch faults
// stay out of timed regions (pages kept from an earlier visit have been touched already).
class PageableBuffer {
 public:
  PageableBuffer() = default;
  explicit PageableBuffer(std::size_t bytes);

  void* data() const { return pages_.get(); }
  std::size_t size() const { return size_; }

 private:
  HostPages pages_;
  std::size_t size_ = 0;
};

class Stream {
 public:
  Stream() = default;
  explicit Stream(int device);  // cudaStreamNonBlocking: no implicit sync with stream 0
  ~Stream() { reset(); }
  Stream(Stream&& other) noexcept { swap(other); }
  Stream& operator=(Stream&& other) noexcept {
    Stream(std::move(other)).swap(*this);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  void synchronize() const;
  void reset() noexcept;

 private:
  void swap(Stream& other) noexcept {
    std::swap(stream_, other.stream_);
    std::swap(device_, other.device_);
  }
  cudaStream_t stream_ = nullptr;
  int device_ = -1;
};

class Event {
 public:
  Event() = default;
  // timing=false: cudaEventDisableTiming, cheaper, for ordering streams only.
  explicit Event(int device, bool timing = true);
  ~Event() { reset(); }
  Event(Event&& other) noexcept { swap(other); }
  Event& operator=(Event&& other) noexcept {
    Event(std::move(other)).swap(*this);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const { return event_; }
  int device() const { return device_; }
  // The stream must belong to this event's device.
  void record(cudaStream_t stream) const;
  void synchronize() const;
  void reset() noexcept;

 private:
  void swap(Event& other) noexcept {
    std::swap(event_, other.event_);
    std::swap(device_, other.device_);
  }
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
};

// `stream` waits for the most recent record of `event` (the event may be on another device).
void wait(cudaStream_t stream, const Event& event);

// Seconds from `start` to `stop` (both timing events of one device, both recorded, `stop`
// complete: call stop.synchronize() first).
double elapsed_seconds(const Event& start, const Event& stop);

}  // namespace xfer::gpu
