// One side of a copy of ce_copy or sm_copy: a ring of slots (copies_plan.hpp: Ring) in a GPU's
// memory or in host memory, each slot filled with a pattern of its own, so a copy that read or
// wrote the wrong slot fails validation; and the cursor that hands out the slots of a batch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/pattern.hpp"
#include "gpu/copies_plan.hpp"
#include "gpu/cuda.hpp"

namespace xfer::gpu {

// The pattern seed of slot k of a row's ring.
std::uint64_t slot_seed(std::uint64_t seed, std::uint64_t slot);

class RingSide {
 public:
  enum class Memory {
    Device,    // the GPU's own
    Pinned,    // page-locked host memory, for a copy engine
    Mapped,    // page-locked host memory mapped into the GPU, for a kernel (zero-copy)
    Pageable,  // ordinary host memory
  };
  RingSide() = default;
  RingSide(Memory memory, int device, const Ring& ring, std::size_t bytes);

  // Slot k as a copy is given it (Mapped: the GPU's pointer to it).
  void* slot(std::uint64_t k) const;
  void fill(std::uint64_t seed, cudaStream_t stream);    // every slot; waits for it
  void poison(std::uint64_t seed, cudaStream_t stream);  // every slot; waits for it
  Mismatch check(std::uint64_t k, std::uint64_t seed, cudaStream_t stream) const;
  void flip(std::uint64_t k, cudaStream_t stream);  // test: a byte in the middle of slot k
  std::string where() const;                        // "GPU 0", "mapped host memory"

 private:
  bool host() const { return memory_ != Memory::Device; }
  char* base() const;
  Memory memory_ = Memory::Device;
  int device_ = 0;
  Ring ring_;
  std::size_t bytes_ = 0;
  DeviceBuffer device_memory_;
  PinnedBuffer pinned_;
  PageableBuffer pageable_;
  char* mapped_ = nullptr;  // the GPU's address of pinned_ (Mapped)
};

// The slots of a ring in the order copies take them, and which ones were written since the
// last poison (at most every slot).
class RingCursor {
 public:
  explicit RingCursor(std::uint64_t slots = 1) : slots_(slots) {}
  std::uint64_t take() {
    const std::uint64_t k = next_;
    next_ = (next_ + 1) % slots_;
    ++written_;
    return k;
  }
  void restart() { written_ = 0; }
  std::vector<std::uint64_t> written() const;

 private:
  std::uint64_t slots_ = 1;
  std::uint64_t next_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace xfer::gpu
