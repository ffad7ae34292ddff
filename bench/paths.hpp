// The transfer paths, in one list: each registers itself (a skip with its reason, or its
// benchmark families), in this order, which is the order rows appear in.
#pragma once

#include <string>
#include <vector>

#include "harness/harness.hpp"

namespace xfer {

void register_memcpy_peer(Registry& registry);     // memcpy_peer.cu
void register_host_staging(Registry& registry);    // host_staging.cu
void register_ce_copy(Registry& registry);         // ce_copy.cu
void register_sm_copy(Registry& registry);         // sm_copy.cu
void register_pointer_chase(Registry& registry);   // pointer_chase.cu
void register_mpi_host(Registry& registry);        // mpi_host.cpp
void register_mpi_staged(Registry& registry);      // mpi_staged.cu
void register_mpi_cuda_aware(Registry& registry);  // mpi_cuda_aware.cu
void register_nccl_sendrecv(Registry& registry);   // nccl_sendrecv.cu

inline const std::vector<Path>& all_paths() {
  static const std::vector<Path> paths = {{"memcpy_peer", register_memcpy_peer},
                                          {"host_staging", register_host_staging},
                                          {"ce_copy", register_ce_copy},
                                          {"sm_copy", register_sm_copy},
                                          {"pointer_chase", register_pointer_chase},
                                          {"mpi_host", register_mpi_host},
                                          {"mpi_staged", register_mpi_staged},
                                          {"mpi_cuda_aware", register_mpi_cuda_aware},
                                          {"nccl_sendrecv", register_nccl_sendrecv}};
  return paths;
}

inline std::vector<std::string> path_names() {
  std::vector<std::string> names;
  for (const Path& p : all_paths()) names.emplace_back(p.name);
  return names;
}

}  // namespace xfer
