// Stopping a run early: a process that cannot go on, a signal that asks the run to stop, and
// what a run cut short says and cleans up. The signal handlers live here (async-signal-safe).
#pragma once

#include <string>

namespace xfer {

// A failure after which this process cannot measure anything more (a GPU fault that leaves
// the CUDA context unusable): the first one is kept; the harness agrees on it after the row
// and ends the run. "" when there was none.
void note_fatal(const std::string& why);
const std::string& fatal_note();

// For a run cut short (a signal, the watchdog): what to say and what to clean up. The reporter
// keeps both current; note_cut_short removes a half-written result file and says on stderr where
// the rows measured so far are. Async-signal-safe.
void set_cut_short_note(const std::string& note);    // "" says nothing
void set_file_in_progress(const std::string& path);  // "" when no file is being written
void note_cut_short() noexcept;

// The one exit status of a run stopped by SIGINT or SIGTERM, whichever it was (the shell's
// status for Ctrl-C; docs/RELIABILITY.md says why one value): the binary and tools/run agree.
inline constexpr int kInterruptedStatus = 130;
// Asks the run to stop (SIGINT, SIGTERM): the first signal only sets a flag that the runner
// reads after each visit, and gives it `grace_s` to stop there and write what it measured; the
// grace running out (an MPI call that never returns) ends the process with kInterruptedStatus,
// leaving the result file of its last rewrite. Later signals change nothing. Async-signal-safe.
void catch_stop_signals(unsigned grace_s);

// Why a run stops before its last visit: a process that cannot go on (note_fatal) or one asked
// to stop (a signal). Every rank agrees on one after each visit (World::first_stop): the lowest
// rank's own, with its kind, so the exit status follows the kind and never the text.
struct RunStop {
  enum class Kind { None, Fatal, Interrupted };
  Kind kind = Kind::None;
  std::string reason;  // "interrupted by SIGINT on rank 0", a fatal note; "" for None
  bool stopped() const { return kind != Kind::None; }
  bool interrupted() const { return kind == Kind::Interrupted; }
};
// This process's own: its fatal note first, else a stop request, else none.
RunStop stop_here();

}  // namespace xfer
