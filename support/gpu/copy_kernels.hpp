// The kernels of sm_copy and pointer_chase, and what they ask of the GPU.
//
//   copy_blocks_per_sm(device)   blocks of kCopyThreads one SM holds at once for the copy kernel
//                                (cudaOccupancyMaxActiveBlocksPerMultiprocessor)
//   launch_copy(grid, a, b, jobs, stream)   copies job a (and b at once, jobs = 2) with `grid`
//                                (copies_plan.hpp: plan_copy_grid): exactly grid.bytes() each
//   l2_bytes(device), sm_count(device)
//   enable_peer_access(from, to)   lets GPU `from`'s kernels load and store GPU `to`'s memory
//                                (already on: fine)
//   build_chain(nodes, stream)   lays kChaseNodes 8-byte nodes at `nodes` (a pointer the stream's
//                                GPU can load: its own, a peer's or mapped host memory)
//   launch_chase(cursor, loads, stream)   one thread follows `loads` dependent loads from
//                                *cursor and leaves where it ended in *cursor
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/copies_plan.hpp"

namespace xfer::gpu {

constexpr int kCopyThreads = 512;

struct CopyJob {
  void* dst = nullptr;
  const void* src = nullptr;
};

int copy_blocks_per_sm(int device);
int sm_count(int device);
std::uint64_t l2_bytes(int device);
void enable_peer_access(int from, int to);
void launch_copy(const CopyGrid& grid, CopyJob a, CopyJob b, int jobs, cudaStream_t stream);

void build_chain(void* nodes, cudaStream_t stream);
// `cursor`: device memory of the stream's GPU holding the current node's address.
void launch_chase(void** cursor, std::int64_t loads, cudaStream_t stream);

}  // namespace xfer::gpu
