// What a run records about itself: typed, machine-readable fields (context.xferbench).
#pragma once

#include <string>
#include <vector>

#include "base/json.hpp"
#include "harness/harness.hpp"

namespace xfer {

// Harness, Google Benchmark and MPI identity, world size, sizes, environment whitelist.
json::Value base_context(const Config& config, const World& world, std::uint64_t seed);

// This rank's entry in "ranks" before paths add to it: rank, host, local rank.
json::Value base_rank_info(const World& world);

// After registration: gathers every rank's entry and records the skips. Collective.
void finish_context(json::Value& context, Registry& registry, const World& world);

// context.xferbench.pairs: each rank pair with its hosts, GPUs (null where a rank has none)
// and whether it crosses nodes. `hosts` and `gpus` are per rank (gpus: -1 for none).
json::Value pairs_context(const RankPairs& pairs, const std::vector<std::string>& hosts,
                          const std::vector<int>& gpus);

// One line for --version and the top of every run.
std::string version_line();

// Human-readable lines for rank 0 to print before the results (world, MPI, skips).
std::vector<std::string> summary_lines(const Registry& registry, const World& world,
                                       const std::vector<std::string>& hosts);

// Variables that change results: CUDA_VISIBLE_DEVICES, NCCL_*, UCX_*, OMPI_MCA_*, MPICH_*.
bool is_recorded_variable(const std::string& name);

}  // namespace xfer
