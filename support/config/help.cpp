#include <sstream>

#include "config/config.hpp"
#include "config/flags.hpp"

namespace xfer {

std::string harness_help(const std::vector<std::string>& paths) {
  std::ostringstream out;
  const auto line = [&out](const std::string& lhs, const std::string& help) {
    out << lhs << std::string(lhs.size() < 34 ? 34 - lhs.size() : 1, ' ') << help << "\n";
  };
  out << "xferbench: how fast bytes move between GPUs and between MPI ranks.\n\n"
      << "usage: mpirun -np 2 xferbench [xferbench flags] [Google Benchmark flags]\n\n"
      << "xferbench flags (environment fallback in brackets):\n";
  for (const auto& f : flags()) {
    if (!f.test_only)
      line(std::string("  --") + f.name + "=" + f.value, std::string(f.help) + " [" + f.env + "]");
  }
  line("  --benchmark_out=FILE", "result file, written by rank 0 only, atomically [BENCHMARK_OUT]");
  line("  --benchmark_out_format=FORMAT", "json (default), console or csv [BENCHMARK_OUT_FORMAT]");
  line("  --benchmark_color=WHEN",
       "console colour: true, false or auto (default: in a terminal, but not under an MPI "
       "launcher, whose terminal rank 0 cannot see, nor with NO_COLOR set) [BENCHMARK_COLOR]");
  line("  --version", "print versions and exit");
  out << "\ntesting switches (make failures happen on purpose):\n";
  for (const auto& f : flags()) {
    if (f.test_only) line(std::string("  --") + f.name + "=" + f.value, f.help);
  }
  out << "\nPaths: ";
  for (const auto& p : paths) out << p << (p == paths.back() ? "\n" : ", ");
  out << "Rows are PATH[/VARIANT]/bytes:N; time is the one-way time of one message; GB/s uses "
         "GB = 1e9 bytes.\n\nGoogle Benchmark's flags follow.\n";
  return out.str();
}

}  // namespace xfer
