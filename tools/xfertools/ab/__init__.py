"""tools/ab: two builds or settings of xferbench in alternating jobs (ABBA) in one sitting.

plan        the sitting's plan: jobs a side, their ABBA order, the jobs a --time-budget fits
jobs        the sitting: its jobs run one at a time, merged per side and judged (tools/fleet
            runs its launches with the same Sitting)
document    the document: B's result with A's and the report beside it
cli         the command line
"""


def command():
    """tools/ab, or `ab` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("tools/ab", needs=("numpy", "scipy"))
    from .cli import main

    return main()
