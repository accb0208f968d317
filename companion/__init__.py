"""Carousel Companion: a Raspberry Pi service that referees real table games.

Data flows one way: sources (camera, encoder, buttons) -> readers -> observations ->
referee (a pure rules engine per game) -> calls -> announcers (LEDs, buzzer, speech, console),
with every observation and call appended to a SQLite journal. See README.md and docs/.
"""

import os as _os
import sys as _sys

# One BLAS thread, set before numpy is first imported (a value already set wins): numpy's
# OpenBLAS hands a product of a few thousand rows to more threads, which then spin between the
# camera's frames; the readers' products are small (the Carrousel camera loop: 6.3 against 10.6
# ms of CPU a frame on numpy 1.24, docs/BENCHMARKS.md, issue 15).
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

#: glibc malloc arenas at most for the threads this process starts (see :func:`_limit_malloc_arenas`)
MALLOC_ARENAS = 2


def _limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """At most ``arenas`` glibc malloc arenas: the main thread's and one shared by the threads
    started after this call (glibc gives each thread that allocates an arena of its own, up to
    8 per core, and each keeps the memory freed in it; the camera's capture and reading threads
    allocate frames and OpenCV's buffers: 2-2.3 MB of the Carrousel camera loop's peak here when
    the modules are compiled at start, 0.3 MB or less with their bytecode cached,
    docs/BENCHMARKS.md, issue 15). Called once, below, before any thread starts (the
    ``companion`` command imports this package first).

    Nothing is changed where the choice is the user's or there is no glibc: ``MALLOC_ARENA_MAX``
    set, an ``arena_max`` in ``GLIBC_TUNABLES``, another C library, another system.

    Returns True when the limit was set. Source: mallopt(3), ``M_ARENA_MAX`` (-8 in malloc.h);
    the GNU C Library manual, "Memory Allocation Tunables" (``glibc.malloc.arena_max``).
    """
    if not _sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in _os.environ \
            or "arena_max" in _os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        if not _os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError):  # no such name: not glibc
        return False
    import ctypes  # numpy imports it too

    try:
        return bool(ctypes.CDLL(None).mallopt(-8, int(arenas)))  # M_ARENA_MAX
    except (OSError, AttributeError):
        return False


#: True when :func:`_limit_malloc_arenas` set the limit in this process
malloc_arenas_limited = _limit_malloc_arenas()

__version__ = "0.1.0"
