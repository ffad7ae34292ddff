"""Where the xferbench checkout is, for the commands that build or run xferbench (tools/ab,
tools/fleet run, tools/check-node): the folder above tools/ where this package lies in a
checkout's tools/xfertools (or where `cmake --install` put tools/ beside it); where pip
installed the package (`pip install ./tools`), $XFER_ROOT, else the current directory."""

import os

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # tools/xfertools
TOOLS = os.path.dirname(PACKAGE)  # the folder of the commands: tools/
ROOT_VARIABLE = "XFER_ROOT"


def root():
    """The checkout: its build/, results/ and tools/setup are the commands' defaults."""
    if os.path.isfile(os.path.join(TOOLS, "track")):  # the commands lie beside the package
        return os.path.dirname(TOOLS)
    return os.environ.get(ROOT_VARIABLE) or os.getcwd()
