#include "harness/selection.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "base/error.hpp"

namespace xfer {
namespace {

const char* const kModes[] = {"pingpong", "stream", "bidir"};

// A registered row's name as Google Benchmark names its run, which the filter reads.
std::string run_name(const std::string& row) { return row + "/manual_time"; }

// A row's name as it was before the exchange paths named their mode and mpi_staged its
// staging (tools/xfertools/core/names.py still reads files with such names):
// mpi_host/mode:pingpong/bytes:8 was mpi_host/bytes:8, and
// mpi_staged/host:pinned/staging:pipelined/mode:pingpong/bytes:8 was
// mpi_staged/host:pinned/mode:pipelined/bytes:8.
std::string older_name(const std::string& row) {
  static const std::regex exchange("^(mpi_host|mpi_cuda_aware|nccl_sendrecv)/mode:pingpong/");
  static const std::regex staged("^(mpi_staged/.*)/staging:([a-z]+)/mode:pingpong/");
  return std::regex_replace(std::regex_replace(row, exchange, "$1/"), staged, "$1/mode:$2/");
}

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
      throw UsageError("--benchmark_filter='" + text + "': not a regular expression (" + e.what() +
                       ")");
    }
  }
  // `name`: a row's name as the filter is to read it (run_name()).
  bool selects(const std::string& name) const { return std::regex_search(name, re_) != negative_; }

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
      if (filter.selects(run_name(row.family + "/bytes:" + digits))) {
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

namespace {

// The rows `filter` selects when it reads each row's name as `read` gives it, in registry order;
// `left_out_modes` gets the modes of rows it matched that --xfer_modes leaves out.
std::vector<std::size_t> pick(const std::vector<RowSpec>& rows, const Filter& filter,
                              std::string (*read)(const std::string&),
                              const std::vector<std::string>& modes, bool modes_given,
                              bool filtered, std::set<std::string>& left_out_modes) {
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string& name = rows[i].name;
    if (!filtered && !rows[i].by_default) continue;  // a filter away (FamilySizes)
    if (!filter.selects(read(name))) continue;
    const std::string mode = exchange_mode_of(name);
    const bool asked = mode.empty() || std::find(modes.begin(), modes.end(), mode) != modes.end();
    const bool picked_for_its_mode = !modes_given && mode != "pingpong" && !mode.empty() &&
                                     !filter.selects(read(without_mode(name)));
    if (asked || picked_for_its_mode)
      picked.push_back(i);
    else
      left_out_modes.insert(mode);
  }
  return picked;
}

std::string as_named(const std::string& row) { return row; }
std::string older_run_name(const std::string& row) { return run_name(older_name(row)); }

// A filter that would select rows if it read their names without "/manual_time" (a '$' put
// before it) or in their older form: the row it probably meant, and why it missed it.
std::string misread_name_hint(const std::vector<RowSpec>& rows, const Filter& filter,
                              const std::vector<std::string>& modes, bool modes_given) {
  const struct {
    std::string (*read)(const std::string&);
    bool older;   // it uses an older name
    bool dollar;  // it ends before /manual_time
  } readings[] = {{as_named, false, true}, {older_run_name, true, false}, {older_name, true, true}};
  for (const auto& reading : readings) {
    std::set<std::string> ignored;
    const auto picked = pick(rows, filter, reading.read, modes, modes_given, true, ignored);
    if (picked.empty()) continue;
    const RowSpec& row = rows[picked[0]];
    std::string hint = "it probably meant " + run_name(row.name);
    if (picked.size() > 1) hint += " (and " + std::to_string(picked.size() - 1) + " more rows)";
    if (reading.older) hint += ": older result files name it " + older_run_name(row.name);
    if (reading.dollar)
      hint += std::string(reading.older ? "; " : ": ") +
              "row names end in /manual_time, so a '$' before it matches none: end the filter "
              "with /manual_time$, or leave the $ out";
    return hint;
  }
  return "";
}

}  // namespace

Selection select_rows(const std::vector<RowSpec>& rows, const std::string& text,
                      const std::vector<std::string>& modes, bool modes_given,
                      const std::vector<std::uint64_t>& sizes) {
  const Filter filter(text);
  Selection out;
  // The modes of rows the filter matched but --xfer_modes left out.
  std::set<std::string> left_out_modes;
  out.rows = pick(rows, filter, run_name, modes, modes_given, !text.empty(), left_out_modes);
  if (!out.rows.empty()) return out;
  if (!left_out_modes.empty()) {
    out.hint = "it matches rows of mode " + join(left_out_modes) +
               ", which --xfer_modes leaves out: add --xfer_modes=" + join(left_out_modes);
  } else if (const auto sizes_wanted = missing_sizes(rows, filter, text, sizes);
             !sizes_wanted.empty()) {
    out.hint = "it names a size --xfer_sizes leaves out: add --xfer_sizes=" + join(sizes_wanted);
  } else if (text.find("pairs:") != std::string::npos) {
    out.hint =
        "rows name pairs:N only when several rank pairs run at once: add --xfer_pairs "
        "(e.g. --xfer_pairs=halves with 4 ranks)";
  } else if (text.rfind('-', 0) != 0) {  // a negative filter's rows all matched it
    out.hint = misread_name_hint(rows, filter, modes, modes_given);
  }
  return out;
}

}  // namespace xfer
