#include "mpi/world.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "base/error.hpp"

namespace xfer {

World::World(int* argc, char*** argv) {
  // Plain MPI_Init, as the classic ping-pong does: asking Open MPI 4.1 for FUNNELED measurably
  // slowed 8-byte round trips on the calibration machine. The watchdog thread never calls MPI.
  XFER_MPI_CHECK(MPI_Init(argc, argv));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  XFER_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  XFER_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));

  MPI_Comm node = MPI_COMM_NULL;
  XFER_MPI_CHECK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  XFER_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
  XFER_MPI_CHECK(MPI_Comm_size(node, &local_size_));
  MPI_Comm_free(&node);

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  XFER_MPI_CHECK(MPI_Get_processor_name(name, &length));
  host_.assign(name, static_cast<std::size_t>(length));
}

World::~World() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (finalize_bound_s_ > 0) {
    // Rank 0 ends first, with the job's status; the others a little later, so that a launcher
    // that ends the job when one process leaves without finalizing hears rank 0's status.
    const int seconds = finalize_bound_s_ + (rank_ == 0 ? 0 : 5);
    const int status = finalize_status_;
    const bool speak = rank_ == 0;
    std::thread([seconds, status, speak] {
      std::this_thread::sleep_for(std::chrono::seconds(seconds));
      if (speak)
        std::fprintf(stderr,
                     "xferbench: MPI_Finalize had not returned %d s after the results were "
                     "written (UCX's tcp transport can hang there: openucx/ucx#8738); ending "
                     "with status %d\n",
                     seconds, status);
      std::fflush(stderr);
      std::_Exit(status);
    }).detach();
  }
  MPI_Finalize();
}

void World::bound_finalize(int seconds, int status) const {
  finalize_bound_s_ = seconds;
  finalize_status_ = status;
}

bool World::all(bool mine) const {
  int in = mine ? 1 : 0;
  int out = 0;
  XFER_MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm()));
  return out != 0;
}

bool World::any(bool mine) const {
  int in = mine ? 1 : 0;
  int out = 0;
  XFER_MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, comm()));
  return out != 0;
}

double World::max(double mine) const {
  double out = 0;
  XFER_MPI_CHECK(MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, comm()));
  return out;
}

std::uint64_t World::broadcast(std::uint64_t value, int root) const {
  XFER_MPI_CHECK(MPI_Bcast(&value, 1, MPI_UINT64_T, root, comm()));
  return value;
}

std::string World::broadcast(const std::string& value, int root) const {
  std::uint64_t length = broadcast(static_cast<std::uint64_t>(value.size()), root);
  std::string out = rank_ == root ? value : std::string(length, '\0');
  if (length > 0) {
    XFER_MPI_CHECK(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, comm()));
  }
  return out;
}

std::vector<double> World::all_gather(double mine) const {
  std::vector<double> all(static_cast<std::size_t>(size_));
  XFER_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm()));
  return all;
}

std::vector<std::string> World::all_gather(const std::string& mine) const {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  XFER_MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm()));
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string joined(static_cast<std::size_t>(total), '\0');
  XFER_MPI_CHECK(MPI_Allgatherv(mine.data(), length, MPI_CHAR, joined.data(), lengths.data(),
                                offsets.data(), MPI_CHAR, comm()));
  std::vector<std::string> all;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    all.push_back(
        joined.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return all;
}

int World::lowest(int mine) const {
  int out = INT_MAX;
  XFER_MPI_CHECK(MPI_Allreduce(&mine, &out, 1, MPI_INT, MPI_MIN, comm()));
  return out;
}

std::string World::first_message(const std::string& mine, bool secondhand) const {
  // One MIN reduction: own messages rank first by rank, secondhand ones after all of them.
  const int first = lowest(mine.empty() ? INT_MAX : (secondhand ? size_ + rank_ : rank_));
  if (first == INT_MAX) return "";
  return broadcast(mine, first < size_ ? first : first - size_);
}

RunStop World::first_stop(const RunStop& mine) const {
  const int first = lowest(mine.stopped() ? rank_ : INT_MAX);
  if (first == INT_MAX) return {};
  const auto kind =
      static_cast<RunStop::Kind>(broadcast(static_cast<std::uint64_t>(mine.kind), first));
  return {kind, broadcast(mine.reason, first)};
}

void World::barrier() const { XFER_MPI_CHECK(MPI_Barrier(comm())); }

World::Verdict World::agree_batch(double my_seconds, bool timing, bool my_failure,
                                  double my_elapsed) const {
  // One MAX reduction carries all four: the fastest time as the largest negated one.
  constexpr double kNone = -1e300;
  double in[4] = {timing ? my_seconds : kNone, timing ? -my_seconds : kNone, my_failure ? 1.0 : 0.0,
                  rank_ == 0 ? my_elapsed : kNone};
  double out[4] = {0, 0, 0, 0};
  XFER_MPI_CHECK(MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_MAX, comm()));
  return {out[0], -out[1], out[2] > 0, out[3]};
}

MessageType::MessageType(std::size_t bytes) {
  if (bytes <= static_cast<std::size_t>(INT_MAX)) {
    count_ = static_cast<int>(bytes);
    return;
  }
  if (bytes % 1024 != 0 || bytes / 1024 > static_cast<std::size_t>(INT_MAX))
    throw Error("message of " + std::to_string(bytes) +
                " bytes: MPI counts above 2 GiB must be a multiple of 1 KiB");
  XFER_MPI_CHECK(MPI_Type_contiguous(1024, MPI_BYTE, &type_));
  XFER_MPI_CHECK(MPI_Type_commit(&type_));
  owned_ = true;
  count_ = static_cast<int>(bytes / 1024);
}

MessageType::~MessageType() {
  if (owned_) MPI_Type_free(&type_);
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  while (!version.empty() && (version.back() == '\n' || version.back() == '\0')) version.pop_back();
  return version;
}

}  // namespace xfer
