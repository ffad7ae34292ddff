#include "base/watchdog.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "base/error.hpp"
#include "base/stop.hpp"

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
    failure_.clear();
  }
  wake_.notify_all();
}

void Watchdog::name_peer(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  peer_ = " (this rank's peer: " + peer + ")";
}

void Watchdog::after_failure(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!armed_ || !failure_.empty()) return;
    failure_ = why;
    const auto grace = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(kFailureGrace));
    deadline_ = std::min(deadline_, grace);
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
      if (failure_.empty()) {
        std::fprintf(stderr,
                     "xferbench: %s: no result after %.0f s (--xfer_timeout); a peer rank may "
                     "have failed%s or the device hangs. Aborting the job.\n",
                     what_.c_str(), timeout_.count(), peer_.c_str());
      } else {
        std::fprintf(stderr,
                     "xferbench: %s: %s\nxferbench: %s: the other ranks did not answer within "
                     "%.0f s of that failure (they wait for messages this rank can no longer "
                     "send). Aborting the job.\n",
                     what_.c_str(), failure_.c_str(), what_.c_str(), kFailureGrace);
      }
      std::fflush(stderr);
      note_cut_short();
      std::_Exit(3);
    }
  }
}

}  // namespace xfer
