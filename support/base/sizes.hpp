// Message-size lists: "8,1K,4MiB", "8B:1GiB:x4", and their mixtures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xfer {

// One size: a positive integer with an optional binary suffix B, K/KiB, M/MiB, G/GiB, T/TiB.
// Throws UsageError naming `flag` and the expected form.
std::uint64_t parse_size(const std::string& text, const std::string& flag);

// A comma-separated list of sizes and ranges START:END[:xFACTOR] (factor 2 when omitted),
// returned sorted ascending without duplicates.
std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& flag);

// The default sweep: 8 B .. 1 GiB in powers of two (the range of the classic CUDA-aware MPI
// ping-pong).
std::vector<std::uint64_t> default_sizes();

// "8 B", "64 KiB", "1 GiB", "1536 B": exact binary units, for messages and labels.
std::string format_size(std::uint64_t bytes);

// Messages per clock reading for ping-pong paths: tiny messages are timed in batches so the
// clock and the per-batch agreement stay negligible; large ones one at a time.
std::int64_t batch_for(std::uint64_t bytes);

}  // namespace xfer
