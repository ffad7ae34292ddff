"""compare.py's report (report.build_report) as a console table, a markdown comment for pull
requests, or strict JSON for other tools."""

import json

from ..core.text import plural
from ..node import links
from .judging import is_time_limited

SIZE_CLASSES = {"small": "< 64 KiB", "large": ">= 64 KiB"}


def format_time(us):
    if us is None:
        return "-"
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if us >= scale:
            return f"{us / scale:.4g} {unit}"
    return f"{us * 1e3:.4g} ns"


def format_number(value, spec):
    return "-" if value is None else format(value, spec)


def format_change(change):
    return "-" if change is None else f"{change * 100:+.1f}%"


def format_uncertainty(row):
    if row["judged_by"] in ("jobs", "stated"):
        if row["uncertainty_percent"] is None:
            return "-"
        mark = "*" if is_time_limited(row) else ""
        return f"{row['uncertainty_percent']:.1f}%{mark}"
    if row["judged_by"] != "uncertainty":
        return "-"
    mark = "*" if is_time_limited(row) else ""
    return f"{row['uncertainty_percent']:.2f}%{mark}"


def format_count(side):
    return "-" if side is None else str(side["n"])


def format_status(row):
    if row["status"] == "failed":
        return f"failed ({row['failed_in']})"
    return row["status"]


def format_fact(value):
    if value is None:
        return "-"
    return value if isinstance(value, str) else json.dumps(value)


def verdict_line(report):
    """'compare: 2 of 28 rows slower, 0 faster (families: 1 of 3 slower: mpi_host/mode:pingpong
    +10.2%)': the verdict in counts; the rows are in the table below."""
    compared = [row for row in report["rows"] if row["base"] and row["new"]]
    count = {s: sum(row["status"] == s for row in compared) for s in ("slower", "faster")}
    failed = sum(row["failed_in"] == "new" for row in report["rows"])
    line = (
        f"{report.get('tool', 'compare')}: "
        f"{'REGRESSION' if report['regressions'] else 'no regression'}: "
        f"{count['slower']} of {plural(len(compared), 'row')} slower, {count['faster']} faster"
    )
    if failed:
        line += f", {failed} failed in new"
    families = report.get("families_judged") or []
    if families:
        moved = [f for f in families if f["status"] in ("slower", "faster")]
        named = ", ".join(
            f"{f['family']} {f['status']} {f['change_percent']:+.1f}%" for f in moved[:3]
        )
        more = f", {len(moved) - 3} more" if len(moved) > 3 else ""
        line += f" (families: {len(moved)} of {len(families)} moved" + (
            f": {named}{more})" if moved else ")"
        )
    return line + "."


def machine_line(report):
    if report["machines"] != "different":
        return []
    return [
        "MACHINE COMPARISON (--cross-machine): base and new ran on different machines; "
        "changes reflect the machines, not only the code."
    ]


def any_stated(report):
    """Whether any row was judged by an uncertainty (stated, or from the jobs)."""
    return any(row["judged_by"] in ("uncertainty", "jobs", "stated") for row in report["rows"])


def setup_line(report):
    if report.get("judged_by") in ("jobs", "stated"):
        basis = (
            f"{report['base']['jobs']} base and {report['new']['jobs']} new jobs (separate "
            "processes), each family's shift between them against its job-to-job spread, then "
            "each row beyond its family"
            if report["judged_by"] == "jobs"
            else "one job a side: the rows' stated ci95 (within one process, plus the floor)"
        )
        return (
            f"Judged on time per message by {basis}; false-discovery rate {report['alpha']:g}, "
            f"minimum effect {report['threshold_percent']:g}% (as tools/track)."
        )
    metric = report["metric"]
    direction = "higher" if metric["higher_is_better"] else "lower"
    stated = "; single runs by their stated uncertainty" if any_stated(report) else ""
    return (
        f"Judged by {metric['name']} ({direction} is better), threshold "
        f"{report['threshold_percent']:g}%, two-sided Mann-Whitney U at alpha "
        f"{report['alpha']:g} on the repetitions of one process each side (they do not see "
        f"how another process lands){stated}."
    )


def files_line(report):
    return (
        f"base: {', '.join(report['base']['files'])}  |  new: {', '.join(report['new']['files'])}"
    )


def unc_header(report):
    return "±95%" if report.get("judged_by") in ("jobs", "stated") else "±unc"


def rows_table(report):
    """The per-row table; the ±unc column only where a row was judged by its stated
    uncertainty, so older files render exactly as before."""
    stated = any_stated(report)
    headers = (
        ["benchmark", "n", "base time", "new time", "base GB/s", "new GB/s", "change"]
        + ([unc_header(report)] if stated else [])
        + ["p", "status"]
    )
    body = []
    for row in report["rows"]:
        base, new = row["base"] or {}, row["new"] or {}
        body.append(
            [
                row["name"],
                f"{format_count(row['base'])}v{format_count(row['new'])}",
                format_time(base.get("time_us")),
                format_time(new.get("time_us")),
                format_number(base.get("gbps"), ".4g"),
                format_number(new.get("gbps"), ".4g"),
                format_change(row["change"]),
            ]
            + ([format_uncertainty(row)] if stated else [])
            + [format_number(row["p_value"], ".3f"), format_status(row)]
        )
    return headers, body, "lrrrrrr" + ("r" if stated else "") + "rl"


def summary_table(report):
    metric = report["metric"]["name"]
    headers = ["path", "size", "rows", f"geomean new/base {metric}", "change"]
    body = [
        [
            s["path"],
            SIZE_CLASSES.get(s["size_class"], "no size"),
            str(s["rows"]),
            f"{s['ratio']:.4f}",
            format_change(s["change"]),
        ]
        for s in report["summary"]
    ]
    return headers, body, "llrrr"


def families_title(report):
    labels = report["machine_labels"]
    return (
        f"Per family, new ({labels['new']}) against base ({labels['base']}): geomean of "
        f"new/base {report['metric']['name']} over the sizes both ran, ±95% interval"
    )


def families_table(report):
    metric = report["metric"]["name"]
    headers = ["family", "sizes", f"new/base {metric}", "change", "±95%", "from", "range", "new is"]
    body = [
        [
            f["family"],
            str(f["sizes"]),
            f"{f['ratio']:.4g}",
            format_change(f["change"]),
            format_number(f["uncertainty_percent"], ".1f") + ("%" if f["uncertainty_from"] else ""),
            f["uncertainty_from"] or "-",
            f"{f['min_ratio']:.3g}..{f['max_ratio']:.3g}",
            f["status"],
        ]
        for f in report.get("families", [])
    ]
    return links.with_share_column(report.get("families", []), headers, body, "lrrrrlll")


JUDGED_TITLE = (
    "Families (change: the family's shift, new against base, with its 95% interval; "
    "detectable: the smallest slowdown that would have been flagged):"
)


def judged_families_table(report):
    headers = ["family", "rows", "change", "±95%", "detectable", "p", "status"]
    body = [
        [
            f["family"],
            str(f["rows"]),
            format_number(f["change_percent"], "+.1f") + ("%" if f["change_percent"] else ""),
            format_number(f["ci95_percent"], ".1f") + ("%" if f["ci95_percent"] else ""),
            format_number(f["detectable_percent"], ".1f")
            + ("%" if f["detectable_percent"] else ""),
            format_number(f["p_value"], ".3g"),
            f["status"],
        ]
        for f in report.get("families_judged") or []
    ]
    return headers, body, "lrrrrrl"


def context_table(report):
    headers = ["field", "base", "new", "machine identity"]
    body = [
        [d["field"], format_fact(d["base"]), format_fact(d["new"]), "yes" if d["identity"] else ""]
        for d in report["context_diff"]
    ]
    return headers, body, "llll"


def failure_lines(report):
    lines = []
    for row in report["rows"]:
        for side in ("base", "new"):
            for message in (row[side] or {}).get("errors", []):
                lines.append(f"{row['name']}: {side}: {message}")
    return lines


def text_table(headers, body, align):
    widths = [max(len(r[i]) for r in [headers] + body) for i in range(len(headers))]

    def line(cells):
        return "  ".join(
            c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align)
        ).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in body]


def markdown_table(headers, body, align):
    def escape(cell):
        return cell.replace("|", "\\|").replace("*", "\\*")

    rule = ["---:" if a == "r" else ":---" for a in align]
    return ["| " + " | ".join(escape(c) for c in cells) + " |" for cells in [headers, rule] + body]


def render_text(report):
    lines = machine_line(report) + [
        verdict_line(report),
        setup_line(report),
        files_line(report),
        "",
    ]
    if report.get("families_judged"):
        lines += [JUDGED_TITLE] + text_table(*judged_families_table(report)) + [""]
    if report.get("families"):
        lines += [families_title(report) + ":"] + text_table(*families_table(report)) + [""]
    lines += text_table(*rows_table(report))
    sections = [
        ("Summary (rows on both sides):", summary_table(report)),
        ("Context differences:", context_table(report)),
    ]
    for title, (headers, body, align) in sections:
        if body:
            lines += ["", title] + text_table(headers, body, align)
    for title, items in (("Failures:", failure_lines(report)), ("Notes:", report["notes"])):
        if items:
            lines += ["", title] + [f"- {item}" for item in items]
    return "\n".join(lines) + "\n"


def render_markdown(report):
    title = "machine comparison" if report["machines"] == "different" else "compare"
    lines = [f"### xferbench {title}", "", f"**{verdict_line(report)}**", ""]
    lines += [f"**{line}**\n" for line in machine_line(report)]
    lines += [setup_line(report), "", f"`{files_line(report)}`", ""]
    if report.get("families_judged"):
        lines += ["#### " + JUDGED_TITLE.rstrip(":"), ""]
        lines += markdown_table(*judged_families_table(report)) + [""]
    if report.get("families"):
        lines += [f"#### {families_title(report)}", ""]
        lines += markdown_table(*families_table(report)) + [""]
    lines += markdown_table(*rows_table(report))
    sections = [("Summary", summary_table(report)), ("Context differences", context_table(report))]
    for title, (headers, body, align) in sections:
        if body:
            lines += ["", f"#### {title}", ""] + markdown_table(headers, body, align)
    for title, items in (("Failures", failure_lines(report)), ("Notes", report["notes"])):
        if items:
            lines += ["", f"#### {title}", ""] + [f"- {i}" for i in items]
    return "\n".join(lines) + "\n"


def render_json(report):
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
