"""tools/track check's answer: a decide.Judgement of one run against its history, as text for a
CI log, markdown for a pull request or a step summary, or strict JSON. The verdict comes first,
then each family and each flagged row with its shift, the noise it was judged against and the
smallest shift that would have been flagged; failed, missing and unjudged rows by their
status, never as numbers."""

import dataclasses
import json

from ..compare.render import markdown_table, text_table
from ..core import names
from ..core.text import plural
from ..verdict.decide import BROKEN, FAILED, IMPROVEMENT, JUDGED, MISSING, REGRESSION, UNJUDGED

SCHEMA = "xferbench-track-check/1"


@dataclasses.dataclass(frozen=True)
class Checked:
    """A judgement and what it judged."""

    judgement: object  # decide.Judgement
    run: object  # history.Run: the run judged
    file: str  # its result file
    key: str  # its identity key
    earlier: tuple  # history.Run: the earlier runs it was judged against, oldest first

    def exit_status(self):
        return 1 if self.judgement.regression else 0


def percent(value, sign=False):
    """'+2.5%' ('-' for None); a shift that rounds to zero is '+0.0%', never '-0.0%'."""
    if value is None:
        return "-"
    value = 0.0 if abs(value) < 0.05 else value
    return f"{value:+.1f}%" if sign else f"{value:.1f}%"


def noise_note(test):
    """'noise 1.8% (1 sd), flagged beyond 6.6%' of a decide.Shift."""
    return f"noise {percent(test.noise_pct)} (1 sd), flagged beyond {percent(test.detectable_pct)}"


def verdict_head(checked):
    """The verdict in a few words: 'REGRESSION: 1 family slower, 3 rows slower'."""
    j = checked.judgement
    count = {
        (kind, verdict): sum(x.verdict == verdict for x in items)
        for kind, items in (("family", j.families), ("row", j.rows))
        for verdict in (REGRESSION, IMPROVEMENT)
    }
    broken = sum(r.note == BROKEN for r in j.rows)
    words = {"family": "families", "row": "rows"}
    slower = [
        f"{plural(count[k, REGRESSION], k, words[k])} slower" for k in words if count[k, REGRESSION]
    ]
    faster = [
        f"{plural(count[k, IMPROVEMENT], k, words[k])} faster"
        for k in words
        if count[k, IMPROVEMENT]
    ]
    if broken:
        slower.append(f"{plural(broken, 'row')} failed that ran in the baseline")
    judged_rows = sum(r.status == JUDGED for r in j.rows)
    judged_families = sum(f.status == JUDGED for f in j.families)
    if j.regression:
        head = "REGRESSION: " + ", ".join(slower)
    elif faster:
        head = "no regression; improved: " + ", ".join(faster)
    else:
        head = (
            f"no regression: {plural(judged_families, 'family', 'families')}"
            f" and {plural(judged_rows, 'row')} within their noise"
        )
    return head


def verdict_line(checked):
    """The verdict, the run and what it was judged against, in one line."""
    return (
        f"{verdict_head(checked)} (run {checked.run.label()} from {checked.file}, against "
        f"{plural(len(checked.earlier), 'earlier run')} of {checked.key})"
    )


def families_table(checked):
    headers = ["verdict", "shift", "noise", "detectable", "rows", "family"]
    body = []
    for f in checked.judgement.families:
        test = f.test
        counts = f"{f.rows_judged}"
        if f.rows_failed or f.rows_missing:
            counts += f" (+{f.rows_failed} failed, {f.rows_missing} missing)"
        body.append(
            [
                f.verdict if f.status == JUDGED else f.status,
                percent(test.shift_pct, True) if test else "-",
                percent(test.noise_pct) if test else "-",
                percent(test.detectable_pct) if test else "-",
                counts,
                f.family,
            ]
        )
    return headers, body, ["l", "r", "r", "r", "r", "l"]


def by_family_and_size(rows):
    """Rows in the order a person reads them: by family, then by message size."""
    return sorted(rows, key=lambda r: (r.family, names.message_bytes(r.row) or 0, r.row))


def flagged_rows_table(checked):
    headers = ["verdict", "change", "shift judged", "noise", "detectable", "row"]
    body = []
    for r in by_family_and_size(checked.judgement.rows):
        if r.verdict in (REGRESSION, IMPROVEMENT):
            judged = "beyond family" if r.relative_to == "family" else "vs baseline"
            body.append(
                [
                    r.verdict,
                    percent(r.change_pct, True),
                    f"{percent(r.test.shift_pct, True)} {judged}",
                    percent(r.test.noise_pct),
                    percent(r.test.detectable_pct),
                    r.row,
                ]
            )
    return headers, body, ["l", "r", "r", "r", "r", "l"]


def status_lines(checked):
    """One line per failed or missing row, and the unjudged rows counted by reason."""
    lines, unjudged = [], {}
    for r in by_family_and_size(checked.judgement.rows):
        if r.status in (FAILED, MISSING):
            lines.append(f"{r.status}: {r.row} ({r.note})")
        elif r.status == UNJUDGED:
            unjudged.setdefault(r.note, []).append(r.row)
    for note, rows in unjudged.items():
        shown = ", ".join(rows[:3]) + (", ..." if len(rows) > 3 else "")
        lines.append(f"unjudged: {plural(len(rows), 'row')} ({note}): {shown}")
    return lines


def setup_line(checked):
    j = checked.judgement
    return (
        f"{j.note}. Families and rows are flagged at a false-discovery rate of {j.alpha:g}, "
        f"and only if they moved by at least {j.min_effect_pct:g}%."
    )


def earlier_line(checked):
    if not checked.earlier:
        return "earlier runs: none"
    first, last = checked.earlier[0], checked.earlier[-1]
    return f"earlier runs: {len(checked.earlier)}, from {first.label()} to {last.label()}"


def render_text(checked):
    lines = [verdict_line(checked), setup_line(checked), earlier_line(checked), ""]
    lines += [
        "Families (shift: the family's geomean against its baseline; noise: one standard "
        "deviation of it; detectable: the smallest slowdown that would be flagged):"
    ]
    lines += text_table(*families_table(checked))
    headers, body, align = flagged_rows_table(checked)
    if body:
        lines += ["", "Rows flagged:"] + text_table(headers, body, align)
    status = status_lines(checked)
    if status:
        lines += ["", "Rows not judged:"] + [f"- {line}" for line in status]
    return "\n".join(lines) + "\n"


def render_markdown(checked):
    lines = ["### xferbench track check", "", f"**{verdict_line(checked)}**", ""]
    lines += [setup_line(checked), "", earlier_line(checked), "", "#### Families", ""]
    lines += markdown_table(*families_table(checked))
    headers, body, align = flagged_rows_table(checked)
    if body:
        lines += ["", "#### Rows flagged", ""] + markdown_table(headers, body, align)
    status = status_lines(checked)
    if status:
        lines += ["", "#### Rows not judged", ""] + [f"- `{line}`" for line in status]
    return "\n".join(lines) + "\n"


def run_summary(run, file=None):
    summary = {"time": run.time.isoformat(), "commit": run.commit, "digest": run.digest}
    if file is not None:
        summary["file"] = file
    return summary


def render_json(checked):
    document = {
        "schema": SCHEMA,
        "verdict": checked.judgement.verdict,
        "regression": checked.judgement.regression,
        "exit_status": checked.exit_status(),
        "summary": verdict_line(checked),
        "identity": checked.key,
        "run": run_summary(checked.run, checked.file),
        "earlier_runs": [run_summary(r) for r in checked.earlier],
        "judgement": checked.judgement.to_dict(),
    }
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
