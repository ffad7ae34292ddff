"""Each row's share of its link (docs/links.md): the link_gbps and pct_of_link counters, the
routes and link problems of context.xferbench.links, and the node check of tools/check-node."""

import math
import re
from collections import namedtuple

from ..core import fields
from ..core.files import load_result
from ..core.names import family_of, message_bytes
from ..core.sizes import format_size
from ..result import machines
from ..result.rows import failure_message, is_aggregate, is_failed, positive, row_gbps, written_name

KINDS = ("PCIe", "NVLink", "memory", "network")

# What tools/check-node judges (docs/links.md, "Checking a node"): only the rows meant to fill
# their link. Those are the bandwidth-timed variants whose bytes cross nothing but the links of
# their route (FILLING; not timing:latency, pageable or MPI-staged rows, which a host copy bounds,
# nor ping-pong between ranks, still rising at 1 GiB), at the sizes where their bandwidth has
# saturated: from 256 MiB, where each measured family's median share over the recorded runs is
# within 2% of its share at 1 GiB. Each family (pair included) is judged by its best such row.
# ce_copy and sm_copy name their direction (dir:h2d, dir:d2h, dir:bi), each its own family, so
# a link slow one way is judged, and named, by that way alone.
FILLING = re.compile(
    r"^(host_staging/host:pinned/mode:(sequential|pipelined)/pair:[0-9]+to[0-9]+"
    r"|memcpy_peer/p2p:on/dir:(uni|bi)/pair:[0-9]+to[0-9]+"
    r"|ce_copy/(host:pinned/dir:(h2d|d2h|bi)|dir:local)/gpu:[0-9]+"
    r"|sm_copy/(host:mapped/dir:(h2d|d2h|bi)|dir:local)/gpu:[0-9]+"
    r"|sm_copy/peer:(read|write|bi)/pair:[0-9]+to[0-9]+"
    r"|(mpi_cuda_aware|nccl_sendrecv|mpi_host)/mode:(stream|bidir))$"
)
JUDGED_FROM_BYTES = 256 << 20

# The default shares, by one rule: a family's lowest healthy share (its best judged row, lowest
# over at least three recorded runs of healthy H200s), less MARGIN_POINTS, rounded down to a
# whole percent. The margin is the widest spread of a family's best share seen between healthy
# runs (4.7 points, pinned pipelined over 28 one-GPU runs); a family 20% slower (times x 1.2)
# reads 13-15 points lower, so it lands below its share. A family with no entry for its link is
# not judged by default (a --KIND-share flag judges it). docs/links.md holds the figures.
MARGIN_POINTS = 5
Healthy = namedtuple("Healthy", "rows pattern kind gpus lowest runs")
HEALTHY = (
    Healthy(
        "host_staging pinned sequential",
        r"^host_staging/host:pinned/mode:sequential/",
        "PCIe",
        1,
        85.2,
        "28 default runs, 1x H200, 2026-11-26 and 2026-11-28",
    ),
    Healthy(
        "host_staging pinned pipelined",
        r"^host_staging/host:pinned/mode:pipelined/",
        "PCIe",
        1,
        72.8,
        "28 default runs, 1x H200, 2026-11-26 and 2026-11-28",
    ),
    Healthy(
        "host_staging pinned sequential",
        r"^host_staging/host:pinned/mode:sequential/",
        "PCIe",
        2,
        87.7,
        "5 default runs, 2x H200 NV18, 2026-11-28",
    ),
    Healthy(
        "host_staging pinned pipelined",
        r"^host_staging/host:pinned/mode:pipelined/",
        "PCIe",
        2,
        81.8,
        "5 default runs, 2x H200 NV18, 2026-11-28",
    ),
    Healthy(
        "memcpy_peer p2p:on uni",
        r"^memcpy_peer/p2p:on/dir:uni/",
        "NVLink",
        2,
        82.8,
        "5 default runs, 2x H200 NV18, 2026-11-28",
    ),
    Healthy(
        "memcpy_peer p2p:on bi",
        r"^memcpy_peer/p2p:on/dir:bi/",
        "NVLink",
        2,
        81.4,
        "5 default runs, 2x H200 NV18, 2026-11-28",
    ),
    Healthy(
        "ce_copy pinned h2d",
        r"^ce_copy/host:pinned/dir:h2d/",
        "PCIe",
        1,
        87.8,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "ce_copy pinned d2h",
        r"^ce_copy/host:pinned/dir:d2h/",
        "PCIe",
        1,
        87.6,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "ce_copy pinned bi",
        r"^ce_copy/host:pinned/dir:bi/",
        "PCIe",
        1,
        77.7,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "ce_copy local",
        r"^ce_copy/dir:local/",
        "memory",
        1,
        86.4,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "sm_copy mapped h2d",
        r"^sm_copy/host:mapped/dir:h2d/",
        "PCIe",
        1,
        80.9,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "sm_copy mapped d2h",
        r"^sm_copy/host:mapped/dir:d2h/",
        "PCIe",
        1,
        83.0,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "sm_copy mapped bi",
        r"^sm_copy/host:mapped/dir:bi/",
        "PCIe",
        1,
        64.9,
        "3 single-process runs at 512 MiB, 1x H200, 2026-11-29 (copies session)",
    ),
    Healthy(
        "sm_copy local",
        r"^sm_copy/dir:local/",
        "memory",
        1,
        76.6,
        "8 default runs at 256 MiB and 3 runs at 512 MiB, 1x H200, 2026-11-29",
    ),
    Healthy(
        "mpi_cuda_aware stream",
        r"^mpi_cuda_aware/mode:stream$",
        "memory",
        1,
        85.7,
        "4 runs, 1x H200, 2026-11-23, 256 MiB (GB/s over 2407)",
    ),
    Healthy(
        "mpi_cuda_aware bidir",
        r"^mpi_cuda_aware/mode:bidir$",
        "memory",
        1,
        80.9,
        "4 runs, 1x H200, 2026-11-23, 256 MiB (GB/s over 2407)",
    ),
)


def default_share(healthy):
    """The share a family must reach by default: its lowest healthy share less the margin."""
    return math.floor(healthy.lowest - MARGIN_POINTS) / 100


def healthy_entry(family, kinds, gpus):
    """The HEALTHY entry of a family over links of `kinds` between `gpus` GPUs, or None."""
    for entry in HEALTHY:
        if re.search(entry.pattern, family) and kinds == (entry.kind,) and gpus == entry.gpus:
            return entry
    return None


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
    pct = positive(row.get(fields.PCT_OF_LINK))
    return None if pct is None or is_failed(row) else pct / 100


def family_shares(document):
    """{family: (share, bytes)}: each family's share of its link at its largest size measured."""
    best = {}
    for row in document.get(fields.BENCHMARKS, []):
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


def pair_gpus(document, family):
    """How many GPUs a family's bytes move between: 1 (both ends on one GPU, or one GPU and the
    host: gpu:N), 2, or None (between nodes, or not recorded). From its pair:AtoB or gpu:N, else
    from the run's one rank pair."""
    match = re.search(r"/pair:([0-9]+)to([0-9]+)(/|$)", family)
    if match:
        return 1 if match.group(1) == match.group(2) else 2
    if re.search(r"/gpu:[0-9]+(/|$)", family):  # one GPU and the host, or its own memory
        return 1
    xferbench = machines.xferbench_context(machines.context_of(document)) or {}
    pairs = xferbench.get("pairs")
    if not isinstance(pairs, list) or len(pairs) != 1 or not isinstance(pairs[0], dict):
        return None
    hosts, gpus = pairs[0].get("hosts"), pairs[0].get("gpus")
    if not isinstance(hosts, list) or not isinstance(gpus, list) or len(gpus) != 2:
        return None
    if len(set(map(str, hosts))) != 1:
        return None
    return 1 if gpus[0] == gpus[1] else 2


def route_text(links, family):
    """'pcie:A + pcie:B in turn': the links a family's route crosses, by id."""
    route = machines.mapping(machines.mapping(links.get("routes")).get(family))
    ids = [i for i in route.get("links") or [] if isinstance(i, str)]
    how = {"serial": " in turn", "overlapped": " at once"}.get(route.get("join"), "")
    return " + ".join(ids) + (how if len(ids) > 1 else "")


def wanted_share(family, kinds, gpus, overrides):
    """The share a judged family must reach: the largest --KIND-share given for its links' kinds,
    else its HEALTHY default; None when neither (not judged)."""
    given = [overrides[kind] for kind in kinds if overrides.get(kind) is not None]
    if given:
        return max(given)
    entry = healthy_entry(family, kinds, gpus)
    return None if entry is None else default_share(entry)


NodeCheck = namedtuple("NodeCheck", "verdicts failures linked_rows unjudged")


def check_node(document, overrides=None):
    """The node check of tools/check-node on a result document. verdicts: (reached, line) for
    each judged family (FILLING, a known link, a share to reach), judged by its best row from
    JUDGED_FROM_BYTES up; failures: a line for each failed row and each link problem;
    linked_rows: rows with a share of a link whose kind is known; unjudged: families meant to
    fill a known link that have no share to reach (none measured, no flag). overrides:
    {kind: share} of the --KIND-share flags given."""
    links = links_context(document)
    failures = []
    linked_rows = 0
    best = {}  # family -> (share, row) of its best judged row
    for row in document.get(fields.BENCHMARKS, []):
        if is_aggregate(row):
            continue
        name = written_name(row)
        if is_failed(row):
            failures.append(f"{name}: failed: {failure_message(row)}")
            continue
        share = row_share(row)
        family = family_of(name)
        if share is None or not link_kinds(links, family):
            continue
        linked_rows += 1
        if not FILLING.match(family) or (message_bytes(name) or 0) < JUDGED_FROM_BYTES:
            continue
        if family not in best or share > best[family][0]:
            best[family] = (share, row)
    verdicts, unjudged = [], []
    for family, (share, row) in best.items():
        kinds = link_kinds(links, family)
        wanted = wanted_share(family, kinds, pair_gpus(document, family), overrides or {})
        if wanted is None:
            unjudged.append(family)
            continue
        rate = positive(row.get(fields.LINK_GBPS))
        link = f"{'+'.join(kinds)}: {route_text(links, family)}" + (
            f", {rate:.1f} GB/s" if rate else ""
        )
        size = format_size(message_bytes(written_name(row)))
        verdicts.append(
            (
                share >= wanted,
                f"{family}: {row_gbps(row):.1f} GB/s is {share:.1%} of its link ({link}) "
                f"at {size}; wanted {wanted:.0%}",
            )
        )
    return NodeCheck(verdicts, failures + problems(document), linked_rows, unjudged)


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
