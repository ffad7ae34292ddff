"""Each row's share of its link (docs/links.md): the link_gbps and pct_of_link counters, the
routes and link problems of context.xferbench.links, and the node check of tools/check-node."""

from . import machines
from .names import family_of, message_bytes
from .rows import failure_message, is_aggregate, is_failed, positive, row_gbps, written_name

KINDS = ("PCIe", "NVLink", "memory", "network")
# The share of its link each kind must reach in tools/check-node. Provisional and deliberately
# low: the lowest share measured so far on a healthy machine is 78% (host_staging pinned
# pipelined on 2x H200) for PCIe, 80% for NVLink, 84% for GPU memory, none for a network; the
# lead replaces them with shares measured on the GPU machines.
DEFAULT_SHARES = {"PCIe": 0.70, "NVLink": 0.70, "memory": 0.60, "network": 0.50}


def links_context(document):
    """context.xferbench.links of a result document ({} where absent)."""
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    links = xferbench.get("links")
    return links if isinstance(links, dict) else {}


def link_kinds(links, family):
    """The kinds of the links `family` crosses (its route), as a sorted tuple; () if unknown."""
    route = machines.mapping(machines.mapping(links.get("routes")).get(family))
    ids = route.get("links") if isinstance(route.get("links"), list) else []
    known = {
        link.get("id"): link.get("kind")
        for link in links.get("links", [])
        if isinstance(link, dict)
    }
    return tuple(sorted({known[i] for i in ids if isinstance(i, str) and known.get(i) in KINDS}))


def row_share(row):
    """pct_of_link / 100 of a successful row, else None."""
    pct = positive(row.get("pct_of_link"))
    return None if pct is None or is_failed(row) else pct / 100


def family_shares(document):
    """{family: (share, bytes)}: each family's share of its link at its largest size measured."""
    best = {}
    for row in document.get("benchmarks", []):
        if is_aggregate(row) or row_share(row) is None:
            continue
        name = written_name(row)
        size = message_bytes(name) or 0
        family = family_of(name)
        if family not in best or size > best[family][1]:
            best[family] = (row_share(row), size)
    return best


def problems(document):
    """Lines naming each downtrained link and each GPU pair with peer access off despite a link."""
    links = links_context(document)
    lines = [f"downtrained link: {link}" for link in links.get("downtrained") or []]
    for pair in links.get("p2p_off_despite_link") or []:
        if isinstance(pair, dict):
            lines.append(
                f"peer access off despite {pair.get('nvlink_count')} NVLink link(s): "
                f"GPU {pair.get('src')} -> GPU {pair.get('dst')}"
            )
    return lines


def check_node(document, shares):
    """(failures, checked): a line for each row short of its kind's share (or failed), each link
    problem, and the number of rows judged against a known link."""
    links = links_context(document)
    failures = []
    checked = 0
    for row in document.get("benchmarks", []):
        if is_aggregate(row):
            continue
        name = written_name(row)
        if is_failed(row):
            failures.append(f"{name}: failed: {failure_message(row)}")
            continue
        share = row_share(row)
        kinds = link_kinds(links, family_of(name))
        if share is None or not kinds:
            continue
        checked += 1
        wanted = max(shares[kind] for kind in kinds)
        if share < wanted:
            failures.append(
                f"{name}: {row_gbps(row):.1f} GB/s is {share:.0%} of its link "
                f"({'+'.join(kinds)}, {row.get('link_gbps'):.1f} GB/s); wanted {wanted:.0%}"
            )
    return failures + problems(document), checked
