// The floor a row's stated uncertainty carries: the spread between processes (separate MPI jobs
// on the same machine) that the visits of one process cannot see. Measured per path and host
// memory on the GPU machines (docs/reproducibility.md says how); tools/run merges several jobs,
// whose spread then speaks for itself, and drops it.
#pragma once

#include <string>

namespace xfer {

// In percent, for the row `name` ("host_staging/host:pageable/.../bytes:8").
double measured_floor_pct(const std::string& name);

}  // namespace xfer
