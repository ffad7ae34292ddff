#include "base/failpoint.hpp"

#include <cctype>
#include <cstring>

#include "base/error.hpp"
#include "base/sizes.hpp"

namespace xfer {
namespace detail {
bool fail_point_armed = false;
}  // namespace detail

namespace {
FailPoint armed;
std::uint64_t row_bytes = 0;
}  // namespace

FailPoint parse_fail_point(const std::string& text, const std::string& flag) {
  const auto bad = [&](const std::string& why) {
    return UsageError(flag + "='" + text + "': " + why +
                      " (expected CALL[@BYTES][#RANK], e.g. cudaMemcpyAsync@1MiB#1)");
  };
  FailPoint point;
  std::string rest = text;
  if (const auto hash = rest.find('#'); hash != std::string::npos) {
    const std::string rank = rest.substr(hash + 1);
    if (rank.empty() || rank.size() > 7 ||
        rank.find_first_not_of("0123456789") != std::string::npos)
      throw bad("RANK must be a rank number");
    point.rank = std::stoi(rank);
    rest.resize(hash);
  }
  if (const auto at = rest.find('@'); at != std::string::npos) {
    point.bytes = parse_size(rest.substr(at + 1), flag);
    if (point.bytes == 0) throw bad("BYTES must be a message size above 0");
    rest.resize(at);
  }
  if (rest.empty()) throw bad("CALL is missing");
  for (const char c : rest) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      throw bad("CALL must be a function name");
  }
  point.call = rest;
  return point;
}

void arm_fail_point(const FailPoint& point, int rank) {
  if (point.call.empty() || (point.rank >= 0 && point.rank != rank)) return;
  armed = point;
  detail::fail_point_armed = true;
}

void set_current_row_bytes(std::uint64_t bytes) { row_bytes = bytes; }

bool detail::fail_point_matches(const char* call_text) {
  if (armed.bytes != 0 && armed.bytes != row_bytes) return false;
  if (fail_point_is_fault()) return true;  // the first check in scope (cuda.cpp: once)
  const std::size_t n = armed.call.size();
  return std::strncmp(call_text, armed.call.c_str(), n) == 0 &&
         (call_text[n] == '(' || call_text[n] == ' ');
}

bool fail_point_is_fault() { return armed.call == "fault"; }

void disarm_fail_point() { detail::fail_point_armed = false; }

}  // namespace xfer
