"""One node's links: each row's share of its link, the run's links and routes, and
tools/check-node, which judges each path against the line rate of its links.

links       each row's share of its link, the run's links and routes, the node check
cli         tools/check-node's command line: run the selection (or read --from), judge, say
"""


def command():
    """tools/check-node, or `check-node` where `pip install ./tools` put it: the front
    door, then the command line (cli.main)."""
    from ..core.front import enter

    enter("check-node")
    from .cli import main

    return main()
