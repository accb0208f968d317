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

#: prctl(2) option number of PR_SET_THP_DISABLE (linux/prctl.h)
_PR_SET_THP_DISABLE = 41


def _disable_huge_pages() -> bool:
    """No transparent huge pages in this process (and the processes it starts): the kernel then
    maps its memory 4 kB at a time, as it is touched, never 2 MB at once.

    numpy 2 advises huge pages for every array of 4 MB or more, zero-filled ones too (numpy 1.24
    only for ``np.empty``), so under the kernel's THP policy ``madvise`` (this machine's) or
    ``always``, the readers' pixel-class grids (4.4 MB of zero pages each, of
    which only the cells met are needed) became resident 2 MB at a time as their cells were met:
    5.8 MB of the Carrousel camera loop's peak (82.5 against 76.3 MB here; 4 ms of CPU a frame
    either way, docs/BENCHMARKS.md, issue 15). The companion has no array for which huge pages
    pay (a frame is 0.9 MB). Called once, below, at the package's import.

    Nothing is changed where the choice is the user's or the system has no such control:
    ``NUMPY_MADVISE_HUGEPAGE`` set (numpy's own switch), not Linux, a kernel before 3.15.

    Returns True when huge pages were turned off. Source: prctl(2), ``PR_SET_THP_DISABLE``
    (Linux 3.15: inherited across fork and kept across execve); the kernel's
    admin-guide/mm/transhuge; numpy's "Global state" reference, "madvise hugepage on Linux".
    """
    if not _sys.platform.startswith("linux") or "NUMPY_MADVISE_HUGEPAGE" in _os.environ:
        return False
    import ctypes

    try:
        return ctypes.CDLL(None).prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


#: True when :func:`_disable_huge_pages` turned transparent huge pages off in this process
huge_pages_disabled = _disable_huge_pages()

__version__ = "0.1.0"
