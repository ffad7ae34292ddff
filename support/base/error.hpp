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

// A failure after which this process cannot measure anything more (a GPU fault that leaves
// the CUDA context unusable): the first one is kept; the harness agrees on it after the row
// and ends the run. "" when there was none.
void note_fatal(const std::string& why);
const std::string& fatal_note();

// For a run cut short (a signal, the watchdog): what to say and what to clean up. The reporter
// keeps both current; note_cut_short removes a half-written result file and says on stderr where
// the rows measured so far are. Async-signal-safe.
void set_cut_short_note(const std::string& note);      // "" says nothing
void set_file_in_progress(const std::string& path);   // "" when no file is being written
void note_cut_short() noexcept;

// The one exit status of a run stopped by SIGINT or SIGTERM, whichever it was (the shell's
// status for Ctrl-C; docs/RELIABILITY.md says why one value): the binary and tools/run agree.
inline constexpr int kInterruptedStatus = 130;
// Asks the run to stop (SIGINT, SIGTERM): the first signal only sets a flag that the runner
// reads after each visit, and gives it `grace_s` to stop there and write what it measured; the
// grace running out (an MPI call that never returns) ends the process with kInterruptedStatus,
// leaving the result file of its last rewrite. Later signals change nothing. Async-signal-safe.
void catch_stop_signals(unsigned grace_s);
// "" or why this process was asked to stop: "interrupted by SIGINT on rank 0".
std::string stop_request();
inline constexpr const char* kInterruptedPrefix = "interrupted by ";

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
