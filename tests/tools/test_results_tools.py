"""The campaign scripts under docs/results/tools still load: every Python script imports the
tools it reaches for (tools/xfertools, through sys.path) and answers --help with exit 0, every
shell script parses and answers --help with its header, and lib.sh (sourced, not run) parses.
None of them runs a campaign here.

    python3 -m unittest discover -s tests/tools -p 'test_results_tools.py'
"""

import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "docs", "results", "tools")
SOURCED = {"lib.sh"}  # sourced by the others, never run
MODULES = {"repo_tools.py"}  # imported by the others, no command line


def is_shell_script(path):
    if path.endswith(".sh"):
        return True
    with open(path, "rb") as stream:
        return stream.readline().startswith(b"#!/usr/bin/env bash")


def run(command):
    return subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


class ResultsToolsTest(unittest.TestCase):
    def names(self, wanted):
        found = sorted(n for n in os.listdir(SCRIPTS) if wanted(os.path.join(SCRIPTS, n)))
        self.assertTrue(found)
        return found

    def test_every_python_script_answers_help(self):
        for name in self.names(lambda p: p.endswith(".py")):
            with self.subTest(name):
                if name in MODULES:
                    code = f"import sys; sys.path.insert(0, {SCRIPTS!r}); import {name[:-3]}"
                    done = run([sys.executable, "-c", code])
                    self.assertEqual(done.returncode, 0, done.stderr)
                    continue
                done = run([sys.executable, os.path.join(SCRIPTS, name), "--help"])
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("usage:", done.stdout)

    def test_every_shell_script_parses_and_answers_help(self):
        for name in self.names(is_shell_script):
            with self.subTest(name):
                path = os.path.join(SCRIPTS, name)
                parsed = run(["bash", "-n", path])
                self.assertEqual(parsed.returncode, 0, parsed.stderr)
                if name in SOURCED:
                    continue
                done = run(["bash", path, "--help"])
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("usage", done.stdout)

    def test_the_sourced_helpers_parse(self):
        for name in sorted(SOURCED):
            done = run(["bash", "-n", os.path.join(SCRIPTS, name)])
            self.assertEqual(done.returncode, 0, done.stderr)

    def test_no_script_is_left_out(self):
        known = set(self.names(lambda p: p.endswith(".py"))) | set(self.names(is_shell_script))
        others = {"README.md", "pinned_alloc.cu"}  # the CUDA source is built by `targets`
        self.assertEqual(sorted(set(os.listdir(SCRIPTS)) - known - others), [])


if __name__ == "__main__":
    unittest.main()
