#include "gpu/nccl_exchange.hpp"

namespace xfer::gpu {

NcclExchange::NcclExchange(NcclComm& comm, const PairRole& role, std::size_t bytes)
    : comm_(comm), role_(role), bytes_(bytes) {
  if (!role.active()) return;
  stream_ = Stream(comm.device());
  ack_ = DeviceBuffer(comm.device(), 4);
}

void NcclExchange::round_trip(const SlotView& send, const SlotView& recv) {
  if (!role_.active()) return;
  const cudaStream_t s = stream_.get();
  if (role_.leader) {
    XFER_NCCL_COMM_CHECK(comm_,
                         ncclSend(send.at(0), bytes_, ncclUint8, role_.peer, comm_.get(), s));
    XFER_NCCL_COMM_CHECK(comm_,
                         ncclRecv(recv.at(0), bytes_, ncclUint8, role_.peer, comm_.get(), s));
  } else {
    XFER_NCCL_COMM_CHECK(comm_,
                         ncclRecv(recv.at(0), bytes_, ncclUint8, role_.peer, comm_.get(), s));
    XFER_NCCL_COMM_CHECK(comm_,
                         ncclSend(recv.at(0), bytes_, ncclUint8, role_.peer, comm_.get(), s));
  }
}

void NcclExchange::stream(const SlotView& send, const SlotView& recv, int window) {
  if (!role_.active()) return;
  const cudaStream_t s = stream_.get();
  XFER_NCCL_COMM_CHECK(comm_, ncclGroupStart());
  for (int i = 0; i < window; ++i) {
    if (role_.leader)
      XFER_NCCL_COMM_CHECK(comm_,
                           ncclSend(send.at(i), bytes_, ncclUint8, role_.peer, comm_.get(), s));
    else
      XFER_NCCL_COMM_CHECK(comm_,
                           ncclRecv(recv.at(i), bytes_, ncclUint8, role_.peer, comm_.get(), s));
  }
  XFER_NCCL_COMM_CHECK(comm_, ncclGroupEnd());
  if (role_.leader)
    XFER_NCCL_COMM_CHECK(comm_, ncclRecv(ack_.data(), 4, ncclUint8, role_.peer, comm_.get(), s));
  else
    XFER_NCCL_COMM_CHECK(comm_, ncclSend(ack_.data(), 4, ncclUint8, role_.peer, comm_.get(), s));
}

void NcclExchange::bidir(const SlotView& send, const SlotView& recv, int window) {
  if (!role_.active()) return;
  const cudaStream_t s = stream_.get();
  XFER_NCCL_COMM_CHECK(comm_, ncclGroupStart());
  for (int i = 0; i < window; ++i) {
    XFER_NCCL_COMM_CHECK(comm_,
                         ncclRecv(recv.at(i), bytes_, ncclUint8, role_.peer, comm_.get(), s));
    XFER_NCCL_COMM_CHECK(comm_,
                         ncclSend(send.at(i), bytes_, ncclUint8, role_.peer, comm_.get(), s));
  }
  XFER_NCCL_COMM_CHECK(comm_, ncclGroupEnd());
}

void NcclExchange::complete() {
  if (role_.active()) comm_.wait(stream_.get());
}

}  // namespace xfer::gpu
