#!/usr/bin/env python3
"""Plot xferbench results: bandwidth and latency against message size (docs/plot.md).
Its usage and exit statuses: `plot.py --help`; its code: tools/xfertools/plot/cli.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from xfertools.core import interrupt  # noqa: E402

if __name__ == "__main__":  # Ctrl-C or SIGTERM: one line, exit 130
    interrupt.install("plot.py")

from xfertools.plot.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
