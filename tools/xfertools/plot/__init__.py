"""tools/plot.py: bandwidth and latency against message size, GPU pair matrices, fleet
heatmaps.

curves      the runs: series of points per family, filters, reference lines
matrix      the GPU pair matrix and its text table
styles      the look: colour, line style and marker per series, panel layout
draw        the matplotlib figures
cli         the command line
"""


def command():
    """tools/plot.py, or `plot` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("plot.py")
    from .cli import main

    return main()
