// Errors that carry where they happened: the failing call, file, line and MPI rank.
#pragma once

#include <stdexcept>
#include <string>

namespace xfer {

// A measurement or communication failure: the row fails, the run exits non-zero.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure that only reports another rank's (an NCCL peer's notice): when the ranks agree on
// a row's message, any rank's own error is told before one of these.
class PeerFailure : public Error {
 public:
  using Error::Error;
};

// Bad command-line input: the run stops before measuring, with exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The run cannot go on (a GPU that cannot be used): every rank throws it together, after
// agreeing, and the run ends with its message instead of failing row after row.
class FatalError : public Error {
 public:
  using Error::Error;
};

// "rank 3: " once MPI is up, "" before; the harness prefixes every row error with it.
std::string rank_prefix();

[[noreturn]] void raise_call_error(const std::string& detail, const char* call, const char* file,
                                   int line);
[[noreturn]] void raise_mpi_error(int code, const char* call, const char* file, int line);

}  // namespace xfer

#define XFER_MPI_CHECK(call)                                                         \
  do {                                                                               \
    const int xfer_rc_ = (call);                                                     \
    if (xfer_rc_ != 0) ::xfer::raise_mpi_error(xfer_rc_, #call, __FILE__, __LINE__); \
  } while (0)
