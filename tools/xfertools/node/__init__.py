"""One node's links: each row's share of its link, the run's links and routes, and
tools/check-node, which judges each path against the line rate of its links.

links       each row's share of its link, the run's links and routes, the node check
cli         tools/check-node's command line: run the selection (or read --from), judge, say
"""
