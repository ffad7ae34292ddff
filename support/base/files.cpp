#include "base/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/stop.hpp"

namespace xfer {

std::string temp_path_for(const std::string& out_path) {
  return out_path + ".tmp." + std::to_string(::getpid());
}

// /dev/null, a FIFO, a terminal: written straight to, once. Renaming a file over one of them
// would replace the device or the pipe itself (as root, /dev/null becomes a plain file).
bool is_special_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

bool write_straight(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string write_whole(const std::string& path, const std::string& text) {
  // Write beside the target and rename: a reader never sees a half-written file, and two runs
  // writing the same file at once each rename a whole document of their own into place.
  const std::string temp = temp_path_for(path);
  set_file_in_progress(temp);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return "cannot write " + temp;
  }
  std::string error;
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = std::strerror(errno);
    std::remove(temp.c_str());
  }
  set_file_in_progress("");
  return error;
}

}  // namespace xfer
