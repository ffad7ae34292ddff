#!/usr/bin/env python3
"""Calibrate mpi_host against the plainest MPI ping-pong, run alternately in one job.
Its usage and exit statuses: `calibrate.py --help`; its code: tools/xfertools/machine/cli.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from xfertools.machine import command  # noqa: E402

if __name__ == "__main__":
    sys.exit(command())
