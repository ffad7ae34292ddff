// A row's device buffers on one rank of a pair (support/mpi/exchange.hpp): `slots` messages to send
// and `slots` to receive, as the mode's traffic needs, each slot with its own pattern, filled,
// poisoned and checked on the GPU. The device twin of HostSlots.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda.hpp"
#include "mpi/exchange.hpp"

namespace xfer::gpu {

class DeviceSlots {
 public:
  static constexpr std::uint64_t kInFlight = kWindowInFlight;
  // Allocates on `device` (a rank in no pair allocates nothing) and fills the send slots.
  // Synchronizes, so the data is in place before any other engine reads it.
  DeviceSlots(const Traffic& traffic, int device, int slots, std::size_t bytes,
              std::uint64_t row_seed);

  SlotView send() const { return {static_cast<char*>(send_.data()), bytes_, slots_}; }
  SlotView recv() const { return {static_cast<char*>(recv_.data()), bytes_, slots_}; }
  cudaStream_t stream() const { return stream_.get(); }
  std::size_t bytes() const { return bytes_; }

  // Before every timed pass: only that pass can make validation succeed. Synchronizes.
  void poison();
  // Throws xfer::Error naming the slot unless every receive slot holds its pattern.
  // `corrupt`: flip one byte first (--xfer_test_corrupt).
  void validate(bool corrupt);

 private:
  Traffic traffic_;
  int slots_;
  std::size_t bytes_;
  std::uint64_t seed_;
  Stream stream_;
  DeviceBuffer send_;
  DeviceBuffer recv_;
};

}  // namespace xfer::gpu
