// One row of a one-process GPU copy path (memcpy_peer, host_staging), whatever the copy: the
// classic ping-pong's steps, written once. `Copy` is built from (family, bytes, seed) and offers
// warm_up(copies), poison(), time_batch(batch, hold), time_one() and validate(corrupt); rank 0
// does the copies, the other ranks only take part in the agreements.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/sizes.hpp"
#include "gpu/copy_plan.hpp"
#include "gpu/cuda.hpp"
#include "gpu/stream_hold.hpp"
#include "harness/harness.hpp"

namespace xfer::gpu {

// `gpus` names the GPUs in messages (with the size); `timing` is the family's batch plan for this
// size; `may_hold` is the family's (once queueing blocked behind a hold, the family times unheld);
// `directions` is 2 where a row moves bytes both ways at once.
template <class Copy, class Family>
void copy_row(Visit& visit, const Harness& h, const Row& row, const Family& f,
              const std::string& gpus, const BatchPlan& timing, bool& may_hold,
              int directions = 1) {
  const bool mine = h.world.is_root();
  const std::string where = gpus + ", " + format_size(row.bytes);  // named in every error

  // Afresh in every visit: buffers, streams and patterns (peer access too), then warm-up copies.
  auto copy = set_up<std::optional<Copy>>(
      visit, h, row,
      [&] {
        auto made = std::make_unique<std::optional<Copy>>();
        if (mine) with_context(where, [&] { made->emplace(f, row.bytes, row.seed); });
        return made;
      },
      [&](std::optional<Copy>& made, int copies) {
        if (mine) with_context(where, [&] { made->warm_up(copies); });
      });
  if (!copy) return;

  // Every timed pass starts from poison: only its own copies can make validation pass.
  if (!check_ok(visit, h, row, "poison", [&] {
        if (mine) with_context(where, [&] { (*copy)->poison(); });
      }))
    return;

  Measurement m;
  if (!measure(
          visit, h, row, timing.batch, mine,
          [&] {
            if (!mine) return 0.0;
            return with_context(where, [&] {
              return time_copies(**copy, f.latency, timing.batch, timing.hold, may_hold, row.name);
            });
          },
          m))
    return;

  if (!check_ok(visit, h, row, "validate", [&] {
        if (mine) with_context(where, [&] { (*copy)->validate(corrupt_here(h, row)); });
      }))
    return;

  report_row(visit, row, m, timing.batch, directions);
}

}  // namespace xfer::gpu
