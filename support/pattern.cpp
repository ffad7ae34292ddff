#include "pattern.hpp"

#include <cstdio>
#include <cstring>

namespace xfer {

void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed) {
  auto* out = static_cast<unsigned char*>(data);
  const std::size_t words = bytes / 8;
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t value = mix64(seed ^ w);
    std::memcpy(out + 8 * w, &value, 8);  // little-endian hosts: byte k = value >> 8k
  }
  for (std::size_t i = 8 * words; i < bytes; ++i) out[i] = pattern_byte(seed, i);
}

Mismatch find_mismatches(const void* data, std::size_t bytes, std::uint64_t seed) {
  const auto* in = static_cast<const unsigned char*>(data);
  Mismatch m;
  const std::size_t words = bytes / 8;
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t value = mix64(seed ^ w);
    if (std::memcmp(in + 8 * w, &value, 8) == 0) continue;
    for (std::size_t i = 8 * w; i < 8 * w + 8; ++i) {
      const std::uint8_t expected = pattern_byte(seed, i);
      if (in[i] == expected) continue;
      if (m.count++ == 0) m = Mismatch{1, i, expected, in[i]};
    }
  }
  for (std::size_t i = 8 * words; i < bytes; ++i) {
    const std::uint8_t expected = pattern_byte(seed, i);
    if (in[i] == expected) continue;
    if (m.count++ == 0) m = Mismatch{1, i, expected, in[i]};
  }
  return m;
}

std::string describe(const Mismatch& m, std::size_t bytes) {
  char text[160];
  std::snprintf(text, sizeof text,
                "validation: %zu of %zu bytes differ, first at offset %zu (expected 0x%02x, "
                "found 0x%02x)",
                m.count, bytes, m.first, m.expected, m.found);
  return text;
}

}  // namespace xfer
