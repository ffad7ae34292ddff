#include <algorithm>

#include "base/error.hpp"
#include "base/pattern.hpp"
#include "gpu/staging_mpi.hpp"

namespace xfer::gpu {
namespace {
// Chunks of `chunk` bytes in one message of `bytes` (a message of 0 bytes is one empty chunk).
std::size_t chunks_in(std::size_t bytes, std::size_t chunk) {
  return bytes == 0 ? 1 : (bytes + chunk - 1) / chunk;
}
}  // namespace

// ------------------------------------------------------------------ one direction, pipelined

StagingPipe::StagingPipe(int device, std::size_t bytes, std::size_t chunk, std::size_t slots)
    : bytes_(bytes),
      chunk_(chunk),
      per_message_(chunks_in(bytes, chunk)),
      stride_((std::max<std::size_t>(1, std::min(chunk, bytes)) + 63) / 64 * 64),
      slots_(slots),
      stream_(device),
      pinned_(slots * stride_),
      requests_(slots, MPI_REQUEST_NULL) {
  events_.reserve(slots);
  for (std::size_t i = 0; i < slots; ++i) events_.emplace_back(device, /*timing=*/false);
}

void StagingPipe::poison() { fill_bytes(pinned_.data(), slots_ * stride_, 0xA5); }

void StagingPipe::begin(const SlotView& messages, std::int64_t count, int peer, int tag,
                        MPI_Comm comm) {
  messages_ = messages;
  total_ = static_cast<std::size_t>(count) * per_message_;
  peer_ = peer;
  tag_ = tag;
  comm_ = comm;
}

char* StagingPipe::device_chunk(std::size_t k) const {
  return messages_.at(static_cast<std::int64_t>(k / per_message_)) + k % per_message_ * chunk_;
}

std::size_t StagingPipe::chunk_bytes(std::size_t k) const {
  return std::min(chunk_, bytes_ - k % per_message_ * chunk_);
}

char* StagingPipe::slot(std::size_t k) const {
  return static_cast<char*>(pinned_.data()) + k % slots_ * stride_;
}

void SendPipe::start(const SlotView& from, std::int64_t count, int peer, int tag, MPI_Comm comm) {
  begin(from, count, peer, tag, comm);
  copied_ = sent_ = done_ = 0;
}

void SendPipe::step() {
  for (; copied_ < total_ && copied_ < done_ + slots_; ++copied_) {  // every free slot a chunk
    XFER_CUDA_CHECK(cudaMemcpyAsync(slot(copied_), device_chunk(copied_), chunk_bytes(copied_),
                                    cudaMemcpyDeviceToHost, stream_.get()));
    XFER_CUDA_CHECK(cudaEventRecord(event(copied_), stream_.get()));
  }
  if (sent_ < copied_) {
    const cudaError_t state = cudaEventQuery(event(sent_));
    if (state == cudaSuccess) {
      // Same peer, tag and communicator: MPI delivers the chunks in order, into the receives
      // the peer posted in order.
      XFER_MPI_CHECK(MPI_Isend(slot(sent_), static_cast<int>(chunk_bytes(sent_)), MPI_BYTE, peer_,
                               tag_, comm_, request(sent_)));
      ++sent_;
      return;
    }
    if (state != cudaErrorNotReady) XFER_CUDA_CHECK(state);
  }
  if (done_ < sent_) {  // also what keeps MPI moving while the GPU copies
    int finished = 0;
    XFER_MPI_CHECK(MPI_Test(request(done_), &finished, MPI_STATUS_IGNORE));
    if (finished) ++done_;
  }
}

void RecvPipe::start(const SlotView& into, std::int64_t count, int peer, int tag, MPI_Comm comm) {
  begin(into, count, peer, tag, comm);
  posted_ = arrived_ = freed_ = 0;
}

void RecvPipe::step() {
  for (; posted_ < total_ && posted_ < freed_ + slots_; ++posted_) {
    XFER_MPI_CHECK(MPI_Irecv(slot(posted_), static_cast<int>(chunk_bytes(posted_)), MPI_BYTE, peer_,
                             tag_, comm_, request(posted_)));
  }
  int finished = 0;
  if (arrived_ < posted_)  // (a slot waiting to be reposted holds a completed, null request)
    XFER_MPI_CHECK(MPI_Test(request(arrived_), &finished, MPI_STATUS_IGNORE));
  if (finished) {
    XFER_CUDA_CHECK(cudaMemcpyAsync(device_chunk(arrived_), slot(arrived_), chunk_bytes(arrived_),
                                    cudaMemcpyHostToDevice, stream_.get()));
    XFER_CUDA_CHECK(cudaEventRecord(event(arrived_), stream_.get()));
    ++arrived_;
  }
  if (freed_ < arrived_) {
    const cudaError_t state = cudaEventQuery(event(freed_));
    if (state == cudaSuccess) {
      ++freed_;
    } else if (state != cudaErrorNotReady) {
      XFER_CUDA_CHECK(state);
    }
  }
}

// ------------------------------------------------------------------ the exchange

std::size_t MpiStaging::chunk_for(std::size_t bytes) {
  constexpr std::size_t kAlign = std::size_t{64} << 10;  // whole 64 KiB pieces
  const std::size_t wanted = (bytes / kChunksWanted + kAlign - 1) / kAlign * kAlign;
  return std::clamp(wanted, kMinChunk, kMaxChunk);
}

MpiStaging::MpiStaging(const World& world, const PairRole& role, int device, std::size_t bytes,
                       int window, HostMemory host, StagingMode mode, int tag_base)
    : world_(world),
      role_(role),
      bytes_(bytes),
      message_(bytes),
      host_(host),
      mode_(mode),
      tag_(tag_base) {
  if (mode == StagingMode::Pipelined && host == HostMemory::Pageable)
    throw Error(rank_prefix() + "pipelined staging needs pinned host memory");
  if (!role.active()) return;
  if (mode == StagingMode::Pipelined) {
    // As many slots as the calls' chunks need, up to kSlots: a window of small messages keeps
    // kSlots of them in flight, a ping-pong of one chunk has one slot.
    const std::size_t chunk = chunk_for(bytes);
    const std::size_t slots =
        std::min(kSlots, chunks_in(bytes, chunk) * static_cast<std::size_t>(std::max(window, 1)));
    send_pipe_ = std::make_unique<SendPipe>(device, bytes, chunk, slots);
    recv_pipe_ = std::make_unique<RecvPipe>(device, bytes, chunk, slots);
  } else {
    stream_ = Stream(device);
    if (host == HostMemory::Pinned) {
      pinned_send_ = PinnedBuffer(bytes);
      pinned_recv_ = PinnedBuffer(bytes);
    } else {
      pageable_send_ = PageableBuffer(bytes);
      pageable_recv_ = PageableBuffer(bytes);
    }
  }
}

void MpiStaging::poison() {
  // Any constant differs from the pattern almost everywhere.
  if (!role_.active()) return;
  if (recv_pipe_) {
    recv_pipe_->poison();
  } else if (bytes_ > 0) {
    fill_bytes(host_ == HostMemory::Pinned ? pinned_recv_.data() : pageable_recv_.data(), bytes_,
               0xA5);
  }
}

void MpiStaging::round_trip(const SlotView& send_slots, const SlotView& recv_slots) {
  if (!role_.active()) return;
  if (role_.leader) {
    send(send_slots, 1, tag_);
    recv(recv_slots, 1, tag_ + 1);
  } else {
    recv(recv_slots, 1, tag_);
    send(recv_slots, 1, tag_ + 1);  // the echo: what arrived, from the device
  }
}

void MpiStaging::stream(const SlotView& send_slots, const SlotView& recv_slots, int window) {
  if (!role_.active()) return;
  const MPI_Comm comm = world_.comm();
  if (role_.leader) {
    send(send_slots, window, tag_);
    XFER_MPI_CHECK(MPI_Recv(ack_, 4, MPI_BYTE, role_.peer, tag_ + 1, comm, MPI_STATUS_IGNORE));
  } else {
    recv(recv_slots, window, tag_);  // returns with the window on the device
    XFER_MPI_CHECK(MPI_Send(ack_, 4, MPI_BYTE, role_.peer, tag_ + 1, comm));
  }
}

void MpiStaging::bidir(const SlotView& send_slots, const SlotView& recv_slots, int window) {
  if (!role_.active()) return;
  // Blocking sends both ways would wait for each other's receives.
  if (!send_pipe_) throw Error(rank_prefix() + "mode:bidir needs pipelined staging");
  recv_pipe_->start(recv_slots, window, role_.peer, tag_, world_.comm());  // receives first
  send_pipe_->start(send_slots, window, role_.peer, tag_, world_.comm());
  while (!recv_pipe_->done() || !send_pipe_->done()) {
    if (!recv_pipe_->done()) recv_pipe_->step();
    if (!send_pipe_->done()) send_pipe_->step();
  }
  recv_pipe_->finish();
}

void MpiStaging::send(const SlotView& from, std::int64_t count, int tag) {
  if (send_pipe_) {
    send_pipe_->start(from, count, role_.peer, tag, world_.comm());
    while (!send_pipe_->done()) send_pipe_->step();
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) send_sequential(from.at(i), tag);
}

void MpiStaging::recv(const SlotView& into, std::int64_t count, int tag) {
  if (recv_pipe_) {
    recv_pipe_->start(into, count, role_.peer, tag, world_.comm());
    while (!recv_pipe_->done()) recv_pipe_->step();
    recv_pipe_->finish();
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) recv_sequential(into.at(i), tag);
}

void MpiStaging::send_sequential(const void* device_src, int tag) {
  void* host = host_ == HostMemory::Pinned ? pinned_send_.data() : pageable_send_.data();
  XFER_CUDA_CHECK(cudaMemcpyAsync(host, device_src, bytes_, cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  XFER_MPI_CHECK(MPI_Send(host, message_.count(), message_.type(), role_.peer, tag, world_.comm()));
}

void MpiStaging::recv_sequential(void* device_dst, int tag) {
  void* host = host_ == HostMemory::Pinned ? pinned_recv_.data() : pageable_recv_.data();
  XFER_MPI_CHECK(MPI_Recv(host, message_.count(), message_.type(), role_.peer, tag, world_.comm(),
                          MPI_STATUS_IGNORE));
  XFER_CUDA_CHECK(cudaMemcpyAsync(device_dst, host, bytes_, cudaMemcpyHostToDevice, stream_.get()));
  stream_.synchronize();
}

}  // namespace xfer::gpu
