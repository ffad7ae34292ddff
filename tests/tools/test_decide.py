"""Tests for tools/xfertools/verdict/decide.py: judging a new run against a history of runs.

The first two classes hold the gate to its targets on synthetic histories (1-10% row noise, shared
family shifts): no noise-only run flagged, a 10% shift of one family caught.

    python3 -m unittest discover -s tests/tools -p 'test_decide.py'
"""

import json
import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from xfertools.verdict import decide, noise, synthetic  # noqa: E402
from xfertools.verdict.decide import IMPROVEMENT, NO_CHANGE, REGRESSION  # noqa: E402
from xfertools.verdict.noise import FAILED  # noqa: E402

EARLIER = 30  # earlier runs in each synthetic history, the default baseline cap


def check(made, index=EARLIER, **options):
    """Judge run `index` of a synthetic history against the EARLIER runs before it."""
    return decide.check(
        made.runs[:EARLIER], made.runs[index], made.stated[:EARLIER], made.stated[index], **options
    )


one_family = synthetic.one_family


def scaled(run, factor, rows):
    return {row: t * factor if row in rows else t for row, t in run.items()}


class NoiseOnly(unittest.TestCase):
    def test_no_run_is_flagged_in_20_noise_only_histories(self):
        for seed in range(20):
            made = synthetic.history(runs=EARLIER + 1, seed=seed)
            judgement = check(made)
            self.assertEqual(judgement.verdict, NO_CHANGE, (seed, judgement.reasons))
            self.assertFalse(judgement.regression)
            self.assertEqual(judgement.reasons, ())
            self.assertEqual(judgement.basis, "history")


class FamilyShift(unittest.TestCase):
    def test_a_10_percent_slower_family_is_caught_in_at_least_9_of_10_histories(self):
        caught = []
        for seed in range(10):
            family = synthetic.family_names(10)[seed]
            made = synthetic.history(
                runs=EARLIER + 1, seed=100 + seed, steps=[synthetic.Step(family, EARLIER, 1.10)]
            )
            self.assertGreaterEqual(sum(r.startswith(family + "/") for r in made.runs[0]), 8)
            judgement = check(made)
            verdicts = {f.family: f for f in judgement.families}
            caught.append(verdicts[family].verdict == REGRESSION)
            if caught[-1]:
                self.assertTrue(judgement.regression)
                test = verdicts[family].test
                self.assertAlmostEqual(test.shift_pct, 10, delta=6)
                self.assertLess(test.detectable_pct, 10)
            # Whatever else is flagged, no other family is called slower.
            self.assertEqual(
                [
                    f.family
                    for f in judgement.families
                    if f.verdict == REGRESSION and f.family != family
                ],
                [],
                seed,
            )
        self.assertGreaterEqual(sum(caught), 9, caught)

    def test_a_flag_states_the_shift_its_noise_and_the_smallest_detectable_shift(self):
        made = one_family(EARLIER + 1, shift_sd=0.01, row_sd=0.02)
        model = noise.learn_noise(made.runs[:EARLIER])
        new = scaled(made.runs[EARLIER], 1.2, made.base)
        judgement = decide.judge(new, model)
        family = judgement.families[0]
        self.assertEqual(family.verdict, REGRESSION)
        self.assertAlmostEqual(family.test.shift_pct, 20, delta=4)
        self.assertAlmostEqual(family.test.noise_pct, 1.1, delta=0.5)
        self.assertIn(f"{family.family}: regression, shift +", judgement.reasons[0])
        self.assertIn("noise", judgement.reasons[0])
        self.assertIn("detectable", judgement.reasons[0])
        # What it calls detectable is what it flags: a shift just above is caught, just below
        # is not.
        least = family.test.detectable_pct / 100
        self.assertGreater(least, 0.03)

        def verdict(factor):
            run = {row: r.baseline * factor for row, r in model.rows.items()}
            return decide.judge(run, model).families[0].verdict

        self.assertEqual(verdict(1 + 1.05 * least), REGRESSION)
        self.assertEqual(verdict(1 + 0.95 * least), NO_CHANGE)

    def test_a_family_that_always_moves_a_lot_is_not_flagged_for_10_percent(self):
        # Like pageable host staging: 14% between processes. 10% slower is within its noise,
        # and the judgement says it could not have seen a 10% shift.
        made = one_family(EARLIER + 1, shift_sd=0.14, row_sd=0.02)
        new = scaled(made.runs[EARLIER], 1.10, made.base)
        family = decide.check(made.runs[:EARLIER], new).families[0]
        self.assertEqual(family.verdict, NO_CHANGE)
        self.assertGreater(family.test.detectable_pct, 30)

    def test_a_significant_shift_below_the_minimum_effect_is_not_flagged(self):
        made = one_family(EARLIER + 1, shift_sd=0.001, row_sd=0.001)
        new = scaled(made.runs[EARLIER], 1.02, made.base)
        judgement = decide.check(made.runs[:EARLIER], new)
        self.assertEqual(judgement.verdict, NO_CHANGE)
        self.assertLess(judgement.families[0].test.p_value, 1e-6)
        self.assertAlmostEqual(judgement.families[0].test.detectable_pct, 3.0)
        self.assertEqual(
            decide.check(made.runs[:EARLIER], new, min_effect=0.01).verdict, REGRESSION
        )

    def test_an_improvement_is_reported_and_does_not_fail(self):
        made = one_family(EARLIER + 1, shift_sd=0.01, row_sd=0.02)
        judgement = decide.check(made.runs[:EARLIER], scaled(made.runs[EARLIER], 0.8, made.base))
        self.assertEqual(judgement.families[0].verdict, IMPROVEMENT)
        self.assertEqual(judgement.verdict, IMPROVEMENT)
        self.assertFalse(judgement.regression)


class Rows(unittest.TestCase):
    def test_rows_that_slowed_down_are_named_and_their_neighbours_are_not(self):
        # Like CUDA IPC off: the large sizes of a family 18x slower, the small ones untouched.
        made = one_family(EARLIER + 1, shift_sd=0.005, row_sd=0.01, rows=28)
        large = {row for row in made.base if int(row.rsplit(":", 1)[1]) >= 65536}
        judgement = decide.check(made.runs[:EARLIER], scaled(made.runs[EARLIER], 18, large))
        flagged = {r.row for r in judgement.rows if r.verdict == REGRESSION}
        self.assertEqual(flagged, large)
        self.assertEqual([r.row for r in judgement.rows if r.verdict == IMPROVEMENT], [])
        self.assertEqual(judgement.families[0].verdict, REGRESSION)

    def test_when_a_whole_family_slowed_its_steady_rows_are_named_by_their_whole_change(self):
        made = one_family(EARLIER + 1, shift_sd=0.005, row_sd=0.005, rows=16)
        judgement = decide.check(made.runs[:EARLIER], scaled(made.runs[EARLIER], 1.2, made.base))
        self.assertEqual(judgement.families[0].verdict, REGRESSION)
        for row in judgement.rows:
            self.assertEqual((row.verdict, row.relative_to), (REGRESSION, "baseline"), row.row)
            self.assertAlmostEqual(row.test.shift_pct, 20, delta=3)

    def test_one_row_slower_in_a_steady_family_is_flagged_beyond_its_family(self):
        made = one_family(EARLIER + 1, shift_sd=0.02, row_sd=0.01, rows=20)
        row = sorted(made.base)[5]
        judgement = decide.check(made.runs[:EARLIER], scaled(made.runs[EARLIER], 1.15, {row}))
        self.assertEqual(judgement.families[0].verdict, NO_CHANGE)
        flagged = [r for r in judgement.rows if r.verdict != NO_CHANGE]
        self.assertEqual(
            [(r.row, r.verdict, r.relative_to) for r in flagged], [(row, REGRESSION, "family")]
        )
        self.assertAlmostEqual(flagged[0].test.shift_pct, 15, delta=4)

    def test_rows_left_behind_by_a_family_that_sped_up_are_not_regressions(self):
        made = one_family(EARLIER + 1, shift_sd=0.03, row_sd=0.01, rows=20)
        half = set(sorted(made.base)[:10])
        judgement = decide.check(made.runs[:EARLIER], scaled(made.runs[EARLIER], 0.85, half))
        self.assertFalse(judgement.regression, judgement.reasons)
        self.assertEqual([r.verdict for r in judgement.rows if r.row not in half], [NO_CHANGE] * 10)

    def test_a_row_that_flipped_between_two_levels_before_is_not_flagged_when_it_flips(self):
        # A bimodal row: a quarter of earlier runs 30% slower. Its spread is learned as it is
        # (not trimmed away), so the next flip is within its noise.
        made = one_family(EARLIER + 1, shift_sd=0.005, row_sd=0.01)
        row = sorted(made.base)[3]
        history = [
            scaled(run, 1.3, {row}) if k % 4 == 1 else run
            for k, run in enumerate(made.runs[:EARLIER])
        ]
        judgement = decide.check(history, scaled(made.runs[EARLIER], 1.3, {row}))
        self.assertEqual(judgement.reasons, ())

    def test_false_discoveries_are_controlled_across_many_rows(self):
        # 40 families of 25 rows: 1000 rows, pure noise. Tested one by one at the same level,
        # some rows would be flagged by chance; with Benjamini-Hochberg none is.
        made = synthetic.history(runs=EARLIER + 1, families=40, rows=(25, 25), seed=7)
        model = noise.learn_noise(made.runs[:EARLIER])
        judgement = decide.judge(made.runs[EARLIER], model)
        self.assertEqual(judgement.reasons, ())
        p_values = [r.test.p_value for r in judgement.rows if r.status == decide.JUDGED]
        self.assertEqual(len(p_values), 1000)
        self.assertGreater(sum(p <= decide.ALPHA for p in p_values), 3)
        # And among them, one steady row 25% slower is still found.
        row = min(made.row_noise, key=made.row_noise.get)
        slower = scaled(made.runs[EARLIER], 1.25, {row})
        flagged = [r.row for r in decide.judge(slower, model).rows if r.verdict == REGRESSION]
        self.assertEqual(flagged, [row])


class FailedAndMissing(unittest.TestCase):
    def setUp(self):
        self.made = one_family(EARLIER + 1, shift_sd=0.01, row_sd=0.01)
        self.rows = sorted(self.made.base)

    def test_a_row_that_fails_now_is_reported_failed_without_numbers_and_fails_the_run(self):
        new = dict(self.made.runs[EARLIER], **{self.rows[0]: FAILED})
        judgement = decide.check(self.made.runs[:EARLIER], new)
        row = next(r for r in judgement.rows if r.row == self.rows[0])
        self.assertEqual((row.status, row.verdict, row.test), (decide.FAILED, "", None))
        self.assertTrue(math.isnan(row.change_pct))
        self.assertTrue(judgement.regression)
        self.assertIn(f"{self.rows[0]}: failed; it ran in the baseline", judgement.reasons)
        self.assertEqual(judgement.families[0].rows_failed, 1)
        self.assertFalse(
            decide.check(self.made.runs[:EARLIER], new, fail_on_broken=False).regression
        )

    def test_a_row_that_failed_before_too_does_not_fail_the_run_again(self):
        history = [dict(run, **{self.rows[0]: FAILED}) for run in self.made.runs[:EARLIER]]
        new = dict(self.made.runs[EARLIER], **{self.rows[0]: FAILED})
        judgement = decide.check(history, new)
        self.assertFalse(judgement.regression)
        self.assertEqual(
            next(r.status for r in judgement.rows if r.row == self.rows[0]), decide.FAILED
        )

    def test_a_missing_row_is_reported_missing_and_a_new_row_unjudged(self):
        new = dict(self.made.runs[EARLIER], **{"host_staging/variant:0/bytes:3": 1e-6})
        del new[self.rows[1]]
        judgement = decide.check(self.made.runs[:EARLIER], new)
        status = {r.row: (r.status, r.note) for r in judgement.rows}
        self.assertEqual(status[self.rows[1]], (decide.MISSING, "absent from the new run"))
        self.assertEqual(
            status["host_staging/variant:0/bytes:3"], (decide.UNJUDGED, "no earlier value")
        )
        self.assertFalse(judgement.regression)

    def test_the_judgement_serialises_as_strict_json(self):
        new = dict(self.made.runs[EARLIER], **{self.rows[0]: FAILED})
        text = json.dumps(decide.check(self.made.runs[:EARLIER], new).to_dict(), allow_nan=False)
        row = next(r for r in json.loads(text)["rows"] if r["row"] == self.rows[0])
        self.assertEqual((row["status"], row["change_pct"], row["test"]), ("failed", None, None))


class Fallback(unittest.TestCase):
    def setUp(self):
        self.made = one_family(3, shift_sd=0.0, row_sd=0.002)
        self.rows = sorted(self.made.base)

    def test_with_fewer_than_3_earlier_runs_it_says_so_and_uses_the_stated_ci95(self):
        new = scaled(self.made.runs[2], 1.10, {self.rows[0]})
        judgement = decide.check(self.made.runs[:2], new, self.made.stated[:2], self.made.stated[2])
        self.assertEqual(judgement.basis, "stated")
        self.assertEqual(judgement.earlier_runs, 2)
        self.assertIn("only 2 earlier runs (3 needed", judgement.note)
        self.assertIn("stated ci95", judgement.note)
        self.assertEqual([r.row for r in judgement.rows if r.verdict == REGRESSION], [self.rows[0]])
        self.assertTrue(math.isinf(judgement.rows[0].test.df))

    def test_with_three_earlier_runs_the_noise_is_learned(self):
        made = one_family(4, shift_sd=0.0, row_sd=0.002)
        judgement = decide.check(made.runs[:3], made.runs[3], made.stated[:3], made.stated[3])
        self.assertEqual(judgement.basis, "history")
        self.assertIn("learned from 3 earlier runs", judgement.note)

    def test_no_earlier_run_or_no_stated_ci95_is_nothing_to_judge_by(self):
        with self.assertRaisesRegex(decide.NotJudgeable, "no earlier run"):
            decide.check([], self.made.runs[2])
        with self.assertRaisesRegex(decide.NotJudgeable, "no stated ci95"):
            decide.check(self.made.runs[:2], self.made.runs[2])

    def test_a_row_the_new_run_states_no_ci95_for_is_unjudged(self):
        stated = dict(self.made.stated[2])
        del stated[self.rows[0]]
        judgement = decide.check(
            self.made.runs[:2], self.made.runs[2], self.made.stated[:2], stated
        )
        row = next(r for r in judgement.rows if r.row == self.rows[0])
        self.assertEqual((row.status, row.note), (decide.UNJUDGED, "no stated ci95 in the new run"))


class Multiplicity(unittest.TestCase):
    def test_benjamini_hochberg_rejects_the_step_up_set(self):
        # 0.011 alone misses its limit (0.05/6) but the step-up set reaches 0.04 <= 5 * 0.05/6.
        rejected = decide.benjamini_hochberg([0.04, 0.011, 0.03, 0.035, 0.02, 0.5], 0.05)
        self.assertEqual(list(rejected), [True, True, True, True, True, False])
        rejected = decide.benjamini_hochberg([0.02, 0.04, 0.9], 0.05)
        self.assertEqual(list(rejected), [False, False, False])


if __name__ == "__main__":
    unittest.main()
