// A watchdog for hangs: a peer that died mid-ping-pong or a wedged GPU must not keep a CI job
// waiting forever. If one benchmark run takes longer than the limit, the process says where it
// was stuck and exits with status 3, which makes the MPI launcher end the whole job.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace xfer {

class Watchdog {
 public:
  explicit Watchdog(double timeout_s);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(const std::string& what);  // starts the clock for `what`
  // "rank 1 on nodeB": the timeout message names the rank this one exchanges with, and its
  // host, since on a cluster a lost peer is the usual reason.
  void name_peer(const std::string& peer);
  void disarm();
  // This rank failed inside the armed run and is about to agree with its peers. A peer that
  // waits for a message this rank will now never send cannot join the agreement (MPI cannot
  // cancel it): give the agreement kFailureGrace, not the whole limit, then end the job with
  // `why`. A no-op when not armed.
  void after_failure(const std::string& why);
  static constexpr double kFailureGrace = 15;

 private:
  void watch();

  std::chrono::duration<double> timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string what_;
  std::string failure_;  // set by after_failure
  std::string peer_;     // set by name_peer
  std::chrono::steady_clock::time_point deadline_;
  bool armed_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace xfer
