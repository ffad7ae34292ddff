"""Tests for tools/xfertools/verdict/noise.py: what a history of runs says about noise.

python3 -m unittest discover -s tests/tools -p 'test_noise.py'
"""

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from xfertools.verdict import noise, synthetic  # noqa: E402
from xfertools.verdict.noise import FAILED  # noqa: E402

FAMILY = "host_staging/variant:0"


def family_history(runs, shift_sd, row_sd, rows=10, seed=1):
    """Runs of one family whose rows move together by shift_sd and alone by row_sd (log)."""
    made = synthetic.one_family(runs, shift_sd, row_sd, rows, seed)
    return made.runs, made.base


class Names(unittest.TestCase):
    def test_a_family_is_the_row_name_without_its_size(self):
        self.assertEqual(
            noise.family_of("mpi_staged/host:pinned/mode:pingpong/bytes:4096"),
            "mpi_staged/host:pinned/mode:pingpong",
        )
        self.assertEqual(
            noise.family_of("host_staging/host:pageable/pair:0to0/bytes:8"),
            "host_staging/host:pageable/pair:0to0",
        )
        self.assertEqual(noise.family_of("memcpy_peer"), "memcpy_peer")


class Learning(unittest.TestCase):
    def test_shared_family_shifts_are_told_apart_from_row_noise(self):
        # The family moves 8% between runs, each row only 1% on its own.
        history, _ = family_history(40, shift_sd=0.08, row_sd=0.01)
        model = noise.learn_noise(history)
        family = model.families[FAMILY]
        self.assertGreater(family.sigma, 0.06)
        self.assertLess(family.sigma, 0.11)
        for row in model.rows.values():
            self.assertLess(row.sigma, 0.02, row.row)
            self.assertGreater(row.sigma, 0.004, row.row)

    def test_learned_noise_matches_the_planted_noise_of_a_synthetic_history(self):
        made = synthetic.history(runs=60, seed=3)
        model = noise.learn_noise(made.runs)
        ratios = sorted(model.rows[row].sigma / made.row_noise[row] for row in model.rows)
        self.assertAlmostEqual(ratios[len(ratios) // 2], 1.0, delta=0.1)
        for name, sd in made.family_noise.items():
            # The shift seen in a run also carries the rows' own noise, weighted.
            self.assertGreater(model.families[name].sigma, 0.6 * sd, name)
            self.assertLess(model.families[name].sigma, 2.5 * sd + 0.01, name)

    def test_one_wild_run_does_not_move_the_baseline_but_widens_the_noise(self):
        history, base = family_history(20, shift_sd=0.01, row_sd=0.01)
        calm = noise.learn_noise(history)
        history[7] = {row: 2.5 * t for row, t in history[7].items()}
        wild = noise.learn_noise(history)
        for row, t in base.items():
            self.assertAlmostEqual(wild.rows[row].baseline / t, 1.0, delta=0.02)
        self.assertGreater(wild.families[FAMILY].sigma, 5 * calm.families[FAMILY].sigma)

    def test_one_wild_value_of_a_row_does_not_move_its_baseline_but_widens_its_noise(self):
        history, base = family_history(20, shift_sd=0.01, row_sd=0.01)
        row = sorted(base)[2]
        calm = noise.learn_noise(history).rows[row]
        history[7][row] *= 2.5
        wild = noise.learn_noise(history).rows[row]
        self.assertAlmostEqual(wild.baseline / base[row], 1.0, delta=0.01)
        self.assertGreater(wild.sigma, 5 * calm.sigma)

    def test_failed_and_missing_values_are_left_out_not_read_as_numbers(self):
        history, base = family_history(12, shift_sd=0.01, row_sd=0.01)
        row = next(iter(base))
        for k in (2, 5, 9):
            history[k][row] = FAILED
        del history[4][row]
        model = noise.learn_noise(history)
        self.assertEqual(model.rows[row].runs, 8)
        self.assertAlmostEqual(model.rows[row].baseline / base[row], 1.0, delta=0.03)

    def test_a_row_with_too_few_values_in_its_window_is_counted_as_thin(self):
        history, base = family_history(10, shift_sd=0.01, row_sd=0.01)
        row = next(iter(base))
        model = noise.learn_noise(history, starts={row: 8})
        self.assertNotIn(row, model.rows)
        self.assertEqual(model.thin[row], 2)

    def test_a_row_never_moves_less_between_runs_than_it_states_within_one(self):
        history, base = family_history(10, shift_sd=0.0, row_sd=0.0)
        stated = [{row: 4.0 for row in base} for _ in history]
        model = noise.learn_noise(history, stated=stated)
        for row in model.rows.values():
            self.assertAlmostEqual(row.sigma, math.log1p(0.04) / noise.Z95, places=6)

    def test_three_earlier_runs_are_enough_two_are_not(self):
        history, _ = family_history(3, shift_sd=0.01, row_sd=0.01)
        self.assertTrue(noise.enough_history(3))
        self.assertFalse(noise.enough_history(2))
        self.assertEqual(noise.learn_noise(history).basis, "history")
        with self.assertRaises(ValueError):
            noise.learn_noise(history[:2])
        # With three runs the noise is known to only 2 degrees of freedom: it says so.
        family = noise.learn_noise(history).families[FAMILY]
        self.assertEqual(family.df, 2)


class Stated(unittest.TestCase):
    def test_the_fallback_takes_the_geometric_mean_and_the_stated_spread(self):
        history = [{"p/bytes:8": 1e-6}, {"p/bytes:8": 4e-6}]
        stated = [{"p/bytes:8": 2.0}, {"p/bytes:8": 2.0}]
        model = noise.stated_noise(history, stated)
        row = model.rows["p/bytes:8"]
        self.assertEqual(model.basis, "stated")
        self.assertAlmostEqual(row.baseline, 2e-6)
        one = math.log1p(0.02) / noise.Z95
        self.assertAlmostEqual(row.sigma, one / math.sqrt(2))
        self.assertAlmostEqual(row.predictive_sd(one), one * math.sqrt(1.5))

    def test_stated_intervals_come_one_mapping_per_run(self):
        with self.assertRaisesRegex(ValueError, "one mapping row -> ci95_pct per earlier run"):
            noise.stated_noise([{"p/bytes:8": 1e-6}, {"p/bytes:8": 1e-6}], [{}])

    def test_a_row_without_a_stated_ci95_has_no_fallback(self):
        model = noise.stated_noise([{"p/bytes:8": 1e-6}], [{}])
        self.assertEqual(model.rows, {})
        self.assertEqual(model.thin, {"p/bytes:8": 1})


if __name__ == "__main__":
    unittest.main()
