#include "harness/summary.hpp"

#include <algorithm>
#include <cstdio>

#include "base/fields.hpp"
#include "base/sizes.hpp"

namespace xfer {

std::string family_of(const std::string& row) {
  const auto at = row.find("/bytes:");
  return at == std::string::npos ? row : row.substr(0, at);
}

std::uint64_t bytes_of(const std::string& row) {
  const auto at = row.find("/bytes:");
  if (at == std::string::npos) return 0;
  return std::strtoull(row.c_str() + at + 7, nullptr, 10);
}

// A stream or bidir row's time per message is the inverse of its throughput, not a latency.
bool streams(const std::string& family) {
  return family.find("/mode:stream") != std::string::npos ||
         family.find("/mode:bidir") != std::string::npos;
}

Summary::Family& Summary::family(const std::string& name) {
  for (auto& f : families_) {
    if (f.name == name) return f;
  }
  families_.push_back(Family{name});
  return families_.back();
}

void Summary::add(const RowResult& result) {
  const std::string name =
      family_of(result.name) + "/bytes:" + std::to_string(bytes_of(result.name));
  auto seen =
      std::find_if(rows_.begin(), rows_.end(), [&](const Seen& s) { return s.name == name; });
  if (seen == rows_.end()) {
    rows_.push_back({name, false, false});
    seen = rows_.end() - 1;
  }
  seen->failed = seen->failed || result.failed;
  seen->time_limited = seen->time_limited || result.time_limited;

  Family& f = family(family_of(result.name));
  if (result.failed || !(result.latency_us > 0)) return;
  const std::uint64_t bytes = bytes_of(result.name);
  if (!f.measured || result.gbps > f.peak_gbps) {
    f.peak_gbps = result.gbps;
    f.peak_bytes = bytes;
  }
  if (!f.measured || result.latency_us < f.min_latency_us) {
    f.min_latency_us = result.latency_us;
    f.min_latency_bytes = bytes;
  }
  f.measured = true;
  f.has_latency = !streams(f.name);
}

std::size_t Summary::count(bool Seen::*flag) const {
  return static_cast<std::size_t>(
      std::count_if(rows_.begin(), rows_.end(), [flag](const Seen& s) { return s.*flag; }));
}

json::Value Summary::to_json(double wall_s, const std::vector<Skip>& skips) const {
  json::Value out = json::Value::object();
  out.set(fields::kWallTimeS, wall_s);
  out.set("rows", rows_.size());
  out.set("failed", count(&Seen::failed));
  out.set("time_limited", count(&Seen::time_limited));
  json::Value skipped = json::Value::array();
  for (const auto& s : skips) skipped.push(s.path);
  out.set("skipped_paths", skipped);
  json::Value families = json::Value::array();
  for (const auto& f : families_) {
    json::Value entry = json::Value::object();
    entry.set("family", f.name);
    if (f.measured) {
      entry.set("peak_gbps", f.peak_gbps);
      entry.set("peak_bytes", f.peak_bytes);
      entry.set("min_latency_us", f.has_latency ? json::Value(f.min_latency_us) : json::Value());
      entry.set("min_latency_bytes",
                f.has_latency ? json::Value(f.min_latency_bytes) : json::Value());
    } else {
      entry.set("peak_gbps", nullptr);
      entry.set("peak_bytes", nullptr);
      entry.set("min_latency_us", nullptr);
      entry.set("min_latency_bytes", nullptr);
    }
    families.push(entry);
  }
  out.set("families", families);
  return out;
}

std::vector<std::string> Summary::lines(double wall_s, const std::vector<Skip>& skips) const {
  std::vector<std::string> out;
  std::size_t width = 6;
  for (const auto& f : families_) width = std::max(width, f.name.size());
  char text[512];
  out.push_back("");
  std::snprintf(text, sizeof text, "%-*s  %10s %-9s  %12s %-9s", static_cast<int>(width), "summary",
                "peak GB/s", "at", "min latency", "at");
  out.push_back(text);
  for (const auto& f : families_) {
    if (!f.measured) {
      std::snprintf(text, sizeof text, "%-*s  %10s", static_cast<int>(width), f.name.c_str(),
                    "failed");
    } else if (!f.has_latency) {
      std::snprintf(text, sizeof text, "%-*s  %10.3f %-9s  %12s", static_cast<int>(width),
                    f.name.c_str(), f.peak_gbps, format_size(f.peak_bytes).c_str(), "-");
    } else {
      std::snprintf(text, sizeof text, "%-*s  %10.3f %-9s  %9.2f us %-9s", static_cast<int>(width),
                    f.name.c_str(), f.peak_gbps, format_size(f.peak_bytes).c_str(),
                    f.min_latency_us, format_size(f.min_latency_bytes).c_str());
    }
    out.push_back(text);
  }
  std::string skipped;
  for (const auto& s : skips) skipped += (skipped.empty() ? "" : ", ") + s.path;
  std::snprintf(text, sizeof text,
                "rows: %zu run, %zu failed, %zu time-limited (short of --xfer_precision); "
                "paths skipped: %zu%s%s%s; wall time %.1f s",
                rows_.size(), count(&Seen::failed), count(&Seen::time_limited), skips.size(),
                skipped.empty() ? "" : " (", skipped.c_str(), skipped.empty() ? "" : ")", wall_s);
  out.push_back(text);
  return out;
}

}  // namespace xfer
