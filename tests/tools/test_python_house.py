"""tools/xfertools is layered: a sub-package imports only itself and the sub-packages below it.

The order is the `layers:` line of tools/xfertools/__init__.py; every import of every module of
the package is read (relative or absolute, at the top or inside a function), and there is no
list of exceptions. Each package's docstring maps its modules; the commands in tools/ are thin
files over their sub-package's cli; `pip install ./tools` installs them as commands, at
xferbench's version, which is written once (tools/xfertools/VERSION).
"""

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
PACKAGE = os.path.join(TOOLS, "xfertools")
# The commands users call, each over the cli module of its sub-package.
COMMANDS = {
    "compare.py": "compare",
    "plot.py": "plot",
    "track": "track",
    "ab": "ab",
    "fleet": "fleet",
    "check-node": "node",
    "calibrate.py": "machine",
}
# Where this Python lacks numpy and scipy, these say so in one line with their own status.
NEED_NUMPY = {"ab": 3, "fleet": 5}
MAP_COLUMN = 12  # where a map line's description starts
RUN_A = os.path.join(ROOT, "tests", "fixtures", "compare", "real_mpi_host_a.json")
RUN_B = os.path.join(ROOT, "tests", "fixtures", "compare", "real_mpi_host_b.json")


def layers(package=PACKAGE):
    with open(os.path.join(package, "__init__.py"), encoding="utf-8") as f:
        found = re.search(r"^layers: (.+)$", f.read(), re.M)
    if not found:
        raise AssertionError(f"{package}/__init__.py has no 'layers:' line")
    return [name.strip() for name in found.group(1).split("->")]


def imported_subpackages(package):
    """(module relative to package, line, the sub-package it imports) for every import of the
    package's own code: `from ..x import`, `from .. import a, b`, `from . import`, `from .x
    import`, `import xfertools.x`, `from xfertools import x`, and importlib.import_module or
    __import__ of a literal name."""
    name = os.path.basename(package)
    for here, folders, files in os.walk(package):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for file in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(here, file)
            source = os.path.relpath(path, package)
            parts = source.split(os.sep)
            own = parts[0] if len(parts) > 1 else None
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                for target in reached(node, own, name):
                    yield source, node.lineno, target


def reached(node, own, name):
    """The sub-packages one node of a module of sub-package own (None: the package's top)
    imports, as written."""
    if isinstance(node, ast.ImportFrom) and node.level:
        up = node.level - (1 if own else 0)  # package levels above the module's own
        if up > 1:
            return [f"above {name}"]
        if up == 0:
            return [own]
        return [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.module == name:
            return [a.name for a in node.names]
        modules = [node.module or ""]
    elif isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif isinstance(node, ast.Call) and dynamic_import(node):
        written = node.args[0].value
        modules = [written] if not written.startswith(".") else [f"{name}.{written}"]
    else:
        return []
    return [m.split(".")[1] for m in modules if m.startswith(name + ".")] + [
        f"{name} itself" for m in modules if m == name
    ]


def dynamic_import(call):
    """True for importlib.import_module("...") or __import__("...") of a literal name."""
    function = call.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    literal = call.args and isinstance(call.args[0], ast.Constant)
    return (
        called in ("import_module", "__import__")
        and literal
        and isinstance(call.args[0].value, str)
    )


def upward_imports(package, order):
    """What breaks the layering: an import of a sub-package above the importer's, of one not in
    the order, or of the package's top from inside it; a top-level module importing any."""
    found = []
    for source, line, target in imported_subpackages(package):
        own = source.split(os.sep)[0] if os.sep in source else None
        if own is None:
            found.append(f"{source}:{line} (the package's top) imports {target}")
        elif target not in order or own not in order:
            found.append(f"{source}:{line} imports {target}, which is no layer")
        elif order.index(target) > order.index(own):
            found.append(f"{source}:{line} imports {target}")
    return found


def docstring_map(path):
    """The names of a docstring's map: lines `name` padded to column 12, then what it does."""
    with open(path, encoding="utf-8") as f:
        text = ast.get_docstring(ast.parse(f.read())) or ""
    lines = (re.match(r"^([a-z_]+) +(?=\S)", line) for line in text.splitlines())
    return {m.group(1) for m in lines if m and m.end() == MAP_COLUMN}


class Layering(unittest.TestCase):
    def test_every_sub_package_is_a_layer_and_the_top_holds_no_module(self):
        order = layers()
        folders = sorted(
            e.name for e in os.scandir(PACKAGE) if e.is_dir() and e.name != "__pycache__"
        )
        self.assertEqual(sorted(order), folders)
        top = sorted(e.name for e in os.scandir(PACKAGE) if e.is_file())
        self.assertEqual(top, ["VERSION", "__init__.py"])
        deeper = [
            f"{sub}/{e.name}"
            for sub in folders
            for e in os.scandir(os.path.join(PACKAGE, sub))
            if e.is_dir() and e.name != "__pycache__"
        ]
        self.assertEqual(deeper, [], "a sub-package holds modules only: one layer, one folder")

    def test_each_sub_package_imports_only_its_own_layer_and_those_below(self):
        order = layers()
        found = upward_imports(PACKAGE, order)
        self.assertEqual(found, [], "\n".join(found))
        core = [t for s, _, t in imported_subpackages(PACKAGE) if s.startswith("core" + os.sep)]
        self.assertEqual(sorted(set(core) - {"core"}), [])

    def test_an_import_that_points_up_is_caught(self):
        with tempfile.TemporaryDirectory() as tree:
            package = os.path.join(tree, "xfertools")
            for folder, name, text in (
                ("", "__init__.py", '"""Two layers.\n\nlayers: low -> high\n"""\n'),
                ("low", "__init__.py", ""),
                ("high", "__init__.py", ""),
                ("high", "a.py", "from ..low import b\nfrom . import c\n"),
                ("low", "b.py", "def f():\n    from ..high import a\n"),
                ("low", "c.py", "import xfertools.high.a\nfrom xfertools.low import b\n"),
                ("low", "d.py", "from ...elsewhere import x\nfrom ..side import y\n"),
                ("low", "e.py", "from .. import low, high\nfrom xfertools import high\n"),
                ("low", "f.py", "import importlib\nimportlib.import_module('xfertools.high.a')\n"),
                ("low", "g.py", "__import__('xfertools.low.b')\nimport xfertools\n"),
            ):
                os.makedirs(os.path.join(package, folder), exist_ok=True)
                with open(os.path.join(package, folder, name), "w", encoding="utf-8") as f:
                    f.write(text)
            found = upward_imports(package, layers(package))
        self.assertEqual(
            found,
            [
                "low/b.py:2 imports high",
                "low/c.py:1 imports high",
                "low/d.py:1 imports above xfertools, which is no layer",
                "low/d.py:2 imports side, which is no layer",
                "low/e.py:1 imports high",
                "low/e.py:2 imports high",
                "low/f.py:2 imports high",
                "low/g.py:2 imports xfertools itself, which is no layer",
            ],
        )


class Maps(unittest.TestCase):
    def test_each_docstring_maps_every_module_and_sub_package(self):
        for entry in os.scandir(PACKAGE):
            if not entry.is_dir() or entry.name == "__pycache__":
                continue
            modules = {n[:-3] for n in os.listdir(entry.path) if n.endswith(".py")}
            listed = docstring_map(os.path.join(entry.path, "__init__.py"))
            self.assertEqual(sorted(modules - {"__init__"}), sorted(listed), entry.name)
        self.assertEqual(
            sorted(docstring_map(os.path.join(PACKAGE, "__init__.py"))), sorted(layers())
        )

    def test_contributing_maps_every_sub_package(self):
        with open(os.path.join(ROOT, "CONTRIBUTING.md"), encoding="utf-8") as f:
            text = f.read()
        for sub in layers():
            self.assertIn(f"  xfertools/{sub}/ ", text, sub)


class Commands(unittest.TestCase):
    def test_each_command_is_a_thin_file_over_its_sub_package(self):
        for command, sub in COMMANDS.items():
            with open(os.path.join(TOOLS, command), encoding="utf-8") as f:
                text = f.read()
            tree = ast.parse(text)
            self.assertFalse(
                [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))],
                command,
            )
            self.assertLessEqual(len(text.splitlines()), 30, command)
            self.assertIn(f"from xfertools.{sub} import command", text, command)
            # the sub-package's command(): the front door, then its cli's main
            with open(os.path.join(PACKAGE, sub, "__init__.py"), encoding="utf-8") as f:
                init = ast.parse(f.read())
            entry = [n for n in init.body if isinstance(n, ast.FunctionDef) and n.name == "command"]
            self.assertEqual(len(entry), 1, sub)
            imported = {
                (n.module, a.name)
                for n in ast.walk(entry[0])
                if isinstance(n, ast.ImportFrom)
                for a in n.names
            }
            self.assertIn(("cli", "main"), imported, sub)
            self.assertIn(("core.front", "enter"), imported, sub)

    def test_pyproject_installs_each_command_at_xferbench_version(self):
        with open(os.path.join(TOOLS, "pyproject.toml"), encoding="utf-8") as f:
            project = f.read()
        scripts = dict(re.findall(r'^([a-z-]+) = "xfertools\.([a-z]+):command"$', project, re.M))
        self.assertEqual(scripts, {c.removesuffix(".py"): s for c, s in COMMANDS.items()})
        self.assertIn('version = { file = "xfertools/VERSION" }', project)
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            cmake = f.read()
        self.assertIn("tools/xfertools/VERSION", cmake)
        self.assertRegex(cmake, r"project\(xferbench VERSION \$\{XFER_VERSION_STRING\}")
        self.assertNotRegex(cmake, r"project\(xferbench VERSION [0-9]")

    def test_pip_install_gives_the_commands_and_the_version(self):
        """Offline: setuptools and numpy come from the system Python's site-packages."""
        tools = subprocess.run(
            [sys.executable, "-c", "import ensurepip, setuptools"], capture_output=True
        )
        if tools.returncode != 0:
            why = "needs python3-venv and python3-setuptools (tools/test installs them as root)"
            if os.environ.get("XFER_EXPECT_VENV") == "1":
                raise AssertionError(f"XFER_EXPECT_VENV=1 but this Python {why}")
            self.skipTest(why)
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "tools")  # a copy: the build writes beside pyproject
            os.mkdir(source)
            shutil.copy(os.path.join(TOOLS, "pyproject.toml"), source)
            shutil.copytree(
                PACKAGE,
                os.path.join(source, "xfertools"),
                ignore=shutil.ignore_patterns("__pycache__"),
            )
            venv = os.path.join(tmp, "venv")
            subprocess.run(
                [sys.executable, "-m", "venv", "--system-site-packages", venv], check=True
            )
            installed = subprocess.run(
                [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-index"]
                + ["--no-build-isolation", "--no-deps", "--no-cache-dir", source],
                capture_output=True,
                text=True,
            )
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)
            with open(os.path.join(PACKAGE, "VERSION"), encoding="utf-8") as f:
                version = f.read().strip()
            shown = subprocess.run(
                [os.path.join(venv, "bin", "python"), "-m", "pip", "show", "xfertools"],
                capture_output=True,
                text=True,
            )
            self.assertIn(f"Version: {version}\n", shown.stdout)
            judges = (  # the venv's Python (its base's site-packages), not this one
                subprocess.run(
                    [os.path.join(venv, "bin", "python"), "-c", "import numpy, scipy"],
                    capture_output=True,
                ).returncode
                == 0
            )
            for command in COMMANDS:
                name = command.removesuffix(".py")
                done = subprocess.run(
                    [os.path.join(venv, "bin", name), "--help"], capture_output=True, text=True
                )
                self.assertNotIn("Traceback", done.stderr, name)
                if name in NEED_NUMPY and not judges:  # one line, as tools/ says it
                    self.assertEqual(done.returncode, NEED_NUMPY[name], done.stderr)
                    self.assertIn(f"{name}: error: needs numpy and scipy", done.stderr)
                    continue
                self.assertEqual(done.returncode, 0, f"{name}: {done.stderr}")
                self.assertIn("usage:", done.stdout)
            # The installed command and tools/ print the same: an export (standard library
            # only), and a compare where the venv's Python can judge (else its one line, exit 3).
            for argv in (
                ["track", "export", "--format", "github", RUN_A],
                ["compare", RUN_A, RUN_B],
            ):
                installed = subprocess.run(
                    [os.path.join(venv, "bin", argv[0]), *argv[1:]],
                    capture_output=True,
                    text=True,
                    cwd=tmp,
                )
                if argv[0] == "compare" and not judges:
                    self.assertEqual(installed.returncode, 3, installed.stderr)
                    self.assertIn("compare.py: error: needs numpy and scipy", installed.stderr)
                    continue
                self.assertEqual(installed.returncode, 0, installed.stderr)
                tool = os.path.join(TOOLS, "compare.py" if argv[0] == "compare" else argv[0])
                direct = subprocess.run(
                    [sys.executable, tool, *argv[1:]], capture_output=True, text=True, cwd=tmp
                )
                self.assertEqual(installed.stdout, direct.stdout, argv[0])
                self.assertTrue(installed.stdout, argv[0])


if __name__ == "__main__":
    unittest.main()
