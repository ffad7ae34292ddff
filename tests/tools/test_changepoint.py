"""Tests for tools/xfertools/verdict/changepoint.py: where a series of runs changed, and the
baseline window that restarts after a change. The planted-step test checks a step the gate must
find.

    python3 -m unittest discover -s tests/tools -p 'test_changepoint.py'
"""

import itertools
import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from xfertools.verdict import changepoint, decide, noise, synthetic  # noqa: E402
from xfertools.verdict.decide import NO_CHANGE, REGRESSION  # noqa: E402

EARLIER = 30


def energy_by_definition(values, split):
    """E-divisive's Q straight from its definition (Matteson and James 2014, alpha = 1)."""
    before, after = values[:split], values[split:]
    n, m = len(before), len(after)
    between = np.mean(np.abs(np.subtract.outer(before, after)))
    within_before = np.mean([abs(a - b) for a, b in itertools.combinations(before, 2)])
    within_after = np.mean([abs(a - b) for a, b in itertools.combinations(after, 2)])
    return n * m / (n + m) * (2 * between - within_before - within_after)


class Statistic(unittest.TestCase):
    def test_the_energy_profile_is_e_divisives_statistic_at_every_split(self):
        values = np.random.default_rng(5).normal(size=19)
        profile = changepoint.energy_profile(values, min_size=3)[0]
        for split in range(3, 17):
            self.assertAlmostEqual(profile[split], energy_by_definition(values, split))
        self.assertTrue(np.all(np.isneginf(profile[[0, 1, 2, 17, 18, 19]])))


class Series(unittest.TestCase):
    def test_a_step_is_found_where_it_began(self):
        rng = np.random.default_rng(2)
        series = np.concatenate([rng.normal(0, 0.01, 17), rng.normal(0.05, 0.01, 13)])
        found = changepoint.change_points(series)
        self.assertEqual([c.index for c in found], [17])
        self.assertAlmostEqual(found[0].change_pct, 5.1, delta=1.0)
        self.assertLessEqual(found[0].p_value, changepoint.ALPHA)
        self.assertEqual((found[0].before, found[0].after), (17, 13))

    def test_two_steps_are_both_found(self):
        rng = np.random.default_rng(3)
        series = rng.normal(0, 0.01, 36)
        series[12:] += 0.06
        series[24:] -= 0.12
        self.assertEqual([c.index for c in changepoint.change_points(series)], [12, 24])

    def test_noise_alone_has_no_change_point(self):
        rng = np.random.default_rng(4)
        for _ in range(30):
            series = rng.normal(0, 0.05, 30) * rng.choice([1, 3], 30)  # heavy tails too
            self.assertEqual(changepoint.change_points(series), [])

    def test_failed_runs_are_skipped_and_indexes_stay_those_of_the_series(self):
        series = np.r_[np.zeros(10), np.ones(10)] + np.random.default_rng(6).normal(0, 0.1, 20)
        series[[3, 12]] = np.nan
        self.assertEqual([c.index for c in changepoint.change_points(series)], [10])

    def test_the_same_series_always_gives_the_same_answer(self):
        rng = np.random.default_rng(8)
        series = np.r_[rng.normal(0, 1, 15), rng.normal(1.3, 1, 15)]
        first = changepoint.change_points(series)
        self.assertEqual(changepoint.change_points(series), first)
        self.assertEqual(len(first), 1)

    def test_too_few_runs_after_a_step_is_no_change_yet(self):
        # Two runs at a new level could be chance however far they went; four confirm it.
        series = np.r_[np.zeros(20), np.ones(2)] + np.random.default_rng(9).normal(0, 0.01, 22)
        self.assertEqual(changepoint.change_points(series), [])
        series = np.r_[series, 1.0, 1.0]
        self.assertEqual([c.index for c in changepoint.change_points(series)], [20])


class Window(unittest.TestCase):
    def test_the_baseline_is_after_the_last_change_and_at_most_cap_runs(self):
        def change(index):
            return changepoint.ChangePoint(index, 0.001, 5.0, index, 10)

        self.assertEqual(changepoint.baseline_window(50), (20, 50))
        self.assertEqual(changepoint.baseline_window(50, cap=10), (40, 50))
        self.assertEqual(changepoint.baseline_window(12), (0, 12))
        self.assertEqual(changepoint.baseline_window(50, [change(25), change(41)]), (41, 50))
        self.assertEqual(changepoint.baseline_window(50, [change(5)]), (20, 50))


class History(unittest.TestCase):
    def test_a_planted_family_step_is_placed_within_one_run_of_where_it_began(self):
        for seed, at in zip(range(5), (8, 15, 20, 24, 26)):
            family = synthetic.family_names(10)[seed]
            made = synthetic.history(
                runs=EARLIER, seed=200 + seed, steps=[synthetic.Step(family, at, 1.10)]
            )
            changes = changepoint.history_changes(made.runs)
            self.assertEqual(len(changes.families[family]), 1, (seed, changes.families[family]))
            self.assertLessEqual(abs(changes.families[family][0].index - at), 1, seed)
            others = {
                name: found for name, found in changes.families.items() if found and name != family
            }
            self.assertEqual(others, {}, seed)

    def test_a_step_of_one_row_is_found_in_that_rows_series(self):
        made = synthetic.history(
            runs=EARLIER,
            families=1,
            rows=(12, 12),
            row_noise=(0.02, 0.02),
            family_noise=(0.01, 0.01),
            seed=11,
        )
        row = sorted(made.base)[4]
        runs = [
            {r: t * (1.2 if r == row and k >= 18 else 1) for r, t in run.items()}
            for k, run in enumerate(made.runs)
        ]
        changes = changepoint.history_changes(runs)
        self.assertEqual([c.index for c in changes.rows[row]], [18])
        self.assertEqual(changes.families["host_staging/variant:0"], [])
        starts = changepoint.baseline_starts(runs, changes)
        self.assertEqual(starts[row], 18)
        self.assertEqual({starts[r] for r in made.base if r != row}, {0})

    def test_the_baseline_restarts_after_a_confirmed_change(self):
        # The family became 10% slower at run 22 and stayed so: by run 30 that is its level,
        # so the next run at that level is no regression, judged against runs 22-29 alone.
        made = synthetic.history(
            runs=EARLIER + 1,
            families=1,
            rows=(12, 12),
            row_noise=(0.01, 0.01),
            family_noise=(0.01, 0.01),
            seed=12,
            steps=[synthetic.Step("host_staging/variant:0", 22, 1.10)],
        )
        history, new = made.runs[:EARLIER], made.runs[EARLIER]
        changes = changepoint.history_changes(history)
        self.assertEqual([c.index for c in changes.families["host_staging/variant:0"]], [22])
        starts = changepoint.baseline_starts(history, changes)
        self.assertEqual(set(starts.values()), {22})
        model = noise.learn_noise(history, starts)
        for row, r in model.rows.items():
            self.assertEqual(r.runs, 8)
            self.assertAlmostEqual(r.baseline / made.base[row], 1.10, delta=0.03)
        judgement = decide.check(history, new, changes=changes)
        self.assertEqual(judgement.verdict, NO_CHANGE, judgement.reasons)
        # Before the change was confirmed (two runs at the new level), the same run fails.
        early = made.runs[:24]
        self.assertEqual(decide.check(early, new).verdict, REGRESSION)


if __name__ == "__main__":
    unittest.main()
