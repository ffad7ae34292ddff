#include "base/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "base/error.hpp"

namespace xfer {
namespace {

const char* const kSizeForm =
    "expected sizes like 8, 64K, 4MiB or ranges like 8B:1GiB:x4, separated by commas "
    "(suffixes B, K/KiB, M/MiB, G/GiB, T/TiB are powers of 1024)";

[[noreturn]] void bad(const std::string& flag, const std::string& text, const std::string& why) {
  throw UsageError(flag + "='" + text + "': " + why + "; " + kSizeForm);
}

std::uint64_t suffix_multiplier(std::string suffix, const std::string& flag,
                                const std::string& text) {
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.empty() || suffix == "B") return 1;
  if (suffix == "K" || suffix == "KIB") return 1ULL << 10;
  if (suffix == "M" || suffix == "MIB") return 1ULL << 20;
  if (suffix == "G" || suffix == "GIB") return 1ULL << 30;
  if (suffix == "T" || suffix == "TIB") return 1ULL << 40;
  if (suffix == "KB" || suffix == "MB" || suffix == "GB" || suffix == "TB")
    bad(flag, text, "'" + suffix + "' is ambiguous (1000 or 1024?); write K/KiB, M/MiB, G/GiB");
  bad(flag, text, "unknown size suffix '" + suffix + "'");
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto end = s.find(sep, start);
    parts.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::uint64_t parse_size(const std::string& raw, const std::string& flag) {
  const std::string text = trim(raw);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (!text.empty() && text[0] == '-') bad(flag, raw, "sizes must be positive");
  if (digits == 0) bad(flag, raw, "'" + text + "' is not a size");
  if (digits > 18) bad(flag, raw, "'" + text + "' is too large");
  const std::uint64_t count = std::stoull(text.substr(0, digits));
  const std::uint64_t unit = suffix_multiplier(text.substr(digits), flag, raw);
  if (count == 0) bad(flag, raw, "sizes must be at least 1 byte");
  if (count > std::numeric_limits<std::uint64_t>::max() / unit)
    bad(flag, raw, "'" + text + "' is too large");
  return count * unit;
}

std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& flag) {
  if (trim(text).empty()) bad(flag, text, "the list is empty");
  std::vector<std::uint64_t> sizes;
  for (const auto& item : split(text, ',')) {
    const auto fields = split(item, ':');
    if (fields.size() == 1) {
      sizes.push_back(parse_size(item, flag));
      continue;
    }
    if (fields.size() > 3) bad(flag, text, "range '" + item + "' has too many ':'");
    const std::uint64_t first = parse_size(fields[0], flag);
    const std::uint64_t last = parse_size(fields[1], flag);
    std::uint64_t factor = 2;
    if (fields.size() == 3) {
      const std::string f = trim(fields[2]);
      if (f.size() < 2 || (f[0] != 'x' && f[0] != 'X') ||
          f.find_first_not_of("0123456789", 1) != std::string::npos || f.size() > 10)
        bad(flag, text, "range step '" + f + "' must be a multiplier like x2 or x4");
      factor = std::stoull(f.substr(1));
      if (factor < 2) bad(flag, text, "range multiplier must be at least x2");
    }
    if (first > last) bad(flag, text, "range '" + item + "' runs backwards (start > end)");
    for (std::uint64_t s = first; s <= last; s *= factor) {
      sizes.push_back(s);
      if (s > last / factor) break;
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::vector<std::uint64_t> default_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = 8; s <= (1ULL << 30); s *= 2) sizes.push_back(s);
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

std::int64_t batch_for(std::uint64_t bytes) {
  constexpr std::uint64_t kBatchBytes = 1 << 20;
  return static_cast<std::int64_t>(std::clamp<std::uint64_t>(kBatchBytes / bytes, 1, 100));
}

}  // namespace xfer
