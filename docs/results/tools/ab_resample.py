#!/usr/bin/env python3
"""How sensitive tools/ab is (issue 28): detection and false-alarm rates from resampling the
jobs of recorded sittings, and what each family's job-to-job spread allows.

    docs/results/tools/ab_resample.py [--resamples R] [--seed S] [--workers W]
        [--verify K] [--build DIR] [--json OUT] SITTING.json [SITTING.json ...]

SITTING.json is a tools/ab document (--out; `ab-sittings` writes one per call), its jobs in
SITTING.jobs/ beside it and tools/ab's stderr, which alone has each job's seconds, in
SITTING.log (or SITTING.txt).

The pool. Every job file of every sitting, with the factor its side planted
(XFER_TEST_SLOWDOWN in the side's env, or --xfer_test_slowdown among the flags, for both sides)
divided out of the rows whose xferbench name (family/bytes:N) its regex finds (POSIX ERE, as
std::regex extended reads it). It only multiplied each timed batch's seconds, so what is left
is an A/A job (the one trace it leaves: those rows count the scaled seconds towards the minimum
time, so a visit that stops there times a few per cent fewer messages). A factor scales every
field a time scales: the rows' real_time, latency_us, median_us, min_us, max_us, p90_us,
p99_us (times the factor), GB/s, bytes_per_second, pct_of_link, pair_gbps_min, pair_gbps_max
(divided by it), and each visit's latency_us in context.xferbench.visits. The judgement reads
only the last (replicates.job_times: a job's figure of a row is the mean of its visits'
latency_us) and which rows failed; the others keep the merged rows and report lines
consistent. With two sittings or more, each row is aligned (its geometric mean over each
sitting's jobs made the same): a real sitting never sees the shift between sittings, which
falls on both of its sides alike.

A resampled run of n jobs a side draws n of the pool's blocks (the two jobs a sitting ran one
after the other, positions 2k-1 and 2k: one A and one B in ABBA order) and gives one job of each
to A and the other to B by a coin flip. Each side then holds one job of every pair it came
from, as in ABBA, so a drift over a sitting falls on both alike; the coin, not the side a job
ran as, says where it goes, since after the division both are A/A jobs. B's rows of the planted
family are multiplied by 1 + PCT/100. The sides are merged as tools/ab merges them and judged by
tools/ab's own call (report.build_report with machines.hardware_identity, metric time, its
alpha and threshold). The merge is done here in Python (merged_document: the fields the
judgement reads, as xferbench --xfer_merge writes them); the script checks that it gives the
very report tools/ab gave on each sitting's own jobs, and with --verify K that K resampled runs
judged on xferbench's own merge of the scaled job files give identical verdicts. Counted per
run: the planted family judged slower (detected); anything flagged, a family or row slower or
faster or a row failed in B only (with identical sides, a false alarm); anything slower (exit
1); anything flagged beyond the planted family.

Jobs a side for a time budget, from the recorded jobs: a job costs its start-up (its launcher
seconds less its visits'), its visits' set-up, warm-up and checks (fixed per visit), and its
share of the timed messages (a side's timed seconds are the same whatever the number of jobs:
each job's visits get 1/jobs of a row's time); a sitting adds its merges and judgement. For one
family alone the same start-up plus that family's visits: an estimate, no such job was run.
The resampled jobs each timed a 1/N share (N: the sittings' jobs a side); a run of n jobs
times 1/n, so for n far from N the per-job spread would differ a little.
"""

import argparse
import concurrent.futures
import copy
import json
import math
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass, field

import numpy as np
import repo_tools  # noqa: F401 (this folder's: puts the repository's tools/ on sys.path)
from scipy import stats

from xfertools.ab import cli as ab
from xfertools.ab import document as ab_document
from xfertools.ab import plan as ab_plan
from xfertools.compare import judging, report
from xfertools.core import files, finite, names
from xfertools.result import machines, rows
from xfertools.verdict import noise

TIME_FIELDS = ("real_time", "latency_us", "median_us", "min_us", "max_us", "p90_us", "p99_us")
RATE_FIELDS = ("GB/s", "bytes_per_second", "pct_of_link", "pair_gbps_min", "pair_gbps_max")
# What must agree for jobs to be merged (support/jobs/merge.cpp make_up).
MAKE_UP = ("git_revision", "world_size", "mpi", "cuda", "nccl", "sizes", "warmup")
JOB_LINE = re.compile(r"tools/ab: (job-\d+-[AB]\d+) \([AB]\): exit \d+ in ([\d.]+) s")
POWER_Z = float(stats.norm.isf(0.2))  # 80% power
POSIX_CLASSES = {
    "alpha": "A-Za-z",
    "digit": "0-9",
    "alnum": "A-Za-z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "xdigit": "0-9A-Fa-f",
    "space": r" \t\n\r\f\v",
    "blank": r" \t",
}


class BadInput(Exception):
    """One line for stderr, exit status 2."""


# ------------------------------------------------------------------ the sittings


def ere(pattern):
    """pattern as std::regex's extended grammar (POSIX ERE) reads it, for a search: the same
    as Python's but for bracket classes ([[:digit:]]), translated here; a backslash before a
    letter or digit, or a (? group, means something else in one of them and is refused."""
    if re.search(r"\\[A-Za-z0-9]|\(\?", pattern):
        raise BadInput(
            f"slowdown regex {pattern!r}: \\ before a letter or digit, or (?, reads "
            "differently in POSIX ERE and Python"
        )
    unknown = set(re.findall(r"\[:(\w+):\]", pattern)) - set(POSIX_CLASSES)
    if unknown:
        raise BadInput(f"slowdown regex {pattern!r}: unknown class {sorted(unknown)}")
    return re.compile(re.sub(r"\[:(\w+):\]", lambda m: POSIX_CLASSES[m.group(1)], pattern))


def slowdown(text):
    """(compiled regex, pct) of REGEX:PCT, split at the last colon as xferbench splits it."""
    pattern, colon, pct = text.rpartition(":")
    if not colon or not pattern:
        raise BadInput(f"slowdown {text!r}: expected REGEX:PCT")
    return ere(pattern), float(pct)


def side_slowdowns(ab_object):
    """{label: (regex, pct) or None}: --xfer_test_slowdown among the flags (both sides; a flag
    wins over its environment fallback), else the side's XFER_TEST_SLOWDOWN."""
    flags = [
        f.split("=", 1)[1] for f in ab_object["flags"] if f.startswith("--xfer_test_slowdown=")
    ]
    out = {}
    for label in ab_plan.SIDES:
        env = ab_object["sides"][label]["env"].get("XFER_TEST_SLOWDOWN")
        text = flags[-1] if flags else env
        out[label] = slowdown(text) if text else None
    return out


@dataclass
class Job:
    sitting: str  # the sitting document's file name
    file: str
    position: int  # 1-based place in the sitting's ABBA order
    label: str  # the side it ran as
    document: dict
    benchmarks: dict  # canonical row name -> (its xferbench name (family/bytes:N), its row)
    seconds: dict  # canonical row -> the job's figure (its visits' mean latency), None: failed
    wall_s: float | None  # launcher seconds, from tools/ab's stderr
    fixed_s: dict  # family -> its visits' set-up, warm-up and check seconds
    timed_s: dict  # family -> the rest of its visits' seconds
    factors: dict = field(default_factory=dict)  # canonical row -> multiplier to an A/A job
    merge_rows: dict = field(default_factory=dict)  # canonical row -> JobRow
    visit_lists: list = field(default_factory=list)  # (xferbench name, canonical, visits)

    @property
    def name(self):
        return f"{self.sitting}:{os.path.basename(self.file)}"

    @property
    def written(self):
        return {c: w for c, (w, _) in self.benchmarks.items()}


def job_rows(document):
    """The job's benchmark rows: {canonical name: (xferbench name, row)}."""
    out = {}
    for row in document["benchmarks"]:
        if rows.is_aggregate(row):
            continue
        if row.get("repetition_index", 0):
            raise BadInput("a job of several repetitions: tools/ab runs none")
        written = rows.written_name(row)
        out[names.canonical_name(written)] = (written, row)
    return out


def visit_figures(document):
    """{canonical row: mean latency in seconds of the job's visits, None where none timed}."""
    visits = machines.xferbench_context(machines.context_of(document))["visits"]
    out = {}
    for written, entries in visits.items():
        latencies = [v.get("latency_us") for v in entries]
        ok = [t for t in latencies if rows.positive(t)]
        name = names.canonical_name(names.normalise_name(written))
        out[name] = statistics.fmean(ok) * 1e-6 if ok and len(ok) == len(latencies) else None
    return out


def visit_seconds(document):
    """Per family: (set-up with its warm-up, and checks; the rest) of its visits' wall seconds."""
    fixed, timed = {}, {}
    visits = machines.xferbench_context(machines.context_of(document))["visits"]
    for written, entries in visits.items():
        family = noise.family_of(names.canonical_name(names.normalise_name(written)))
        for v in entries:
            setup = sum(v.get(k, 0) or 0 for k in ("setup_s", "check_s"))  # setup_s holds warm_s
            fixed[family] = fixed.get(family, 0) + setup
            timed[family] = timed.get(family, 0) + (v.get("wall_s", 0) or 0) - setup
    return fixed, timed


def launcher_walls(stem):
    """{job name: seconds} from tools/ab's stderr kept beside the document, else {}."""
    for ending in (".log", ".txt"):
        try:
            with open(stem + ending, encoding="utf-8", errors="replace") as stream:
                found = dict(JOB_LINE.findall(stream.read()))
        except OSError:
            continue
        if found:
            return {name: float(s) for name, s in found.items()}
    return {}


@dataclass
class Sitting:
    path: str
    document: dict
    jobs: list  # Job, in ABBA order
    slowdowns: dict  # label -> (regex, pct) of its planted slowdown, or None

    @property
    def name(self):
        return os.path.basename(self.path)

    @property
    def ab(self):
        return self.document["ab"]


def load_sitting(path):
    try:
        document = files.load_result(path)
    except files.InputError as e:
        raise BadInput(str(e)) from None
    ab_object = machines.mapping(document.get("ab"))
    if ab_object.get("schema") != ab_document.SCHEMA:
        raise BadInput(f"{path}: not a tools/ab document (no 'ab' of schema {ab_document.SCHEMA})")
    order = ab_object["order"]
    if any({order[k], order[k + 1]} != set(ab_plan.SIDES) for k in range(0, len(order), 2)):
        raise BadInput(f"{path}: the jobs did not run in ABBA pairs ({''.join(order)})")
    stem = os.path.splitext(path)[0]
    walls = launcher_walls(stem)
    sitting = Sitting(path, document, [], side_slowdowns(ab_object))
    counts = dict.fromkeys(ab_plan.SIDES, 0)
    for index, label in enumerate(order):
        counts[label] += 1
        name = f"job-{index + 1:02d}-{label}{counts[label]}"
        file = os.path.join(stem + ".jobs", name + ".json")
        job = load_job(sitting.name, file, index + 1, label, walls.get(name))
        planted = sitting.slowdowns[label]
        if planted:  # divided out: what is left is an A/A job
            regex, pct = planted
            for c, (written, _) in job.benchmarks.items():
                if regex.search(written):
                    job.factors[c] /= 1 + pct / 100
        sitting.jobs.append(job)
    return sitting


def load_job(sitting, file, position, label, wall):
    try:
        document = files.load_result(file)
    except files.InputError as e:
        raise BadInput(str(e)) from None
    fixed, timed = visit_seconds(document)
    benchmarks = job_rows(document)
    visits = machines.xferbench_context(machines.context_of(document))["visits"]
    return Job(
        sitting,
        file,
        position,
        label,
        document,
        benchmarks,
        visit_figures(document),
        wall,
        fixed,
        timed,
        factors=dict.fromkeys(benchmarks, 1.0),
        merge_rows={c: job_row(row) for c, (_, row) in benchmarks.items()},
        visit_lists=[
            (w, names.canonical_name(names.normalise_name(w)), entries)
            for w, entries in visits.items()
        ],
    )


@dataclass
class Pool:
    sittings: list
    jobs: list
    blocks: list  # (job, job): the two jobs of an ABBA pair
    rows: list  # canonical names, in the first job's order
    families: list
    family: dict  # canonical row -> its family
    offsets: dict  # family -> per sitting, the offset align removed (percent)


def make_up(job):
    x = machines.xferbench_context(machines.context_of(job.document))
    return {k: x.get(k) for k in MAKE_UP}


def align(sittings, row_names):
    """Make each row's geometric mean over each sitting's A/A jobs the same (in the jobs'
    factors); per family, the offsets removed from each sitting, percent. (Within a sitting the
    jobs' spread about their own mean loses 1/jobs of its variance: 0.8% of the sd at 60.)"""
    shifts = {}  # row -> per sitting: its mean log A/A figure less the mean over sittings
    for row in row_names:
        means = []
        for s in sittings:
            logs = [math.log(j.seconds[row] * j.factors[row]) for j in s.jobs if j.seconds.get(row)]
            means.append(statistics.fmean(logs) if logs else math.nan)
        known = [m for m in means if math.isfinite(m)]
        shifts[row] = [m - statistics.fmean(known) if known else math.nan for m in means]
        for s, shift in zip(sittings, shifts[row]):
            if math.isfinite(shift):
                for j in s.jobs:
                    j.factors[row] *= math.exp(-shift)
    offsets = {}
    for row, per in shifts.items():
        offsets.setdefault(noise.family_of(row), []).append(per)
    return {
        family: [
            100 * math.expm1(statistics.fmean([p[i] for p in per if math.isfinite(p[i])] or [0]))
            for i in range(len(sittings))
        ]
        for family, per in offsets.items()
    }


def build_pool(sittings):
    jobs = [j for s in sittings for j in s.jobs]
    first = jobs[0]
    for job in jobs[1:]:
        if set(job.written) != set(first.written):
            raise BadInput(f"{job.name}: other rows than {first.name}; one selection per pool")
        if make_up(job) != make_up(first):
            raise BadInput(f"{job.name}: another build, machine or settings than {first.name}")
    row_names = list(first.written)
    offsets = align(sittings, row_names) if len(sittings) > 1 else {}
    blocks = [(s.jobs[k], s.jobs[k + 1]) for s in sittings for k in range(0, len(s.jobs), 2)]
    family = {r: noise.family_of(r) for r in row_names}
    families = list(dict.fromkeys(family.values()))
    return Pool(sittings, jobs, blocks, row_names, families, family, offsets)


# ------------------------------------------------------------------ merging and judging


def failure(row):
    """Why xferbench's merge would take this job's row as failed (merge.cpp job_figure), or
    None."""
    if rows.is_failed(row):
        return rows.failure_message(row)
    if not (rows.positive(row.get("latency_us")) and rows.positive(row.get("iterations"))):
        return "the result file holds no time for it"
    return None


@dataclass(frozen=True)
class JobRow:
    """What the merge takes from one job's row (merge.cpp job_figure)."""

    failure: str | None
    latency_us: float
    iterations: int
    link_gbps: float | None


def job_row(row):
    why = failure(row)
    if why:
        return JobRow(why, math.nan, 0, None)
    return JobRow(
        None, row["latency_us"], int(row["iterations"]), rows.positive(row.get("link_gbps"))
    )


def merged_row(first, members, name):
    """One merged benchmark row of the members' jobs (merge.cpp combine_jobs and
    report_figure, as far as the judgement and the report read them)."""
    out = {k: first[k] for k in ("name", "run_name", "time_unit") if k in first}
    out.update(run_type="iteration", repetitions=1, repetition_index=0, threads=1)
    figures = [(job.merge_rows[name], factors[name]) for job, factors in members]
    for k, (figure, _) in enumerate(figures):
        if figure.failure:
            return dict(
                out,
                error_occurred=True,
                error_message=f"job {k + 1} of {len(members)}: {figure.failure}",
            )
    one_way = statistics.fmean(figure.latency_us * f for figure, f in figures) * 1e-6
    moved = (names.message_bytes(name) or 0) * (2 if "/mode:bidir/" in name else 1)
    moved *= first.get("pairs", 1) or 1
    links = [figure.link_gbps for figure, _ in figures if figure.link_gbps]
    if links and moved / one_way / 1e9 > min(links):
        return dict(out, error_occurred=True, error_message="over the line rate")
    unit = first.get("time_unit", "ns")
    out.update(
        iterations=sum(figure.iterations for figure, _ in figures),
        real_time=one_way * 1e6 / rows.TIME_UNIT_TO_US[unit],
        cpu_time=0.0,
        latency_us=one_way * 1e6,
        bytes_per_second=moved / one_way,
        jobs=len(members),
    )
    out["GB/s"] = moved / one_way / 1e9
    return out


def merged_document(members, keep=None):
    """xferbench --xfer_merge of members [(Job, {row: factor})], each job's times multiplied by
    its factors, with only the rows in keep (None: all): the first job's context with every
    job's visits tagged with its job, and one row per benchmark, failed where a job's failed."""
    first_job = members[0][0]
    wanted = [c for c in first_job.benchmarks if keep is None or c in keep]
    benchmarks = [merged_row(first_job.benchmarks[c][1], members, c) for c in wanted]
    visits = {}
    for k, (job, factors) in enumerate(members):
        for written, c, entries in job.visit_lists:
            if keep is not None and c not in keep:
                continue
            f = factors[c]
            merged = visits.setdefault(written, [])
            for v in entries:
                v = dict(v, job=k)
                if finite.is_finite_number(v.get("latency_us")):
                    v["latency_us"] *= f
                merged.append(v)
    context = dict(first_job.document["context"])
    x = dict(context["xferbench"])
    x.update(
        jobs=len(members),
        merged={"jobs": len(members), "sources": [os.path.basename(j.file) for j, _ in members]},
        visits=visits,
        summary=None,
        incomplete=None,
    )
    context["xferbench"] = x
    return {"context": context, "benchmarks": benchmarks}


def scaled_job(job, factors, keep, planned):
    """A copy of the job's document with its times multiplied by factors (every time field:
    module docstring), only the rows in keep, and planned jobs (--xfer_jobs) set to the number
    merged, so that xferbench merges it as a whole run's job."""
    document = copy.deepcopy(job.document)
    x = document["context"]["xferbench"]
    x["plan"]["jobs"] = planned
    kept = []
    for row in document["benchmarks"]:
        name = names.canonical_name(rows.written_name(row))
        if keep is not None and name not in keep:
            continue
        f = factors[name]
        for k in TIME_FIELDS:
            if finite.is_finite_number(row.get(k)):
                row[k] *= f
        for k in RATE_FIELDS:
            if finite.is_finite_number(row.get(k)):
                row[k] /= f
        kept.append(row)
    document["benchmarks"] = kept
    visits = {}
    for written, entries in x["visits"].items():
        c = names.canonical_name(names.normalise_name(written))
        if keep is None or c in keep:
            for v in entries:
                if finite.is_finite_number(v.get("latency_us")):
                    v["latency_us"] *= factors[c]
            visits[written] = entries
    x["visits"] = visits
    return document


def xferbench_merge(build, members, keep, directory, label):
    """The real xferbench --xfer_merge of the members' scaled jobs; the loaded result."""
    paths = []
    for k, (job, factors) in enumerate(members):
        path = os.path.join(directory, f"{label}-{k + 1:02d}.json")
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(scaled_job(job, factors, keep, len(members)), stream)
        paths.append(path)
    out = os.path.join(directory, f"{label}.json")
    command = [
        os.path.join(build, "xferbench"),
        f"--xfer_merge={','.join(paths)}",
        f"--benchmark_out={out}",
        "--benchmark_color=false",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1) or not os.path.isfile(out):
        raise BadInput(f"xferbench --xfer_merge failed ({done.returncode}): {done.stderr[-300:]}")
    return files.load_result(out)


def judge(a_document, b_document, options):
    """tools/ab's judgement of two merged sides (ab_jobs.sit)."""
    base = report.load_side("base", ["A"], {"A": a_document})
    new = report.load_side("new", ["B"], {"B": b_document})
    return report.build_report(base, new, options, machines.hardware_identity)


def flagged(result):
    """Families and rows flagged either way, and rows failed in B only."""
    out = [f["family"] for f in result["families_judged"] if f["status"] in ("slower", "faster")]
    return out + [
        r["name"]
        for r in result["rows"]
        if r["status"] in ("slower", "faster") or r["failed_in"] == "new"
    ]


def verdict(result):
    """What a report decided, for comparing two ways to the same report."""
    return (
        tuple((f["family"], f["status"], f["rows"]) for f in result["families_judged"]),
        tuple((r["name"], r["status"], r["failed_in"]) for r in result["rows"]),
        tuple(result["regressions"]),
    )


def largest_difference(first, second):
    """The largest relative difference between the families' numbers of two reports."""
    worst = 0.0
    for f, g in zip(first["families_judged"], second["families_judged"]):
        for k in ("change_percent", "ci95_percent", "noise_percent", "p_value"):
            if f[k] is not None and g[k] is not None and f[k] != g[k]:
                worst = max(worst, abs(f[k] - g[k]) / max(abs(f[k]), abs(g[k])))
    return worst


# ------------------------------------------------------------------ resampling


@dataclass(frozen=True)
class Case:
    key: str
    selection: str | None  # one family alone; None: every row of the sittings
    planted: str | None  # the family B's rows of are slowed
    pct: float
    n: int


POOL = None  # the Pool, set before the workers fork
OPTIONS = None


def draw(case, index, seed):
    """The two sides of one resampled run: [(Job, factors)] each."""
    rng = np.random.default_rng([seed, zlib.crc32(case.key.encode()), index])
    chosen = rng.choice(len(POOL.blocks), size=case.n, replace=False)
    flips = rng.integers(0, 2, size=case.n)
    a, b = [], []
    for block, flip in zip(chosen, flips):
        first, second = POOL.blocks[block]
        a.append(second if flip else first)
        b.append(first if flip else second)
    scale = 1 + case.pct / 100
    planted = [
        {c: f * scale if POOL.family[c] == case.planted else f for c, f in job.factors.items()}
        for job in b
    ]
    return [(j, j.factors) for j in a], list(zip(b, planted))


def keep_of(case):
    return (
        None
        if case.selection is None
        else {c for c in POOL.rows if POOL.family[c] == case.selection}
    )


def outcome(case, result):
    """(planted family flagged slower, anything flagged, exit 1, anything else flagged, the
    planted family's change in percent)."""
    seen = flagged(result)
    families = {f["family"]: f for f in result["families_judged"]}
    planted = families.get(case.planted, {})
    others = [x for x in seen if x != case.planted and noise.family_of(x) != case.planted]
    return (
        planted.get("status") == "slower",
        bool(seen),
        bool(result["regressions"]),
        bool(others),
        planted.get("change_percent"),
    )


def run_resamples(case, indices, seed):
    keep = keep_of(case)
    out = []
    for index in indices:
        a, b = draw(case, index, seed)
        result = judge(merged_document(a, keep), merged_document(b, keep), OPTIONS)
        out.append(outcome(case, result))
    return out


def resample_cases(cases, resamples, seed, workers):
    """{case key: [outcome per resample]}."""
    chunks = [(c, range(k, min(k + 25, resamples))) for c in cases for k in range(0, resamples, 25)]
    results = {c.key: [] for c in cases}
    if workers <= 1:
        for case, indices in chunks:
            results[case.key] += run_resamples(case, indices, seed)
        return results
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as executor:
        futures = [(c, executor.submit(run_resamples, c, i, seed)) for c, i in chunks]
        for case, future in futures:
            results[case.key] += future.result()
    return results


def verify(build, cases, count, seed):
    """(identical verdicts, runs, largest relative difference in the families' numbers) of
    count resampled runs of each case, merged here and by xferbench."""
    same, runs, worst = 0, 0, 0.0
    with tempfile.TemporaryDirectory(prefix="ab-resample-") as directory:
        for case in cases:
            keep = keep_of(case)
            for index in range(count):
                a, b = draw(case, index, seed)
                mine = judge(merged_document(a, keep), merged_document(b, keep), OPTIONS)
                real = judge(
                    xferbench_merge(build, a, keep, directory, "a"),
                    xferbench_merge(build, b, keep, directory, "b"),
                    OPTIONS,
                )
                runs += 1
                same += verdict(mine) == verdict(real)
                worst = max(worst, largest_difference(mine, real))
    return same, runs, worst


# ------------------------------------------------------------------ costs and power


@dataclass
class Costs:
    start_s: float  # a job's start-up and tear-down: launcher seconds less its visits'
    fixed_s: dict  # family -> a job's set-up, warm-up and checks of its visits
    timed_s: dict  # family -> a job's timed seconds (its 1/N share)
    extra_s: float  # a sitting's merges and judgement
    recorded: int  # N: jobs a side of the sittings
    from_log: bool  # launcher seconds known (else from the sittings' totals)

    def side_jobs(self, budget, families, most):
        """The most jobs a side (2 to most) whose sitting fits budget seconds; 0 if none."""
        fixed = sum(self.fixed_s.get(f, 0) for f in families)
        timed = sum(self.timed_s.get(f, 0) for f in families)
        for n in range(most, 1, -1):
            if 2 * n * (self.start_s + fixed) + 2 * self.recorded * timed + self.extra_s <= budget:
                return n
        return 0

    def sitting_s(self, n, families):
        fixed = sum(self.fixed_s.get(f, 0) for f in families)
        timed = sum(self.timed_s.get(f, 0) for f in families)
        return 2 * n * (self.start_s + fixed) + 2 * self.recorded * timed + self.extra_s


def job_costs(pool):
    jobs = pool.jobs
    recorded = {s.ab["jobs_per_side"] for s in pool.sittings}
    if len(recorded) != 1:
        raise BadInput(f"sittings of different jobs a side ({sorted(recorded)}): one per pool")
    fixed = {f: statistics.fmean(j.fixed_s.get(f, 0) for j in jobs) for f in pool.families}
    timed = {f: statistics.fmean(j.timed_s.get(f, 0) for j in jobs) for f in pool.families}
    visits = [sum(j.fixed_s.values()) + sum(j.timed_s.values()) for j in jobs]
    from_log = all(j.wall_s is not None for j in jobs)
    if from_log:
        start = statistics.fmean(j.wall_s - v for j, v in zip(jobs, visits))
        extra = statistics.fmean(
            s.ab["wall_s"] - sum(j.wall_s for j in s.jobs) for s in pool.sittings
        )
    else:  # each job's share of the sitting's whole time, merges included
        walls = [s.ab["wall_s"] / len(s.jobs) for s in pool.sittings for _ in s.jobs]
        start = statistics.fmean(w - v for w, v in zip(walls, visits))
        extra = 0.0
    return Costs(max(start, 0.0), fixed, timed, max(extra, 0.0), recorded.pop(), from_log)


def family_spreads(pool):
    """Per family: sd over the pool's jobs of its per-job shift as the judgement makes it
    (noise.fit's family shift, which replicates.judge compares between the sides), log."""
    runs = [
        {c: (j.seconds[c] * j.factors[c] if j.seconds.get(c) else noise.FAILED) for c in pool.rows}
        for j in pool.jobs
    ]
    table = noise.table(runs, rows=pool.rows)
    model = noise.fit(table)
    return {
        name: float(np.nanstd(model.shifts[:, i], ddof=1)) for i, name in enumerate(table.families)
    }


def detectable_pct(sd, n, families, alpha, threshold_pct):
    """Smallest slowdown flagged with 80% power (normal approximation): the shift must pass
    Benjamini-Hochberg's bar for one family of several (alpha / families, two-sided) and the
    minimum effect."""
    se = sd * math.sqrt(2 / n)
    bar = max(float(stats.norm.isf(alpha / (2 * families))) * se, math.log1p(threshold_pct / 100))
    return 100 * math.expm1(bar + POWER_Z * se)


def rate(hits, total):
    """(share, low, high): Clopper-Pearson 95% interval."""
    low = float(stats.beta.ppf(0.025, hits, total - hits + 1)) if hits else 0.0
    high = float(stats.beta.ppf(0.975, hits + 1, total - hits)) if hits < total else 1.0
    return hits / total, low, high


def shown_rate(r):
    return f"{100 * r[0]:.1f}% [{100 * r[1]:.1f}-{100 * r[2]:.1f}]"


# ------------------------------------------------------------------ the report


def live_lines(sitting):
    """tools/ab's own verdict on the sitting, the same judged here on its own jobs (merged in
    Python) and on tools/ab's merged sides, at tools/ab's alpha and threshold; and the jobs
    with B's factor divided out (A/A, sides as they ran)."""
    stored = sitting.ab["report"]
    options = argparse.Namespace(
        metric="time",
        threshold=stored["threshold_percent"],
        alpha=stored["alpha"],
        filter=None,
        cross_machine=False,
    )
    a = [j for j in sitting.jobs if j.label == "A"]
    b = [j for j in sitting.jobs if j.label == "B"]
    recorded = [[(j, dict.fromkeys(j.benchmarks, 1.0)) for j in side] for side in (a, b)]
    again = judge(merged_document(recorded[0]), merged_document(recorded[1]), options)
    stem = os.path.splitext(sitting.path)[0] + ".jobs"
    own = judge(
        files.load_result(os.path.join(stem, "a.json")),
        files.load_result(os.path.join(stem, "b.json")),
        options,
    )
    aa = judge(
        merged_document([(j, j.factors) for j in a]),
        merged_document([(j, j.factors) for j in b]),
        options,
    )
    families = {f["family"]: f for f in stored["families_judged"]}
    planted = sitting.slowdowns["B"]
    planted_families = list(
        dict.fromkeys(
            noise.family_of(c)
            for c, (written, _) in b[0].benchmarks.items()
            if planted and planted[0].search(written)
        )
    )
    seen = [
        f"{f} {families[f]['status']} {families[f]['change_percent']:+.1f}% "
        f"±{families[f]['ci95_percent']:.1f}%"
        for f in planted_families
        if f in families
    ]
    others = [x for x in flagged(stored) if noise.family_of(x) not in planted_families]
    checks = {
        "planted_families": {f: families.get(f, {}).get("status") for f in planted_families},
        "other_flags": others,
        "tools_ab_verdict_reproduced": verdict(again) == verdict(stored),
        "same_as_xferbench_merge": verdict(again) == verdict(own),
        "largest_difference": largest_difference(again, own),
        "aa_flags": flagged(aa),
    }
    lines = [
        f"  {sitting.name}: B {sitting.ab['sides']['B']['env'] or '(as A)'}; tools/ab: exit "
        f"{stored['exit_status']}; planted: {'; '.join(seen) or 'none'}; anything else flagged: "
        f"{', '.join(others) or 'nothing'}",
        "    judged here on its jobs merged in Python: "
        f"{'the same verdict' if checks['tools_ab_verdict_reproduced'] else 'ANOTHER verdict'}"
        f" as tools/ab's; {'identical' if checks['same_as_xferbench_merge'] else 'NOT identical'}"
        " to the judgement of its own a.json, b.json (xferbench's merge; numbers within "
        f"{checks['largest_difference']:.1e})",
        f"    B's factor {'divided out' if planted else '(none)'}, sides as they ran (A/A): "
        f"flagged {', '.join(checks['aa_flags']) or 'nothing'}",
    ]
    return lines, checks


def planted_rows(sitting, label):
    """How many rows the side's slowdown regex finds."""
    planted = sitting.slowdowns[label]
    job = sitting.jobs[0]
    return sum(bool(planted and planted[0].search(w)) for w in job.written.values())


def aa_key(n):
    return f"A/A whole selection, {n} jobs a side"


def default_key(args, family):
    return f"{args.pct_default:g}% whole selection 8 min {family}"


def alone_key(args, family):
    return f"{args.pct_alone:g}% alone 5 min {family}"


def cases_of(pool, n_default, n_alone, args):
    cases = [Case(aa_key(n), None, None, 0.0, n) for n in sorted(set(n_default.values())) if n]
    for family in pool.families:
        if n_default[8]:
            cases.append(
                Case(default_key(args, family), None, family, args.pct_default, n_default[8])
            )
        if n_alone[family]:
            cases.append(
                Case(alone_key(args, family), family, family, args.pct_alone, n_alone[family])
            )
    return cases


def verified_cases(cases):
    """One case of each kind for --verify: A/A, a family planted in the whole selection, and a
    family alone."""
    kinds = (
        lambda c: c.planted is None,
        lambda c: c.planted is not None and c.selection is None,
        lambda c: c.selection is not None,
    )
    return [next(c for c in cases if kind(c)) for kind in kinds if any(map(kind, cases))]


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sittings", nargs="+", metavar="SITTING.json")
    parser.add_argument("--resamples", type=int, default=400, help="per case (default 400)")
    parser.add_argument("--seed", type=int, default=28, help="of the draws (default 28)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--pct-default",
        type=float,
        default=5.0,
        help="slowdown planted in the whole selection, in 8 min (default 5)",
    )
    parser.add_argument(
        "--pct-alone",
        type=float,
        default=3.0,
        help="slowdown planted in one family run alone, in 5 min (default 3)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        help=f"tools/ab's --threshold (default {ab_plan.DEFAULT_THRESHOLD:g})",
    )
    parser.add_argument("--alpha", type=float, help="tools/ab's --alpha (default 0.01)")
    parser.add_argument(
        "--verify",
        type=int,
        default=0,
        metavar="K",
        help="judge K resampled runs of three cases on xferbench's merge too",
    )
    parser.add_argument(
        "--build",
        default=os.environ.get("XFER_BUILD") or os.path.join(repo_tools.ROOT, "build"),
        help="for --verify: the build whose xferbench merges (default $XFER_BUILD or build/)",
    )
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    return parser.parse_args(argv)


def pool_lines(pool):
    labels = [j.label for j in pool.jobs]
    flags = " ".join(pool.sittings[0].ab["flags"]) or "(none: the default selection)"
    lines = [
        f"Pool: {len(pool.sittings)} sittings, {len(pool.jobs)} jobs ({labels.count('A')} ran as "
        f"A, {labels.count('B')} as B) in {len(pool.blocks)} ABBA pairs; {len(pool.rows)} rows "
        f"in {len(pool.families)} families; flags: {flags}"
    ]
    if len(pool.jobs) < 120:
        lines.append(f"  (issue 28 asks for 60 jobs a side or more: {len(pool.jobs) // 2} here)")
    for s in pool.sittings:
        lines.append(
            f"  {s.name}: {s.ab['jobs_per_side']} jobs a side, {s.ab['wall_s']:.0f} s; B's env "
            f"{s.ab['sides']['B']['env'] or '{}'}: factor divided out of "
            f"{planted_rows(s, 'B')} rows of B, {planted_rows(s, 'A')} of A"
        )
    if pool.offsets:
        family, offsets = max(pool.offsets.items(), key=lambda kv: max(map(abs, kv[1])))
        lines.append(
            f"  sittings aligned row by row; the largest family offset removed: {family} "
            f"{', '.join(f'{x:+.1f}%' for x in offsets)}"
        )
    return lines


def cost_lines(costs, pool, n_default, most):
    source = "tools/ab's stderr" if costs.from_log else "the sittings' totals (no stderr kept)"
    lines = [
        f"A job's cost (means over the pool's jobs; launcher seconds from {source}): start-up "
        f"{costs.start_s:.2f} s, its visits' set-up, warm-up and checks "
        f"{sum(costs.fixed_s.values()):.2f} s, timed {sum(costs.timed_s.values()):.2f} s (a "
        f"1/{costs.recorded} share); a sitting's merges and judgement {costs.extra_s:.1f} s"
    ]
    took = ", ".join(f"{s.ab['wall_s']:.0f}" for s in pool.sittings)
    lines.append(
        f"  the model for the sittings' {costs.recorded} jobs a side: "
        f"{costs.sitting_s(costs.recorded, pool.families):.0f} s; they took {took} s"
    )
    why = "tools/ab's most" if most == ab.MAX_JOBS else "all the pool's pairs"
    for m, n in n_default.items():
        if not n:
            lines.append(f"  whole selection in {m} min: not even 2 jobs a side fit")
            continue
        capped = f"; capped at {most}, {why}" if n == most else ""
        lines.append(
            f"  whole selection in {m} min: {n} jobs a side (a sitting of "
            f"{costs.sitting_s(n, pool.families):.0f} s{capped})"
        )
    if max(n_default.values()) > len(pool.blocks) / 2:
        lines.append(
            f"  (runs of more than half the pool's {len(pool.blocks)} pairs share most of their "
            "jobs: their rates rest on fewer independent jobs than the runs' count suggests)"
        )
    return lines


def family_table(pool, spreads, n_default, n_alone, rates, args, alpha, threshold):
    many = len(pool.families)
    lines = [
        f"Per family. sd/job: the sd over the pool's jobs of the family's per-job shift as the "
        f"judgement makes it (noise.fit). MDE: the smallest slowdown flagged with 80% power "
        f"(normal approximation; Benjamini-Hochberg's bar alpha {alpha:g} / {many} families, "
        f"/ 1 alone; at least the {threshold:g}% minimum effect). Rates: share of "
        f"{args.resamples} resampled runs flagging the family slower, with its 95% interval.",
        f"{'family':58s} {'rows':>4s} {'sd/job':>7s} {'MDE 5m':>7s} {'MDE 8m':>7s} "
        f"{f'{args.pct_default:g}% in 8 min':>21s}  {'alone n':>7s} {'MDE':>6s} "
        f"{f'{args.pct_alone:g}% in 5 min':>21s}",
    ]
    table = {}
    for family in pool.families:
        sd = spreads[family]
        mde = {
            m: detectable_pct(sd, n, many, alpha, threshold) if n else math.nan
            for m, n in n_default.items()
        }
        n1 = n_alone[family]
        alone = detectable_pct(sd, n1, 1, alpha, threshold) if n1 else math.nan
        noise_only = detectable_pct(sd, n1, 1, alpha, 0) if n1 else math.nan
        found = [rates.get(default_key(args, family)), rates.get(alone_key(args, family))]
        shown = [shown_rate(r["detected"]) if r else "-" for r in found]
        count = sum(noise.family_of(c) == family for c in pool.rows)
        lines.append(
            f"{family[:58]:58s} {count:4d} {100 * math.expm1(sd):6.2f}% {mde[5]:6.1f}% "
            f"{mde[8]:6.1f}% {shown[0]:>21s}  {n1:7d} {alone:5.1f}% {shown[1]:>21s}"
        )
        table[family] = {
            "rows": count,
            "sd_per_job_pct": 100 * math.expm1(sd),
            "mde_whole_5min_pct": mde[5],
            "mde_whole_8min_pct": mde[8],
            "n_alone_5min": n1,
            "mde_alone_5min_pct": alone,
            "mde_alone_5min_without_minimum_pct": noise_only,
        }
    lines.append(
        f"(jobs a side: MDE 5m {n_default[5]}; MDE 8m and the {args.pct_default:g}% rates "
        f"{n_default[8]}; alone: n)"
    )
    return lines, table


def target_lines(pool, table, rates, n_default, args, threshold):
    """Issue 28's targets, met or not, by the rates' point estimates."""
    lines = ["Issue 28's targets (point estimates; the intervals above):"]
    low = [
        f"{f} {100 * rates[default_key(args, f)]['detected'][0]:.0f}%"
        for f in pool.families
        if default_key(args, f) in rates and rates[default_key(args, f)]["detected"][0] < 0.8
    ]
    lines.append(
        f"  {args.pct_default:g}% of one family, whole selection, 8 min: flagged in >= 80% of "
        f"runs for {len(pool.families) - len(low)} of {len(pool.families)} families"
        + (f" (not: {'; '.join(low)})" if low else "")
    )
    allowed = [f for f in pool.families if table[f]["mde_alone_5min_without_minimum_pct"] <= 3]
    met = [
        f
        for f in allowed
        if alone_key(args, f) in rates and rates[alone_key(args, f)]["detected"][0] >= 0.8
    ]
    lines.append(
        f"  {args.pct_alone:g}% of one family alone, 5 min: its sd allows it (MDE without the "
        f"minimum effect <= 3%) for {len(allowed)} of {len(pool.families)}; flagged in >= 80% "
        f"for {len(met)} of those"
    )
    if threshold >= args.pct_alone:
        lines.append(
            f"    (at a minimum effect of {threshold:g}% a true {args.pct_alone:g}% change is "
            "flagged only where its estimate reaches the minimum: about half the runs at most; "
            "--threshold sets a lower one, as tools/ab --threshold does)"
        )
    for m, n in n_default.items():
        r = rates.get(aa_key(n))
        if r:
            share = r["nothing_flagged"]
            met = "met" if share[0] >= 0.9 else "NOT met"
            lines.append(
                f"  identical sides, {m} min ({n} jobs a side): nothing flagged in "
                f"{shown_rate(share)} of {r['resamples']} runs ({met}: >= 90%); nothing "
                f"slower (exit 0) in {shown_rate(r['exit_0'])}"
            )
    others = [
        rates[default_key(args, f)]["other_flags"]
        for f in pool.families
        if default_key(args, f) in rates
    ]
    if others:
        worst = max(others, key=lambda r: r[0])
        lines.append(
            f"  with one family planted (whole selection), anything else flagged in at most "
            f"{shown_rate(worst)} of runs"
        )
    return lines


def case_rates(cases, results):
    rates = {}
    for case in cases:
        got = results[case.key]
        changes = [o[4] for o in got if o[4] is not None]
        rates[case.key] = {
            "n": case.n,
            "resamples": len(got),
            "detected": rate(sum(o[0] for o in got), len(got)),
            "nothing_flagged": rate(sum(not o[1] for o in got), len(got)),
            "exit_0": rate(sum(not o[2] for o in got), len(got)),
            "other_flags": rate(sum(o[3] for o in got), len(got)),
            "median_change_pct": statistics.median(changes) if changes else None,
        }
    return rates


def main(argv):
    args = parse_args(argv)
    global POOL, OPTIONS
    alpha = args.alpha if args.alpha is not None else judging.DEFAULT_ALPHA[judging.JOBS]
    threshold = args.threshold if args.threshold is not None else ab_plan.DEFAULT_THRESHOLD
    OPTIONS = argparse.Namespace(
        metric="time", threshold=threshold, alpha=args.alpha, filter=None, cross_machine=False
    )
    try:
        sittings = [load_sitting(p) for p in args.sittings]
        POOL = pool = build_pool(sittings)
        costs = job_costs(pool)
    except (BadInput, KeyError, TypeError) as e:
        print(f"ab_resample.py: error: {e}", file=sys.stderr)
        return 2
    print("\n".join(pool_lines(pool)))
    most = min(ab.MAX_JOBS, len(pool.blocks))
    n_default = {m: costs.side_jobs(m * 60, pool.families, most) for m in (5, 8)}
    n_alone = {f: costs.side_jobs(300, [f], most) for f in pool.families}
    print("\n" + "\n".join(cost_lines(costs, pool, n_default, most)))
    print(
        "  one family alone in 5 min (an estimate: start-up plus its visits): "
        + ", ".join(f"{f} {n}" for f, n in n_alone.items())
    )
    out = {
        "sittings": [
            {
                "file": s.path,
                "jobs_per_side": s.ab["jobs_per_side"],
                "wall_s": s.ab["wall_s"],
                "env_b": s.ab["sides"]["B"]["env"],
            }
            for s in pool.sittings
        ],
        "family_offsets_pct": pool.offsets,
        "costs": {
            "start_s": costs.start_s,
            "fixed_s": costs.fixed_s,
            "timed_s": costs.timed_s,
            "extra_s": costs.extra_s,
            "from_log": costs.from_log,
            "n_whole": n_default,
            "n_alone": n_alone,
        },
    }
    print("\nLive sittings:")
    for s, entry in zip(pool.sittings, out["sittings"]):
        lines, entry["checks"] = live_lines(s)
        print("\n".join(lines))
    cases = cases_of(pool, n_default, n_alone, args)
    if args.verify:
        chosen = verified_cases(cases)
        same, runs, worst = verify(args.build, chosen, args.verify, args.seed)
        print(
            f"\n--verify: {same} of {runs} resampled runs ({'; '.join(c.key for c in chosen)})"
            f" judged alike merged here and by xferbench --xfer_merge of the scaled job "
            f"files; the families' numbers within {worst:.1e}"
        )
        out["verify"] = {"same": same, "runs": runs, "largest_difference": worst}
    rates = case_rates(cases, resample_cases(cases, args.resamples, args.seed, args.workers))
    lines, out["families"] = family_table(
        pool, family_spreads(pool), n_default, n_alone, rates, args, alpha, threshold
    )
    print("\n" + "\n".join(lines))
    print("\n" + "\n".join(target_lines(pool, out["families"], rates, n_default, args, threshold)))
    out["cases"] = rates
    if args.json:
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(out, stream, indent=1, default=str)
            stream.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
