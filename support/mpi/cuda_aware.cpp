#include "mpi/cuda_aware.hpp"

#include <mpi.h>

// Open MPI (and MVAPICH2) declare MPIX_CUDA_AWARE_SUPPORT and MPIX_Query_cuda_support() in
// mpi-ext.h; MPICH 4 declares MPIX_GPU_query_support() in mpi.h itself.
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#define XFER_HAVE_MPI_EXT_H 1
#endif
#endif

#include "mpi/world.hpp"

namespace xfer {

const char* to_string(Answer answer) {
  switch (answer) {
    case Answer::Yes:
      return "yes";
    case Answer::No:
      return "no";
    case Answer::Unknown:
      break;
  }
  return "unknown";
}

namespace {

Answer from_flag(long value) { return value != 0 ? Answer::Yes : Answer::No; }

SourceAnswer compile_time_answer() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return {
      from_flag(MPIX_CUDA_AWARE_SUPPORT),
      "MPIX_CUDA_AWARE_SUPPORT = " + std::to_string(static_cast<long>(MPIX_CUDA_AWARE_SUPPORT))};
#elif defined(XFER_HAVE_MPI_EXT_H)
  return {Answer::Unknown, "mpi-ext.h does not define MPIX_CUDA_AWARE_SUPPORT"};
#else
  return {Answer::Unknown, "this MPI has no mpi-ext.h"};
#endif
}

SourceAnswer run_time_answer() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  const int supported = MPIX_Query_cuda_support();
  return {from_flag(supported), "MPIX_Query_cuda_support() = " + std::to_string(supported)};
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000 && defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) != MPI_SUCCESS)
    return {Answer::Unknown, "MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) failed"};
  return {from_flag(supported),
          "MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = " + std::to_string(supported)};
#else
  return {Answer::Unknown, "this MPI has no run-time query"};
#endif
}

// What the library says, and how we know: the run-time answer is the library actually loaded.
SourceAnswer library_answer(const CudaAwareProbe& probe) {
  const SourceAnswer& run = probe.run_time;
  const SourceAnswer& compiled = probe.compile_time;
  if (run.answer != Answer::Unknown) {
    std::string detail = "run time: " + run.detail;
    if (compiled.answer != Answer::Unknown && compiled.answer != run.answer)
      detail +=
          "; compile time said " + std::string(to_string(compiled.answer)) + ": " + compiled.detail;
    return {run.answer, detail};
  }
  if (compiled.answer != Answer::Unknown) {
    std::string detail = "compile time: " + compiled.detail;
    if (!run.detail.empty()) detail += "; run time: " + run.detail;
    return {compiled.answer, detail};
  }
  std::string detail = "compile time: " + (compiled.detail.empty() ? "no answer" : compiled.detail);
  detail += "; run time: " + (run.detail.empty() ? "no answer" : run.detail);
  return {Answer::Unknown, detail};
}

// Decisions travel between ranks as "<answer>\x1f<use>\x1f<source>\x1f<reason>".
constexpr char kSeparator = '\x1f';

std::string encode(const CudaAwareDecision& d) {
  return std::string(to_string(d.cuda_aware)) + kSeparator + (d.use ? "1" : "0") + kSeparator +
         d.source + kSeparator + d.skip_reason;
}

CudaAwareDecision decode(const std::string& text) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  for (int i = 0; i < 3; ++i) {
    const auto end = text.find(kSeparator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  parts.push_back(text.substr(start));
  CudaAwareDecision d;
  d.cuda_aware = parts[0] == "yes" ? Answer::Yes : parts[0] == "no" ? Answer::No : Answer::Unknown;
  d.use = parts[1] == "1";
  d.source = parts[2];
  d.skip_reason = parts[3];
  return d;
}

}  // namespace

CudaAwareProbe probe_cuda_aware() { return {compile_time_answer(), run_time_answer()}; }

CudaAwareDecision decide_cuda_aware(const CudaAwareProbe& probe, CudaAwareMode mode) {
  const SourceAnswer library = library_answer(probe);
  CudaAwareDecision d;
  switch (mode) {
    case CudaAwareMode::Yes:
      d.cuda_aware = Answer::Yes;
      d.use = true;
      d.source = "forced by --xfer_cuda_aware=yes; the library says " +
                 std::string(to_string(library.answer)) + " (" + library.detail + ")";
      return d;
    case CudaAwareMode::No:
      d.cuda_aware = Answer::No;
      d.source = "disabled by --xfer_cuda_aware=no; the library says " +
                 std::string(to_string(library.answer)) + " (" + library.detail + ")";
      d.skip_reason = "disabled by --xfer_cuda_aware=no";
      return d;
    case CudaAwareMode::Auto:
      break;
  }
  d.cuda_aware = library.answer;
  d.use = library.answer == Answer::Yes;
  d.source = library.detail;
  if (library.answer == Answer::No) {
    d.skip_reason = "this MPI is not CUDA-aware (" + library.detail +
                    "); tools/build-cuda-aware-mpi builds one";
  } else if (library.answer == Answer::Unknown) {
    d.skip_reason =
        "cannot tell whether this MPI is CUDA-aware; pass --xfer_cuda_aware=yes to "
        "force (" +
        library.detail + ")";
  }
  return d;
}

CudaAwareDecision combine_rank_decisions(const std::vector<CudaAwareDecision>& ranks) {
  if (ranks.empty()) return {};
  bool all_use = true;
  bool all_same = true;
  for (const auto& d : ranks) {
    all_use = all_use && d.use;
    all_same =
        all_same && d.cuda_aware == ranks.front().cuda_aware && d.source == ranks.front().source;
  }
  std::size_t decider = 0;
  if (!all_use) {
    // The first rank that says no rules; failing that, the first that cannot tell.
    decider = ranks.size();
    for (const Answer wanted : {Answer::No, Answer::Unknown, Answer::Yes}) {
      for (std::size_t r = 0; r < ranks.size() && decider == ranks.size(); ++r) {
        if (!ranks[r].use && ranks[r].cuda_aware == wanted) decider = r;
      }
    }
  }
  CudaAwareDecision d = ranks[decider];
  d.use = all_use;
  if (!all_same) {
    const std::string where = " (rank " + std::to_string(decider) + "; ranks disagree)";
    d.source += where;
    if (!d.skip_reason.empty()) d.skip_reason += where;
  }
  return d;
}

CudaAwareDecision agree_cuda_aware(const World& world, CudaAwareMode mode) {
  const CudaAwareDecision mine = decide_cuda_aware(probe_cuda_aware(), mode);
  std::vector<CudaAwareDecision> ranks;
  for (const auto& text : world.all_gather(encode(mine))) ranks.push_back(decode(text));
  return combine_rank_decisions(ranks);
}

void record_cuda_aware(json::Value& context, const CudaAwareDecision& decision) {
  json::Value* mpi = context.find("mpi");
  if (mpi == nullptr || mpi->is_null()) mpi = &context.set("mpi", json::Value::object());
  mpi->set("cuda_aware", to_string(decision.cuda_aware));
  mpi->set("cuda_aware_source", decision.source);
}

}  // namespace xfer
