"""xferbench's Python tools as a package, in sub-packages by what they serve. A sub-package
imports only itself and the sub-packages below it in this order (core imports none);
tests/tools/test_python_house.py reads every import:

layers: core -> result -> node -> verdict -> machine -> compare -> track -> ab -> fleet -> plot

core        what every tool needs: files, fields, names, sizes, text, stats, the checkout, the
            Python a tool runs under, Ctrl-C
result      one result document read: its rows, its machine and software
node        a node's links and shares; tools/check-node
verdict     runs judged against a history's noise: noise, change points, the decision
machine     one machine's history, variance components, machine file and plan; calibration
            of its intervals; tools/calibrate.py
compare     tools/compare.py: two sets of runs judged and reported
track       tools/track: the history's gate, trend page and exports
ab          tools/ab: A against B in one sitting of alternating jobs
fleet       tools/fleet: every pair of a cluster's hosts, slow hosts, links and uplinks named
plot        tools/plot.py: curves, pair matrices, fleet heatmaps

Each sub-package's docstring maps its modules. The commands in tools/ are thin files over a
sub-package's command() (its __init__.py: core/front.py's front door, then its cli.main);
`pip install ./tools` installs the same command() under the same names. The version is
xferbench's: the file VERSION beside this one, which CMakeLists.txt reads too.
"""

import os

with open(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "VERSION"), encoding="utf-8"
) as _f:
    __version__ = _f.read().strip()
