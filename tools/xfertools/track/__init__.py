"""tools/track: a history of runs per machine, the gate that learns the noise from it, the
trend page, exports for the trackers users already run, and the machine file's commands.

tracker     a run judged against its history, and the series the trend page draws
judgement   track check's answer as text, markdown or JSON
page        the trend page: one HTML file with inline SVG charts
export      a run for Bencher (BMF) and github-action-benchmark (custom JSON)
cli         the command line: record, check, report, floor, export, calibration
"""


def command():
    """tools/track, or `track` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("track")
    from .cli import main

    return main()
