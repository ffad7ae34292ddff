// Every transfer path registers itself here: a skip with its reason, or its benchmark
// families. main.cpp calls them in this order, which is the order rows appear in.
#pragma once

#include "harness.hpp"

namespace xfer {

void register_memcpy_peer(Registry& registry);     // memcpy_peer.cu
void register_host_staging(Registry& registry);    // host_staging.cu
void register_mpi_host(Registry& registry);        // mpi_host.cpp
void register_mpi_staged(Registry& registry);      // mpi_staged.cu
void register_mpi_cuda_aware(Registry& registry);  // mpi_cuda_aware.cu
void register_nccl_sendrecv(Registry& registry);   // nccl_sendrecv.cu

}  // namespace xfer
