// Built when configure found CUDA but no NCCL: nccl_sendrecv exists and says why it cannot run.
#include "paths.hpp"

namespace xfer {

void register_nccl_sendrecv(Registry& registry) {
  registry.skip("nccl_sendrecv",
                "xferbench was built without NCCL (configure found no nccl.h/libnccl)");
}

}  // namespace xfer
