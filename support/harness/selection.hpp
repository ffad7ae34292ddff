// Which registered rows run.
//
// --benchmark_filter is read as Google Benchmark reads it: a POSIX extended regular expression
// searched for in the row's full name (".../bytes:8/manual_time"); a leading '-' runs the rows
// it does not match; empty or "all" runs every row. Of the exchange modes, the rows of the
// modes --xfer_modes names run (default: ping-pong only). Where --xfer_modes was not given, a
// stream or bidir row runs too when the filter picks it for its mode: the filter matches the
// row but not the same name without its mode (--benchmark_filter=mpi_host/mode:stream runs
// those rows; --benchmark_filter=mpi_host stays ping-pong only). Rows a family keeps out of the
// default selection (harness.hpp: FamilySizes) run only where a --benchmark_filter is given
// ("all" included) and selects them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/harness.hpp"

namespace xfer {

struct Selection {
  std::vector<std::size_t> rows;  // indices into the registry's rows, in registry order
  // When no row is selected: the flag that would make the filter match a row here, as a
  // sentence ("" when none would).
  std::string hint;
};

// Throws UsageError naming --benchmark_filter when it is not a regular expression.
Selection select_rows(const std::vector<RowSpec>& rows, const std::string& filter,
                      const std::vector<std::string>& modes, bool modes_given,
                      const std::vector<std::uint64_t>& sizes);

// The exchange mode a row name carries ("pingpong", "stream", "bidir"), or "" if none.
std::string exchange_mode_of(const std::string& name);

}  // namespace xfer
