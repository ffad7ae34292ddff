"""The tools under a python3 first in PATH that lacks numpy (a venv of the system Python, as a
pyenv or venv shim would be): track check and plot run themselves again under the system
Python; compare.py and track record need only the standard library; where no Python has the
packages, one line names each Python tried and the fix, with exit status 3."""

import ast
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import venv

from toollib import TOOLS  # (and tools/ on sys.path)
from xfertools.core import interpreter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_A = os.path.join(ROOT, "tests", "fixtures", "compare", "real_mpi_host_a.json")
RUN_B = os.path.join(ROOT, "tests", "fixtures", "compare", "real_mpi_host_b.json")
SWEEP = os.path.join(ROOT, "tests", "fixtures", "plot", "mpi_host_sweep.json")


def imports(python, module, env):
    """True if python can import module in env."""
    probe = [python, "-c", f"import {module}"]
    return subprocess.run(probe, env=env, capture_output=True).returncode == 0


@unittest.skipUnless(
    os.access(interpreter.SYSTEM_PYTHON, os.X_OK)
    and imports(interpreter.SYSTEM_PYTHON, "numpy, scipy", os.environ),
    f"needs {interpreter.SYSTEM_PYTHON} with numpy and scipy (tools/setup installs them)",
)
class FirstPythonLacksNumpyTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        bare = os.path.join(self.dir, "bare")
        venv.EnvBuilder(symlinks=True, with_pip=False).create(bare)
        self.bare_python = os.path.join(bare, "bin", "python3")
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "XFER_PYTHON"))
        }
        self.env["PATH"] = os.path.join(bare, "bin") + os.pathsep + self.env.get("PATH", "")
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in tools/
        self.assertEqual(shutil.which("python3", path=self.env["PATH"]), self.bare_python)
        self.assertFalse(imports("python3", "numpy", self.env), "the venv has numpy")
        self.history = os.path.join(self.dir, "history")

    def tool(self, *args, env=None):
        """tools/<args[0]> run as a user runs it: its #! line finds the first python3 in PATH."""
        return subprocess.run(
            [os.path.join(TOOLS, args[0]), *args[1:]],
            cwd=self.dir,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def hide_numpy(self):
        """The environment with a numpy that no Python can import (PYTHONPATH is inherited by
        the system Python the tool runs again under)."""
        fake = os.path.join(self.dir, "fake", "numpy")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('hidden by test_python.py')\n")
        env = dict(self.env, PYTHONPATH=os.path.dirname(fake))
        self.assertFalse(imports(interpreter.SYSTEM_PYTHON, "numpy", env))
        return env

    def record_a(self):
        done = self.tool("track", "record", "--history", self.history, RUN_A)
        self.assertEqual(done.returncode, 0, done.stderr)  # no numpy needed, none used
        self.assertIn("recorded", done.stdout)

    def test_track_check_runs_again_under_the_system_python(self):
        self.record_a()
        done = self.tool("track", "check", "--history", self.history, RUN_B)
        self.assertEqual(done.returncode, 1, done.stderr)  # the fixtures' B is slower
        self.assertTrue(done.stdout.startswith("REGRESSION: 1 family slower"), done.stdout)
        self.assertEqual(done.stderr, "")

    def test_track_report_runs_again_under_the_system_python(self):
        self.record_a()
        page = os.path.join(self.dir, "trend.html")
        done = self.tool("track", "report", "--history", self.history, "-o", page)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(page, encoding="utf-8") as f:
            self.assertIn("<svg", f.read())

    def test_compare_needs_only_the_standard_library(self):
        done = self.tool("compare.py", RUN_A, RUN_B)
        self.assertIn(done.returncode, (0, 1), done.stderr)
        self.assertIn("Judged on time per message", done.stdout)

    def test_ab_runs_again_under_the_system_python_or_exits_3(self):
        done = self.tool("ab", "--help")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("--b-env NAME=VALUE", done.stdout)
        done = self.tool("ab", "--help", env=self.hide_numpy())
        self.assertEqual(done.returncode, interpreter.EXIT_MISSING, done.stderr)
        self.assertIn(f"{interpreter.SYSTEM_PYTHON} (no numpy)", done.stderr)

    @unittest.skipUnless(
        imports(interpreter.SYSTEM_PYTHON, "matplotlib", os.environ),
        f"needs {interpreter.SYSTEM_PYTHON} with matplotlib",
    )
    def test_plot_runs_again_under_the_system_python(self):
        image = os.path.join(self.dir, "sweep.svg")
        done = self.tool("plot.py", SWEEP, "-o", image)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(image, encoding="utf-8") as f:
            self.assertIn("<svg", f.read())

    def test_no_python_with_numpy_names_each_python_tried_and_exits_3(self):
        self.record_a()
        done = self.tool("track", "check", "--history", self.history, RUN_B, env=self.hide_numpy())
        self.assertEqual(done.returncode, interpreter.EXIT_MISSING, done.stderr)
        self.assertEqual(interpreter.EXIT_MISSING, 3)  # documented: docs/python.md, README
        self.assertEqual(done.stdout, "")
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertIn(
            f"which no Python tried has: {self.bare_python} (no numpy), "
            f"{interpreter.SYSTEM_PYTHON} (no numpy); install them: apt-get install "
            "python3-numpy python3-scipy",
            done.stderr,
        )

    def shim(self, name, python):
        """A script that runs python, as a pyenv shim does, and leaves DIR/name.used behind."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\ntouch "{path}.used"\nexec {python} "$@"\n')
        os.chmod(path, 0o755)
        return path

    def test_xfer_python_names_the_python_to_try(self):
        self.record_a()
        chosen = self.shim("chosen-python", interpreter.SYSTEM_PYTHON)
        env = dict(self.env, XFER_PYTHON=chosen)
        done = self.tool("track", "check", "--history", self.history, RUN_B, env=env)
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertTrue(os.path.exists(chosen + ".used"), "XFER_PYTHON was not run")
        env = dict(self.env, XFER_PYTHON=os.path.join(self.dir, "no-such-python"))
        done = self.tool("track", "check", "--history", self.history, RUN_B, env=env)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn("no-such-python (not an executable file)", done.stderr)

    def test_a_tool_runs_itself_again_once_at_most(self):
        # A shim of the Python that lacks numpy: run again, it would run the shim again.
        shim = self.shim("shim-python3", self.bare_python)
        env = dict(self.env, XFER_PYTHON=shim)
        done = self.tool("plot.py", SWEEP, "-o", os.path.join(self.dir, "x.svg"), env=env)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertTrue(os.path.exists(shim + ".used"))
        self.assertIn(f"{self.bare_python} (no matplotlib), {shim} (no matplotlib)", done.stderr)
        self.assertIn("the text matrix (--matrix --text) needs none", done.stderr)


@unittest.skipUnless(sys.version_info >= (3, 11), "reads tools/pyproject.toml with tomllib")
class PyprojectTest(unittest.TestCase):
    def test_it_states_every_package_the_tools_import_beyond_the_standard_library(self):
        import tomllib

        with open(os.path.join(TOOLS, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)["project"]
        stated = set(project["dependencies"])
        stated |= {name for extra in project["optional-dependencies"].values() for name in extra}
        imported = set()
        for path in glob.glob(os.path.join(TOOLS, "xfertools", "**", "*.py"), recursive=True):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    imported |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    imported.add(node.module.split(".")[0])
        self.assertEqual(imported - sys.stdlib_module_names, stated)
        self.assertEqual(project["optional-dependencies"], {"plot": ["matplotlib"]})


if __name__ == "__main__":
    unittest.main()
