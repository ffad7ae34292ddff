#!/usr/bin/env python3
"""Plot xferbench results: bandwidth and latency against message size (docs/plot.md).
Its usage and exit statuses: `plot.py --help`; its code: tools/xfertools/plot/cli.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from xfertools.plot import command  # noqa: E402

if __name__ == "__main__":
    sys.exit(command())
