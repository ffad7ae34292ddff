#!/usr/bin/env python3
"""A line per machine file: its runs, the costs the plan used and the plan it made.

    plan_costs.py NAME=FLOORS.json [NAME=FLOORS.json ...]

c0: a job's seconds beyond its visits; sum c_r: its visits' set-up (warm-up included) and
checks; sum s_r: one sample of every row; q: the merged rows' degrees of freedom per job.
"""

import json
import sys


def line(name, path):
    with open(path, encoding="utf-8") as f:
        content = json.load(f)
    costs, plan = content["costs"], content["plan"]
    if not plan:
        return f"{name:<26} runs {len(content['history']):2d}  no plan yet"
    ci95 = plan["predicted_ci95_pct"]
    return (
        f"{name:<26} runs {len(content['history']):2d}  c0 {costs['job_s']:.2f} s"
        f"  sum c_r {costs['visits_s']:.2f} s  sum s_r {costs['sample_s']:.2f} s"
        f"  q {costs['df_per_job_df']:.2f}  plan: {plan['jobs']} jobs,"
        f" {plan['predicted_wall_s']} s, median {ci95['median']}% p90 {ci95['p90']}%"
    )


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        name, _, path = argument.partition("=")
        print(line(name, path))
