#include "gpu/nccl_comm.hpp"

#include <functional>

#include "base/failpoint.hpp"
#include "gpu/cuda.hpp"

namespace xfer::gpu {
namespace {

// Failure notices travel on the communicator's own MPI_Comm, so no other message matches them.
constexpr int kNoticeTag = 7;
// cudaStreamQuery polls between two looks at NCCL's async error and the notices: a few
// hundred microseconds, so the tight loop that decides small-message latency stays tight.
constexpr unsigned kPollsPerCheck = 256;

// Runs `step`, returning its error message ("" if none), so that every rank reaches the next
// agreement whatever happened.
std::string attempt(const std::function<void()>& step) {
  try {
    step();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool mpi_usable() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

// The MPI_Finalize hook: MPI_COMM_SELF's attributes are deleted first thing in MPI_Finalize,
// on every rank, while CUDA and NCCL still work.
int destroy_at_finalize(MPI_Comm, int, void* attribute, void*) {
  auto* owner = static_cast<std::weak_ptr<SharedNcclComm>*>(attribute);
  if (auto shared = owner->lock()) shared->reset();
  delete owner;
  return MPI_SUCCESS;
}

}  // namespace

std::string nccl_error_text(ncclResult_t rc) {
  static const char* const kNames[] = {
      "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};
  const auto index = static_cast<std::size_t>(rc);
  const std::string name = index < sizeof kNames / sizeof kNames[0]
                               ? kNames[index]
                               : "ncclResult " + std::to_string(static_cast<int>(rc));
  return name + ": " + ncclGetErrorString(rc);
}

void raise_nccl_error(ncclResult_t rc, const char* call, const char* file, int line) {
  raise_call_error(nccl_error_text(rc) + " (NCCL_DEBUG=WARN says more)", call, file, line);
}

std::string nccl_version() {
  int code = 0;
  XFER_NCCL_CHECK(ncclGetVersion(&code));
  // NCCL 2.9 and later: major*10000 + minor*100 + patch; before: major*1000 + minor*100 + patch.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

NcclComm::NcclComm(const World& world, int device)
    : rank_(world.rank()), size_(world.size()), device_(device) {
  // Every rank's device must be usable before anyone enters ncclCommInitRank, which waits for
  // all ranks: a rank that failed before it would leave the others there for good.
  std::string error = attempt([&] {
    XFER_CUDA_CHECK(cudaSetDevice(device));
    XFER_CUDA_CHECK(cudaFree(nullptr));  // creates the context now, not inside NCCL
  });
  ncclUniqueId id{};
  if (rank_ == 0 && error.empty()) error = attempt([&] { XFER_NCCL_CHECK(ncclGetUniqueId(&id)); });
  XFER_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world.comm()));
  if (const std::string first = world.first_message(error); !first.empty()) throw Error(first);

  error = attempt([&] { XFER_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_)); });
  if (const std::string first = world.first_message(error); !first.empty()) {
    abort();
    throw Error(first);
  }
  if (const int rc = MPI_Comm_dup(world.comm(), &notices_); rc != MPI_SUCCESS) {
    abort();
    XFER_MPI_CHECK(rc);
  }
}

NcclComm::~NcclComm() {
  if (comm_) {
    cudaSetDevice(device_);
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(comm_, &async) != ncclSuccess || async != ncclSuccess) broken_ = true;
    if (broken_) {
      ncclCommAbort(comm_);
    } else {
      ncclCommDestroy(comm_);
    }
    comm_ = nullptr;
  }
  if (notices_ != MPI_COMM_NULL && mpi_usable()) MPI_Comm_free(&notices_);
}

void NcclComm::check(ncclResult_t rc, const char* call, const char* file, int line) {
  if (fail_point_hit(call) && !fail_point_is_fault()) rc = ncclSystemError;  // test only
  if (rc == ncclSuccess) return;
  std::string message = attempt([&] { raise_nccl_error(rc, call, file, line); });
  if (comm_) {
    const char* last = ncclGetLastError(comm_);
    if (last && *last) message += " [NCCL: " + std::string(last) + "]";
  }
  fail(message);
}

void NcclComm::wait(cudaStream_t stream) {
  for (unsigned polls = 1;; ++polls) {
    const cudaError_t rc = cudaStreamQuery(stream);
    if (rc == cudaSuccess) return;
    if (rc != cudaErrorNotReady) {
      cudaGetLastError();
      fail(rank_prefix() + "cudaStreamQuery failed while waiting for NCCL: " + error_text(rc));
    }
    if (polls % kPollsPerCheck == 0) check_async_and_peers();
  }
}

void NcclComm::check_async_and_peers() {
  ncclResult_t async = ncclSuccess;
  const ncclResult_t rc = ncclCommGetAsyncError(comm_, &async);
  if (rc != ncclSuccess)
    fail(rank_prefix() + "ncclCommGetAsyncError failed: " + nccl_error_text(rc));
  if (async != ncclSuccess && async != ncclInProgress) {
    const char* last = ncclGetLastError(comm_);
    fail(rank_prefix() + "NCCL asynchronous error: " + nccl_error_text(async) +
         (last && *last ? " [NCCL: " + std::string(last) + "]" : std::string()));
  }
  int arrived = 0;
  MPI_Status status;
  XFER_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kNoticeTag, notices_, &arrived, &status));
  if (!arrived) return;
  XFER_MPI_CHECK(
      MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, kNoticeTag, notices_, MPI_STATUS_IGNORE));
  // The failing rank has told everyone already; this one only stops waiting.
  broken_ = true;
  abort();
  throw PeerFailure(rank_prefix() + "rank " + std::to_string(status.MPI_SOURCE) +
                    " failed during NCCL operations; communicator aborted");
}

void NcclComm::fail(const std::string& message) {
  if (!broken_) {
    broken_ = true;
    notify_peers();
  }
  abort();
  throw Error(message);
}

void NcclComm::notify_peers() {
  if (notices_ == MPI_COMM_NULL) return;
  // Best effort: zero-byte messages need no buffer to outlive this call.
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(nullptr, 0, MPI_BYTE, peer, kNoticeTag, notices_, &request) == MPI_SUCCESS)
      MPI_Request_free(&request);
  }
}

void NcclComm::abort() noexcept {
  if (!comm_) return;
  cudaSetDevice(device_);
  ncclCommAbort(comm_);  // also ends this rank's kernels still waiting on a peer
  comm_ = nullptr;
}

std::shared_ptr<SharedNcclComm> SharedNcclComm::create() {
  std::shared_ptr<SharedNcclComm> shared(new SharedNcclComm());
  int keyval = MPI_KEYVAL_INVALID;
  XFER_MPI_CHECK(
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, destroy_at_finalize, &keyval, nullptr));
  auto* owner = new std::weak_ptr<SharedNcclComm>(shared);
  const int rc = MPI_Comm_set_attr(MPI_COMM_SELF, keyval, owner);
  MPI_Comm_free_keyval(&keyval);  // the attribute keeps it alive until MPI_Finalize
  if (rc != MPI_SUCCESS) {
    delete owner;
    XFER_MPI_CHECK(rc);
  }
  return shared;
}

NcclComm& SharedNcclComm::acquire(const World& world, int device) {
  const bool need = !comm_ || comm_->broken();
  if (!world.any(need)) return *comm_;
  // A communicator that failed anywhere is aborted everywhere (ncclCommDestroy could wait for
  // a peer that is gone), then all ranks make a fresh one together.
  if (comm_) comm_->abandon();
  comm_.reset();
  comm_ = std::make_unique<NcclComm>(world, device);
  return *comm_;
}

void SharedNcclComm::reset() noexcept { comm_.reset(); }

}  // namespace xfer::gpu
