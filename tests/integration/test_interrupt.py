"""A run cut short keeps what it measured; two runs writing one file leave one whole document.

A run's visits come in rounds, so a row is finished only in the last round: an interrupted run
keeps every row with at least one visit, from the visits it had (FirstRound interrupts before
any row is finished). tools/run stops when asked and merges what its jobs kept (ToolsRun).
"""

import json
import os
import signal
import stat
import subprocess
import tempfile
import time
import unittest

from xfer_testlib import MPIRUN, XFERBENCH, launch, rows

INTERRUPTED = 130  # the one exit status of a run stopped by SIGINT or SIGTERM (RELIABILITY.md)

# Rows that take a while together (the large ones), so a signal lands in the middle of the run.
LONG = [
    "--xfer_sizes=8,64K,1M,16M,64M,256M,256M:1GiB:x2",
    "--xfer_precision=0.01",
    "--xfer_max_time=1",
]


SOURCE = os.environ.get(
    "XFER_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
)


def environment():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


# Three visits a row, each up to a second: round one lasts several seconds, and no row is
# finished before round three.
ROUNDS = [
    "--benchmark_filter=mpi_host/mode:pingpong",
    "--xfer_sizes=8,1K,64K,1M,4M,16M",
    "--xfer_precision=0.01",
    "--xfer_max_time=3",
    "--xfer_visits=3",
]


def popen(command, env=None):
    """Starts `command` in a session of its own (so that it can be signalled as a group)."""
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env=env or environment(),
        start_new_session=True,
    )


def start(out, extra=(), settings=LONG):
    return popen(
        MPIRUN + ["2", XFERBENCH] + list(settings) + ["--benchmark_out=" + out] + list(extra)
    )


def wait_for_rows(path, proc, timeout=120):
    """Waits until the result file holds at least one row (the run is under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(path):
            return
        time.sleep(0.05)
    raise AssertionError("no rows were written while the run was going")


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def descends_from(pid, ancestor):
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parent_of(pid)
    return False


def rank_zero_pid(launcher_pid):
    """The pid of the process this launcher started as rank 0 (never another run's: the
    machine may run other xferbench jobs at the same time)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or not descends_from(int(entry), launcher_pid):
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK=0" in env and os.path.basename(XFERBENCH).encode() in cmdline:
            return int(entry)
    return None


def finish(proc, timeout=120):
    """Waits for an interrupted run; returns (stdout, stderr) (kills it if it does not end)."""
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def stop(proc):
    return finish(proc)[1]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.loads(f.read(), parse_constant=lambda c: float("nan"))


class Interrupted(unittest.TestCase):
    def check_partial(self, proc, out, tmp):
        stderr = stop(proc)
        self.assertNotEqual(proc.returncode, 0, stderr)
        with open(out, encoding="utf-8") as f:
            document = json.load(f)
        got = rows(document)
        self.assertGreaterEqual(len(got), 1)
        self.assertLess(len(got), 9)  # it did not finish
        incomplete = document["context"]["xferbench"]["incomplete"]
        self.assertEqual(incomplete["rows"], len(got))
        self.assertTrue(incomplete["reason"])
        self.assertEqual(sorted(os.listdir(tmp)), ["run.json"])  # no temporary file left
        return stderr

    def test_sigterm_to_the_launcher_keeps_the_rows_so_far(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = start(out)
            wait_for_rows(out, proc)
            os.kill(proc.pid, signal.SIGTERM)
            self.check_partial(proc, out, tmp)

    def test_sigint_to_rank_0_keeps_the_rows_and_says_where(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = start(out)
            wait_for_rows(out, proc)
            pid = rank_zero_pid(proc.pid)
            self.assertIsNotNone(pid, "rank 0 not found")
            os.kill(pid, signal.SIGINT)
            stderr = self.check_partial(proc, out, tmp)
            self.assertIn("measured so far are in " + out, stderr)
            self.assertEqual(proc.returncode, INTERRUPTED, stderr)

    def test_a_finished_run_is_complete(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = launch(
                2, ["--xfer_sizes=8,64K", "--xfer_max_time=0.05", "--benchmark_out=" + out]
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
            self.assertIsNone(document["context"]["xferbench"]["incomplete"])
            self.assertEqual(len(rows(document)), 2)


class FirstRound(unittest.TestCase):
    """Interrupted in round one of three: no row is finished, every visited row is kept."""

    def assert_kept_from_one_visit(self, document):
        got = rows(document)
        self.assertGreaterEqual(len(got), 1)
        incomplete = document["context"]["xferbench"]["incomplete"]
        self.assertEqual((incomplete["round"], incomplete["rounds"]), (1, 3), incomplete)
        self.assertEqual(incomplete["rows"], len(got))
        # Every planned row is either kept or listed as not measured.
        names = {r["name"].replace("/manual_time", "") for r in got}
        self.assertEqual(len(names) + len(incomplete["not_measured"]), 6, incomplete)
        self.assertFalse(names & set(incomplete["not_measured"]))
        for row in got:
            self.assertEqual((row["visits"], row["visits_planned"]), (1, 3), row)
            self.assertIn("1 of 3 visits", row["label"])
            self.assertGreater(row["latency_us"], 0)
            # One visit's interval: its own samples' and the floor, never below the floor.
            self.assertGreaterEqual(row["ci95_pct"], row["floor_pct"])
        return got

    def test_sigint_to_rank_0_keeps_every_visited_row_and_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = start(out, settings=ROUNDS)
            wait_for_rows(out, proc)  # the first visit is kept at once
            pid = rank_zero_pid(proc.pid)
            self.assertIsNotNone(pid, "rank 0 not found")
            os.kill(pid, signal.SIGINT)
            stderr = stop(proc)
            self.assertEqual(proc.returncode, INTERRUPTED, stderr)
            document = load(out)
            got = self.assert_kept_from_one_visit(document)
            reason = document["context"]["xferbench"]["incomplete"]["reason"]
            self.assertEqual(reason, "interrupted by SIGINT on rank 0")
            self.assertIn(
                "xferbench: the run stopped before its last row, in round 1 of 3: "
                "interrupted by SIGINT on rank 0",
                stderr,
            )
            missing = len(document["context"]["xferbench"]["incomplete"]["not_measured"])
            self.assertIn(
                f"xferbench: the run did not finish; the {len(got)} row(s) measured so far are "
                f"in {out} (each from the visits it had: counter visits of visits_planned); "
                f"{missing} row(s) not measured",
                stderr,
            )
            self.assertEqual(sorted(os.listdir(tmp)), ["run.json"])

    def test_sigterm_to_the_launcher_in_round_one_keeps_the_visited_rows(self):
        # Open MPI's mpirun passes SIGTERM on to the ranks; its own exit status is its own.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = start(out, settings=ROUNDS)
            wait_for_rows(out, proc)
            os.kill(proc.pid, signal.SIGTERM)
            stderr = stop(proc)
            self.assertNotEqual(proc.returncode, 0, stderr)
            self.assert_kept_from_one_visit(load(out))

    def test_rank_0_killed_outright_leaves_the_last_rewrite(self):
        # SIGKILL cannot be caught: what survives is the file rank 0 keeps current (every
        # round, at most every 2 s), here from round one.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = start(out, settings=ROUNDS)
            wait_for_rows(out, proc)
            time.sleep(2.5)  # a rewrite later
            pid = rank_zero_pid(proc.pid)
            self.assertIsNotNone(pid, "rank 0 not found")
            os.kill(pid, signal.SIGKILL)
            stderr = stop(proc)
            self.assertNotEqual(proc.returncode, 0, stderr)
            document = load(out)
            incomplete = document["context"]["xferbench"]["incomplete"]
            self.assertIn("did not finish", incomplete["reason"])
            self.assertGreaterEqual(len(rows(document)), 2, incomplete)
            self.assertEqual(incomplete["rows"], len(rows(document)))


def tools_run(out, extra=()):
    """tools/run with 3 jobs of a sweep long enough to interrupt, in a session of its own."""
    env = environment()
    env.update(XFER_NO_INSTALL="1", XFER_BUILD=os.path.dirname(XFERBENCH), RANKS="2")
    command = [os.path.join(SOURCE, "tools", "run"), "--benchmark_out=" + out]
    command += ["--benchmark_filter=mpi_host/mode:pingpong", "--xfer_sizes=8,1K,64K,1M,4M,16M"]
    command += ["--xfer_precision=0.01", "--xfer_max_time=6"] + list(extra)
    return popen(command, env)


class ToolsRun(unittest.TestCase):
    """Ctrl-C (SIGINT to tools/run's process group) ends the job under way, starts no other,
    and merges what the jobs kept into the result, marked incomplete; exit 130."""

    def interrupt_when(self, path, delay=0.0):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = tools_run(out)
            wait_for_rows(os.path.join(tmp, "run.jobs", path), proc, timeout=180)
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGINT)
            stdout, stderr = finish(proc)
            self.assertEqual(proc.returncode, INTERRUPTED, stderr[-3000:])
            jobs = sorted(os.listdir(os.path.join(tmp, "run.jobs")))
            return load(out), stdout, stderr, jobs, out

    def test_ctrl_c_in_the_first_round_of_the_first_job_keeps_its_visits(self):
        document, stdout, _, jobs, out = self.interrupt_when("job-1.json")
        self.assertEqual(jobs, ["job-1.json", "job-1.log"])  # no other job started
        incomplete = document["context"]["xferbench"]["incomplete"]
        self.assertIn(
            "job 1 (job-1.json) stopped early: interrupted by SIGTERM", incomplete["reason"]
        )
        self.assertIn("1 of 3 planned jobs", incomplete["reason"])
        self.assertGreaterEqual(len(rows(document)), 1)
        for row in rows(document):
            self.assertEqual((row["visits"], row["visits_planned"]), (1, 3), row)
        self.assertIn(
            f"xferbench: the run stopped early (exit 130); what 1 of 3 jobs measured is in {out}",
            stdout,
        )

    def test_ctrl_c_between_jobs_merges_the_finished_ones(self):
        # Job 2 has begun (its log exists) but kept nothing yet, or a visit: either way job 3
        # never starts and job 1's rows are all in the result.
        document, stdout, stderr, jobs, out = self.interrupt_when("job-2.log")
        self.assertNotIn("job-3.log", jobs)
        self.assertIn("xferbench: job 1 of 3: exit 0", stderr)
        incomplete = document["context"]["xferbench"]["incomplete"]
        self.assertEqual(incomplete["jobs_planned"], 3)
        self.assertEqual(len(rows(document)), 6)  # job 1 measured every row
        self.assertIn("of 3 jobs measured is in " + out, stdout)


class SpecialFiles(unittest.TestCase):
    def test_a_fifo_gets_one_whole_document_and_stays_a_fifo(self):
        # Renaming a file over it would replace the pipe (as root, /dev/null too).
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "pipe")
            os.mkfifo(fifo)
            reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE, text=True)
            proc = launch(
                2, ["--xfer_sizes=8,64K", "--xfer_max_time=0.05", "--benchmark_out=" + fifo]
            )
            text, _ = reader.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
            document = json.loads(text)  # one document, not one per row
            self.assertEqual(len(rows(document)), 2)
            self.assertEqual(sorted(os.listdir(tmp)), ["pipe"])


class SameFile(unittest.TestCase):
    def test_two_runs_writing_one_file_leave_one_whole_document(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            args = ["--xfer_sizes=8,1K,64K,1M", "--xfer_max_time=0.1", "--benchmark_out=" + out]
            command = MPIRUN + ["2", XFERBENCH]
            procs = [
                subprocess.Popen(
                    command + args + [f"--xfer_window={w}"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=environment(),
                )
                for w in (16, 32)
            ]
            for proc in procs:
                _, stderr = proc.communicate(timeout=240)
                self.assertEqual(proc.returncode, 0, stderr)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
            self.assertIsNone(document["context"]["xferbench"]["incomplete"])
            self.assertEqual(len(rows(document)), 4)
            self.assertEqual(sorted(os.listdir(tmp)), ["run.json"])


if __name__ == "__main__":
    unittest.main()
