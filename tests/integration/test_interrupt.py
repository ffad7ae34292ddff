"""A run cut short keeps what it measured; two runs writing one file leave one whole document."""

import json
import os
import signal
import stat
import subprocess
import tempfile
import time
import unittest

from xfer_testlib import MPIRUN, XFERBENCH, launch, rows

# Rows that take a while together (the large ones), so a signal lands in the middle of the run.
LONG = [
    "--xfer_sizes=8,64K,1M,16M,64M,256M,256M:1GiB:x2",
    "--xfer_precision=0.01",
    "--xfer_max_time=1",
]


def environment():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def start(out, extra=()):
    command = MPIRUN + ["2", XFERBENCH] + LONG + ["--benchmark_out=" + out] + list(extra)
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env=environment(),
        start_new_session=True,
    )


def wait_for_rows(path, proc, timeout=120):
    """Waits until the result file holds at least one row (the run is under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(path):
            return
        time.sleep(0.05)
    raise AssertionError("no rows were written while the run was going")


def rank_zero_pid(launcher_pid):
    """The pid of the process the launcher started as rank 0."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
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


class Interrupted(unittest.TestCase):
    def check_partial(self, proc, out, tmp):
        try:
            _, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        self.assertNotEqual(proc.returncode, 0, stderr)
        with open(out, encoding="utf-8") as f:
            document = json.load(f)
        got = rows(document)
        self.assertGreaterEqual(len(got), 1)
        self.assertLess(len(got), 9)  # it did not finish
        incomplete = document["context"]["xferbench"]["incomplete"]
        self.assertEqual(incomplete["rows"], len(got))
        self.assertIn("did not finish", incomplete["reason"])
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
