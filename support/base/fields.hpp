// The names of the result format's fields (docs/result-format.md) that more than one file
// spells: the counters of a row (harness/visits.cpp writes them, jobs/merge.cpp reads them back,
// the reporter shows some), Google Benchmark's own members of a row, and the members of
// context.xferbench that the run writes and a merge reads.
#pragma once

namespace xfer::fields {

// A row's counters.
inline constexpr char kGbps[] = "GB/s";
inline constexpr char kLatencyUs[] = "latency_us";
inline constexpr char kBatch[] = "batch";
inline constexpr char kSamples[] = "samples";
inline constexpr char kMedianUs[] = "median_us";
inline constexpr char kMinUs[] = "min_us";
inline constexpr char kMaxUs[] = "max_us";
inline constexpr char kP90Us[] = "p90_us";
inline constexpr char kP99Us[] = "p99_us";
inline constexpr char kCi95Pct[] = "ci95_pct";
inline constexpr char kFloorPct[] = "floor_pct";
inline constexpr char kVisits[] = "visits";
inline constexpr char kJobs[] = "jobs";
inline constexpr char kTimeLimited[] = "time_limited";
inline constexpr char kPairs[] = "pairs";
inline constexpr char kPairGbpsMin[] = "pair_gbps_min";
inline constexpr char kPairGbpsMax[] = "pair_gbps_max";
inline constexpr char kLinkGbps[] = "link_gbps";

// Google Benchmark's members of a row.
inline constexpr char kName[] = "name";
inline constexpr char kRunName[] = "run_name";
inline constexpr char kRunType[] = "run_type";
inline constexpr char kRepetitionIndex[] = "repetition_index";
inline constexpr char kIterations[] = "iterations";
inline constexpr char kErrorOccurred[] = "error_occurred";
inline constexpr char kErrorMessage[] = "error_message";

// Members of context.xferbench: the run's plan (its "visits", "jobs", "seed" and the digest of
// its rows' times), the paths skipped, the visits so far, the summary (its wall time), and why a
// document is incomplete ("reason").
inline constexpr char kPlan[] = "plan";
inline constexpr char kSeed[] = "seed";
inline constexpr char kTimesDigest[] = "times_digest";
inline constexpr char kSkipped[] = "skipped";
inline constexpr char kSummary[] = "summary";
inline constexpr char kWallTimeS[] = "wall_time_s";
inline constexpr char kIncomplete[] = "incomplete";
inline constexpr char kReason[] = "reason";
inline constexpr char kNotMeasured[] = "not_measured";

}  // namespace xfer::fields
