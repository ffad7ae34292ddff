// Device data through MPI by way of host memory, for an MPI that cannot take device pointers:
// the seed tutorial's "CUDA staged version", and the pipelined one a careful implementation
// would write.
//
//   MpiStaging staging(world, device, stream, bytes, HostMemory::Pinned, StagingMode::Pipelined);
//   staging.send(device_src, peer, tag);   // D2H into host memory, MPI_Send from it
//   staging.recv(device_dst, peer, tag);   // MPI_Recv into host memory, H2D; returns once the
//                                          // data is on the device
//
// Sequential: the whole message is copied, then sent (or received, then copied), through
// host buffers of the message's size.
// Pipelined: the message moves in chunks (chunk_for()) through a small ring of pinned slots,
// so the copy of one chunk overlaps the MPI transfer of others, and the slots stay in the CPU
// caches instead of streaming the whole message through DRAM twice. The sender queues D2H
// copies into free slots with an event behind each and MPI_Isends a chunk as soon as its event
// completes; a slot is reused once its send has completed. The receiver keeps an MPI_Irecv
// posted in every free slot and queues a chunk's H2D copy as soon as it has arrived; a slot is
// reposted once that copy has completed. Each rank keeps calling into MPI while it waits for
// the GPU, so MPI's own progress never stalls. Needs pinned memory: copies from pageable
// memory do not overlap with anything.
//
// Sends and receives use separate host buffers, so a receive that delivered nothing cannot
// pass validation with data this rank staged itself.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "../world.hpp"
#include "cuda.hpp"

namespace xfer::gpu {

enum class HostMemory { Pinned, Pageable };
enum class StagingMode { Sequential, Pipelined };

class MpiStaging {
 public:
  // Pipelined chunks: about 8 per message, at least 256 KiB (below that a chunk's fixed cost
  // of an MPI message and a copy launch outweighs the overlap), at most 2 MiB, 8 slots in
  // flight per direction: 16 MiB of pinned staging each way, which stays in the CPU caches.
  // Chosen by measurement on 2x H200 (docs/mpi-gpu-paths.md).
  static constexpr std::size_t kMinChunk = std::size_t{256} << 10;
  static constexpr std::size_t kMaxChunk = std::size_t{2} << 20;
  static constexpr std::size_t kChunksWanted = 8;
  static constexpr std::size_t kSlots = 8;
  static std::size_t chunk_for(std::size_t bytes);

  // Allocates the host buffers; `stream`, of `device` (where the data lives), carries the
  // copies.
  MpiStaging(const World& world, int device, cudaStream_t stream, std::size_t bytes,
             HostMemory host, StagingMode mode);

  void send(const void* device_src, int peer, int tag);
  void recv(void* device_dst, int peer, int tag);

  // Poisons the host receive buffer (before every timed pass, with the device buffers).
  void poison();

  std::size_t chunk() const { return chunk_; }
  std::size_t chunks() const { return bytes_ == 0 ? 1 : (bytes_ + chunk_ - 1) / chunk_; }

 private:
  void* host_send() const;
  void* host_recv() const;
  void send_sequential(const void* device_src, int peer, int tag);
  void recv_sequential(void* device_dst, int peer, int tag);
  void send_pipelined(const void* device_src, int peer, int tag);
  void recv_pipelined(void* device_dst, int peer, int tag);
  std::size_t chunk_bytes(std::size_t index) const;
  char* send_slot(std::size_t chunk) const;
  char* recv_slot(std::size_t chunk) const;

  const World& world_;
  cudaStream_t stream_;
  std::size_t bytes_;
  MessageType message_;  // sequential: the whole message, in one MPI call even above 2 GiB
  HostMemory host_;
  StagingMode mode_;
  std::size_t chunk_;
  std::size_t slots_ = 1;
  PinnedBuffer pinned_send_, pinned_recv_;
  PageableBuffer pageable_send_, pageable_recv_;
  std::vector<Event> slot_events_;     // pipelined: per slot, after its chunk's D2H or H2D copy
  std::vector<MPI_Request> requests_;  // pipelined: per slot, its chunk's send or receive
};

}  // namespace xfer::gpu
