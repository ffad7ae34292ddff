"""Ctrl-C or SIGTERM to a Python tool: one line, `<tool>: interrupted`, exit 130, and no
traceback (xfertools/core/interrupt.py). Each tool is run as a user runs it and stalled at a point
of its work (an audit hook, from a sitecustomize put on its PYTHONPATH, sleeps at the tool's
first event of a kind); the test waits until it is there, then sends the signal."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from toollib import TOOLS

FIXTURES = os.path.join(os.path.dirname(TOOLS), "tests", "fixtures")
RESULT = os.path.join(FIXTURES, "compare", "real_mpi_host_a.json")
NEW_RESULT = os.path.join(FIXTURES, "compare", "real_mpi_host_b.json")
SITECUSTOMIZE = textwrap.dedent(
    """
    import os, sys, time

    EVENT, PART = os.environ["XFER_TEST_STALL"].split(":", 1)

    def stall(event, args):
        if event == EVENT and PART in repr(args):
            path = os.environ["XFER_TEST_STALLED"]
            with open(path + ".tmp", "w") as ready:
                ready.write(str(os.getpid()))
            os.replace(path + ".tmp", path)
            time.sleep(120)

    sys.addaudithook(stall)
    """
)
WAIT_S = 60  # for a tool to reach its stall (importing numpy on a busy machine)


class InterruptedToolTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        with open(os.path.join(self.dir, "sitecustomize.py"), "w") as stream:
            stream.write(SITECUSTOMIZE)

    def interrupt(self, prog, command, stall, signum=signal.SIGINT):
        """Runs command until it stalls at the event `stall` ("event:part"), sends signum to
        the process that stalled, and checks how the tool ends."""
        stalled = os.path.join(self.dir, "stalled")
        env = dict(os.environ, PYTHONPATH=self.dir, XFER_TEST_STALL=stall)
        env["XFER_TEST_STALLED"] = stalled
        with subprocess.Popen(
            [sys.executable] + command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=self.dir,
        ) as tool:
            deadline = time.monotonic() + WAIT_S
            while not os.path.exists(stalled) and tool.poll() is None:
                if time.monotonic() > deadline:
                    tool.kill()
                    self.fail(f"{prog} did not reach {stall} in {WAIT_S} s")
                time.sleep(0.05)
            if tool.poll() is not None:
                self.fail(f"{prog} ended before {stall}: {tool.communicate()}")
            with open(stalled) as ready:
                os.kill(int(ready.read()), signum)
            out, err = tool.communicate(timeout=WAIT_S)
        self.assertEqual(tool.returncode, 130, out + err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(err.strip().splitlines()[-1], f"{prog}: interrupted")

    def test_compare(self):
        self.interrupt(
            "compare.py", [os.path.join(TOOLS, "compare.py"), RESULT, NEW_RESULT], "open:" + RESULT
        )

    def test_compare_on_sigterm(self):
        command = [os.path.join(TOOLS, "compare.py"), RESULT, NEW_RESULT]
        self.interrupt("compare.py", command, "open:" + RESULT, signal.SIGTERM)

    def test_check_node(self):
        command = [os.path.join(TOOLS, "check-node"), "--from", RESULT]
        self.interrupt("check-node", command, "open:" + RESULT)

    def test_check_node_on_sigterm(self):
        command = [os.path.join(TOOLS, "check-node"), "--from", RESULT]
        self.interrupt("check-node", command, "open:" + RESULT, signal.SIGTERM)

    def test_plot(self):
        command = [os.path.join(TOOLS, "plot.py"), RESULT, "-o", "out.png"]
        self.interrupt("plot.py", command, "open:" + RESULT)

    def test_track(self):
        command = [os.path.join(TOOLS, "track"), "export", "--format", "bencher", RESULT]
        self.interrupt("track", command, "open:" + RESULT)

    def fake_build(self, *programs):
        """A build directory whose programs exit 2 (the tools stall before running them)."""
        build = os.path.join(self.dir, "build")
        os.makedirs(build)
        for name in programs:
            with open(os.path.join(build, name), "w") as stream:
                stream.write("#!/bin/sh\nexit 2\n")
            os.chmod(os.path.join(build, name), 0o755)
        return build

    def test_calibrate(self):
        # It starts by asking the launcher its version.
        build = self.fake_build("xferbench", "plain_pingpong")
        command = [os.path.join(TOOLS, "calibrate.py"), "--build", build]
        self.interrupt("calibrate", command, "subprocess.Popen:")

    def test_lint_python(self):
        command = [os.path.join(TOOLS, "lint-python"), "--root", self.dir]
        self.interrupt("lint-python", command, "open:ruff.toml")

    def test_ab_before_its_sitting(self):
        # Before the jobs start (a sitting's own interruption: tests/integration/test_ab.py).
        build = self.fake_build("xferbench")
        out = os.path.join(self.dir, "ab.json")
        command = [os.path.join(TOOLS, "ab"), "--a-build", build, "--b-build", build]
        self.interrupt("tools/ab", command + ["--out", out], "os.mkdir:ab.jobs")


if __name__ == "__main__":
    unittest.main()
