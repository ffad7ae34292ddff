"""What the tool tests share: loading a tool from tools/ as a module, and importing the tools'
package (tools/xfertools) without leaving a __pycache__ in tools/."""

import importlib.util
import os
import sys

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools")
sys.path.insert(0, TOOLS)
sys.dont_write_bytecode = True  # the tests import tools/xfertools; no bytecode beside it


def load_tool(name, path):
    """The tool at `path` as a module called `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
