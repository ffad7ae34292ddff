"""What one machine has shown: its history of runs, where its variance lives, its machine
file (floors, run floors, costs, plan), and whether its stated intervals hold on reruns.

history     tools/track's history: runs filed under their machine identity, as plain JSON
model       the machine file's statistical model: a run's interval, floors, the pool window
components  where a machine's variance lives (run, job, visit), learned from its merged runs
plan        the machine's plan for the default run: jobs and each row's seconds
floors      the machine's file: its floors, run floors, costs and plan, written by track floor
calibration whether the stated intervals are what reruns need: track calibration over a series
cli         tools/calibrate.py: mpi_host against the plainest MPI ping-pong, alternately
"""


def command():
    """tools/calibrate.py, or `calibrate` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("calibrate")
    from .cli import main

    return main()
