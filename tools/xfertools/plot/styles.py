"""plot.py's look: the colour, line style and marker of each series, how overlaid runs differ,
and the panel layout. Pure data, no matplotlib: a series looks the same in every chart."""

import dataclasses
import itertools
from collections import defaultdict

from ..core.names import EXCHANGE_MODES, natural_key, path_of, variant_of
from ..core.text import clip

# One colour per path, the same in every chart, for its first variant. A path's further
# variants (host:pinned vs host:pageable, staging sequential vs pipelined, p2p on or off, an
# exchange mode) and other paths take the spare colours in order, each its own: variants differ
# by colour at a glance. Grey stays for the reference lines.
PATH_COLORS = {
    "mpi_host": "#1f77b4",
    "mpi_cuda_aware": "#ff7f0e",
    "nccl_sendrecv": "#2ca02c",
    "mpi_staged": "#d62728",
    "memcpy_peer": "#9467bd",
    "host_staging": "#8c564b",
}
SPARE_COLORS = (  # far from the path colours and from each other, the clearest first
    "#17becf",  # cyan
    "#e377c2",  # pink
    "#bcbd22",  # olive
    "#393b79",  # navy
    "#000000",  # black
    "#e7ba52",  # gold
    "#7b4173",  # plum
    "#637939",  # moss
    "#9ecae1",  # light blue
    "#a1d99b",  # light green
    "#ce6dbd",  # orchid
    "#8c6d31",  # dark gold
)
# Within a path: the line style is the exchange mode's (ping-pong solid, stream dashed, bidir
# dash-dot, the first three), or for paths without exchange modes one per variant; a marker per
# GPU pair or pair count and per variant beside the mode (mpi_staged's staging).
LINESTYLES = ("-", "--", "-.", ":", (0, (8, 2, 2, 2, 2, 2)), (0, (1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
# Overlaid runs: the same colour and style, told apart by marker fill and shade (< 0 darker,
# > 0 lighter).
RUN_FILLS = ("full", "none", "left", "bottom", "right", "top")
RUN_SHADES = (0.0, -0.35, 0.3, -0.55, 0.5, 0.15)
PANEL_CHOICES = ("auto", "path", "none")  # auto: path where the runs hold more than one path
# xferbench has six paths; a file of more (renamed rows, another tool's) is drawn in one panel
# by default rather than in a column each.
MOST_AUTO_PANELS = 8


@dataclasses.dataclass(frozen=True)
class Style:
    """How one series is drawn: colour from its path, line style from its mode or variant,
    marker from the rest (GPU pair, pair count, staging)."""

    color: str
    linestyle: object
    marker: str


@dataclasses.dataclass
class Panel:
    """One column of the figure: a bandwidth axes over a latency axes."""

    title: str  # the path, or '' when all series share one column
    keys: list  # the series drawn in it, in legend order


def is_pair_part(part):
    return part.startswith(("pair:", "pairs:"))


def variant_parts(key):
    """(mode or variant, pair components) of a key, each '/'-joined."""
    parts = key.split("/")[1:]
    return (
        "/".join(p for p in parts if not is_pair_part(p)),
        "/".join(p for p in parts if is_pair_part(p)),
    )


def mode_rank(variant):
    """ping-pong, stream, bidir first, in that order; then the rest."""
    for part in variant.split("/"):
        if part in EXCHANGE_MODES:
            return EXCHANGE_MODES.index(part)
    return len(EXCHANGE_MODES)


def path_order(paths):
    """Known paths in a fixed order, then the others by name."""
    known = [p for p in PATH_COLORS if p in paths]
    return known + sorted(set(paths) - set(known))


def series_order(keys):
    """Keys by path, then mode (ping-pong, stream, bidir), then variant."""
    paths = path_order({path_of(k) for k in keys})

    def order(key):
        variant, pairs = variant_parts(key)
        return (
            paths.index(path_of(key)),
            mode_rank(variant),
            natural_key(variant),
            natural_key(pairs),
        )

    return sorted(set(keys), key=order)


def line_and_marker_parts(key):
    """(what sets the line style, what sets the marker) of a key: its exchange mode and the rest
    ('mode:stream', 'host:pinned/staging:pipelined/pairs:2'), or for a key without an exchange
    mode its variant and its pair components."""
    variant, pairs = variant_parts(key)
    parts = variant.split("/")
    modes = [p for p in parts if p in EXCHANGE_MODES]
    if not modes:
        return variant, pairs
    rest = "/".join(p for p in parts if p not in EXCHANGE_MODES)
    return modes[0], "/".join(p for p in (rest, pairs) if p)


def color_group(key):
    """What sets a series' colour: its path and variant, exchange mode included, without the
    pair components (pair:0to1 and pair:1to0, or pairs:2, of one variant share its colour)."""
    return path_of(key), variant_parts(key)[0]


def series_colors(keys):
    """{key: colour}: a known path's first variant has the path's colour; every other variant,
    and every other path, the next spare colour (they repeat only beyond len(SPARE_COLORS))."""
    spares = itertools.cycle(SPARE_COLORS)
    colors = {}
    for group in dict.fromkeys(color_group(k) for k in series_order(keys)):
        path = group[0]
        first = path in PATH_COLORS and all(g[0] != path for g in colors)
        colors[group] = PATH_COLORS[path] if first else next(spares)
    return {key: colors[color_group(key)] for key in keys}


def series_styles(keys):
    """{key: Style} for all the keys of all the runs drawn together, so a series looks the same
    in every run. The colour is the path's and variant's (series_colors). The line style is the
    exchange mode's, the same in every path (ping-pong solid, stream dashed, bidir dash-dot);
    within a path without exchange modes each variant has its own as well. Within a path each
    pair component, and each variant beside the mode (mpi_staged's staging), has its own
    marker (styles repeat only beyond 5 variants or 12 markers in one path)."""
    colors = series_colors(keys)
    by_path = defaultdict(list)
    for key in series_order(keys):
        by_path[path_of(key)].append(key)
    styles = {}
    for path_keys in by_path.values():
        parts = {key: line_and_marker_parts(key) for key in path_keys}
        variants = [
            v for v in dict.fromkeys(p[0] for p in parts.values()) if v not in EXCHANGE_MODES
        ]
        markers = sorted({p[1] for p in parts.values()}, key=natural_key)
        for key, (line, marker) in parts.items():
            index = EXCHANGE_MODES.index(line) if line in EXCHANGE_MODES else variants.index(line)
            styles[key] = Style(
                colors[key],
                LINESTYLES[index % len(LINESTYLES)],
                MARKERS[markers.index(marker) % len(MARKERS)],
            )
    return styles


def shade(color, amount):
    """'#rrggbb' mixed with white (amount > 0) or black (amount < 0)."""
    channels = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
    target = 255 if amount > 0 else 0
    mixed = [round(c + (target - c) * abs(amount)) for c in channels]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def run_look(index):
    """(marker fill style, shade) of the index-th run of an overlay."""
    return RUN_FILLS[index % len(RUN_FILLS)], RUN_SHADES[index % len(RUN_SHADES)]


def line_kwargs(style, run_index, label="_nolegend_"):
    """Keyword arguments of Axes.plot for a series of the run_index-th run."""
    fill, amount = run_look(run_index)
    return dict(
        color=shade(style.color, amount),
        linestyle=style.linestyle,
        marker=style.marker,
        fillstyle=fill,
        markerfacecoloralt="white",
        markersize=4,
        linewidth=1.5,
        label=label,
    )


def resolved_panels(runs, panels="auto"):
    """'path' or 'none': 'auto' is 'path' where the runs hold from 2 to MOST_AUTO_PANELS paths
    (one panel of every path's variants is unreadable: a default two-GPU run has 18 families),
    else 'none'."""
    if panels != "auto":
        return panels
    paths = {path_of(key) for run in runs for key in run.series}
    return "path" if 1 < len(paths) <= MOST_AUTO_PANELS else "none"


def panel_layout(runs, panels="auto"):
    """The columns of the curves figure: one for all series ('none'), or one per path ('path'),
    paths in a fixed order; 'auto' as resolved_panels says."""
    keys = series_order({key for run in runs for key in run.series})
    panels = resolved_panels(runs, panels)
    if panels == "none":
        return [Panel("", keys)]
    if panels != "path":
        raise ValueError(f"unknown panels {panels!r}")
    return [
        Panel(path, [k for k in keys if path_of(k) == path])
        for path in path_order({path_of(k) for k in keys})
    ]


def legend_label(key, panel):
    """The full key in the shared axes; in a path's panel, the variant."""
    if not panel.title:
        return clip(key)
    return clip(variant_of(key) or key)
