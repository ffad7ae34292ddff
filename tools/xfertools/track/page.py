"""The trend page (tools/track report): one self-contained HTML file, its charts inline SVG
drawn here, no script, no network. Per identity: the latest verdict first, then per path and
variant its shift over the runs with the learned noise band, the threshold that flagged or
would have flagged the latest run, and the change points (run and commit where each began);
under each family, a table of its sizes with their own series."""

import html
import math

from ..core import names
from ..core.sizes import format_size
from ..core.text import plural
from ..verdict.decide import BROKEN, IMPROVEMENT, JUDGED, REGRESSION
from .judgement import noise_note, percent, verdict_head, verdict_line

Z95 = 1.959963984540054
COLOURS = {REGRESSION: "#c62828", IMPROVEMENT: "#2e7d32", "": "#37474f"}
BAND, THRESHOLD, CHANGE, LINE = "#bbdefb", "#e57373", "#ef6c00", "#546e7a"
CHART = {"width": 760, "height": 220, "left": 62, "right": 18, "top": 30, "bottom": 40}
SPARK = {"width": 200, "height": 40, "left": 2, "right": 6, "top": 4, "bottom": 4}

STYLE = """
body { font-family: sans-serif; margin: 24px auto; max-width: 980px; color: #263238; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 6px; border-bottom: 1px solid #cfd8dc; }
h3 { font-size: 15px; margin: 18px 0 2px; font-family: monospace; }
.meta, .caption { font-size: 13px; color: #546e7a; margin: 2px 0 6px; }
.verdict { border: 2px solid; border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
.verdict .headline { font-size: 17px; font-weight: bold; }
.verdict ul { margin: 6px 0 0; padding-left: 20px; font-size: 13px; font-family: monospace; }
.regression { border-color: #c62828; background: #fdecea; }
.improvement { border-color: #2e7d32; background: #e8f5e9; }
.nochange { border-color: #2e7d32; background: #f1f8e9; }
.unjudged { border-color: #90a4ae; background: #eceff1; }
.badge { font-family: sans-serif; font-size: 12px; padding: 1px 6px; border-radius: 8px;
         color: white; margin-left: 6px; }
table { border-collapse: collapse; font-size: 12px; }
td, th { padding: 2px 8px; text-align: right; border-bottom: 1px solid #eceff1; }
td.l, th.l { text-align: left; }
details { margin: 4px 0 10px; }
summary { cursor: pointer; font-size: 13px; color: #37474f; }
.summary li { margin: 3px 0; }
"""


def esc(value):
    return html.escape(str(value), quote=True)


def pct(log_value, sign=True):
    value = math.expm1(log_value) * 100
    text = f"{value:+,.1f}%" if abs(value) < 10 else f"{value:+,.0f}%"
    return text if sign else text.lstrip("+")


def verdict_class(judgement):
    if judgement is None:
        return "unjudged"
    if judgement.regression:
        return "regression"
    return "improvement" if judgement.verdict == IMPROVEMENT else "nochange"


# ------------------------------------------------------------------ SVG


def tick_label(log_value):
    value = math.expm1(log_value) * 100
    return "0" if abs(value) < 1e-9 else f"{value:+,.{0 if abs(value) >= 1 else 1}f}%"


def nice_step(span, most):
    """A round step (1, 2 or 5 times a power of ten) giving at most `most` ticks over span."""
    step = 10 ** math.floor(math.log10(span / most)) if span > 0 else 1
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= most:
            return step * factor
    return step * 10


def y_ticks(low, high, most=5):
    """Log ratios at round percentages between low and high (log ratios)."""
    low_pct, high_pct = math.expm1(low) * 100, math.expm1(high) * 100
    step = nice_step(high_pct - low_pct, most)
    first = math.ceil(low_pct / step) * step
    ticks, value = [], first
    while value <= high_pct + 1e-9:
        if value > -100:
            ticks.append(math.log1p(value / 100))
        value += step
    return ticks


class Frame:
    """Maps run index and log ratio to SVG coordinates."""

    def __init__(self, box, runs, values):
        self.box, self.runs = box, runs
        values = [v for v in values if v is not None] + [0.0]
        low, high = min(values), max(values)
        pad = max((high - low) * 0.08, 0.01)
        self.low, self.high = low - pad, high + pad
        self.plot_width = box["width"] - box["left"] - box["right"]
        self.plot_height = box["height"] - box["top"] - box["bottom"]

    def x(self, k):
        return self.box["left"] + (k + 0.5) * self.plot_width / max(self.runs, 1)

    def y(self, value):
        value = min(max(value, self.low), self.high)
        share = (value - self.low) / (self.high - self.low)
        return self.box["top"] + (1 - share) * self.plot_height

    def edge(self, k):
        """x of the boundary before run k."""
        return self.box["left"] + k * self.plot_width / max(self.runs, 1)


def polyline(frame, values, colour, width):
    """The series as line segments, broken where a run has no value."""
    parts, current = [], []
    for k, value in enumerate(values):
        if value is None:
            if len(current) > 1:
                parts.append(current)
            current = []
        else:
            current.append(f"{frame.x(k):.1f},{frame.y(value):.1f}")
    if len(current) > 1:
        parts.append(current)
    return "".join(
        f'<polyline points="{" ".join(p)}" fill="none" stroke="{colour}" stroke-width="{width}"/>'
        for p in parts
    )


def band(frame, start, half_width, centre=0.0):
    if start is None or half_width is None:
        return ""
    top, bottom = frame.y(centre + half_width), frame.y(centre - half_width)
    x0, x1 = frame.edge(start), frame.edge(frame.runs)
    return (
        f'<rect x="{x0:.1f}" y="{top:.1f}" width="{x1 - x0:.1f}" height="{bottom - top:.1f}" '
        f'fill="{BAND}" opacity="0.8"><title>learned noise, 95%: ±{pct(half_width, False)}'
        "</title></rect>"
    )


def latest_colour(judged):
    return COLOURS.get(judged.verdict if judged is not None else "", COLOURS[""])


def family_chart(series, runs):
    box = CHART
    spread = [(series.noise or 0) * Z95, series.detectable or 0]
    frame = Frame(box, len(runs), list(series.shifts) + spread + [-s for s in spread])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{box["width"]}" '
        f'height="{box["height"]}" role="img" aria-label="{esc(series.family)}">',
        f'<rect x="{box["left"]}" y="{box["top"]}" width="{frame.plot_width}" '
        f'height="{frame.plot_height}" fill="#fafafa" stroke="#cfd8dc"/>',
        band(frame, series.band_start, (series.noise or 0) * Z95 if series.noise else None),
    ]
    for value in y_ticks(frame.low, frame.high):
        y = frame.y(value)
        parts.append(
            f'<line x1="{box["left"]}" x2="{box["left"] + frame.plot_width}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="{"#90a4ae" if abs(value) < 1e-12 else "#eceff1"}"/>'
            f'<text x="{box["left"] - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
            f"{tick_label(value)}</text>"
        )
    if series.detectable is not None and series.band_start is not None:
        for sign in (1, -1):
            y = frame.y(sign * series.detectable)
            parts.append(
                f'<line x1="{frame.edge(series.band_start):.1f}" x2="{frame.edge(len(runs)):.1f}" '
                f'y1="{y:.1f}" y2="{y:.1f}" stroke="{THRESHOLD}" stroke-dasharray="5,3">'
                f"<title>flagged beyond {pct(sign * series.detectable)}</title></line>"
            )
    for change in series.changes:
        x = frame.edge(change.index)
        run = runs[change.index]
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{box["top"]}" '
            f'y2="{box["top"] + frame.plot_height}" stroke="{CHANGE}" stroke-width="2" '
            f'stroke-dasharray="6,3"/><text x="{x + 4:.1f}" y="{box["top"] - 8}" '
            f'font-size="11" fill="{CHANGE}">change {percent(change.change_pct, True)} at '
            f"{esc(run.commit[:12])} ({run.time:%m-%d})</text>"
        )
    parts.append(polyline(frame, series.shifts, LINE, 1.5))
    for k, value in enumerate(series.shifts):
        if value is None:
            continue
        last = k == len(runs) - 1
        colour = latest_colour(series.latest) if last else LINE
        parts.append(
            f'<circle cx="{frame.x(k):.1f}" cy="{frame.y(value):.1f}" r="{5 if last else 2.6}" '
            f'fill="{colour}"><title>{esc(runs[k].label())}: {pct(value)}</title></circle>'
        )
    parts += x_labels(frame, runs, box)
    parts.append("</svg>")
    return "".join(parts)


def x_labels(frame, runs, box):
    """Dates under some runs (at most 8, always the first and the latest); times of day where
    the runs span less than two days."""
    count = len(runs)
    short = (runs[-1].time - runs[0].time).total_seconds() < 2 * 86400
    form = "%H:%M" if short else "%m-%d"
    step = max(1, math.ceil(count / 8))
    shown = sorted(set(range(0, count, step)) | {count - 1})
    y = box["top"] + frame.plot_height + 14
    labels = [
        f'<text x="{frame.x(k):.1f}" y="{y}" text-anchor="middle" font-size="10">'
        f"{runs[k].time.strftime(form)}</text>"
        for k in shown
        if k == count - 1 or frame.x(count - 1) - frame.x(k) > 40
    ]
    labels.append(
        f'<text x="{box["left"] + frame.plot_width / 2:.1f}" y="{y + 16}" text-anchor="middle" '
        f'font-size="11" fill="#546e7a">run ({len(runs)} runs, oldest left)</text>'
    )
    return labels


def sparkline(row, runs, band_start):
    box = SPARK
    half = row.noise * Z95 if row.noise else None
    values = list(row.ratios) + ([1.6 * half, -1.6 * half] if half else [])  # band within
    frame = Frame(box, len(runs), values)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{box["width"]}" height="{box["height"]}">',
        band(frame, band_start, half),
        f'<line x1="0" x2="{box["width"]}" y1="{frame.y(0):.1f}" y2="{frame.y(0):.1f}" '
        'stroke="#b0bec5"/>',
    ]
    for change in row.changes:
        x = frame.edge(change.index)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{box["height"]}" stroke="{CHANGE}" '
            'stroke-dasharray="3,2"/>'
        )
    parts.append(polyline(frame, row.ratios, LINE, 1.2))
    for k, failed in enumerate(row.failed):
        if failed:
            x, y = frame.x(k), box["height"] - 5
            parts.append(
                f'<path d="M{x - 3:.1f},{y - 3} l6,6 m0,-6 l-6,6" stroke="{COLOURS[REGRESSION]}"/>'
            )
    last = row.ratios[-1]
    if last is not None:
        parts.append(
            f'<circle cx="{frame.x(len(runs) - 1):.1f}" cy="{frame.y(last):.1f}" r="3" '
            f'fill="{latest_colour(row.latest)}"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------ HTML


def row_cells(row):
    """Latest change, noise, detectable and verdict (or status) of a row."""
    judged = row.latest
    if judged is None:
        return ["-", "-", "-", "not in the latest run" if row.ratios[-1] is None else "-"]
    if judged.status != JUDGED:
        return ["-", "-", "-", f"{judged.status}: {judged.note}"]
    return [
        percent(judged.change_pct, True),
        percent(judged.test.noise_pct),
        percent(judged.test.detectable_pct),
        judged.verdict,
    ]


def rows_table(series, runs):
    head = ["size", "latest vs baseline", "noise (1 sd)", "detectable", "verdict", "series"]
    lines = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for row in series.rows:
        size = format_size(row.size) if row.size is not None else row.row
        cells = row_cells(row)
        colour = COLOURS.get(row.latest.verdict if row.latest else "", COLOURS[""])
        lines.append(
            f"<tr><td>{esc(size)}</td><td>{cells[0]}</td><td>{cells[1]}</td><td>{cells[2]}</td>"
            f'<td class="l" style="color:{colour}">{esc(cells[3])}</td>'
            f"<td>{sparkline(row, runs, series.band_start)}</td></tr>"
        )
    lines.append("</table>")
    return "".join(lines)


def family_caption(series, runs):
    parts = []
    judged = series.latest
    if judged is not None and judged.test is not None:
        parts.append(
            f"latest run: {percent(judged.test.shift_pct, True)} against its baseline of "
            f"{plural(judged.test.runs, 'run')}; {noise_note(judged.test)}"
        )
    elif judged is not None:
        parts.append(f"latest run: {judged.status}")
    for change in series.changes:
        run = runs[change.index]
        parts.append(
            f"change of {percent(change.change_pct, True)} beginning at run {change.index + 1}, "
            f"{run.time:%Y-%m-%d %H:%M}, commit {run.commit}"
        )
    return "; ".join(parts) or "not judged"


def family_section(series, runs, key):
    judged = series.latest
    badge = ""
    if judged is not None and judged.test is not None:
        colour = COLOURS.get(judged.verdict, COLOURS[""])
        badge = (
            f'<span class="badge" style="background:{colour}">{esc(judged.verdict)} '
            f"{percent(judged.test.shift_pct, True)}</span>"
        )
    elif judged is not None:
        badge = f'<span class="badge" style="background:#90a4ae">{esc(judged.status)}</span>'
    return (
        f'<div class="family" id="{family_anchor(key, series.family)}">'
        f"<h3>{esc(series.family)}{badge}</h3>"
        f'<p class="caption">{esc(family_caption(series, runs))}</p>'
        f"{family_chart(series, runs)}"
        f"<details><summary>{plural(len(series.rows), 'size')}: each row against its "
        f"baseline</summary>{rows_table(series, runs)}</details></div>"
    )


def family_anchor(key, family):
    return esc(f"{key}/{family}")


def reasons(judgement, key, most=12):
    """Lines (HTML) for the verdict box: each flagged family (a link to its chart) with how
    many of its sizes moved, then rows flagged in other families and rows broken since the
    baseline, at most `most`."""
    lines = []
    for f in judgement.families:
        if f.verdict in (REGRESSION, IMPROVEMENT):
            moved = sum(r.family == f.family and r.verdict == f.verdict for r in judgement.rows)
            lines.append(
                f'<a href="#{family_anchor(key, f.family)}">{esc(f.family)}</a>: {f.verdict} '
                f"{percent(f.test.shift_pct, True)} ({noise_note(f.test)}); {moved} of "
                f"{f.rows_judged} sizes moved"
            )
    flagged = {f.family for f in judgement.families if f.verdict in (REGRESSION, IMPROVEMENT)}
    for r in judgement.rows:
        if r.verdict in (REGRESSION, IMPROVEMENT) and r.family not in flagged:
            lines.append(
                f"{esc(r.row)}: {r.verdict} {percent(r.test.shift_pct, True)} beyond its family "
                f"({noise_note(r.test)})"
            )
        elif r.note == BROKEN:
            lines.append(f"{esc(r.row)}: {esc(r.note)}")
    if len(lines) > most:
        lines[most - 1 :] = [f"... and {len(lines) - most + 1} more (tools/track check lists all)"]
    return lines


def verdict_box(trend):
    decision = trend.decision
    judgement = decision.checked.judgement if decision else None
    if judgement is None:
        latest = trend.runs[-1].label() if trend.runs else "none"
        return (
            f'<div class="verdict unjudged"><div class="headline">not judged: '
            f'{esc(trend.why_not)}</div><p class="meta">latest run: {esc(latest)}</p></div>'
        )
    items = "".join(f"<li>{line}</li>" for line in reasons(judgement, trend.key))
    return (
        f'<div class="verdict {verdict_class(judgement)}">'
        f'<div class="headline">{esc(verdict_line(decision.checked))}</div>'
        f'<p class="meta">{esc(judgement.note)}</p>'
        + (f"<ul>{items}</ul>" if items else "")
        + "</div>"
    )


def identity_table(trend):
    rows = "".join(
        f'<tr><td class="l">{esc(k)}</td><td class="l">{esc(v)}</td></tr>'
        for k, v in trend.identity.items()
    )
    return (
        f"<details><summary>machine identity {esc(trend.key)} "
        f"({plural(len(trend.runs), 'run')})</summary><table>{rows}</table></details>"
    )


def identity_section(trend):
    parts = [f'<section id="{esc(trend.key)}">', verdict_box(trend), identity_table(trend)]
    parts.append(legend())
    path = None
    for series in trend.families:
        if names.path_of(series.family) != path:
            path = names.path_of(series.family)
            parts.append(f"<h2>{esc(path)}</h2>")
        parts.append(family_section(series, trend.runs, trend.key))
    parts.append("</section>")
    return "".join(parts)


def legend():
    return (
        '<p class="caption">Each chart: a family\'s shift in each run (the weighted geometric '
        "mean over its sizes of time against the baseline; up is slower). "
        f'<span style="background:{BAND}">&nbsp;blue band&nbsp;</span> the noise learned from '
        "the latest baseline window (95%); "
        f'<span style="color:{THRESHOLD}">dashed red</span> the shift beyond which the latest '
        f'run is flagged; <span style="color:{CHANGE}">dashed orange</span> a change point, '
        "labelled with the commit of the first run after it; the large dot is the latest run, "
        "coloured by its verdict.</p>"
    )


def summary_list(trends):
    items = []
    for trend in trends:
        judgement = trend.decision.checked.judgement if trend.decision else None
        text = verdict_head(trend.decision.checked) if trend.decision else trend.why_not
        items.append(
            f'<li><a href="#{esc(trend.key)}">{esc(trend.key)}</a>: '
            f'<span class="{verdict_class(judgement)}">{esc(text)}</span> (latest run '
            f"{esc(trend.runs[-1].label())}, {plural(len(trend.runs), 'run')})</li>"
        )
    return f'<ul class="summary">{"".join(items)}</ul>'


def render(trends, history_dir):
    """The whole page for the Trends given (one per identity), as HTML text."""
    runs = plural(sum(len(t.runs) for t in trends), "run")
    identities = plural(len(trends), "machine identity", "machine identities")
    body = [
        "<h1>xferbench performance trend</h1>",
        f'<p class="meta">{runs} of {identities} in {esc(history_dir)}; made by tools/track '
        "report.</p>",
    ]
    if len(trends) > 1:
        body.append(summary_list(trends))
    body += [identity_section(t) for t in trends]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>xferbench trend</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
