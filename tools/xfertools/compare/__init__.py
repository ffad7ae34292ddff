"""tools/compare.py: two sets of runs (or a tools/ab document's sides) judged, and said.

report      the report of two sets of runs: the sides, their machines, the summary
judging     the judgement of one row: by jobs, stated ci95 or repetitions
replicates  the jobs of xferbench results, and two sets of jobs judged family first, then rows
families    per-family ratios of two runs (geomean over shared sizes) with their uncertainty
notes       the notes under the report: how its rows were read and judged
render      the report as text, markdown or JSON
ab_sides    a tools/ab document read back as the two sides, A as base and B as new
cli         the command line
"""


def command():
    """tools/compare.py, or `compare` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("compare.py")
    from .cli import main

    return main()
