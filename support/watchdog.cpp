#include "watchdog.hpp"

#include <cstdio>
#include <cstdlib>

#include "error.hpp"
#include "reporter.hpp"

namespace xfer {

Watchdog::Watchdog(double timeout_s) : timeout_(timeout_s), thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::arm(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    what_ = rank_prefix() + what;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout_);
    armed_ = true;
  }
  wake_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    if (wake_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stopping_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      std::fprintf(stderr,
                   "xferbench: %s: no result after %.0f s (--xfer_timeout); a peer rank may "
                   "have failed or the device hangs. Aborting the job.\n",
                   what_.c_str(), timeout_.count());
      std::fflush(stderr);
      note_cut_short();
      std::_Exit(3);
    }
  }
}

}  // namespace xfer
