"""tools/plot.py: bandwidth and latency against message size, GPU pair matrices, fleet
heatmaps.

curves      the runs: series of points per family, filters, reference lines
matrix      the GPU pair matrix and its text table
styles      the look: colour, line style and marker per series, panel layout
draw        the matplotlib figures
cli         the command line
"""
