// Which links each family's bytes cross, from what its path declared (links.hpp: Crossing) and
// what the run's context says of the GPUs and ranks (docs/links.md). Plain C++ on rank 0's context,
// so it is testable without a GPU.
//   host_staging    down GPU a's PCIe link, up GPU b's: in turn (sequential) or at once (pipelined)
//   ce_copy, sm_copy   host:*: GPU's PCIe link (dir:bi: both of its directions); dir:local: the
//                   GPU's memory (a copy's payload: half its rate); sm_copy peer:*: as memcpy_peer
//                   p2p:on; pointer_chase declares nothing (a latency: no share of a link)
//   memcpy_peer     p2p:on: the NVLink links between a and b, else both PCIe links at once;
//                   p2p:off: both PCIe links at once (the driver stages through the host)
//   mpi_staged      one pair: both PCIe links in turn or at once, and the network port between
//                   nodes (the far node's PCIe link is not readable from rank 0)
//   mpi_cuda_aware, nccl_sendrecv   one pair: one GPU: its memory; two GPUs of a node: GPU to
//                   GPU (NVLink where NVML counts links, else both PCIe links) where CUDA gives
//                   peer access and the library's GPU-to-GPU transport is on (Transports), else
//                   through the host (both PCIe links at once); between nodes: the GPU's PCIe
//                   link and the network port at once
//   mpi_host        between nodes: the network port; in a node host memory is not modelled
// Rows of several pairs at once (/pairs:N) get no route yet.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "links/links.hpp"

namespace xfer::links {

// Whether the libraries' GPU-to-GPU transports are on (the default), as the run's environment
// sets them: NCCL_P2P_DISABLE=1 turns NCCL's P2P transport off (it then uses SHM, through the
// host); OMPI_MCA_btl_smcuda_use_cuda_ipc=0 turns Open MPI's CUDA IPC off (smcuda then copies
// through host shared memory).
struct Transports {
  bool nccl_p2p = true;
  bool mpi_cuda_ipc = true;
};
Transports transports_from(const std::function<const char*(const char*)>& env);

// A family and what its path declared its bytes cross.
struct FamilyCrossing {
  std::string family;
  Crossing crossing;
};

// Sets the route of each family in `families` that crosses known links, and notes the GPU
// pairs with peer access off despite an NVLink link. `context` is context.xferbench after
// registration (cuda.devices, cuda.pairs, ranks: what rank 0 probed and every rank told).
void route_families(Book& book, const json::Value& context,
                    const std::vector<FamilyCrossing>& families, const Transports& transports = {});

// The answers of this machine: NVML (where this build has GPU code and the library loads) and
// /sys; or, with `recorded_dir`, answers recorded there (--xfer_test_links).
std::unique_ptr<LinkAnswers> answers_for_run(const std::string& recorded_dir);

}  // namespace xfer::links
