"""Tests for tools/lint-python: ruff's lint and format check over tools/, tests/ and
docs/results/tools/.

They run ruff (the WebAssembly build from the npm registry, installed once into a cache folder)
under node, and are skipped where node or npm is missing; tools/test installs both, so CI runs
them (and runs tools/lint-python itself over this checkout).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "lint-python")
HAVE_NODE = shutil.which("node") and shutil.which("npm")


@unittest.skipUnless(HAVE_NODE, "needs node and npm (apt-get install nodejs npm)")
class LintTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = tmp.name
        os.makedirs(os.path.join(self.root, "tools"))
        os.makedirs(os.path.join(self.root, "tests"))
        shutil.copy(os.path.join(ROOT, "ruff.toml"), self.root)

    def write(self, name, text):
        with open(os.path.join(self.root, name), "w", encoding="utf-8") as f:
            f.write(text)

    def lint(self, *args):
        return subprocess.run(
            [sys.executable, TOOL, "--root", self.root, *args],
            capture_output=True,
            text=True,
            timeout=300,
        )

    def test_a_finding_and_an_unformatted_file_fail_with_their_place(self):
        self.write("tools/bad.py", "import os\nx=1\n")
        self.write("tests/good.py", 'X = "formatted"\n')
        result = self.lint()
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("tools/bad.py:1:8: F401", result.stdout)
        self.assertIn("tools/bad.py: not formatted", result.stdout)
        self.assertIn("+x = 1", result.stdout)
        self.assertNotIn("good.py", result.stdout)

    def test_format_rewrites_the_file_and_leaves_lint_findings_to_fix(self):
        self.write("tools/bad.py", "import os\nx=1\n")
        self.write("tools/script", "#!/usr/bin/env python3\ny=2\n")  # a script without .py
        result = self.lint("--format")
        self.assertEqual(result.returncode, 1)
        with open(os.path.join(self.root, "tools", "bad.py"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "import os\n\nx = 1\n")
        with open(os.path.join(self.root, "tools", "script"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "#!/usr/bin/env python3\ny = 2\n")
        again = self.lint()
        self.assertEqual(again.returncode, 1)
        self.assertEqual(again.stdout.strip(), "tools/bad.py:1:8: F401 `os` imported but unused")

    def test_the_campaign_scripts_beside_the_results_are_checked_too(self):
        os.makedirs(os.path.join(self.root, "docs", "results", "tools"))
        self.write("docs/results/tools/report.py", "import os\n")
        result = self.lint()
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("docs/results/tools/report.py:1:8: F401", result.stdout)

    def test_a_tree_without_ruff_toml_cannot_be_checked(self):
        os.remove(os.path.join(self.root, "ruff.toml"))
        result = self.lint()
        self.assertEqual(result.returncode, 2)
        self.assertIn("ruff.toml", result.stderr)


if __name__ == "__main__":
    unittest.main()
