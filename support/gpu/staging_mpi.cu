#include <algorithm>
#include <cstring>

#include "../error.hpp"
#include "staging_mpi.hpp"

namespace xfer::gpu {

std::size_t MpiStaging::chunk_for(std::size_t bytes) {
  constexpr std::size_t kAlign = std::size_t{64} << 10;  // whole 64 KiB pieces
  const std::size_t wanted = (bytes / kChunksWanted + kAlign - 1) / kAlign * kAlign;
  return std::clamp(wanted, kMinChunk, kMaxChunk);
}

MpiStaging::MpiStaging(const World& world, int device, cudaStream_t stream, std::size_t bytes,
                       HostMemory host, StagingMode mode)
    : world_(world),
      stream_(stream),
      bytes_(bytes),
      message_(bytes),
      host_(host),
      mode_(mode),
      chunk_(chunk_for(bytes)) {
  if (mode == StagingMode::Pipelined && host == HostMemory::Pageable)
    throw Error(rank_prefix() + "pipelined staging needs pinned host memory");
  if (mode == StagingMode::Pipelined) {
    slots_ = std::min(kSlots, chunks());
    pinned_send_ = PinnedBuffer(slots_ * chunk_);
    pinned_recv_ = PinnedBuffer(slots_ * chunk_);
    slot_events_.reserve(slots_);
    for (std::size_t i = 0; i < slots_; ++i) slot_events_.emplace_back(device, /*timing=*/false);
    requests_.assign(slots_, MPI_REQUEST_NULL);
  } else if (host == HostMemory::Pinned) {
    pinned_send_ = PinnedBuffer(bytes);
    pinned_recv_ = PinnedBuffer(bytes);
  } else {
    pageable_send_ = PageableBuffer(bytes);
    pageable_recv_ = PageableBuffer(bytes);
  }
}

void* MpiStaging::host_send() const {
  return host_ == HostMemory::Pinned ? pinned_send_.data() : pageable_send_.data();
}

void* MpiStaging::host_recv() const {
  return host_ == HostMemory::Pinned ? pinned_recv_.data() : pageable_recv_.data();
}

std::size_t MpiStaging::chunk_bytes(std::size_t index) const {
  return std::min(chunk_, bytes_ - index * chunk_);
}

char* MpiStaging::send_slot(std::size_t chunk) const {
  return static_cast<char*>(pinned_send_.data()) + chunk % slots_ * chunk_;
}

char* MpiStaging::recv_slot(std::size_t chunk) const {
  return static_cast<char*>(pinned_recv_.data()) + chunk % slots_ * chunk_;
}

void MpiStaging::poison() {
  // Any constant differs from the pattern almost everywhere.
  const std::size_t size = mode_ == StagingMode::Pipelined ? slots_ * chunk_ : bytes_;
  if (size > 0) std::memset(host_recv(), 0xA5, size);
}

void MpiStaging::send(const void* device_src, int peer, int tag) {
  if (mode_ == StagingMode::Pipelined && bytes_ > 0) {
    send_pipelined(device_src, peer, tag);
  } else {
    send_sequential(device_src, peer, tag);
  }
}

void MpiStaging::recv(void* device_dst, int peer, int tag) {
  if (mode_ == StagingMode::Pipelined && bytes_ > 0) {
    recv_pipelined(device_dst, peer, tag);
  } else {
    recv_sequential(device_dst, peer, tag);
  }
}

void MpiStaging::send_sequential(const void* device_src, int peer, int tag) {
  XFER_CUDA_CHECK(
      cudaMemcpyAsync(host_send(), device_src, bytes_, cudaMemcpyDeviceToHost, stream_));
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream_));
  XFER_MPI_CHECK(
      MPI_Send(host_send(), message_.count(), message_.type(), peer, tag, world_.comm()));
}

void MpiStaging::recv_sequential(void* device_dst, int peer, int tag) {
  XFER_MPI_CHECK(MPI_Recv(host_recv(), message_.count(), message_.type(), peer, tag, world_.comm(),
                          MPI_STATUS_IGNORE));
  XFER_CUDA_CHECK(
      cudaMemcpyAsync(device_dst, host_recv(), bytes_, cudaMemcpyHostToDevice, stream_));
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void MpiStaging::send_pipelined(const void* device_src, int peer, int tag) {
  const std::size_t n = chunks();
  const auto* device = static_cast<const char*>(device_src);
  // Chunks [0, copied) are queued for D2H, [0, sent) handed to MPI, [0, done) sent.
  std::size_t copied = 0;
  std::size_t sent = 0;
  std::size_t done = 0;
  while (done < n) {
    for (; copied < n && copied < done + slots_; ++copied) {  // every free slot gets a chunk
      XFER_CUDA_CHECK(cudaMemcpyAsync(send_slot(copied), device + copied * chunk_,
                                      chunk_bytes(copied), cudaMemcpyDeviceToHost, stream_));
      XFER_CUDA_CHECK(cudaEventRecord(slot_events_[copied % slots_].get(), stream_));
    }
    if (sent < copied) {
      const cudaError_t state = cudaEventQuery(slot_events_[sent % slots_].get());
      if (state == cudaSuccess) {
        // Same peer, tag and communicator: MPI delivers the chunks in order, into the
        // receives the peer posted in order.
        XFER_MPI_CHECK(MPI_Isend(send_slot(sent), static_cast<int>(chunk_bytes(sent)), MPI_BYTE,
                                 peer, tag, world_.comm(), &requests_[sent % slots_]));
        ++sent;
        continue;
      }
      if (state != cudaErrorNotReady) XFER_CUDA_CHECK(state);
    }
    if (done < sent) {  // also what keeps MPI moving while the GPU copies
      int finished = 0;
      XFER_MPI_CHECK(MPI_Test(&requests_[done % slots_], &finished, MPI_STATUS_IGNORE));
      if (finished) ++done;
    }
  }
}

void MpiStaging::recv_pipelined(void* device_dst, int peer, int tag) {
  const std::size_t n = chunks();
  auto* device = static_cast<char*>(device_dst);
  // Chunks [0, posted) have a receive posted, [0, arrived) are queued for H2D, [0, freed) are
  // on the device (their slots free again).
  std::size_t posted = 0;
  std::size_t arrived = 0;
  std::size_t freed = 0;
  while (arrived < n) {
    for (; posted < n && posted < freed + slots_; ++posted) {
      XFER_MPI_CHECK(MPI_Irecv(recv_slot(posted), static_cast<int>(chunk_bytes(posted)), MPI_BYTE,
                               peer, tag, world_.comm(), &requests_[posted % slots_]));
    }
    int finished = 0;
    if (arrived < posted)  // (a slot waiting to be reposted holds a completed, null request)
      XFER_MPI_CHECK(MPI_Test(&requests_[arrived % slots_], &finished, MPI_STATUS_IGNORE));
    if (finished) {
      XFER_CUDA_CHECK(cudaMemcpyAsync(device + arrived * chunk_, recv_slot(arrived),
                                      chunk_bytes(arrived), cudaMemcpyHostToDevice, stream_));
      XFER_CUDA_CHECK(cudaEventRecord(slot_events_[arrived % slots_].get(), stream_));
      ++arrived;
    }
    if (freed < arrived) {
      const cudaError_t state = cudaEventQuery(slot_events_[freed % slots_].get());
      if (state == cudaSuccess) {
        ++freed;
      } else if (state != cudaErrorNotReady) {
        XFER_CUDA_CHECK(state);
      }
    }
  }
  XFER_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace xfer::gpu
