// The MPI world of one run: who we are, where we are, and how ranks agree before acting.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/stop.hpp"

namespace xfer {

// Owns MPI_Init/MPI_Finalize. Node-local rank comes from the shared-memory split, which is
// what decides the GPU a rank takes.
class World {
 public:
  World(int* argc, char*** argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool is_root() const { return rank_ == 0; }
  const std::string& host() const { return host_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }

  // Collective agreement: every rank calls these with its own value and gets the same answer.
  bool all(bool mine) const;
  bool any(bool mine) const;
  double max(double mine) const;
  std::uint64_t broadcast(std::uint64_t value, int root = 0) const;
  std::string broadcast(const std::string& value, int root = 0) const;
  // Every rank's string, in rank order (on every rank).
  std::vector<std::string> all_gather(const std::string& mine) const;
  // Every rank's number, in rank order (on every rank).
  std::vector<double> all_gather(double mine) const;
  // The message of the lowest rank that has a non-empty one ("" if none), on every rank.
  // `secondhand` messages (a rank that only learnt of another's failure) come after every
  // rank's own: the root cause is what the row reports.
  std::string first_message(const std::string& mine, bool secondhand = false) const;
  // The stop of the lowest rank that has one (none if no rank has), kind and reason, on every
  // rank.
  RunStop first_stop(const RunStop& mine) const;
  void barrier() const;
  // Once the results are written: MPI_Finalize (in the destructor) gets at most `seconds`;
  // past that the process ends with `status`, rank 0 saying why. UCX's tcp transport can hang
  // in finalize after every rank has talked to every other (openucx/ucx#8738: MPICH over UCX,
  // 8 ranks of a --xfer_fleet on the test bed), with nothing left to do.
  void bound_finalize(int seconds, int status) const;

  // One timed batch's agreement, in one collective. Ranks whose clock counts (`timing`: each
  // pair's leader) give their seconds; rank 0 gives its wall time since the row began. Every
  // rank gets the slowest and fastest of the timed figures, whether any rank failed, and rank
  // 0's elapsed time, so every rank can take the same decision to go on or stop.
  struct Verdict {
    double slowest;
    double fastest;
    bool failed;
    double elapsed;
  };
  Verdict agree_batch(double my_seconds, bool timing, bool my_failure, double my_elapsed) const;

 private:
  int lowest(int mine) const;  // the least of every rank's `mine` (one MIN reduction)

  mutable int finalize_bound_s_ = 0;  // bound_finalize
  mutable int finalize_status_ = 0;

  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::string host_;
};

// An MPI count for `bytes`: plain MPI_BYTE up to INT_MAX, a contiguous KiB type beyond.
class MessageType {
 public:
  explicit MessageType(std::size_t bytes);
  ~MessageType();
  MessageType(const MessageType&) = delete;
  MessageType& operator=(const MessageType&) = delete;
  MPI_Datatype type() const { return type_; }
  int count() const { return count_; }

 private:
  MPI_Datatype type_ = MPI_BYTE;
  int count_ = 0;
  bool owned_ = false;
};

// The MPI library's own version string ("Open MPI v4.1.4, ..."); callable before MPI_Init.
std::string mpi_library_version();

}  // namespace xfer
