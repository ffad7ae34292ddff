// NCCL for the nccl_sendrecv path: error checking, the library version, and one communicator
// per run over all MPI ranks, owned by RAII.
//
//   XFER_NCCL_CHECK(call)          throws xfer::Error "rank R: CALL failed: ncclX: text
//   (file:line)" nccl_version()                 "2.28.3": the library loaded at run time
//   (ncclGetVersion) NcclComm                       one communicator; collective constructor;
//   destroyed with
//                                  ncclCommDestroy, or ncclCommAbort once broken
//   NcclComm::check(rc, ...)       a failed NCCL call on this communicator: tell the other
//                                  ranks, abort, throw (use XFER_NCCL_COMM_CHECK)
//   NcclComm::wait(stream)         spins until `stream` is done, watching for NCCL asynchronous
//                                  errors and for other ranks' failures; aborts and throws on one
//   SharedNcclComm                 created on first use by all ranks together, kept for the run,
//                                  recreated after a failure; destroyed at MPI_Finalize at the
//                                  latest (an MPI_COMM_SELF attribute), while CUDA is still up
//
// Threading: every call here is made on the main thread, the only one that calls MPI.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "base/error.hpp"
#include "mpi/world.hpp"

#define XFER_NCCL_CHECK(call)                                                  \
  do {                                                                         \
    const ncclResult_t xfer_nccl_rc_ = (call);                                 \
    if (xfer_nccl_rc_ != ncclSuccess)                                          \
      ::xfer::gpu::raise_nccl_error(xfer_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)

// A call on a live communicator: on failure the communicator is aborted and the peers told.
#define XFER_NCCL_COMM_CHECK(comm, call) (comm).check((call), #call, __FILE__, __LINE__)

namespace xfer::gpu {

// "ncclUnhandledCudaError: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
std::string nccl_error_text(ncclResult_t rc);

[[noreturn]] void raise_nccl_error(ncclResult_t rc, const char* call, const char* file, int line);

// The version of the NCCL library loaded at run time, "2.28.3".
std::string nccl_version();

class NcclComm {
 public:
  // Collective over `world`: every rank calls it with the device it uses. Throws the same
  // error on every rank if any rank fails (no rank is left waiting in ncclCommInitRank by a
  // peer that failed before reaching it).
  NcclComm(const World& world, int device);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }
  bool broken() const { return broken_; }

  // For XFER_NCCL_COMM_CHECK: returns if `rc` is ncclSuccess, otherwise fails.
  void check(ncclResult_t rc, const char* call, const char* file, int line);

  // Waits for all work on `stream` (of this communicator's device). Spins on cudaStreamQuery,
  // the cheapest wait there is; every few hundred polls it asks ncclCommGetAsyncError and
  // looks for another rank's failure notice, so a failure anywhere ends the wait everywhere.
  void wait(cudaStream_t stream);

  // Marks it broken without telling anyone: its destructor aborts instead of destroying.
  void abandon() noexcept { broken_ = true; }

  // Marks the communicator broken, tells every other rank, aborts it and throws `message`.
  [[noreturn]] void fail(const std::string& message);

 private:
  void notify_peers();
  void abort() noexcept;
  void check_async_and_peers();

  ncclComm_t comm_ = nullptr;
  MPI_Comm notices_ = MPI_COMM_NULL;  // failure notices between ranks, apart from all else
  int rank_ = 0;
  int size_ = 1;
  int device_ = -1;
  bool broken_ = false;
};

// The run's communicator, made when a benchmark first needs it. Ranks must call acquire()
// together (every rank runs the same benchmarks in the same order).
class SharedNcclComm {
 public:
  // Registers the MPI_Finalize hook that destroys the communicator; call after MPI_Init.
  static std::shared_ptr<SharedNcclComm> create();
  ~SharedNcclComm() { reset(); }

  // Collective: the communicator, created now if there is none or any rank's is broken (then
  // every rank aborts its own first). Throws the same error on every rank on failure.
  NcclComm& acquire(const World& world, int device);
  void reset() noexcept;

 private:
  SharedNcclComm() = default;
  std::unique_ptr<NcclComm> comm_;
};

}  // namespace xfer::gpu
