// Test only: make one checked library call fail on purpose (--xfer_test_fail), so the failure
// paths of CUDA and NCCL can be exercised on a machine whose hardware works.
//
//   --xfer_test_fail=CALL[@BYTES][#RANK]
//     CALL   the checked call's name as written in the source: cudaMemcpyAsync, cudaMalloc,
//            cudaHostAlloc, cudaSetDevice, ncclSend, ...; or `fault`: the first CUDA check
//            launches a kernel that traps, a real fault that leaves the GPU unusable
//     BYTES  only while a row of this message size runs (default: anywhere, setup included)
//     RANK   only on this rank (default: every rank)
//
// XFER_CUDA_CHECK and XFER_NCCL_COMM_CHECK ask fail_point_hit() after the real call returned;
// a hit replaces its result with an error (see cuda.cpp and nccl_comm.cpp for which). Unarmed
// (every normal run) the check is one load of a flag that is false.
#pragma once

#include <cstdint>
#include <string>

namespace xfer {

struct FailPoint {
  std::string call;         // empty: no fail point
  std::uint64_t bytes = 0;  // 0: any row, and outside rows
  int rank = -1;            // -1: every rank
};

// Parses CALL[@BYTES][#RANK]; throws UsageError naming `flag`.
FailPoint parse_fail_point(const std::string& text, const std::string& flag);

// Arms `point` in this process if it names `rank` (or every rank).
void arm_fail_point(const FailPoint& point, int rank);

// The message size of the row running now (0 between rows); the harness sets it.
void set_current_row_bytes(std::uint64_t bytes);

namespace detail {
extern bool fail_point_armed;
bool fail_point_matches(const char* call_text);
}  // namespace detail

// True where the armed fail point names this call (`call_text` is the call as written,
// arguments and all) in the current row.
inline bool fail_point_hit(const char* call_text) {
  return detail::fail_point_armed && detail::fail_point_matches(call_text);
}

// True where the armed fail point is `fault` (the CUDA check triggers a real trap instead).
bool fail_point_is_fault();
void disarm_fail_point();

}  // namespace xfer
