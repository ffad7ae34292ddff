#include "base/error.hpp"

#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace xfer {

std::string rank_prefix() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return "";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return "rank " + std::to_string(rank) + ": ";
}

void raise_call_error(const std::string& detail, const char* call, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  throw Error(std::string(call) + " failed: " + detail + " (" + (base ? base + 1 : file) + ":" +
              std::to_string(line) + ")");
}

void raise_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  raise_call_error(std::string(text, static_cast<std::size_t>(length)), call, file, line);
}

}  // namespace xfer
