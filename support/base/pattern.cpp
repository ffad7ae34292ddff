#include "base/pattern.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

namespace xfer {

namespace {

// Large buffers are filled and checked by several threads: outside every timed region, but a
// run fills and checks hundreds of them, and one core fills a GiB in a quarter of a second.
constexpr std::size_t kParallelBytes = std::size_t{16} << 20;

// The cores this process may run on: a rank that its launcher bound to one core gets no help
// from more threads (they would only take turns on that core).
unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

unsigned threads_for(std::size_t bytes) {
  if (bytes < kParallelBytes) return 1;
  static const unsigned cores = usable_cores();
  return std::clamp(cores / 2, 1u, 8u);  // leave cores to the other ranks of the node
}

// Runs part(begin, end, thread) over [0, count) (whole words, or bytes), split across threads.
template <class Part>
void over_words(std::size_t count, unsigned threads, const Part& part) {
  if (threads <= 1) {
    part(0, count, 0);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  const std::size_t per = (count + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(count, t * per);
    const std::size_t end = std::min(count, begin + per);
    try {
      pool.emplace_back([&part, begin, end, t] { part(begin, end, t); });
    } catch (const std::system_error&) {  // no thread to be had: this one does the part
      part(begin, end, t);
    }
  }
  for (auto& thread : pool) thread.join();
}

void fill_words(unsigned char* out, std::size_t begin, std::size_t end, std::uint64_t seed) {
  for (std::size_t w = begin; w < end; ++w) {
    const std::uint64_t value = mix64(seed ^ w);
    std::memcpy(out + 8 * w, &value, 8);  // little-endian hosts: byte k = value >> 8k
  }
}

void check_bytes(const unsigned char* in, std::size_t begin, std::size_t end, std::uint64_t seed,
                 Mismatch& m) {
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint8_t expected = pattern_byte(seed, i);
    if (in[i] == expected) continue;
    if (m.count++ == 0) {
      m.first = i;
      m.expected = expected;
      m.found = in[i];
    }
  }
}

void check_words(const unsigned char* in, std::size_t begin, std::size_t end, std::uint64_t seed,
                 Mismatch& m) {
  for (std::size_t w = begin; w < end; ++w) {
    const std::uint64_t value = mix64(seed ^ w);
    if (std::memcmp(in + 8 * w, &value, 8) != 0) check_bytes(in, 8 * w, 8 * w + 8, seed, m);
  }
}

}  // namespace

void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed) {
  fill_pattern(data, bytes, seed, 0);
}

Mismatch find_mismatches(const void* data, std::size_t bytes, std::uint64_t seed) {
  return find_mismatches(data, bytes, seed, 0);
}

void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed, unsigned threads) {
  auto* out = static_cast<unsigned char*>(data);
  const std::size_t words = bytes / 8;
  over_words(
      words, threads > 0 ? threads : threads_for(bytes),
      [&](std::size_t begin, std::size_t end, unsigned) { fill_words(out, begin, end, seed); });
  for (std::size_t i = 8 * words; i < bytes; ++i) out[i] = pattern_byte(seed, i);
}

void fill_bytes(void* data, std::size_t bytes, unsigned char value) {
  auto* out = static_cast<unsigned char*>(data);
  over_words(bytes, threads_for(bytes), [&](std::size_t begin, std::size_t end, unsigned) {
    std::memset(out + begin, value, end - begin);
  });
}

Mismatch find_mismatches(const void* data, std::size_t bytes, std::uint64_t seed,
                         unsigned threads) {
  const auto* in = static_cast<const unsigned char*>(data);
  const std::size_t words = bytes / 8;
  if (threads == 0) threads = threads_for(bytes);
  std::vector<Mismatch> parts(threads);
  over_words(words, threads, [&](std::size_t begin, std::size_t end, unsigned t) {
    check_words(in, begin, end, seed, parts[t]);
  });
  Mismatch m;
  for (const Mismatch& part : parts) {  // in buffer order: the first part's first is the first
    if (part.count == 0) continue;
    if (m.count == 0)
      m = part;
    else
      m.count += part.count;
  }
  Mismatch tail;
  check_bytes(in, 8 * words, bytes, seed, tail);
  if (tail.count > 0 && m.count == 0)
    m = tail;
  else
    m.count += tail.count;
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
