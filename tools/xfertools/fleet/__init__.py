"""tools/fleet: every pair of a cluster's hosts, the slow host and the slow link named
(xferbench --xfer_fleet measures the rounds: support/run/fleet.hpp; docs/fleet.md).

model       the circle schedule, a robust host and link model, the screen, re-tests and the
            verdict naming slow hosts, links and uplinks
robust      the robust statistics both share: the biweight's constant, the MAD, a log effect
            in percent with its interval
topology    where a fat tree's leaves are: Slurm topology files and hostlists, leaf-uplink
            terms, groups slow only across a boundary
report      a fleet result and its re-tests read and checked, each series judged, the text
            and host-by-host matrix, the re-test rounds file, the verdict document, plot.py's
            fleet heatmaps
cli         the command line: judge, run
"""


def command():
    """tools/fleet, or `fleet` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("fleet", needs=("numpy", "scipy"), missing_status=5)  # fleet's 3 is "not final"
    from .cli import main

    return main()
