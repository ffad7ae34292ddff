"""What the tool tests share: loading a tool from tools/ as a module."""

import importlib.util
import sys


def load_tool(name, path):
    """The tool at `path` as a module called `name`, without leaving a __pycache__ in tools/."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = dont_write
    return module
