"""Judge a new run against the noise learned from earlier runs: per family first, then per row.

A family is judged on its shift (the weighted geometric mean of its rows' ratios to their
baselines) against how much that shift moved between earlier runs. A row is then judged on what
it did beyond its family's shift, against its own residual noise, and must also have moved
against its own baseline by more than its own and its family's noise together; if the family
itself was flagged, its rows are judged on that whole change alone. So rows that stayed put
beside rows that moved are not flagged either way. Families are tested together with
Benjamini-Hochberg false-discovery control, rows likewise, and nothing smaller than a minimum
practical effect is flagged. Improvements are reported and never fail a run.
"""

import math
from collections import Counter
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from ..core.finite import non_finite_as_none
from . import changepoint, noise
from .noise import FAILED, MIN_RUNS, family_of

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no change"

JUDGED = "judged"
MISSING = "missing"  # in the baseline, absent from the new run
UNJUDGED = "unjudged"  # in the new run, but too little baseline to judge it by

ALPHA = 0.01  # false-discovery rate, across families and (separately) across rows
MIN_EFFECT = 0.03  # 3%: smaller shifts are never flagged, however sure


class NotJudgeable(ValueError):
    """No earlier run, or too few and no stated uncertainty: nothing to judge by."""


@dataclass(frozen=True)
class Shift:
    """One judged shift: positive percentages are slower (longer times)."""

    shift_pct: float  # the shift judged (family: its shift; row: see RowJudgement.relative_to)
    noise_pct: float  # one standard deviation of that shift when nothing changed
    detectable_pct: float  # the smallest slowdown that would have been flagged
    p_value: float  # two-sided, before false-discovery control
    df: float  # degrees of freedom of the noise (inf: stated, normal)
    runs: int  # earlier runs the noise came from


@dataclass(frozen=True)
class RowJudgement:
    row: str
    family: str
    status: str  # JUDGED, FAILED, MISSING or UNJUDGED: only JUDGED rows carry numbers
    verdict: str  # REGRESSION, IMPROVEMENT or NO_CHANGE; '' when not judged
    change_pct: float  # the row's time against its baseline, % (NaN when not judged)
    test: Shift  # None when not judged
    relative_to: str  # 'family' (effect beyond the family's shift) or 'baseline' (whole change)
    note: str  # why a row was not judged, or that it failed where it ran before


@dataclass(frozen=True)
class FamilyJudgement:
    family: str
    status: str  # JUDGED, FAILED (every row failed), MISSING, UNJUDGED
    verdict: str
    test: Shift  # None when not judged
    rows_judged: int
    rows_failed: int
    rows_missing: int


@dataclass(frozen=True)
class Judgement:
    verdict: str  # REGRESSION if anything slowed down or broke, else IMPROVEMENT or NO_CHANGE
    regression: bool  # the CI gate: True means fail
    basis: str  # 'history' or 'stated' (tools/track), 'jobs' (two sets of jobs)
    note: str  # what the noise came from, in words
    earlier_runs: int
    alpha: float
    min_effect_pct: float
    reasons: tuple  # one line per flagged family, row, or row broken since the baseline
    families: tuple  # FamilyJudgement, in the order families first appear
    rows: tuple  # RowJudgement, sorted by row name

    def to_dict(self):
        """Plain data for JSON: non-finite numbers become None (strict JSON)."""
        return non_finite_as_none(asdict(self))


def benjamini_hochberg(p_values, alpha, tests=None):
    """Which hypotheses are rejected with the false-discovery rate held at alpha. `tests`: how
    many hypotheses were tested, where `p_values` holds only the smallest of them."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    limits = alpha * np.arange(1, p.size + 1) / max(p.size if tests is None else tests, 1)
    below = np.flatnonzero(p[order] <= limits)
    rejected = np.zeros(p.size, dtype=bool)
    if below.size:
        rejected[order[: below[-1] + 1]] = True
    return rejected


def p_value(shift, sd, df):
    """Two-sided p of a shift with Student's t noise (normal when df is inf)."""
    return float(2 * special.stdtr(df, -abs(shift) / sd))


def detectable(sd, df, alpha, tests, min_effect):
    """Smallest log shift flagged whatever else happened: BH always rejects p <= alpha/tests."""
    critical = -float(special.stdtrit(df, alpha / (2 * max(tests, 1))))
    return max(critical * sd, math.log1p(min_effect))


def _direction(shift):
    return REGRESSION if shift > 0 else IMPROVEMENT


def _pct(log_shift):
    return math.expm1(log_shift) * 100


@dataclass
class Candidate:
    """A row with a baseline and a value in the new run, on its way to a judgement."""

    row: str
    family: str
    deviation: float  # log(new / baseline)
    sd: float  # predictive sd of its own effect
    weight: float
    runs: int
    df: float  # degrees of freedom of sd


BROKEN = "failed; it ran in the baseline"


def _classify(model, new, new_stated, family_of):
    """Split rows into candidates to judge and rows reported by status only."""
    # Rows that ran in the baseline (their window, for the history basis).
    earlier = set(model.rows) | {row for row, count in model.thin.items() if count}
    anywhere = sorted(set(new) | set(model.rows) | set(model.thin))
    candidates, reported = [], []
    for row in anywhere:
        family = model.rows[row].family if row in model.rows else family_of(row)
        if row not in new:
            if row in earlier:
                reported.append(reported_row(row, family, MISSING, "absent from the new run"))
            continue
        value = noise.log_time(new[row])
        if math.isnan(value):
            note = BROKEN if row in earlier else "failed"
            reported.append(reported_row(row, family, FAILED, note))
        elif row not in model.rows:
            count = model.thin.get(row, 0)
            why = (
                f"only {count} earlier values in its window ({MIN_RUNS} needed)"
                if model.basis == "history"
                else "no stated ci95 in the earlier runs"
            )
            reported.append(
                reported_row(row, family, UNJUDGED, why if count else "no earlier value")
            )
        else:
            row_noise = model.rows[row]
            new_sigma = 0.0
            if model.basis == "stated":
                new_sigma = noise.stated_sigma((new_stated or {}).get(row))
                if math.isnan(new_sigma):
                    reported.append(
                        reported_row(row, family, UNJUDGED, "no stated ci95 in the new run")
                    )
                    continue
            candidates.append(
                Candidate(
                    row,
                    family,
                    value - math.log(row_noise.baseline),
                    row_noise.predictive_sd(new_sigma),
                    row_noise.weight,
                    row_noise.runs,
                    row_noise.df,
                )
            )
    return candidates, reported


def reported_row(row, family, status, note):
    """A row judged by its status only (FAILED, MISSING, UNJUDGED), with why in note."""
    return RowJudgement(row, family, status, "", math.nan, None, "", note)


def _family_tests(model, candidates):
    """Per family with candidates: (shift, sd, df, runs)."""
    out = {}
    for name in dict.fromkeys(c.family for c in candidates):
        members = [c for c in candidates if c.family == name]
        deviations = [c.deviation for c in members]
        family_noise = model.families[name]
        if model.basis == "history":
            weights = [c.weight for c in members]
            sd, df = family_noise.predictive_sd(), family_noise.df
        else:
            sds = np.array([c.sd for c in members])
            weights = noise.row_weights(sds)
            # A family's rows move together between processes: the part of their stated
            # spread that is the run-to-run floor does not average out over them.
            sd = float(np.sum(weights * sds) / np.sum(weights))
            df = math.inf
        out[name] = (noise.weighted_shift(deviations, weights), sd, df, family_noise.runs)
    return out


@dataclass(frozen=True)
class _RowTest:
    candidate: Candidate
    effect: float  # log shift judged
    sd: float
    df: float
    relative_to: str
    p: float
    whole_sd: float  # noise of the row's whole change: its own and its family's
    whole_df: float


def _row_test(c, family, family_verdict):
    """A row's test. If its family moved for real, the row's whole change against its own and
    its family's noise. Otherwise the row must stand out twice, in the same direction: beyond
    its family's shift (against its own noise) and against its baseline (against both), so a
    row left behind when half its family sped up is no regression (p is the larger of two)."""
    shift, family_sd, family_df, _ = family
    whole_sd, whole_df = math.hypot(c.sd, family_sd), min(c.df, family_df)
    whole_p = p_value(c.deviation, whole_sd, whole_df)
    if family_verdict != NO_CHANGE:
        return _RowTest(c, c.deviation, whole_sd, whole_df, "baseline", whole_p, whole_sd, whole_df)
    beyond = c.deviation - shift
    p = max(p_value(beyond, c.sd, c.df), whole_p) if beyond * c.deviation > 0 else 1.0
    return _RowTest(c, beyond, c.sd, c.df, "family", p, whole_sd, whole_df)


def _stratified_hits(row_tests, alpha):
    """Benjamini-Hochberg over the rows of families that moved, and separately over all other
    rows: the many true findings in a family that slowed down must not make the test easier
    for rows elsewhere (stratified BH keeps the overall false-discovery rate at alpha)."""
    hits = np.zeros(len(row_tests), dtype=bool)
    for stratum in ("baseline", "family"):
        members = [i for i, t in enumerate(row_tests) if t.relative_to == stratum]
        hits[members] = benjamini_hochberg([row_tests[i].p for i in members], alpha)
    return hits


def judge(
    new,
    model,
    new_stated=None,
    alpha=ALPHA,
    min_effect=MIN_EFFECT,
    fail_on_broken=True,
    family_of=family_of,
):
    """Judge run `new` (row -> seconds, FAILED for a failed row; anything that is not a
    positive time counts as failed) against `model` (noise.learn_noise or noise.stated_noise of
    the earlier runs). new_stated: row -> ci95_pct of the new run, needed when the model is
    stated. A row that ran in the baseline and failed now fails the run unless fail_on_broken
    is False."""
    candidates, reported = _classify(model, new, new_stated, family_of)
    families = _family_tests(model, candidates)
    return decide_tests(
        families,
        candidates,
        reported,
        (model.basis, model.runs, basis_note(model)),
        alpha,
        min_effect,
        fail_on_broken,
    )


def decide_tests(
    families, candidates, reported, basis, alpha=ALPHA, min_effect=MIN_EFFECT, fail_on_broken=True
):
    """The judgement, family first and then rows, of tests already made: families maps a
    family to (log shift, sd, df, runs), candidates are the rows to judge (Candidate), reported
    the rows judged by status only (reported_row); basis is (name, runs, what the noise came
    from in words). tools/track judges a run against its history this way, and tools/compare.py
    and tools/ab two sets of jobs (xfertools/compare/replicates.py)."""
    practical = math.log1p(min_effect)
    names = list(families)
    family_p = [p_value(families[n][0], families[n][1], families[n][2]) for n in names]
    family_hit = benjamini_hochberg(family_p, alpha)
    family_results = {}
    for name, p, hit in zip(names, family_p, family_hit):
        shift, sd, df, runs = families[name]
        verdict = _direction(shift) if hit and abs(shift) >= practical else NO_CHANGE
        least = detectable(sd, df, alpha, len(names), min_effect)
        family_results[name] = (verdict, Shift(_pct(shift), _pct(sd), _pct(least), p, df, runs))

    row_tests = [_row_test(c, families[c.family], family_results[c.family][0]) for c in candidates]
    row_hit = _stratified_hits(row_tests, alpha)
    stratum = Counter(t.relative_to for t in row_tests)
    rows = list(reported)
    for t, hit in zip(row_tests, row_hit):
        c = t.candidate
        flagged = hit and abs(t.effect) >= practical and abs(c.deviation) >= practical
        least = detectable(t.whole_sd, t.whole_df, alpha, stratum[t.relative_to], min_effect)
        test = Shift(_pct(t.effect), _pct(t.sd), _pct(least), t.p, t.df, c.runs)
        rows.append(
            RowJudgement(
                c.row,
                c.family,
                JUDGED,
                _direction(t.effect) if flagged else NO_CHANGE,
                _pct(c.deviation),
                test,
                t.relative_to,
                "",
            )
        )
    rows.sort(key=lambda r: r.row)
    return _summary(basis, rows, family_results, alpha, min_effect, fail_on_broken)


def _summary(basis, rows, family_results, alpha, min_effect, fail_on_broken):
    families = []
    for name in dict.fromkeys(r.family for r in rows):
        members = [r for r in rows if r.family == name]
        count = {s: sum(r.status == s for r in members) for s in (JUDGED, FAILED, MISSING)}
        if name in family_results:
            verdict, test = family_results[name]
            status = JUDGED
        else:
            verdict, test = "", None
            status = FAILED if count[FAILED] else MISSING if count[MISSING] else UNJUDGED
        families.append(
            FamilyJudgement(
                name, status, verdict, test, count[JUDGED], count[FAILED], count[MISSING]
            )
        )
    reasons = []
    for f in families:
        if f.verdict in (REGRESSION, IMPROVEMENT):
            reasons.append(
                f"{f.family}: {f.verdict}, shift {f.test.shift_pct:+.1f}% "
                f"(noise {f.test.noise_pct:.1f}%, detectable "
                f"{f.test.detectable_pct:.1f}%)"
            )
    for r in rows:
        if r.verdict in (REGRESSION, IMPROVEMENT):
            beyond = " beyond its family" if r.relative_to == "family" else ""
            reasons.append(
                f"{r.row}: {r.verdict}, {r.test.shift_pct:+.1f}%{beyond} "
                f"(noise {r.test.noise_pct:.1f}%, detectable "
                f"{r.test.detectable_pct:.1f}%)"
            )
        elif r.note == BROKEN:
            reasons.append(f"{r.row}: {r.note}")
    slower = any(x.verdict == REGRESSION for x in (*families, *rows))
    broken = fail_on_broken and any(r.note == BROKEN for r in rows)
    faster = any(x.verdict == IMPROVEMENT for x in (*families, *rows))
    verdict = REGRESSION if slower or broken else IMPROVEMENT if faster else NO_CHANGE
    name, runs, note = basis
    return Judgement(
        verdict,
        verdict == REGRESSION,
        name,
        note,
        runs,
        alpha,
        min_effect * 100,
        tuple(reasons),
        tuple(families),
        tuple(rows),
    )


def basis_note(model):
    if model.basis == "history":
        return (
            f"noise learned from {model.runs} earlier runs (each row and family from those "
            "since its last change): how each family shifts between runs, and how each row "
            "moves beyond its family"
        )
    return (
        f"only {model.runs} earlier run{'s' if model.runs != 1 else ''} ({MIN_RUNS} needed "
        "to learn noise): judged by the rows' stated ci95, which covers the noise within "
        "a run, not how a family moves between runs"
    )


def baseline_model(history, stated=None, cap=changepoint.CAP, family_of=family_of, changes=None):
    """The noise model a new run is judged against: learned in the baseline windows after the
    change points of `history` (earlier runs, oldest first; `changes` if already found), or
    with fewer than MIN_RUNS earlier runs, from their stated ci95 (`stated`: per earlier run,
    row -> ci95_pct). Raises NotJudgeable when there is nothing to judge by."""
    if not history:
        raise NotJudgeable("no earlier run to judge by")
    if noise.enough_history(len(history)):
        if changes is None:
            changes = changepoint.history_changes(history, family_of)
        starts = changepoint.baseline_starts(history, changes, cap, family_of)
        return noise.learn_noise(history, starts, stated, family_of)
    if stated is None:
        raise NotJudgeable(
            f"{len(history)} earlier runs ({MIN_RUNS} needed to learn noise) "
            "and no stated ci95 to fall back on"
        )
    return noise.stated_noise(history, stated, family_of)


def check(
    history,
    new,
    stated=None,
    new_stated=None,
    cap=changepoint.CAP,
    alpha=ALPHA,
    min_effect=MIN_EFFECT,
    fail_on_broken=True,
    family_of=family_of,
    changes=None,
):
    """The whole decision for one new run: baseline_model of `history`, and the judgement.
    With fewer than MIN_RUNS earlier runs, the rows' stated ci95 (`stated` for the earlier
    runs, `new_stated`: row -> ci95_pct of the new run) is the noise. Raises NotJudgeable when
    there is nothing to judge by."""
    if not noise.enough_history(len(history)) and new_stated is None:
        stated = None  # the fallback needs the stated ci95 of both sides
    model = baseline_model(history, stated, cap, family_of, changes)
    return judge(new, model, new_stated, alpha, min_effect, fail_on_broken, family_of)
