// The pattern of support/base/pattern.hpp, written and checked on the GPU: a 1 GiB buffer is filled
// or checked in well under a millisecond, and only a 16-byte summary crosses to the host.
//
// Each function runs on the device that owns the pointer (found with cudaPointerGetAttributes)
// and enqueues on `stream`, which must belong to that device (0: its legacy default stream).
// The fill functions are asynchronous; count_mismatches_device() synchronizes `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/pattern.hpp"

namespace xfer::gpu {

// Byte i of dst becomes pattern_byte(seed, i), exactly as fill_pattern() does on the host.
void fill_pattern_device(void* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);

// Fills with the pattern of poison_seed(seed): wrong almost everywhere for `seed`.
void poison_device(void* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);

// Compares with the pattern of `seed` on the device; the same answer find_mismatches() gives.
Mismatch count_mismatches_device(const void* data, std::size_t bytes, std::uint64_t seed,
                                 cudaStream_t stream);

// Test switch: inverts the byte at `offset` (asynchronous, on `stream`).
void flip_byte_device(void* data, std::size_t offset, cudaStream_t stream);

}  // namespace xfer::gpu
