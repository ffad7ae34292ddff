// Built when configure found no CUDA toolkit: the GPU paths exist, and say why they cannot run.
#include "mpi/cuda_aware.hpp"
#include "paths.hpp"

namespace xfer {
namespace {
constexpr const char* kReason =
    "xferbench was built without CUDA (configure found no CUDA toolkit)";
}  // namespace

void register_memcpy_peer(Registry& registry) { registry.skip("memcpy_peer", kReason); }
void register_host_staging(Registry& registry) { registry.skip("host_staging", kReason); }
void register_ce_copy(Registry& registry) { registry.skip("ce_copy", kReason); }
void register_sm_copy(Registry& registry) { registry.skip("sm_copy", kReason); }
void register_pointer_chase(Registry& registry) { registry.skip("pointer_chase", kReason); }
void register_mpi_staged(Registry& registry) { registry.skip("mpi_staged", kReason); }
void register_mpi_cuda_aware(Registry& registry) {
  // What the MPI says about device pointers is worth recording even where we cannot use them.
  record_cuda_aware(registry.context(),
                    agree_cuda_aware(registry.world(), registry.config().cuda_aware));
  registry.skip("mpi_cuda_aware", kReason);
}
void register_nccl_sendrecv(Registry& registry) { registry.skip("nccl_sendrecv", kReason); }

}  // namespace xfer
