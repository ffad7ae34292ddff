"""Ctrl-C or SIGTERM ends a tool with one line, `<tool>: interrupted`, and exit status 130, the
status xferbench and tools/run give an interrupted run; never with a Python traceback.

A command installs it first thing, before its heavier imports: each sub-package's command()
calls core/front.py's enter(PROG), which calls install(PROG).

SIGTERM is raised as KeyboardInterrupt where the tool is, so its `finally` blocks and `with`
statements clean up as for Ctrl-C; a KeyboardInterrupt nothing caught then ends the process.
A tool that keeps what it did on a signal (tools/ab) sets its own handlers while it does so.
"""

import os
import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as xferbench and tools/run


def raise_interrupt(signum, frame):
    """SIGTERM as Ctrl-C."""
    raise KeyboardInterrupt


def install(prog):
    """From now on, Ctrl-C or SIGTERM ends this process with `prog: interrupted` and 130."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        if not issubclass(kind, KeyboardInterrupt):
            previous(kind, value, traceback)
            return
        # Python would end by the signal itself after printing a traceback: say one line and
        # leave with the status instead (the stack has unwound; only the streams are left).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            os.write(2, f"{prog}: interrupted\n".encode())
        except OSError:
            pass
        os._exit(EXIT_INTERRUPTED)

    sys.excepthook = hook
    signal.signal(signal.SIGTERM, raise_interrupt)
