"""The field names of xferbench's result file (docs/result-format.md), each written once.

Rows (`benchmarks`) are Google Benchmark's, with xferbench's counters; `context.xferbench`
holds what machine and software ran, and every visit of every row."""

# The document
BENCHMARKS = "benchmarks"
CONTEXT = "context"
XFERBENCH = "xferbench"  # context.xferbench
VISITS = "visits"  # context.xferbench.visits: {row: [visit, ...]}; also a row's counter
SKIPPED = "skipped"  # context.xferbench.skipped; also a skipped row's flag (Google Benchmark 1.8)

# A row: Google Benchmark's fields
NAME = "name"
RUN_TYPE = "run_type"
AGGREGATE_NAME = "aggregate_name"
REAL_TIME = "real_time"
TIME_UNIT = "time_unit"
BYTES_PER_SECOND = "bytes_per_second"
ERROR_OCCURRED = "error_occurred"
ERROR_MESSAGE = "error_message"
SKIP_MESSAGE = "skip_message"

# A row: xferbench's counters
GBPS = "GB/s"
LATENCY_US = "latency_us"
CI95_PCT = "ci95_pct"
CI95_DF = "ci95_df"
CI95_ROWS = "ci95_rows"
TIME_LIMITED = "time_limited"
SAMPLES = "samples"
JOBS = "jobs"
LINK_GBPS = "link_gbps"
PCT_OF_LINK = "pct_of_link"

# A visit (context.xferbench.visits): its times, in seconds; set-up holds its warm-up
WALL_S = "wall_s"
SETUP_S = "setup_s"
CHECK_S = "check_s"
REPETITION = "repetition"
JOB = "job"
