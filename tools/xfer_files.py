"""Reading result files safely, for tools/compare.py and tools/plot.py (standard library only).

A result file may be anything a user passes: a directory, a FIFO with no writer (opening it for
reading would wait forever), a device, a document nested a million levels deep. These helpers
refuse such input with one line of text, before it can hang or crash a tool. Rows named as
before exchange modes existed are read under their current names (canonical_name).
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


# Paths between ranks whose rows name an exchange mode (mode:pingpong, mode:stream, mode:bidir).
# Files from before modes existed name their ping-pong rows without one: mpi_host/bytes:8
# measured what mpi_host/mode:pingpong/bytes:8 measures.
EXCHANGE_PATHS = ('mpi_host', 'mpi_cuda_aware', 'nccl_sendrecv')
LEGACY_MODE = 'mode:pingpong'
# mpi_staged named its staging mode: too until it gained exchange modes; now staging: is
# followed by the exchange mode, and those rows measured ping-pong:
# mpi_staged/host:pinned/mode:pipelined/bytes:8 is
# mpi_staged/host:pinned/staging:pipelined/mode:pingpong/bytes:8. Other paths' mode:
# components (host_staging's mode:sequential) mean staging and are never touched.
STAGED_PATH = 'mpi_staged'
LEGACY_STAGING = {'mode:sequential': 'staging:sequential',
                  'mode:pipelined': 'staging:pipelined'}


def canonical_name(name):
    """The current name of a row name (or a series key, without bytes:N): an exchange path's
    name without a mode component gains mode:pingpong right after the path, and in an
    mpi_staged name without a staging: component, mode:sequential or mode:pipelined becomes
    staging:sequential or staging:pipelined followed by mode:pingpong."""
    parts = name.split('/')
    if parts[0] == STAGED_PATH and not any(part.startswith('staging:') for part in parts[1:]):
        return '/'.join(f'{LEGACY_STAGING[part]}/{LEGACY_MODE}'
                        if i and part in LEGACY_STAGING else part
                        for i, part in enumerate(parts))
    if parts[0] in EXCHANGE_PATHS and not any(part.startswith('mode:') for part in parts[1:]):
        parts.insert(1, LEGACY_MODE)
    return '/'.join(parts)
