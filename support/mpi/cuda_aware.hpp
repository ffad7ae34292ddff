// Whether MPI may be handed device pointers. Decided once, before any device pointer reaches
// MPI, from what the library says about itself (at compile time and at run time) and from
// --xfer_cuda_aware, then agreed across ranks: every rank's MPI must say yes.
//
// Plain C++ (no CUDA): the decision is a pure function, unit-tested on machines without GPUs.
#pragma once

#include <string>
#include <vector>

#include "base/json.hpp"
#include "config/config.hpp"

namespace xfer {

class World;

enum class Answer { Yes, No, Unknown };

// "yes", "no", "unknown": the words the JSON context uses.
const char* to_string(Answer answer);

// One source's answer and how it was obtained, e.g. {No, "MPIX_Query_cuda_support() = 0"}.
struct SourceAnswer {
  Answer answer = Answer::Unknown;
  std::string detail;  // what was asked and what it said; "" when there was nothing to ask
};

// What this rank's MPI library says about itself.
struct CudaAwareProbe {
  SourceAnswer compile_time;  // MPIX_CUDA_AWARE_SUPPORT from mpi-ext.h
  SourceAnswer run_time;      // MPIX_Query_cuda_support() / MPIX_GPU_query_support(CUDA)
};

struct CudaAwareDecision {
  Answer cuda_aware = Answer::Unknown;  // context.mpi.cuda_aware
  bool use = false;                     // may mpi_cuda_aware pass device pointers to MPI?
  std::string source;                   // context.mpi.cuda_aware_source: how it was decided
  std::string skip_reason;              // why mpi_cuda_aware cannot run, when !use
};

// Asks the MPI library this code was compiled and runs with. Call after MPI_Init.
CudaAwareProbe probe_cuda_aware();

// The pure decision for one rank. The run-time answer wins over the compile-time one (it is
// the library actually loaded); with neither, the answer is unknown. `mode` Yes forces use
// (for an MPI that cannot say, or says no wrongly), No forbids it.
CudaAwareDecision decide_cuda_aware(const CudaAwareProbe& probe, CudaAwareMode mode);

// Combines every rank's decision (rank order): used only if every rank may use it; otherwise
// the first rank that says no (or, failing that, cannot tell) gives the answer and reason.
CudaAwareDecision combine_rank_decisions(const std::vector<CudaAwareDecision>& ranks);

// Collective: probes, decides and agrees across all ranks; the same result on every rank.
CudaAwareDecision agree_cuda_aware(const World& world, CudaAwareMode mode);

// Writes "cuda_aware" and "cuda_aware_source" into context["mpi"] (created if missing).
void record_cuda_aware(json::Value& context, const CudaAwareDecision& decision);

}  // namespace xfer
