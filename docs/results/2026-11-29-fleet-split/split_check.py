"""How often fleet/topology.py's two_sides splits simulated fleets, with and without a planted
boundary between two halves (README.md beside this file).

    python3 docs/results/2026-11-29-fleet-split/split_check.py TOOLS_DIR
"""

import math
import sys
import time

import numpy as np

if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
sys.path.insert(0, sys.argv[1])
from xfertools.fleet import topology  # noqa: E402

rng = np.random.default_rng(5)


def fleet(n, sigma, boundary=0.0, passes=2):
    """Log pair times of n hosts: noise sigma a pair, boundary on pairs across the halves."""
    side = np.arange(n) < n // 2
    layers = []
    for _ in range(passes):
        y = np.triu(rng.normal(0, sigma, (n, n)), 1)
        y = y + y.T + boundary * (side[:, None] != side[None, :])
        np.fill_diagonal(y, np.nan)
        layers.append(y)
    return np.array(layers)


CASES = (
    (8, 0.30, 0.0),
    (8, 0.10, 0.0),
    (6, 0.3, 0.0),
    (16, 0.3, 0.0),
    (8, 0.05, math.log(1.3)),
    (8, 0.10, math.log(1.3)),
    (8, 0.05, math.log(2)),
    (64, 0.05, math.log(1.1)),
)
for n, sigma, b in CASES:
    start = time.time()
    calls = sum(topology.two_sides(fleet(n, sigma, b)) is not None for _ in range(200))
    print(n, sigma, round(b, 3), calls, "/ 200", round(time.time() - start, 1), "s")
