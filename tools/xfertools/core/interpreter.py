"""Which Python a tool runs under. The first python3 in PATH (a pyenv or venv shim, say) may
lack the numpy, scipy or matplotlib that tools/setup installed for the system Python; a tool
that needs them then runs itself again under that Python, or under $XFER_PYTHON where it is
set (docs/python.md). Where none has them, Missing names each Python tried and the fix."""

import importlib
import json
import os
import sys

from . import checkout

SYSTEM_PYTHON = "/usr/bin/python3"  # the Python tools/setup installs the packages for
CHOICE = "XFER_PYTHON"  # the Python to try instead of SYSTEM_PYTHON
TRIED = "XFER_PYTHON_TRIED"  # set when run again: [[python, why not], ...]; once only
EXIT_MISSING = 3  # distinct from 2 (bad input, or no history to judge by)
APT_PACKAGES = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "matplotlib": "python3-matplotlib",
}
TOOLS = checkout.TOOLS


class Missing(Exception):
    """No Python tried can import what the tool needs; the text says which and the fix."""


def first_missing(modules):
    """The first of modules this Python cannot import, or None."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def is_tool_script():
    """True if this process runs a tool of this folder (not, say, a test that imports one)."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return bool(main) and os.path.dirname(os.path.realpath(main)) == TOOLS


def same_python(candidate):
    """True if candidate is this Python with this environment (not a venv of it)."""
    return sys.prefix == sys.base_prefix and os.path.realpath(candidate) == os.path.realpath(
        sys.executable
    )


def earlier_tries(text):
    """[[python, why not], ...] from TRIED's value; [] from a value this module did not write."""
    try:
        tried = json.loads(text)
    except ValueError:
        return []
    valid = isinstance(tried, list) and all(
        isinstance(t, list) and len(t) == 2 and all(isinstance(s, str) for s in t) for t in tried
    )
    return tried if valid else []


def next_python(tried):
    """The Python to run the tool under next, or None where that is this one or is none (then
    tried says why)."""
    candidate = os.environ.get(CHOICE) or SYSTEM_PYTHON
    if same_python(candidate):
        return None
    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return candidate
    tried.append([candidate, "not an executable file"])
    return None


def missing_message(modules, tried):
    them = "them" if len(modules) > 1 else "it"
    lacks = ", ".join(f"{python} ({why})" for python, why in tried)
    apt = " ".join(APT_PACKAGES.get(m, m) for m in modules)
    return (
        f"needs {' and '.join(modules)}, which no Python tried has: {lacks}; install {them}: "
        f"apt-get install {apt} (Debian, Ubuntu), or python3 -m pip install "
        f"{' '.join(modules)}, or name a Python that has {them} in {CHOICE}"
    )


def require(modules):
    """Return once this Python imports every module; else run the tool again, once, under the
    Python to try (never returns), or raise Missing where that was done or is not possible."""
    again = TRIED in os.environ  # this process is the tool run again: never a third time
    tried = earlier_tries(os.environ.pop(TRIED, "[]"))
    missing = first_missing(modules)
    if missing is None:
        return
    if again:
        tried.append([os.environ.get(CHOICE) or SYSTEM_PYTHON, f"no {missing}"])
        raise Missing(missing_message(modules, tried))
    tried.append([sys.executable, f"no {missing}"])
    candidate = next_python(tried) if is_tool_script() else None
    if candidate is None:
        raise Missing(missing_message(modules, tried))
    sys.stdout.flush()
    sys.stderr.flush()
    os.environ[TRIED] = json.dumps(tried)
    os.execv(candidate, [candidate, sys.argv[0], *sys.argv[1:]])
