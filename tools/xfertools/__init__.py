"""xferbench's Python tools as a package: one job per module, each helper once.

interpreter which Python a tool runs under: itself again under the system Python where the
            first python3 in PATH lacks numpy, scipy or matplotlib
interrupt   Ctrl-C or SIGTERM ends a tool with one line, `<tool>: interrupted`, and exit 130
files       reading a result file safely (regular files only, NaN-tolerant JSON, nesting bound)
fields      the result file's field names (docs/result-format.md), each written once
finite      whether a value is a finite number, and figures made fit for strict JSON
names       row names: run-control parts, legacy names, families (path and variant) and sizes
sizes       message sizes: parsing 256MiB and formatting 256 MiB
text        text for people: plurals, one-line messages, clipped labels
rows        the figures of a result document's rows: samples, failures, repetitions
stats       median, geometric mean, Mann-Whitney U, Student t, intervals
machines    what machine and software a run ran on: identity, facts, labels, the machine
            file's match
report      compare.py's report of two sets of runs: the sides, their machines, the summary
judging     compare.py's judgement of one row: by jobs, stated ci95 or repetitions
notes       the notes under compare.py's report: how its rows were read and judged
replicates  the jobs of xferbench results, and two sets of jobs judged family first, then rows
ab          tools/ab's command line: two builds or settings in alternating jobs (ABBA)
ab_plan     tools/ab's plan: jobs a side, their ABBA order, the jobs a --time-budget fits
ab_jobs     tools/ab's sitting: its jobs run one at a time, merged per side and judged
ab_document tools/ab's document: B's result with A's and the report beside it; read back
families    per-family ratios of two runs (geomean over shared sizes) with their uncertainty
render      compare.py's report as text, markdown or JSON
curves      plot.py's runs: series of points per family, filters, reference lines
matrix      plot.py's GPU pair matrix and its text table
styles      plot.py's look: colour, line style and marker per series, panel layout
draw        plot.py's matplotlib figures
noise       what a history of runs says about noise: baselines, family shifts, row spreads
decide      a run judged against that noise: per family, then per row, false-discovery control
changepoint where a series changed level (E-divisive means), and the baseline window after it
synthetic   synthetic histories for the tests
history     tools/track's history: runs filed under their machine identity, as plain JSON
tracker     a run judged against its history, and the series the trend page draws
judgement   tools/track check's answer as text, markdown or JSON
page        the trend page: one HTML file with inline SVG charts
export      a run for Bencher (BMF) and github-action-benchmark (custom JSON)
machine_model the machine file's statistical model: a run's interval, floors, the pool window
components  where a machine's variance lives (run, job, visit), learned from its merged runs
floors      the machine's file: its floors, run floors, costs and plan, written by track floor
calibration whether the stated intervals are what reruns need: track calibration over a series
plan        the machine's plan for the default run: jobs and each row's seconds
links       each row's share of its link, the run's links and routes, tools/check-node's check
fleet       every pair of a cluster's hosts: the circle schedule, a robust host and link model,
            re-tests, the verdict naming slow hosts and links (xferbench --xfer_fleet measures
            the rounds: support/run/fleet.hpp; docs/fleet.md)
fleet_report tools/fleet's judgement: a fleet result and its re-tests read and checked, each
            series judged, the text and host-by-host matrix, the re-test rounds file, the
            verdict document, plot.py's fleet heatmaps
fleet_topology where a fat tree's leaves are: Slurm topology files and hostlists, a host model
            with leaf-uplink terms, groups slow only across a boundary

tools/compare.py, tools/plot.py, tools/track, tools/ab and tools/fleet are the command lines
over these modules.
"""
