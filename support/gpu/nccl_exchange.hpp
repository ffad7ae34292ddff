// support/mpi/exchange.hpp's three modes with ncclSend/ncclRecv instead of MPI, for nccl_sendrecv.
// Everything is queued on one stream of this rank's GPU and waited for by complete(), so a
// batch of round trips is played by the GPUs among themselves. A stream window's sends (and a
// bidir window's sends and receives) go in one ncclGroupStart/End.
#pragma once

#include <cuda_runtime.h>

#include "gpu/cuda.hpp"
#include "gpu/nccl_comm.hpp"
#include "mpi/exchange.hpp"

namespace xfer::gpu {

class NcclExchange {
 public:
  NcclExchange(NcclComm& comm, const PairRole& role, std::size_t bytes);

  void round_trip(const SlotView& send, const SlotView& recv);
  void stream(const SlotView& send, const SlotView& recv, int window);
  void bidir(const SlotView& send, const SlotView& recv, int window);
  void complete();  // waits for everything queued (and for failure notices from other ranks)

 private:
  NcclComm& comm_;
  PairRole role_;
  std::size_t bytes_;
  Stream stream_;
  DeviceBuffer ack_;  // the stream window's acknowledgement, 4 bytes on this rank's GPU
};

}  // namespace xfer::gpu
