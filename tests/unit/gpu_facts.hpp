// What the GPU unit tests describe a machine's GPUs with (a fact sheet, a --xfer_gpus value)
// and read a copy plan by.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "gpu/copy_plan.hpp"
#include "gpu/devices.hpp"

namespace xfer::gpu::testing {

// `devices` GPUs; every pair can reach every other unless listed in `blocked` as (a, b).
inline GpuFacts facts(int devices, std::vector<std::pair<int, int>> blocked = {}) {
  GpuFacts f;
  f.devices = devices;
  for (int a = 0; a < devices; ++a) {
    for (int b = 0; b < devices; ++b) {
      const bool cut = std::find(blocked.begin(), blocked.end(), std::pair{a, b}) != blocked.end();
      f.can_access.push_back(a != b && !cut);
    }
  }
  return f;
}

inline GpuPairs pairs(const std::string& text) { return parse_gpu_pairs(text, "--xfer_gpus"); }

// The names of a plan's families, in its order.
template <class Family>
std::vector<std::string> names(const CopyPlan<Family>& plan) {
  std::vector<std::string> out;
  for (const auto& f : plan.families) out.push_back(f.name());
  return out;
}

}  // namespace xfer::gpu::testing
