"""Whether a machine's stated intervals are what its reruns need: the calibration report
(`tools/track calibration`, docs/reproducibility.md "Calibration").

A series is back-to-back runs of one machine as tools/run leaves them: each merged result
RUN.json beside its jobs' files RUN.jobs/job-*.json. The report merges each run's jobs again
with the xferbench given, in the order the runs were made, from an empty machine file that
each run is then added to (as tools/run does): run K is stated as tools/run would state it at
that point of the machine's history. Then, per family and over all rows, for runs 1-3 (before
the machine has a plan) and runs 4 on (planned):

* covered: the share of (pair of runs, row) whose figures differ by no more than the two
  rows' stated ci95 combined in quadrature;
* tight: the median over rows of (the row's median stated ci95) / (1.96 x the sd of its ln
  time over every run of the series): 1 is exactly what the reruns need;
* the median and 90th percentile of the stated ci95, and the runs' wall time (the merged
  summary's: the jobs' and the merge's; tools/run's own adds a second or two of launches).

Targets (issue 42): covered 90-98%, tight at most 1.3, a planned run's median ci95 no wider
than the unplanned runs', every run within 60 s. A share of few comparisons is itself
uncertain (3 runs of one row are 3 comparisons): coverage misses its band only when the
Wilson 95% interval of the share lies wholly outside it, and a family is judged on tightness
only with MIN_ROWS rows. The unplanned runs are compared with the planned ones as stated with
the same machine file, that of the planned runs (runs 4 on; runs 1 and 2 know no run level of
their own), so that the comparison says what the plan's time bought; as merged in order they
are in the table.
"""

import dataclasses
import math
import os
import re
import statistics
import subprocess
import tarfile
import tempfile

from ..core import fields, files, names
from ..core.finite import is_finite_number
from . import floors, plan

FIRST_RUNS = floors.MIN_RUNS_FOR_PLAN  # runs before the machine has a plan
COVERED = (90.0, 98.0)  # percent
TIGHT = 1.3
WALL_S = 60.0
MIN_ROWS = 5
Z95 = 1.959964
ALL = "all rows"


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of a series: its merged result and its jobs' files."""

    path: str
    jobs: list
    date: str
    wall_s: float | None


def natural(text):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def series_runs(folder):
    """The runs under `folder` (any depth): every RUN.json with a RUN.jobs/ folder of job
    files, in the order they were made (Google Benchmark's context date, then name)."""
    found = []
    for top, dirs, names_here in os.walk(folder):
        dirs.sort()
        for name in names_here:
            stem, extension = os.path.splitext(name)
            jobs_dir = os.path.join(top, stem + ".jobs")
            if extension != ".json" or not os.path.isdir(jobs_dir):
                continue
            path = os.path.join(top, name)
            if os.path.getsize(path) == 0:  # a run cut off before it was written
                continue
            jobs = sorted(
                (
                    os.path.join(jobs_dir, j)
                    for j in os.listdir(jobs_dir)
                    if j.startswith("job-") and j.endswith(".json")
                ),
                key=natural,
            )
            document = files.load_result(path)
            context = document.get(fields.CONTEXT) or {}
            summary = ((context.get("xferbench") or {}).get("summary")) or {}
            wall = summary.get("wall_time_s")  # the jobs' and the merge's, less launches
            found.append(
                Run(
                    path,
                    jobs,
                    str(context.get("date", "")),
                    wall if is_finite_number(wall) else None,
                )
            )
    if not found:
        raise files.InputError(
            f"{folder}: no runs (RUN.json beside RUN.jobs/job-*.json, as tools/run leaves them)"
        )
    return sorted(found, key=lambda r: (r.date, natural(r.path)))


def unpacked(source, scratch):
    """`source` itself when it is a folder; a .tar.xz (or other tar) unpacked under scratch."""
    if os.path.isdir(source):
        return source
    if not tarfile.is_tarfile(source):
        raise files.InputError(f"{source}: neither a folder nor a tar archive of runs")
    target = tempfile.mkdtemp(dir=scratch)
    with tarfile.open(source) as archive:
        members = archive.getmembers()
        for member in members:  # plain files and folders inside the target, nothing else
            inside = os.path.realpath(os.path.join(target, member.name))
            if not (member.isfile() or member.isdir()) or not inside.startswith(target + os.sep):
                raise files.InputError(f"{source}: {member.name}: not a file or folder of runs")
        archive.extractall(target, members=members)  # noqa: S202 (checked above)
    return target


def merge_again(runs, xferbench, scratch, machine=None):
    """Each run's jobs merged again in order, each run then added to the machine file the next
    merge reads (as tools/run adds it); the merged documents. With `machine` (a floor folder),
    every run merged with that file as it is, none added."""
    grow = machine is None
    machine = machine or os.path.join(scratch, "floors")
    out = []
    for k, run in enumerate(runs, 1):
        target = os.path.join(tempfile.mkdtemp(dir=scratch), f"run-{k}.json")
        proc = subprocess.run(
            [
                xferbench,
                "--xfer_merge=" + ",".join(run.jobs),
                "--benchmark_format=json",
                "--benchmark_out=" + target,
            ],
            env=dict(os.environ, XFER_FLOORS=machine),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if not os.path.exists(target):
            raise files.InputError(
                f"{run.path}: its jobs did not merge (exit {proc.returncode}): "
                + (proc.stderr.strip().splitlines() or [""])[-1]
            )
        # The run as it was made joins the file (a merge made on another host states that
        # host's CPUs in its context, and would make the file another machine's).
        if grow:
            floors.write_floor(run.path, machine)
        out.append(files.load_result(target))
    return out


def planned_file(runs, scratch):
    """A floor folder holding the planned runs (4 on) alone, as a machine file of theirs."""
    machine = tempfile.mkdtemp(dir=scratch)
    for run in runs[FIRST_RUNS:]:
        floors.write_floor(run.path, machine)
    return machine


def stated_rows(document):
    """{row name: (ln latency, stated ci95 percent)} of the rows that measured."""
    out = {}
    for row in document.get(fields.BENCHMARKS, []):
        if not isinstance(row, dict) or row.get(fields.RUN_TYPE, "iteration") != "iteration":
            continue
        latency, ci95 = row.get(fields.LATENCY_US), row.get(fields.CI95_PCT)
        if row.get("error_occurred") or not is_finite_number(latency) or latency <= 0:
            continue
        if not is_finite_number(ci95):
            continue
        out[names.normalise_name(row["name"])] = (math.log(latency), ci95)
    return out


@dataclasses.dataclass
class Figures:
    """One group's figures for one family (or all rows)."""

    comparisons: int = 0
    covered: int = 0
    ratios: list = dataclasses.field(default_factory=list)
    stated: list = dataclasses.field(default_factory=list)

    def summary(self):
        return {
            "covered_pct": 100 * self.covered / self.comparisons if self.comparisons else None,
            "comparisons": self.comparisons,
            "tight": statistics.median(self.ratios) if self.ratios else None,
            "rows": len(self.ratios),
            "median_ci95_pct": statistics.median(self.stated) if self.stated else None,
            "p90_ci95_pct": plan.percentile_90(self.stated) if self.stated else None,
        }


def group_figures(stated, group):
    """{family: Figures, ALL: Figures} of the runs `group` (indices) of `stated` (one
    stated_rows per run), the rows every run of the series measured."""
    common = set.intersection(*(set(s) for s in stated))
    out = {ALL: Figures()}
    for name in sorted(common):
        logs = [s[name][0] for s in stated]
        spread = statistics.stdev(logs) * 100 if len(logs) > 1 else 0.0
        cis = [stated[k][name][1] for k in group]
        family = names.path_of(name)
        for figures in (out.setdefault(family, Figures()), out[ALL]):
            for a in range(len(group)):
                for b in range(a + 1, len(group)):
                    difference = abs(logs[group[a]] - logs[group[b]]) * 100
                    figures.comparisons += 1
                    figures.covered += difference <= math.hypot(cis[a], cis[b])
            figures.stated.extend(cis)
            if spread > 0:
                figures.ratios.append(statistics.median(cis) / (1.96 * spread))
    return out


def wilson(covered, n):
    """The Wilson 95% interval of a share covered / n, in percent."""
    p = covered / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return 100 * (centre - half), 100 * (centre + half)


def verdicts(group, figures, walls, unplanned=None):
    """[(family, target, figure, met)] of one group: coverage and tightness where judged, the
    planned median against the unplanned one's (`unplanned`: {family: median ci95}), and the
    wall time."""
    out = []
    for family, f in figures.items():
        s = f.summary()
        if s["covered_pct"] is not None:
            low, high = wilson(f.covered, f.comparisons)
            met = high >= COVERED[0] and low <= COVERED[1]
            figure = f"{s['covered_pct']:.1f}% ({low:.1f}-{high:.1f}%, {f.comparisons} pairs)"
            out.append((family, "covered 90-98%", figure, met))
        if s["tight"] is not None and (family == ALL or s["rows"] >= MIN_ROWS):
            out.append((family, f"tight <= {TIGHT}", f"{s['tight']:.2f}", s["tight"] <= TIGHT))
        before = (unplanned or {}).get(family)
        if before is not None and s["median_ci95_pct"] is not None:
            if family == ALL or s["rows"] >= MIN_ROWS:
                figure = f"{s['median_ci95_pct']:.2f}% against {before:.2f}%"
                met = s["median_ci95_pct"] <= before
                out.append((family, "planned median <= unplanned", figure, met))
    known = [w for w in walls if w is not None]
    if known:
        out.append((ALL, f"wall <= {WALL_S:g} s", f"{max(known):.1f} s", max(known) <= WALL_S))
    return [(group,) + v for v in out]


def calibrate(source, xferbench, scratch):
    """The report of one series (a folder or tar archive of runs); scratch: a folder for its
    files (a machine file of its own: series of one machine must not share one)."""
    scratch = tempfile.mkdtemp(dir=scratch)
    runs = series_runs(unpacked(source, scratch))
    merged = merge_again(runs, xferbench, scratch)
    stated = [stated_rows(d) for d in merged]
    groups = {"runs 1-3": list(range(min(FIRST_RUNS, len(runs))))}
    unplanned = None
    if len(runs) > FIRST_RUNS + 1:  # one planned run has no pair of its own
        groups["runs 4+"] = list(range(FIRST_RUNS, len(runs)))
        machine = planned_file(runs, scratch)
        again = merge_again(runs[:FIRST_RUNS], xferbench, scratch, machine)
        restated = [stated_rows(d) for d in again] + stated[FIRST_RUNS:]
        unplanned = {
            family: f.summary()["median_ci95_pct"]
            for family, f in group_figures(restated, groups["runs 1-3"]).items()
        }
    figures = {g: group_figures(stated, idx) for g, idx in groups.items()}
    judged = []
    for g, idx in groups.items():
        judged += verdicts(
            g, figures[g], [runs[k].wall_s for k in idx], unplanned if g == "runs 4+" else None
        )
    return {
        "series": source,
        "runs": len(runs),
        "jobs": [len(r.jobs) for r in runs],
        "walls_s": [r.wall_s for r in runs],
        "groups": {
            g: {family: f.summary() for family, f in sorted(figures[g].items())} for g in groups
        },
        "unplanned_restated_median_ci95_pct": unplanned,
        "verdicts": [
            {"group": g, "family": f, "target": t, "figure": v, "met": m}
            for g, f, t, v, m in judged
        ],
    }


def render(report):
    """The report as text: a table per group, then the targets missed."""
    walls = [w for w in report["walls_s"] if w is not None]
    lines = [
        f"{report['series']}: {report['runs']} runs, jobs {report['jobs']}"
        + (f", {min(walls):.1f}-{max(walls):.1f} s" if walls else "")
    ]
    for group, families in report["groups"].items():
        lines.append(
            f"  {group:<9} {'covered':>8} {'pairs':>6} {'tight':>6} {'rows':>5} "
            f"{'median':>7} {'p90':>6}"
        )
        for family, s in families.items():
            covered = "-" if s["covered_pct"] is None else f"{s['covered_pct']:.1f}%"
            tight = "-" if s["tight"] is None else f"{s['tight']:.2f}"
            median = "-" if s["median_ci95_pct"] is None else f"{s['median_ci95_pct']:.1f}%"
            p90 = "-" if s["p90_ci95_pct"] is None else f"{s['p90_ci95_pct']:.1f}%"
            lines.append(
                f"    {family:<16} {covered:>6} {s['comparisons']:>6} {tight:>6} {s['rows']:>5} "
                f"{median:>7} {p90:>6}"
            )
    missed = [v for v in report["verdicts"] if not v["met"]]
    judged = len(report["verdicts"])
    if missed:
        lines.append(f"  missed {len(missed)} of {judged} targets:")
        lines += [f"    {v['group']}, {v['family']}: {v['target']}: {v['figure']}" for v in missed]
    else:
        lines.append(f"  every target met ({judged} judged)")
    return "\n".join(lines)
