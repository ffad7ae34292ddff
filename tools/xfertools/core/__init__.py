"""The ground floor: what every tool needs and nothing of xferbench's judgement; imports no
other sub-package.

front       a command's front door: Ctrl-C says one line; the Python it needs, or one line
checkout    where the xferbench checkout is (the commands' build/, results/, tools/setup)
interpreter which Python a tool runs under: itself again under the system Python where the
            first python3 in PATH lacks numpy, scipy or matplotlib
interrupt   Ctrl-C or SIGTERM ends a tool with one line, `<tool>: interrupted`, and exit 130
files       reading a result file safely (regular files only, NaN-tolerant JSON, nesting bound)
fields      the result file's field names (docs/result-format.md), each written once
finite      whether a value is a finite number, and figures made fit for strict JSON
names       row names: run-control parts, legacy names, families (path and variant) and sizes
sizes       message sizes: parsing 256MiB and formatting 256 MiB
arguments   command-line values the commands share (argparse types)
text        text for people: plurals, one-line messages, clipped labels
stats       median, geometric mean, Mann-Whitney U, Student t, intervals
"""
