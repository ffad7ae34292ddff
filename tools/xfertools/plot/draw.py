"""plot.py's matplotlib figures: the curves (bandwidth over latency, one column or one per
path), the pair-matrix heatmap and a fleet's host-by-host heatmaps. matplotlib (and numpy, for
the fleet) is imported only here, and only when drawing."""

import contextlib
import math
import os
import sys
import textwrap
import warnings
from dataclasses import replace

from ..core import interpreter
from ..core.files import InputError
from ..core.names import is_throughput_only
from ..core.sizes import format_size
from ..core.text import LABEL_WIDTH, clip, one_line
from ..result.machines import software_line
from . import curves, styles

IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
CI95_GID = "ci95"  # the id of the interval bars' group in an SVG
BANDWIDTH_AXES = ("log", "linear")


def import_pyplot():
    """pyplot on the headless Agg backend, under a Python that has matplotlib
    (interpreter.require: this one, else the tool runs again under the system Python)."""
    interpreter.require(("matplotlib",))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def check_image_name(out):
    if out is None:
        raise InputError("give the image to write with -o OUT.png|OUT.svg")
    if not out.lower().endswith(IMAGE_SUFFIXES):
        raise InputError(f"{out}: the image name must end in " + ", ".join(IMAGE_SUFFIXES))


def format_size_axis(ax, sizes, most_labels=10):
    """log2 axis; labelled ticks (8 B, 64 B, ... 1 GiB), about most_labels."""
    from matplotlib.ticker import NullFormatter

    low = math.floor(math.log2(min(sizes)))
    high = math.ceil(math.log2(max(sizes)))
    exponents = range(low, high + 1)
    stride = max(1, math.ceil(len(exponents) / most_labels))
    major = [2**e for e in exponents if e % stride == 0] or [2**low]
    ax.set_xscale("log", base=2)
    ax.set_xlim(2 ** (low - 0.4), 2 ** (high + 0.4))
    ax.set_xticks(major)
    ax.set_xticklabels([format_size(s) for s in major])
    ax.set_xticks([2**e for e in exponents], minor=True)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size (KiB = 1024 B)")


def plain_number(value):
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def log_axis(ax):
    """A log y axis labelled 0.01, 1, 1,000 (not 10^-2, 10^0, 10^3, which need the mathtext
    that text_as_written turns off); an axis spanning less than a decade labels its minor ticks
    too (200, 300, ...), as it would have no label otherwise."""
    from matplotlib.ticker import FuncFormatter

    def minor(value, _):
        low, high = ax.get_ylim()
        return plain_number(value) if 0 < low and high / low < 10 else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: plain_number(value)))
    ax.yaxis.set_minor_formatter(FuncFormatter(minor))


def format_bandwidth_axis(ax, scale):
    """Log by default: the paths of one run span 5 to 1,600 GB/s, and on a linear axis the
    fastest flattens the others onto zero."""
    if scale == "log" and ax.get_lines():
        log_axis(ax)
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel("bandwidth (GB/s, 1 GB = 1e9 B)")
    ax.set_title("Bandwidth (higher is better)")


def format_latency_axis(ax, has_lines=True):
    if has_lines:  # a log axis with nothing on it warns and means nothing
        log_axis(ax)
    else:
        ax.set_yticks([])
    ax.set_ylabel("one-way latency (us)")
    ax.set_title("One-way latency (lower is better)")


def interval_ends(value, ci95_pct, rate):
    """(low, high) of the 95% interval of a time (rate=False) or of the rate over it (GB/s,
    rate=True) from the time's relative half-width; a side the interval leaves unbounded or
    beyond ten times (a tenth of) the value is cut there."""
    c = ci95_pct / 100
    if rate:
        return value / (1 + c), value / (1 - c) if c < 0.9 else 10 * value
    return (value * (1 - c) if c < 0.9 else value / 10), value * (1 + c)


def draw_intervals(ax, points, intervals, color, rate):
    """A vertical bar per point whose row states its 95% interval (ci95_pct > 0), in the
    series' colour; True if any was drawn."""
    bars = [(s, *interval_ends(v, intervals[s], rate)) for s, v in points if intervals.get(s)]
    if bars:
        sizes, lows, highs = zip(*bars)
        ax.vlines(sizes, lows, highs, colors=color, linewidth=1.0, alpha=0.75, gid=CI95_GID)
    return bool(bars)


def draw_panel(ax_bw, ax_lat, runs, panel, looks):
    """Every run's series of the panel, each point with its 95% interval where its row gives
    one; stream and bidir series only on the bandwidth axes. (The number of series left off
    latency, True if any interval was drawn.)"""
    left_off, drew_intervals = set(), False
    for index, run in enumerate(runs):
        for key in [k for k in panel.keys if k in run.series]:
            points = sorted(run.series[key].items())
            intervals = run.intervals.get(key, {})
            kwargs = styles.line_kwargs(looks[key], index, f"{key}  [{run.label}]")
            bw = [(s, g) for s, (g, _) in points if g is not None]
            lat = [(s, t) for s, (_, t) in points if t is not None and t > 0]
            if bw:
                ax_bw.plot(*zip(*bw), **kwargs)
                drew_intervals |= draw_intervals(ax_bw, bw, intervals, kwargs["color"], True)
            if lat and is_throughput_only(key):
                left_off.add(key)
            elif lat:
                ax_lat.plot(*zip(*lat), **kwargs)
                drew_intervals |= draw_intervals(ax_lat, lat, intervals, kwargs["color"], False)
    return len(left_off), drew_intervals


def note_left_off(ax, count, has_lines):
    """Say on the latency axes that stream/bidir series are not on it."""
    if not count:
        return
    text = (
        f"{count} stream/bidir series not shown:\ntheir time is per message of a window,\n"
        "not a latency (see bandwidth)"
    )
    # Latency rises to the right: the top left corner is free.
    where = (
        dict(x=0.02, y=0.97, ha="left", va="top")
        if has_lines
        else dict(x=0.5, y=0.5, ha="center", va="center")
    )
    ax.text(s=text, transform=ax.transAxes, fontsize=7.5, color="0.3", **where)


def panel_references(runs, panel):
    """{label: GB/s} of the reference lines for the panel's series."""
    lines = {}
    for run in runs:
        view = replace(run, series={k: v for k, v in run.series.items() if k in panel.keys})
        lines.update({label: rate for rate, label in curves.reference_lines(view)})
    return lines


def draw_references(ax, lines):
    """Horizontal lines; their handles, highest first."""
    dashes = ((0, (6, 3)), (0, (2, 2)), (0, (8, 2, 2, 2)))
    handles = []
    for i, (label, rate) in enumerate(sorted(lines.items(), key=lambda item: -item[1])):
        handles.append(
            ax.axhline(
                rate, color="0.35", linewidth=1.2, label=label, linestyle=dashes[i % len(dashes)]
            )
        )
    return handles


def failed_note(runs):
    failed = [run for run in runs if run.failed]
    if not failed:
        return None
    total = sum(len(run.failed) for run in failed)
    where = "; ".join(f"{os.path.basename(r.file)}: {len(r.failed)}" for r in failed)
    return clip(f"{total} failed row{'s' if total > 1 else ''} left out ({where})", 2 * LABEL_WIDTH)


def report_failures(runs):
    for run in runs:
        for failure_text in run.failed:
            print(
                one_line(f"plot.py: note: {run.file}: left out failed row {failure_text}"),
                file=sys.stderr,
            )


def curves_title(runs):
    if len(runs) == 1:
        return f"xferbench: {runs[0].label}"
    return f"xferbench: {len(runs)} runs compared"


def label_axes(ax_bw, ax_lat, sizes, bandwidth_axis, has_latency=True, path=""):
    for ax in (ax_bw, ax_lat):
        format_size_axis(ax, sizes, 4 if path else 10)
        ax.grid(True, which="major", alpha=0.45)
        ax.grid(True, which="minor", alpha=0.15)
    format_bandwidth_axis(ax_bw, bandwidth_axis)
    format_latency_axis(ax_lat, has_latency)
    if path:
        ax_bw.set_title(f"{clip(path)}: bandwidth (higher is better)")
        ax_lat.set_title(f"{clip(path)}: latency (lower is better)")


def add_heading(fig, runs):
    """Title, one line per run (versions), and the failed-row note."""
    lines = [
        f"{run.label}: {software_line(run.context)}" for run in runs if software_line(run.context)
    ]
    note = failed_note(runs)
    if note:
        report_failures(runs)
        lines.append(f"Note: {note}")
    # Placed above the axes; bbox_inches="tight" keeps it in the image.
    if lines:
        fig.text(0.5, 1.0, "\n".join(lines), ha="center", va="bottom", fontsize=9, color="0.3")
    fig.suptitle(
        curves_title(runs), fontsize=14, fontweight="bold", va="bottom", y=1.01 + 0.032 * len(lines)
    )


def series_handles(panel, looks):
    """Legend entries of a panel's series, drawn as in the first run."""
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], **styles.line_kwargs(looks[key], 0, styles.legend_label(key, panel)))
        for key in panel.keys
    ]


def run_handles(runs):
    """Legend entries that tell overlaid runs apart (fill and shade)."""
    from matplotlib.lines import Line2D

    if len(runs) < 2:
        return []
    grey = styles.Style("#505050", "-", "o")
    return [
        Line2D([], [], **styles.line_kwargs(grey, index, f"run: {run.label}"))
        for index, run in enumerate(runs)
    ]


def interval_handles(drew_intervals):
    """The legend entry that says what the bars are, where any were drawn."""
    from matplotlib.lines import Line2D

    if not drew_intervals:
        return []
    label = "bar: 95% interval of the point (ci95_pct); hidden by the marker where narrower"
    return [Line2D([], [], color="0.35", marker="|", markersize=10, linestyle="none", label=label)]


def add_legend(fig, handles):
    """One legend below the panels."""
    if not handles:
        return
    count = len(handles)
    columns = 1 if count <= 4 else 2 if count <= 16 else 3
    fig.legend(
        handles=handles,
        loc="upper center",
        frameon=False,
        bbox_to_anchor=(0.5, 0.0),
        ncol=columns,
        fontsize=9,
    )


def legend_columns(count):
    return 1 if count <= 8 else 2


def legend_height(count):
    """Inches a legend of count entries in legend_columns needs."""
    return 0.35 + 0.19 * math.ceil(count / legend_columns(count))


def split_axes(pyplot, layout, legend_counts):
    """A column per panel: bandwidth, latency, then a blank axes (axis off) tall enough for that
    column's legend."""
    spare = max(legend_height(n) for n in legend_counts)
    fig, axes = pyplot.subplots(
        3,
        len(layout),
        squeeze=False,
        figsize=(max(8.0, 4.8 * len(layout)), 7.6 + spare),
        gridspec_kw={"height_ratios": [3.8, 3.8, spare]},
    )
    for ax in axes[2]:
        ax.axis("off")
    return fig, [tuple(axes[row][i] for row in range(3)) for i in range(len(layout))]


def build_curves_figure(pyplot, runs, with_references, panels="auto", bandwidth_axis="log"):
    """The curves figure: per panel column a bandwidth axes above a latency axes (one column,
    or one per path with panels='path', each with its own legend below; 'auto': per path where
    the runs hold more than one), a colour per path, a
    line style per mode or variant, a marker per pair or staging, runs told apart by marker fill
    and shade; stream and bidir series on the bandwidth axes only; bandwidth_axis 'log' or
    'linear'."""
    panels = styles.resolved_panels(runs, panels)
    layout = styles.panel_layout(runs, panels)
    split = panels != "none"
    references = [panel_references(runs, panel) if with_references else {} for panel in layout]
    if split:
        fig, columns = split_axes(
            pyplot,
            layout,
            [len(panel.keys) + len(lines) for panel, lines in zip(layout, references)],
        )
    else:
        fig, (ax_bw, ax_lat) = pyplot.subplots(1, 2, figsize=(13, 5))
        columns = [(ax_bw, ax_lat, None)]
    looks = styles.series_styles({key for run in runs for key in run.series})
    sizes = [size for run in runs for points in run.series.values() for size in points]
    shared_handles, drew_intervals = [], False
    for panel, lines, (ax_bw, ax_lat, ax_key) in zip(layout, references, columns):
        left_off, drew = draw_panel(ax_bw, ax_lat, runs, panel, looks)
        drew_intervals |= drew
        has_latency = bool(ax_lat.get_lines())
        handles = series_handles(panel, looks) + draw_references(ax_bw, lines)
        label_axes(ax_bw, ax_lat, sizes, bandwidth_axis, has_latency, panel.title)
        note_left_off(ax_lat, left_off, has_latency)
        if ax_key is None:
            shared_handles += handles
            continue
        ax_key.legend(
            handles=handles,
            loc="upper center",
            fontsize=7.5,
            ncol=legend_columns(len(handles)),
            frameon=False,
            title=clip(panel.title),
            title_fontsize=8,
        )
        if ax_bw is not columns[0][0]:
            ax_bw.set_ylabel("")
            ax_lat.set_ylabel("")
    if with_references and not any(references):
        print(
            "plot.py: note: no reference line: the context names no link rate this tool knows "
            "for these series",
            file=sys.stderr,
        )
    add_heading(fig, runs)
    add_legend(fig, shared_handles + run_handles(runs) + interval_handles(drew_intervals))
    fig.tight_layout()
    return fig


def panel_axes(fig):
    """The axes that hold curves (not the blank ones under legends)."""
    return [ax for ax in fig.axes if ax.axison]


@contextlib.contextmanager
def text_as_written():
    """Labels drawn as the files write them: a '$' in a row or host name starts no formula, and
    a character the font lacks is drawn as a box without a warning for each."""
    import matplotlib

    settings = {"text.parse_math": False} if "text.parse_math" in matplotlib.rcParams else {}
    with matplotlib.rc_context(settings), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from", category=UserWarning)
        yield


def render_curves(runs, out, with_references, panels="auto", bandwidth_axis="log"):
    pyplot = import_pyplot()
    with text_as_written():
        fig = build_curves_figure(pyplot, runs, with_references, panels, bandwidth_axis)
        save_figure(pyplot, fig, out)


def render_matrices(matrices, out):
    pyplot = import_pyplot()
    with text_as_written():
        fig = build_matrix_figure(pyplot, matrices)
        save_figure(pyplot, fig, out)


def build_matrix_figure(pyplot, matrices):
    """A heatmap per run, one colour scale."""
    count = len(matrices)
    fig, axes = pyplot.subplots(1, count, figsize=(1.5 + 5 * count, 5), squeeze=False)
    values = [v for m in matrices for row in m.cells for v in row if v is not None]
    vmax = max(values)
    cmap = pyplot.get_cmap("viridis").with_extremes(bad="0.88")  # a copy; set_bad is deprecated
    for ax, matrix in zip(axes[0], matrices):
        # imshow masks NaN: absent cells take the colormap's "bad" grey.
        data = [[math.nan if v is None else v for v in row] for row in matrix.cells]
        image = ax.imshow(data, cmap=cmap, vmin=0, vmax=vmax)
        annotate_cells(ax, matrix.cells, vmax)
        ticks = range(len(matrix.cells))
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.set_xlabel("destination GPU")
        ax.set_ylabel("source GPU")
        label = "\n".join(textwrap.wrap(clip(matrix.label), 48))
        ax.set_title(f"{label}\n{clip(matrix.title())}", fontsize=10)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.85, label="bandwidth (GB/s, 1 GB = 1e9 B)")
    fig.suptitle(
        "xferbench: GPU pair bandwidth", fontsize=13, fontweight="bold", va="bottom", y=1.0
    )
    return fig


def annotate_cells(ax, cells, vmax):
    for src, row in enumerate(cells):
        for dst, value in enumerate(row):
            text = "-" if value is None else f"{value:.1f}"
            dark = value is not None and value < 0.6 * vmax
            ax.text(
                dst,
                src,
                text,
                ha="center",
                va="center",
                fontsize=9,
                color="white" if dark else "black",
            )


def save_figure(pyplot, fig, out):
    try:
        fig.savefig(out, dpi=150, bbox_inches="tight")
    except OSError as e:
        raise InputError(f"{out}: cannot write: {e.strerror}") from None
    finally:
        pyplot.close(fig)


# ---------------------------------------------------------------------- fleet heatmaps

FLEET_TICKS_PCT = (-75, -50, -25, -10, -5, 0, 5, 10, 25, 50, 100, 200, 400)
FLEET_LABELS_MAX = 64  # hosts: tick labels and per-cell marks up to this many
FLEET_TEXT_MAX = 16  # hosts: each cell's percentage written up to this many
FLEET_LIMIT = (math.log(1.1), math.log(5.0))  # the colour scale's half range (log), its bounds


def fleet_colours(pyplot, heatmaps):
    """(colormap, norm): log time against the median pair, diverging, centred at 0 (the
    median), symmetric; the half range the largest cell, from +10% up to 5x."""
    import numpy as np
    from matplotlib.colors import Normalize

    largest = max(
        (float(np.nanmax(np.abs(h.values))) for h in heatmaps if np.isfinite(h.values).any()),
        default=0.0,
    )
    limit = min(max(largest, FLEET_LIMIT[0]), FLEET_LIMIT[1])
    return pyplot.get_cmap("RdBu_r"), Normalize(-limit, limit)


def draw_fleet_panel(ax, heatmap, cmap, norm):
    """One series: hosts x hosts, each cell coloured by its log time against the median pair;
    the diagonal blank, unmeasured cells grey (hatched up to FLEET_LABELS_MAX hosts), what the
    verdict calls slow outlined solid and what it suspects dashed."""
    import numpy as np
    from matplotlib.patches import Rectangle

    values = heatmap.values
    count = len(heatmap.hosts)
    rgba = cmap(norm(np.nan_to_num(values)))
    missing = ~np.isfinite(values)
    rgba[missing] = (0.8, 0.8, 0.8, 1.0)
    diagonal = np.eye(count, dtype=bool)
    rgba[diagonal] = (1.0, 1.0, 1.0, 1.0)
    ax.imshow(rgba, interpolation="nearest")
    small = count <= FLEET_LABELS_MAX
    if small:
        for i, j in zip(*np.nonzero(missing & ~diagonal)):
            ax.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.55", lw=0)
            )
    if count <= FLEET_TEXT_MAX:
        for i in range(count):
            for j in range(count):
                if i == j or missing[i, j]:
                    continue
                text = f"{100 * math.expm1(values[i, j]):+.0f}"
                text = "0" if text in ("+0", "-0") else text
                dark = abs(norm(values[i, j]) - 0.5) > 0.3
                colour = "white" if dark else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour)
    style = {"slow": "-", "suspect": "--"}
    for i, status in heatmap.host_status.items():
        for xy, w, h in (((-0.5, i - 0.5), count, 1), ((i - 0.5, -0.5), 1, count)):
            ax.add_patch(
                Rectangle(xy, w, h, fill=False, edgecolor="black", lw=1.6, ls=style[status])
            )
    for (i, j), status in heatmap.link_status.items():
        ax.add_patch(
            Rectangle(
                (j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", lw=2.2, ls=style[status]
            )
        )
    if small:
        labels = [
            clip(h, 24)
            + {"slow": " (slow)", "suspect": " (suspect)"}.get(heatmap.host_status.get(k), "")
            for k, h in enumerate(heatmap.hosts)
        ]
        ax.set_xticks(range(count))
        ax.set_yticks(range(count))
        ax.set_xticklabels(labels, rotation=90, fontsize=7 if count > 16 else 8)
        ax.set_yticklabels(labels, fontsize=7 if count > 16 else 8)
        for k in heatmap.host_status:
            for tick in (ax.get_xticklabels()[k], ax.get_yticklabels()[k]):
                tick.set_fontweight("bold")
                tick.set_color("#b2182b")
    else:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel(f"{count} hosts (in fleet.hosts order)")
    median = f"median pair {heatmap.median_us:.3g} us" if heatmap.median_us else "none measured"
    verdict = "" if heatmap.judged else "; no verdict given (--verdict)"
    ax.set_title(f"{clip(heatmap.title, 60)}\n{heatmap.subtitle}; {median}{verdict}", fontsize=9.5)


def build_fleet_figure(pyplot, heatmaps, label):
    """A heatmap per series, two a row, one colour scale."""
    from matplotlib.cm import ScalarMappable

    count = len(heatmaps)
    columns = min(count, 2)
    rows = math.ceil(count / columns)
    hosts = max(len(h.hosts) for h in heatmaps)
    side = min(max(4.5, 2.0 + 0.32 * hosts), 11.0)
    fig, axes = pyplot.subplots(
        rows,
        columns,
        figsize=(side * columns + 1.5, side * rows + 0.6),
        squeeze=False,
        layout="constrained",
    )
    cmap, norm = fleet_colours(pyplot, heatmaps)
    for ax, heatmap in zip(axes.flat, heatmaps):
        draw_fleet_panel(ax, heatmap, cmap, norm)
    for ax in list(axes.flat)[count:]:
        ax.axis("off")
    limit = norm.vmax
    ticks = []  # those within the scale, a tenth of its range apart at least
    for p in sorted(FLEET_TICKS_PCT, key=abs):
        at = math.log1p(p / 100)
        if abs(at) <= limit + 1e-9 and all(
            abs(at - math.log1p(t / 100)) >= limit / 5 for t in ticks
        ):
            ticks.append(p)
    ticks.sort()
    bar = fig.colorbar(
        ScalarMappable(norm=norm, cmap=cmap), ax=axes.ravel().tolist(), shrink=0.8, pad=0.03
    )
    bar.set_ticks([math.log1p(p / 100) for p in ticks])
    bar.set_ticklabels([f"{p:+d}%" if p else "0" for p in ticks])
    bar.set_label("pair time against the fleet's median pair (log scale)")
    fig.suptitle(
        f"xferbench fleet: {clip(label)}", fontsize=13, fontweight="bold", va="bottom", y=1.0
    )
    fig.text(
        0.5,
        -0.01,
        "white: same host; grey, hatched: not measured; outlined: called slow (solid) or "
        "suspect, not re-tested (dashed), a host's row and column or a link's cells",
        ha="center",
        va="top",
        fontsize=8,
        color="0.3",
    )
    return fig


def render_fleet(heatmaps, out, label):
    pyplot = import_pyplot()
    with text_as_written():
        fig = build_fleet_figure(pyplot, heatmaps, label)
        save_figure(pyplot, fig, out)
