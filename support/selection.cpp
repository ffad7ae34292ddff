#include "selection.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "error.hpp"

namespace xfer {
namespace {

const char* const kModes[] = {"pingpong", "stream", "bidir"};

// The name without its "/mode:X" component (X an exchange mode).
std::string without_mode(const std::string& name) {
  for (const char* mode : kModes) {
    const std::string part = std::string("/mode:") + mode;
    const auto at = name.find(part + "/");
    if (at != std::string::npos) return name.substr(0, at) + name.substr(at + part.size());
  }
  return name;
}

class Filter {
 public:
  explicit Filter(const std::string& text) {
    std::string spec = text;
    if (!spec.empty() && spec[0] == '-') {
      negative_ = true;
      spec.erase(0, 1);
    }
    if (spec.empty() || spec == "all") spec = ".";
    try {
      re_ = std::regex(spec, std::regex::extended | std::regex::nosubs);
    } catch (const std::regex_error& e) {
      throw UsageError("--benchmark_filter='" + text + "': not a regular expression (" +
                       e.what() + ")");
    }
  }
  bool selects(const std::string& row) const {
    return std::regex_search(row + "/manual_time", re_) != negative_;
  }

 private:
  std::regex re_;
  bool negative_ = false;
};

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// Sizes named in the filter ("bytes:1000") that --xfer_sizes lacks, where the filter would
// match a row of this run at that size.
std::set<std::string> missing_sizes(const std::vector<RowSpec>& rows, const Filter& filter,
                                    const std::string& text,
                                    const std::vector<std::uint64_t>& sizes) {
  std::set<std::string> missing;
  static const std::regex bytes_part("bytes:([0-9]{1,19})");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), bytes_part);
       it != std::sregex_iterator(); ++it) {
    const std::string digits = (*it)[1];
    const std::uint64_t n = std::strtoull(digits.c_str(), nullptr, 10);
    if (std::find(sizes.begin(), sizes.end(), n) != sizes.end()) continue;
    for (const auto& row : rows) {
      if (filter.selects(row.family + "/bytes:" + digits)) {
        missing.insert(digits);
        break;
      }
    }
  }
  return missing;
}

}  // namespace

std::string exchange_mode_of(const std::string& name) {
  for (const char* mode : kModes) {
    if (name.find(std::string("/mode:") + mode + "/") != std::string::npos) return mode;
  }
  return "";
}

Selection select_rows(const std::vector<RowSpec>& rows, const std::string& text,
                      const std::vector<std::string>& modes, bool modes_given,
                      const std::vector<std::uint64_t>& sizes) {
  const Filter filter(text);
  Selection out;
  std::set<std::string> left_out_modes;  // modes of rows the filter matched but --xfer_modes left out
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string& name = rows[i].name;
    if (!filter.selects(name)) continue;
    const std::string mode = exchange_mode_of(name);
    const bool asked = mode.empty() || std::find(modes.begin(), modes.end(), mode) != modes.end();
    const bool picked_for_its_mode =
        !modes_given && mode != "pingpong" && !mode.empty() && !filter.selects(without_mode(name));
    if (asked || picked_for_its_mode)
      out.rows.push_back(i);
    else
      left_out_modes.insert(mode);
  }
  if (!out.rows.empty()) return out;
  if (!left_out_modes.empty()) {
    out.hint = "it matches rows of mode " + join(left_out_modes) + ", which --xfer_modes leaves out: add --xfer_modes=" +
               join(left_out_modes);
  } else if (const auto sizes_wanted = missing_sizes(rows, filter, text, sizes);
             !sizes_wanted.empty()) {
    out.hint = "it names a size --xfer_sizes leaves out: add --xfer_sizes=" + join(sizes_wanted);
  } else if (text.find("pairs:") != std::string::npos) {
    out.hint = "rows name pairs:N only when several rank pairs run at once: add --xfer_pairs "
               "(e.g. --xfer_pairs=halves with 4 ranks)";
  }
  return out;
}

}  // namespace xfer
