// Whether mpi_cuda_aware may hand device pointers to MPI: the pure decision from what the
// library says (compile time, run time), --xfer_cuda_aware, and every rank's answer.
#include <gtest/gtest.h>

#include <string>

#include "base/json.hpp"
#include "mpi/cuda_aware.hpp"

namespace xfer {
namespace {

const SourceAnswer kCompiledYes{Answer::Yes, "MPIX_CUDA_AWARE_SUPPORT = 1"};
const SourceAnswer kCompiledNo{Answer::No, "MPIX_CUDA_AWARE_SUPPORT = 0"};
const SourceAnswer kCompiledUnknown{Answer::Unknown, "this MPI has no mpi-ext.h"};
const SourceAnswer kRunYes{Answer::Yes, "MPIX_Query_cuda_support() = 1"};
const SourceAnswer kRunNo{Answer::No, "MPIX_Query_cuda_support() = 0"};
const SourceAnswer kRunUnknown{Answer::Unknown, "this MPI has no run-time query"};

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST(CudaAwareDecision, RunTimeYesIsUsedUnderAuto) {
  const auto d = decide_cuda_aware({kCompiledYes, kRunYes}, CudaAwareMode::Auto);
  EXPECT_EQ(d.cuda_aware, Answer::Yes);
  EXPECT_TRUE(d.use);
  EXPECT_EQ(d.source, "run time: MPIX_Query_cuda_support() = 1");
  EXPECT_TRUE(d.skip_reason.empty());
}

TEST(CudaAwareDecision, RunTimeNoSkipsWithTheQueryInTheReason) {
  const auto d = decide_cuda_aware({kCompiledNo, kRunNo}, CudaAwareMode::Auto);
  EXPECT_EQ(d.cuda_aware, Answer::No);
  EXPECT_FALSE(d.use);
  EXPECT_EQ(d.source, "run time: MPIX_Query_cuda_support() = 0");
  EXPECT_TRUE(starts_with(d.skip_reason,
                          "this MPI is not CUDA-aware (run time: MPIX_Query_cuda_support() = 0)"))
      << d.skip_reason;
}

TEST(CudaAwareDecision, RunTimeAnswerWinsOverCompileTime) {
  // Built against a CUDA-aware header, running with a library that is not (or the reverse).
  const auto no = decide_cuda_aware({kCompiledYes, kRunNo}, CudaAwareMode::Auto);
  EXPECT_EQ(no.cuda_aware, Answer::No);
  EXPECT_FALSE(no.use);
  EXPECT_NE(no.source.find("compile time said yes"), std::string::npos) << no.source;

  const auto yes = decide_cuda_aware({kCompiledNo, kRunYes}, CudaAwareMode::Auto);
  EXPECT_EQ(yes.cuda_aware, Answer::Yes);
  EXPECT_TRUE(yes.use);
}

TEST(CudaAwareDecision, CompileTimeAnswersWhenThereIsNoRunTimeQuery) {
  const auto d = decide_cuda_aware({kCompiledYes, kRunUnknown}, CudaAwareMode::Auto);
  EXPECT_EQ(d.cuda_aware, Answer::Yes);
  EXPECT_TRUE(d.use);
  EXPECT_TRUE(starts_with(d.source, "compile time: MPIX_CUDA_AWARE_SUPPORT = 1")) << d.source;
}

TEST(CudaAwareDecision, UnknownSkipsAndSaysHowToForce) {
  const auto d = decide_cuda_aware({kCompiledUnknown, kRunUnknown}, CudaAwareMode::Auto);
  EXPECT_EQ(d.cuda_aware, Answer::Unknown);
  EXPECT_FALSE(d.use);
  EXPECT_TRUE(starts_with(d.skip_reason,
                          "cannot tell whether this MPI is CUDA-aware; pass "
                          "--xfer_cuda_aware=yes to force"))
      << d.skip_reason;
  EXPECT_NE(d.source.find("no mpi-ext.h"), std::string::npos) << d.source;
}

TEST(CudaAwareDecision, YesForcesAnMpiThatCannotSay) {
  const auto d = decide_cuda_aware({kCompiledUnknown, kRunUnknown}, CudaAwareMode::Yes);
  EXPECT_EQ(d.cuda_aware, Answer::Yes);
  EXPECT_TRUE(d.use);
  EXPECT_TRUE(starts_with(d.source, "forced by --xfer_cuda_aware=yes; the library says unknown"))
      << d.source;
}

TEST(CudaAwareDecision, YesForcesEvenAnMpiThatSaysNo) {
  const auto d = decide_cuda_aware({kCompiledNo, kRunNo}, CudaAwareMode::Yes);
  EXPECT_TRUE(d.use);
  EXPECT_NE(d.source.find("the library says no (run time: MPIX_Query_cuda_support() = 0)"),
            std::string::npos)
      << d.source;
}

TEST(CudaAwareDecision, NoForbidsEvenACudaAwareMpi) {
  const auto d = decide_cuda_aware({kCompiledYes, kRunYes}, CudaAwareMode::No);
  EXPECT_EQ(d.cuda_aware, Answer::No);
  EXPECT_FALSE(d.use);
  EXPECT_EQ(d.skip_reason, "disabled by --xfer_cuda_aware=no");
  EXPECT_NE(d.source.find("the library says yes"), std::string::npos) << d.source;
}

TEST(CudaAwareAgreement, AllRanksYesIsYes) {
  const auto yes = decide_cuda_aware({kCompiledYes, kRunYes}, CudaAwareMode::Auto);
  const auto d = combine_rank_decisions({yes, yes, yes});
  EXPECT_TRUE(d.use);
  EXPECT_EQ(d.cuda_aware, Answer::Yes);
  EXPECT_EQ(d.source, yes.source);  // no "ranks disagree" when they agree
}

TEST(CudaAwareAgreement, OneRankSayingNoSkipsForAllAndNamesIt) {
  const auto yes = decide_cuda_aware({kCompiledYes, kRunYes}, CudaAwareMode::Auto);
  const auto unknown = decide_cuda_aware({kCompiledUnknown, kRunUnknown}, CudaAwareMode::Auto);
  const auto no = decide_cuda_aware({kCompiledNo, kRunNo}, CudaAwareMode::Auto);
  const auto d = combine_rank_decisions({yes, unknown, no});
  EXPECT_FALSE(d.use);
  EXPECT_EQ(d.cuda_aware, Answer::No);  // a definite no outranks an unknown
  EXPECT_NE(d.skip_reason.find("rank 2"), std::string::npos) << d.skip_reason;
  EXPECT_TRUE(starts_with(d.skip_reason, "this MPI is not CUDA-aware")) << d.skip_reason;
}

TEST(CudaAwareAgreement, UnknownOnOneRankIsUnknown) {
  const auto yes = decide_cuda_aware({kCompiledYes, kRunYes}, CudaAwareMode::Auto);
  const auto unknown = decide_cuda_aware({kCompiledUnknown, kRunUnknown}, CudaAwareMode::Auto);
  const auto d = combine_rank_decisions({yes, unknown});
  EXPECT_FALSE(d.use);
  EXPECT_EQ(d.cuda_aware, Answer::Unknown);
  EXPECT_NE(d.skip_reason.find("rank 1"), std::string::npos) << d.skip_reason;
}

TEST(CudaAwareContext, RecordsTheAnswerAndItsSource) {
  json::Value context = json::Value::object();
  json::Value mpi = json::Value::object();
  mpi.set("library", "Open MPI v4.1.4");
  context.set("mpi", mpi);
  record_cuda_aware(context, decide_cuda_aware({kCompiledNo, kRunNo}, CudaAwareMode::Auto));
  const std::string text = context.dump(0);
  EXPECT_NE(text.find("\"library\""), std::string::npos) << text;  // kept, not replaced
  EXPECT_NE(text.find("\"cuda_aware\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"no\""), std::string::npos) << text;
  EXPECT_NE(text.find("MPIX_Query_cuda_support() = 0"), std::string::npos) << text;
}

}  // namespace
}  // namespace xfer
