"""What the tool tests share: importing the tools' package (tools/xfertools) without leaving a
__pycache__ in tools/, and Google Benchmark rows."""

import os
import sys

TOOLS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools"
)
sys.path.insert(0, TOOLS)
sys.dont_write_bytecode = True  # the tests import tools/xfertools; no bytecode beside it


def iteration_row(name, time_us, **fields):
    """A Google Benchmark iteration row of one repetition, time in us; fields override."""
    row = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
        "iterations": 1000,
        "real_time": time_us,
        "cpu_time": time_us,
        "time_unit": "us",
    }
    row.update(fields)
    return row
