"""xferbench's Python tools as a package: one job per module, each helper once.

interpreter which Python a tool runs under: itself again under the system Python where the
            first python3 in PATH lacks numpy, scipy or matplotlib
interrupt   Ctrl-C or SIGTERM ends a tool with one line, `<tool>: interrupted`, and exit 130
files       reading a result file safely (regular files only, NaN-tolerant JSON, nesting bound)
names       row names: run-control parts, legacy names, families (path and variant) and sizes
sizes       message sizes: parsing 256MiB and formatting 256 MiB
text        text for people: plurals, one-line messages, clipped labels
rows        the figures of a result document's rows: samples, failures, repetitions
stats       median, geometric mean, Mann-Whitney U, Student t, intervals
machines    what machine and software a run ran on: identity, facts, labels
report      compare.py's judgement of two sets of runs: by jobs, stated ci95 or repetitions
replicates  the jobs of xferbench results, and two sets of jobs judged family first, then rows
ab          tools/ab: two builds or settings in alternating jobs (ABBA), judged as compare.py
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

tools/compare.py, tools/plot.py, tools/track and tools/ab are the command lines over these
modules.
"""
