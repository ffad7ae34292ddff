// Which links each family's bytes cross, from its name and what the run's context says of the
// GPUs and ranks (docs/links.md). Plain C++ on rank 0's context, so it is testable without a GPU.
//   host_staging    down GPU a's PCIe link, up GPU b's: in turn (sequential) or at once (pipelined)
//   memcpy_peer     p2p:on: the NVLink links between a and b, else both PCIe links at once;
//                   p2p:off: both PCIe links at once (the driver stages through the host)
//   mpi_staged      one pair: both PCIe links in turn or at once, and the network port between
//                   nodes (the far node's PCIe link is not readable from rank 0)
//   mpi_cuda_aware, nccl_sendrecv   one pair: one GPU: its memory; two: NVLink or both PCIe
//                   links; between nodes: the GPU's PCIe link and the network port at once
//   mpi_host        between nodes: the network port; in a node host memory is not modelled
// Rows of several pairs at once (/pairs:N) get no route yet.
#pragma once

#include <string>
#include <vector>

#include "json.hpp"
#include "links.hpp"

namespace xfer::links {

// Sets the route of each family in `families` that crosses known links, and notes the GPU
// pairs with peer access off despite an NVLink link. `context` is context.xferbench after
// registration (cuda.devices, cuda.pairs, ranks, pairs).
void route_families(Book& book, const json::Value& context,
                    const std::vector<std::string>& families);

// The answers of this machine: NVML (where this build has GPU code and the library loads) and
// /sys; or, with `recorded_dir`, answers recorded there (--xfer_test_links).
std::unique_ptr<LinkAnswers> answers_for_run(const std::string& recorded_dir);

}  // namespace xfer::links
