// Files written whole: the result file is written beside its place and renamed into it, so a
// reader never sees half a document; a device or a pipe (/dev/null, a FIFO, a terminal) is
// written to straight, once.
#pragma once

#include <string>

namespace xfer {

// Where a file is written before it is renamed into place.
std::string temp_path_for(const std::string& out_path);
// /dev/null, a FIFO, a terminal: written to straight, once, never renamed over.
bool is_special_file(const std::string& path);

// Writes `text` to `path` straight (a special file); false if it could not.
bool write_straight(const std::string& path, const std::string& text);
// Writes `text` beside `path` (temp_path_for) and renames it into place; "" when done, else what
// went wrong ("cannot write TEMP", or why the rename failed). While it writes, the temporary
// file is the one in progress (stop.hpp: set_file_in_progress).
std::string write_whole(const std::string& path, const std::string& text);

}  // namespace xfer
