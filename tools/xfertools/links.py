"""Each row's share of its link (docs/links.md): the link_gbps and pct_of_link counters, the
routes and link problems of context.xferbench.links, and the node check of tools/check-node."""

from . import machines
from .files import load_result
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


def add_link_shares(families, base_files, new_files):
    """compare.py --cross-machine: each family's share of its own link on both machines
    (base_link_share, new_link_share: at the largest size each side measured; None where the
    side's rows carry no pct_of_link), beside the raw ratio."""
    sides = {}
    for label, paths in (("base", base_files), ("new", new_files)):
        shares = {}
        for path in paths:
            shares.update(family_shares(load_result(path)))
        sides[label] = shares
    for family in families:
        for label, shares in sides.items():
            found = shares.get(family["family"])
            family[f"{label}_link_share"] = found[0] if found else None


def with_share_column(families, headers, body, align):
    """The family table with a column of share_cell, where any family's link is known."""
    cells = [share_cell(f) for f in families]
    if all(cell == "-" for cell in cells):
        return headers, body, align
    rows = [row + [cell] for row, cell in zip(body, cells)]
    return headers + ["of link base/new"], rows, align + "r"


def share_cell(family):
    """'88% / 80%' (base / new) for the family table; '-' for a side without a known link."""
    cells = [family.get(f"{side}_link_share") for side in ("base", "new")]
    if cells == [None, None]:
        return "-"
    return " / ".join("-" if c is None else f"{c:.0%}" for c in cells)


def route_lines(xferbench, families):
    """plot.py --reference: [(GB/s, label)] of the routes this run recorded for `families`
    (context.xferbench.links), one direction of one pair; [] where the run recorded none."""
    links = machines.mapping(xferbench.get("links"))
    kinds = {
        link.get("id"): link.get("kind")
        for link in links.get("links", [])
        if isinstance(link, dict)
    }
    lines = {}
    for family in families:
        route = machines.mapping(machines.mapping(links.get("routes")).get(family))
        gbps = positive(route.get("gbps"))
        ids = [i for i in route.get("links") or [] if isinstance(i, str)]
        if gbps is None or not ids:
            continue
        crossed = " + ".join(sorted({str(kinds.get(i, i)) for i in ids}))
        how = {"serial": ", in turn", "overlapped": ", at once"}.get(route.get("join"), "")
        label = f"link ({crossed}{how if len(ids) > 1 else ''}): {gbps:.1f} GB/s per direction"
        lines[label] = gbps
    return [(gbps, label) for label, gbps in lines.items()]
