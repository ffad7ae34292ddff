// pointer_chase: how long one load takes from a GPU's thread to host memory or to a peer GPU's
// memory, when each load needs the one before it (nvbandwidth's host_device_latency_sm and
// device_to_device_latency_sm).
//
//   host:mapped/span:2MiB/gpu:N     GPU N's thread follows a chain in mapped pinned host memory
//   peer:read/span:2MiB/pair:AtoB   GPU B's thread follows a chain in GPU A's memory (peer access)
// The chain is nvbandwidth's: 8-byte nodes over 2 MiB, each pointing 16 nodes (128 bytes, a
// cache line) on, so every load is on a line of its own (copies_plan.hpp). One thread of one
// block follows kChaseBatch loads a launch, timed with CUDA events; a message is one load, so
// the row's time and latency_us are the time per load and its bytes are the 8 a load moves
// (GB/s = 8 B / latency: what one chain of dependent loads carries). The row has no share of a
// link: a latency is not a bandwidth. Validation: the chase ends on the node the chain's
// arithmetic says, after every load of the pass.
//
// One process does the chase (rank 0); other ranks only take part in the agreements.
#include <optional>
#include <string>

#include "gpu/copies_plan.hpp"
#include "gpu/copy_kernels.hpp"
#include "gpu/copy_row.hpp"
#include "gpu/cuda.hpp"
#include "gpu/devices.hpp"
#include "paths.hpp"

namespace xfer {
namespace {

using gpu::ChaseFamily;

class Chase {
 public:
  Chase(const ChaseFamily& family, std::size_t, std::uint64_t)
      : f_(family),
        stream_(family.dst),
        start_(family.dst),
        stop_(family.dst),
        cursor_(family.dst, sizeof(void*)) {
    if (f_.peer) {
      gpu::enable_peer_access(f_.dst, f_.src);
      device_nodes_ = gpu::DeviceBuffer(f_.src, gpu::kChaseSpanBytes);
      nodes_ = static_cast<char*>(device_nodes_.data());
    } else {
      host_nodes_ = gpu::PinnedBuffer(gpu::kChaseSpanBytes, cudaHostAllocMapped);
      gpu::DeviceGuard guard(f_.dst);
      void* mapped = nullptr;
      XFER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host_nodes_.data(), 0));
      nodes_ = static_cast<char*>(mapped);
    }
    gpu::DeviceGuard guard(f_.dst);
    gpu::build_chain(nodes_, stream_.get());
    restart();
  }

  // `copies` loads, and first one pass over every line of the chain.
  void warm_up(int copies) {
    chase(copies + static_cast<std::int64_t>(gpu::kChaseNodes / gpu::kChaseStride));
    stream_.synchronize();
  }

  void poison() { restart(); }

  std::optional<double> time_batch(std::int64_t loads, bool) {
    start_.record(stream_.get());
    chase(loads);
    stop_.record(stream_.get());
    stop_.synchronize();
    return gpu::elapsed_seconds(start_, stop_);
  }

  double time_one() { return *time_batch(1, false); }

  void validate(bool corrupt) {
    void* at = nullptr;
    XFER_CUDA_CHECK(
        cudaMemcpyAsync(&at, cursor_.data(), sizeof at, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    const auto node = static_cast<std::uint64_t>(static_cast<char*>(at) - nodes_) / 8;
    const std::uint64_t wanted =
        (gpu::chase_node_after(0, loads_) + (corrupt ? 1 : 0)) % gpu::kChaseNodes;
    if (static_cast<char*>(at) < nodes_ || node != wanted)
      throw Error("validation: the chase ended on node " + std::to_string(node) + " after " +
                  std::to_string(loads_) + " loads; the chain leads to node " +
                  std::to_string(wanted) + " (GPU " + std::to_string(f_.dst) + " through " +
                  (f_.peer ? "GPU " + std::to_string(f_.src) + "'s memory" : "host memory") + ")");
  }

 private:
  void chase(std::int64_t loads) {
    gpu::DeviceGuard guard(f_.dst);
    gpu::launch_chase(static_cast<void**>(cursor_.data()), loads, stream_.get());
    loads_ += static_cast<std::uint64_t>(loads);
  }

  // The chase starts again at node 0.
  void restart() {
    start_node_ = nodes_;
    XFER_CUDA_CHECK(cudaMemcpyAsync(cursor_.data(), &start_node_, sizeof start_node_,
                                    cudaMemcpyHostToDevice, stream_.get()));
    stream_.synchronize();
    loads_ = 0;
  }

  const ChaseFamily f_;
  gpu::Stream stream_;  // on the chasing GPU
  gpu::Event start_, stop_;
  gpu::DeviceBuffer cursor_;  // the node the chase is on, in the chasing GPU's memory
  gpu::DeviceBuffer device_nodes_;
  gpu::PinnedBuffer host_nodes_;
  char* nodes_ = nullptr;  // the chain as the chasing GPU addresses it
  void* start_node_ = nullptr;
  std::uint64_t loads_ = 0;  // since the last restart
};

void chase_row(Visit& visit, const Harness& h, const Row& row, const ChaseFamily& f,
               bool& may_hold) {
  const std::string where =
      "GPU " + std::to_string(f.dst) + " thread, " +
      (f.peer ? "GPU " + std::to_string(f.src) + "'s memory" : std::string("host memory"));
  gpu::copy_row<Chase>(visit, h, row, f, where, gpu::BatchPlan{gpu::kChaseBatch, false}, may_hold);
}

}  // namespace

void register_pointer_chase(Registry& registry) {
  gpu::register_copy_families(registry, "pointer_chase", gpu::plan_pointer_chase, chase_row,
                              BigWarmUp::NewFamily);
}

}  // namespace xfer
