"""The repository's own tools/, seen from these scripts (docs/results/tools/, three folders
below the root). Importing this puts tools/ first on sys.path, so that xfertools imports."""

import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", ".."))
TOOLS = os.path.join(ROOT, "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)
