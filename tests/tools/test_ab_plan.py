"""tools/ab's plan without running anything: the ABBA order, and how many jobs a time budget
buys (xfertools/ab.py). The sittings themselves are tested in tests/integration/test_ab.py."""

import unittest

from toollib import TOOLS  # noqa: F401 (tools/ on sys.path)
from xfertools import ab


class OrderTest(unittest.TestCase):
    def test_sides_alternate_in_abba_blocks(self):
        self.assertEqual(ab.abba(2), list("ABBA"))
        self.assertEqual(ab.abba(3), list("ABBAAB"))
        self.assertEqual(ab.abba(6).count("A"), 6)


class BudgetTest(unittest.TestCase):
    # A pilot job of 6 took 2 s, 1 s of it in its visits: a side measures 6 s whatever its
    # number of jobs, and each job costs 1.25 x 1 s of start-up.
    def test_jobs_fill_the_budget_after_the_measuring(self):
        self.assertEqual(ab.plan_jobs(30, 6, 2.0, 1.0), 7)  # (30 - 2 x 6) / (2 x 1.25)

    def test_a_budget_too_small_still_gets_two_jobs_a_side(self):
        self.assertEqual(ab.plan_jobs(10, 6, 2.0, 1.0), 2)

    def test_a_large_budget_stops_at_the_most_jobs(self):
        self.assertEqual(ab.plan_jobs(3600, 6, 2.0, 1.0), ab.MAX_JOBS)


if __name__ == "__main__":
    unittest.main()
