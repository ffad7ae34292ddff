#!/usr/bin/env python3
"""Compare two sets of xferbench results (docs/compare.md).
Its usage and exit statuses: `compare.py --help`; its code: tools/xfertools/compare/cli.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from xfertools.compare import command  # noqa: E402

if __name__ == "__main__":
    sys.exit(command())
