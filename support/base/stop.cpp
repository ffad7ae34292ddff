#include "base/stop.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/error.hpp"

namespace xfer {

namespace {
std::string g_fatal;

// Prepared ahead, so that saying it needs nothing but write(2), which a signal handler may call.
char g_cut_short_note[1024] = "";
char g_file_in_progress[4096] = "";  // removed if the run dies while it is being written

void say_cut_short() noexcept {
  if (g_cut_short_note[0] != '\0') {
    const ssize_t ignored = ::write(2, g_cut_short_note, std::strlen(g_cut_short_note));
    (void)ignored;
  }
}

void copy_text(char* to, std::size_t size, const std::string& text) {
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(to, text.data(), n);
  to[n] = '\0';
}
}  // namespace

void set_cut_short_note(const std::string& note) {
  copy_text(g_cut_short_note, sizeof g_cut_short_note, note);
}

void set_file_in_progress(const std::string& path) {
  copy_text(g_file_in_progress, sizeof g_file_in_progress, path);
}

void note_cut_short() noexcept {
  if (g_file_in_progress[0] != '\0') ::unlink(g_file_in_progress);
  say_cut_short();
}

namespace {
volatile sig_atomic_t g_stop_signal = 0;
unsigned g_grace_s = 10;

// A rank often gets two: Ctrl-C reaches every process of the terminal's group, and the
// launcher passes its own on. Only the grace running out ends the process here.
extern "C" void on_stop_signal(int signal) {
  if (signal != SIGALRM) {
    if (g_stop_signal == 0) {
      g_stop_signal = signal;
      ::alarm(g_grace_s);  // the runner stops after the visit under way, if that ends in time
      // Said now, since the launcher may kill this process before the visit ends (a peer lost);
      // a file being written is left to be finished.
      say_cut_short();
      g_cut_short_note[0] = '\0';  // the next rewrite prepares it again
    }
    return;
  }
  note_cut_short();
  std::_Exit(kInterruptedStatus);
}
}  // namespace

void catch_stop_signals(unsigned grace_s) {
  g_grace_s = grace_s;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGALRM, &action, nullptr);
}

RunStop stop_here() {
  if (!g_fatal.empty()) return {RunStop::Kind::Fatal, g_fatal};
  const int signal = g_stop_signal;
  if (signal == 0) return {};
  return {RunStop::Kind::Interrupted,
          std::string("interrupted by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + " on " +
              (rank_prefix().empty() ? "this process"
                                     : rank_prefix().substr(0, rank_prefix().size() - 2))};
}

void note_fatal(const std::string& why) {
  if (g_fatal.empty()) g_fatal = why;
}

const std::string& fatal_note() { return g_fatal; }

}  // namespace xfer
