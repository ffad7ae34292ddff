"""The machine file's identity match and statistical model in Python (xfertools.result.machines,
xfertools.machine.model, xfertools.machine.plan) against the cases that tests/unit/
test_machine_file_cases.cpp checks the C++ against: tests/fixtures/machine-file/cases.json
(its README.md says what each section holds).

    python3 -m unittest discover -s tests/tools -p 'test_machine_file_cases.py'
"""

import json
import math
import os
import unittest

import toollib  # noqa: F401  (tools/ on sys.path)
from xfertools.machine import floors, plan
from xfertools.machine import model as machine_model
from xfertools.machine.components import RowComponents
from xfertools.result import machines

CASES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "fixtures",
    "machine-file",
    "cases.json",
)

with open(CASES, encoding="utf-8") as stream:
    ALL = json.load(stream)
REL = ALL["tolerance"]["rel"]


class MachineFileCasesTest(unittest.TestCase):
    def assert_near(self, got, expected, what):
        self.assertTrue(
            math.isclose(got, expected, rel_tol=REL, abs_tol=1e-12),
            f"{what}: {got} against {expected}",
        )

    def test_the_format_is_known(self):
        self.assertEqual(ALL["format"], "xferbench-machine-file-cases/1")

    def test_a_context_gives_its_match(self):
        for case in ALL["match"]:
            with self.subTest(case["name"]):
                self.assertEqual(machines.machine_match(case["context"]), case["match"])
                # What a run writes into the file is what it compares with later.
                self.assertTrue(machines.same_machine(case["match"], case["match"]))

    def test_a_file_matches_a_run_as_xferbench_compares_them(self):
        for case in ALL["same_machine"]:
            with self.subTest(case["name"]):
                self.assertEqual(
                    machines.same_machine(case["file_match"], case["match"]), case["same"]
                )

    def test_the_run_level_is_added_to_a_merged_row(self):
        for case in ALL["run_level"]:
            with self.subTest(case["name"]):
                between, run = case["between"], case["run"]
                ci95, df = machine_model.with_run_level(
                    between["ci95_pct"], between["df"], run["sd_pct"], run["df"]
                )
                self.assert_near(ci95, case["expected"]["ci95_pct"], "ci95_pct")
                self.assert_near(df, case["expected"]["df"], "df")

    def test_the_plan_predicts_the_interval_the_merge_states(self):
        for case in ALL["interval"]:
            with self.subTest(case["name"]):
                row = RowComponents(
                    family="f",
                    bytes=8,
                    runs=0,
                    between=0.0,
                    sampling=0.0,
                    process=case["process"],
                    a=case["visit"],
                    run_level=case["run_level"],
                    fixed_s=0.0,
                    sample_s=0.0,
                    run_df=case["run_df"],
                )
                jobs, seconds, q = case["jobs"], case["seconds"], case["df_per_job_df"]
                predicted = plan.predicted_ci95([row], jobs, [seconds], q)[0]
                self.assert_near(predicted, case["expected"]["ci95_pct"], "ci95_pct")
                job_part = case["process"] / jobs + case["visit"] / seconds
                _, df = machine_model.interval(
                    job_part, q * (jobs - 1), case["run_level"] or 0.0, row.run_df
                )
                self.assert_near(df, case["expected"]["df"], "df")

    def test_the_run_level_is_pooled_from_run_means(self):
        for case in ALL["run_level_of"]:
            with self.subTest(case["name"]):
                s2r, df = machine_model.run_level_of(case["window"])
                sd_pct = 0.0 if s2r is None else 100 * math.sqrt(s2r)
                self.assert_near(sd_pct, case["expected"]["sd_pct"], "sd_pct")
                self.assert_near(df, case["expected"]["df"], "df")

    def test_the_floor_and_run_floor_numbers(self):
        for case in ALL["floor"]:
            with self.subTest(case["name"]):
                expected = case["expected"]
                self.assertEqual(
                    machine_model.floor_pct(case["process"], case["run_level"]),
                    expected["floor_pct"],
                )
                if case["run_level"] is None:
                    self.assertIsNone(expected["run_sd_pct"])
                else:
                    self.assertEqual(
                        machine_model.run_sd_pct(case["run_level"]), expected["run_sd_pct"]
                    )
                row = RowComponents(
                    family=case["family"],
                    bytes=case["bytes"],
                    runs=0,
                    between=0.0,
                    sampling=0.0,
                    process=case["process"],
                    a=0.0,
                    run_level=case["run_level"],
                    fixed_s=0.0,
                    sample_s=0.0,
                    run_df=case["run_df"],
                )
                written = floors.run_floors_of([row])
                if case["run_level"] is None:
                    self.assertEqual(written, {})
                else:
                    self.assertEqual(
                        written,
                        {
                            case["family"]: [
                                [case["bytes"], expected["run_sd_pct"], expected["run_df"]]
                            ]
                        },
                    )
                for lookup in case["lookups"]:
                    self.assertEqual(
                        machine_model.pools_with(case["bytes"], lookup["bytes"]),
                        lookup["found"],
                        lookup,
                    )


if __name__ == "__main__":
    unittest.main()
