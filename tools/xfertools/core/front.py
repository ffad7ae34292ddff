"""A command's front door, the same for tools/<command> and the command `pip install ./tools`
installs: from here on Ctrl-C or SIGTERM says one line and exits 130; then, for a command that
needs numpy and scipy, this Python has them, or the command runs again under one that does, or
it says which Python lacks what and exits (each sub-package's command() calls enter())."""

import sys

from . import interpreter, interrupt


def enter(prog, needs=(), missing_status=interpreter.EXIT_MISSING):
    """Install the interrupt handler for prog; return once this Python imports every module in
    needs (else run prog again under the Python to try, or exit missing_status with one line)."""
    interrupt.install(prog)
    if not needs:
        return
    try:
        interpreter.require(needs)
    except interpreter.Missing as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        sys.exit(missing_status)
