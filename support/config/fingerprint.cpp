#include <sstream>

#include "config/config.hpp"

namespace xfer {

std::string settings_fingerprint(const CommandLine& cl) {
  const Config& c = cl.config;
  std::ostringstream out;
  for (std::size_t i = 1; i < cl.benchmark_args.size(); ++i) {
    // Only rank 0 prints, and the colour is decided from each rank's own environment.
    if (cl.benchmark_args[i].rfind("--benchmark_color=", 0) != 0)
      out << cl.benchmark_args[i] << '\n';
  }
  for (const auto s : c.sizes) out << s << ',';
  out << '\n';
  for (const auto& r : c.require) out << r << ',';
  out << '\n' << c.gpus.all << ':';
  for (const auto& [a, b] : c.gpus.pairs) out << a << '>' << b << ',';
  out << '\n'
      << static_cast<int>(c.cuda_aware) << ' ' << c.warmup << ' ' << c.timeout_s << ' '
      << c.display_format << ' ' << c.test_slow_rank << ' ' << c.test_hang_rank << ' '
      << c.test_corrupt << '@' << c.test_corrupt_round << ' ' << c.test_noise_pct << '\n'
      << c.precision.target_pct << ' ' << c.precision.max_time_s << ' ' << c.precision.min_time_s
      << ' ' << c.precision.min_messages << '\n'
      << c.pairs << ' ' << c.window << ' ' << c.ack_in_buffers << ' ';
  for (const auto& m : c.modes) out << m << ',';
  for (const int g : c.gpu_map) out << g << ',';
  out << '\n' << c.test_fail.call << '@' << c.test_fail.bytes << '#' << c.test_fail.rank;
  out << '\n'
      << c.modes_given << ' ' << c.visits << ' ' << c.jobs << ' ' << c.jobs_auto << ' '
      << c.max_time_given << ' ' << c.seed << ' ' << c.floor_pct << ' ' << c.floor_file << ' '
      << c.repetitions << ' ' << c.interleave << ' ' << c.test_shift_pct << '\n'
      << c.filter << '\n'
      << c.test_slowdown << '\n'
      << c.test_host_pages;
  if (c.fleet())  // only then: other digests stay as they were
    out << "\nfleet " << c.fleet_passes << ' ' << c.fleet_rounds;
  return out.str();
}

}  // namespace xfer
