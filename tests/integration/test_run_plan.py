"""tools/run and the machine's plan: with XFER_JOBS unset every job runs --xfer_jobs=auto, job 1's
result says how many jobs the run has and whose plan that is (one line on the console), and
each job's seconds go to tools/track floor with $XFER_BUDGET; XFER_JOBS=N runs N jobs as before.

The runs are real (2 ranks of mpi_host, two sizes) under a launcher in front of mpirun that
records each command line and stands in for xferbench's side of the plan: it gives
--xfer_jobs=auto the plan's number of jobs ($SHIM_JOBS) and, with $SHIM_PLAN_FILE, writes into
each job's context.xferbench.plan what xferbench writes when it ran a machine's plan.
"""

import json
import os
import re
import shlex
import stat
import subprocess
import tempfile
import unittest

from xfer_testlib import XFERBENCH

SOURCE = os.environ.get(
    "XFER_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)
LAUNCHER = shlex.split(os.environ.get("XFER_MPIRUN", "mpirun"))[0]
SETTINGS = ["--benchmark_filter=mpi_host/mode:pingpong", "--xfer_sizes=8,4K"]
SETTINGS += ["--xfer_max_time=0.02"]

SHIM = r"""#!/usr/bin/env bash
printf '%s\n' "$*" >> "$SHIM_LOG"
args=()
out=
for arg in "$@"; do
  case $arg in
    --xfer_jobs=auto) arg="--xfer_jobs=${SHIM_JOBS:-3}" ;;
    --benchmark_out=*) out=${arg#--benchmark_out=} ;;
  esac
  args+=("$arg")
done
[ -n "${SHIM_PLAN_FILE:-}" ] || exec "$SHIM_LAUNCHER" "${args[@]}"
"$SHIM_LAUNCHER" "${args[@]}"
status=$?
if [ -f "$out" ]; then
  /usr/bin/python3 - "$out" <<'EOF'
import json, os, sys

with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
document["context"]["xferbench"]["plan"].update(
    source="machine", file=os.environ["SHIM_PLAN_FILE"], budget_s=60, predicted_wall_s=52.3
)
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(document, f)
EOF
fi
exit $status
"""


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class ToolsRunPlan(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.shim = os.path.join(self.dir, "launcher")
        with open(self.shim, "w", encoding="utf-8") as f:
            f.write(SHIM)
        os.chmod(self.shim, os.stat(self.shim).st_mode | stat.S_IXUSR)
        self.log = os.path.join(self.dir, "launcher.log")
        self.floors = os.path.join(self.dir, "floors")
        self.runs = 0

    def tools_run(self, **env):
        """tools/run of the settings under the recording launcher; (process, result file)."""
        self.runs += 1
        out = os.path.join(self.dir, f"run-{self.runs}.json")
        full = dict(os.environ)
        full.pop("XFER_JOBS", None)
        full.pop("XFER_BUDGET", None)
        full.update(
            XFER_NO_INSTALL="1",
            XFER_BUILD=os.path.dirname(XFERBENCH),
            RANKS="2",
            MPIRUN=self.shim,
            SHIM_LAUNCHER=LAUNCHER,
            SHIM_LOG=self.log,
            XFER_FLOORS=self.floors,
            OMPI_ALLOW_RUN_AS_ROOT="1",
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        )
        full.update(env)
        proc = subprocess.run(
            [os.path.join(SOURCE, "tools", "run"), "--benchmark_out=" + out, *SETTINGS],
            capture_output=True,
            text=True,
            env=full,
            timeout=300,
        )
        return proc, out

    def job_lines(self):
        """The launcher's command lines that ran a job (not its --version)."""
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            return [line for line in f if "--benchmark_out=" in line]

    def floor_file(self):
        (name,) = os.listdir(self.floors)
        return load(os.path.join(self.floors, name))

    def test_without_a_plan_every_job_runs_auto_and_the_floor_gets_their_seconds(self):
        proc, out = self.tools_run(XFER_BUDGET="40")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(
            "xferbench: no plan for this machine yet (3 jobs; a plan is made after 3 runs)",
            proc.stderr,
        )
        lines = self.job_lines()
        self.assertEqual(len(lines), 3)
        for line in lines:
            self.assertIn("--xfer_jobs=auto", line)
        said = re.findall(r"xferbench: job (\d) of 3: exit 0 in ([\d.]+) s", proc.stderr)
        self.assertEqual([int(n) for n, _ in said], [1, 2, 3])
        floor = self.floor_file()
        self.assertEqual(floor["history"][0]["job_seconds"], [float(s) for _, s in said])
        self.assertEqual(load(out)["context"]["xferbench"]["jobs"], 3)
        self.assertIn("1 run in its history; a plan is made from 3 runs", proc.stdout)
        # Two more runs: the plan is made, for the budget tools/run was given.
        for _ in range(2):
            proc, _ = self.tools_run(XFER_BUDGET="40")
            self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = self.floor_file()["plan"]
        self.assertEqual(plan["budget_s"], 40)
        self.assertLessEqual(plan["predicted_wall_s"], 0.9 * 40)
        self.assertIn(f"3 runs in its history; next run: {plan['jobs']} jobs", proc.stdout)

    def test_the_number_of_jobs_comes_from_job_1s_plan(self):
        plan_file = os.path.join(self.floors, "this-machine.json")
        proc, out = self.tools_run(SHIM_JOBS="4", SHIM_PLAN_FILE=plan_file)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = f"xferbench: plan of this machine: 4 jobs, 52 s predicted ({plan_file})"
        self.assertIn(line, proc.stderr)
        self.assertLess(proc.stderr.index(line), proc.stderr.index("xferbench: job 1 of 4"))
        self.assertIn("xferbench: job 4 of 4: exit 0", proc.stderr)
        self.assertEqual(len(self.job_lines()), 4)
        self.assertTrue(all("--xfer_jobs=auto" in line for line in self.job_lines()))
        self.assertEqual(
            sorted(os.listdir(out[: -len(".json")] + ".jobs"))[-2:], ["job-4.json", "job-4.log"]
        )
        self.assertEqual(load(out)["context"]["xferbench"]["jobs"], 4)
        self.assertEqual(len(self.floor_file()["history"][0]["job_seconds"]), 4)

    def test_xfer_jobs_n_runs_n_jobs_of_the_same_time_as_before(self):
        proc, out = self.tools_run(XFER_JOBS="3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("plan of this machine", proc.stderr)
        self.assertNotIn("no plan for this machine", proc.stderr)
        lines = self.job_lines()
        self.assertEqual(len(lines), 3)
        self.assertTrue(all("--xfer_jobs=3 " in line for line in lines), lines)
        self.assertEqual(len(self.floor_file()["history"][0]["job_seconds"]), 3)

    def test_a_budget_that_is_not_seconds_is_refused_before_any_job(self):
        for budget in ("sixty", "0", "-5", ""):
            proc, _ = self.tools_run(XFER_BUDGET=budget)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(
                proc.stderr.strip().splitlines(),
                [f"tools/run: XFER_BUDGET='{budget}': expected seconds, a positive number"],
            )
        self.assertEqual(self.job_lines(), [])


if __name__ == "__main__":
    unittest.main()
