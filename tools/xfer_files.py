"""Reading result files safely, for tools/compare.py and tools/plot.py (standard library only).

A result file may be anything a user passes: a directory, a FIFO with no writer (opening it for
reading would wait forever), a device, a document nested a million levels deep. These helpers
refuse such input with one line of text, before it can hang or crash a tool.
"""

import os
import stat

MAX_NESTING = 100  # lists and objects: xferbench's own documents nest 6 deep

FILE_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'),
              (stat.S_ISSOCK, 'a socket'), (stat.S_ISCHR, 'a device'),
              (stat.S_ISBLK, 'a device'))


def nesting_depth(value, limit=MAX_NESTING):
    """How deep lists and objects nest in value, counting to limit + 1 (no recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return depth
            deepest = max(deepest, depth)
            items = value.values() if isinstance(value, dict) else value
            pending.extend((item, depth + 1) for item in items)
    return deepest


def file_kind(mode):
    return next((kind for test, kind in FILE_KINDS if test(mode)), 'not a regular file')


def read_regular_file(where, path, error):
    """The bytes of the regular file at path. Anything else is refused before it is opened, and
    again after (O_NONBLOCK: the open never waits), by raising error('WHERE: ...')."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0))
            with open(fd, 'rb') as stream:
                mode = os.fstat(stream.fileno()).st_mode
                if stat.S_ISREG(mode):
                    return stream.read()
    except FileNotFoundError:
        raise error(f'{where}: no such file') from None
    except (OSError, ValueError) as e:
        raise error(f'{where}: cannot read: {getattr(e, "strerror", None) or e}') from None
    raise error(f'{where}: not a regular file ({file_kind(mode)})')
