// The data every path sends: a pseudo-random pattern that depends on the message size and on
// the benchmark run, so a stale buffer, a short copy or one flipped byte is caught.
// pattern_byte() is usable from host and device code (the GPU kernels compute the same bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#if defined(__CUDACC__)
#define XFER_HOST_DEVICE __host__ __device__
#else
#define XFER_HOST_DEVICE
#endif

namespace xfer {

// splitmix64: cheap, well mixed, identical on every rank and on the GPU.
XFER_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Byte `index` of the pattern with `seed` (little-endian bytes of one word per 8 bytes).
XFER_HOST_DEVICE inline std::uint8_t pattern_byte(std::uint64_t seed, std::uint64_t index) {
  return static_cast<std::uint8_t>(mix64(seed ^ (index >> 3)) >> (8 * (index & 7)));
}

// The seed of one benchmark run: size and run number (agreed on every rank) both count.
inline std::uint64_t pattern_seed(std::uint64_t bytes, std::uint64_t run) {
  return mix64(bytes * 0x100000001B3ULL ^ mix64(run));
}

// A byte no pattern is guaranteed to avoid is useless as poison; we poison with the pattern of
// another seed, which differs from the expected data almost everywhere.
inline std::uint64_t poison_seed(std::uint64_t seed) { return mix64(~seed); }

void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed);

struct Mismatch {
  std::size_t count = 0;      // bytes that differ
  std::size_t first = 0;      // offset of the first one
  std::uint8_t expected = 0;  // what should be there
  std::uint8_t found = 0;     // what is there
};

Mismatch find_mismatches(const void* data, std::size_t bytes, std::uint64_t seed);

// The same two with `threads` threads (0: as the buffer's size and the machine's cores call for:
// one below 16 MiB), so that a test can split a buffer on a machine of any size.
void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed, unsigned threads);
Mismatch find_mismatches(const void* data, std::size_t bytes, std::uint64_t seed,
                         unsigned threads);

// memset with as many threads as fill_pattern takes: the first touch of fresh host pages, and
// poison where any constant will do.
void fill_bytes(void* data, std::size_t bytes, unsigned char value);

// "validation: 3 of 1048576 bytes differ, first at offset 17 (expected 0x3a, found 0x00)"
std::string describe(const Mismatch& m, std::size_t bytes);

}  // namespace xfer
