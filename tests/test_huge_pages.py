"""The companion's process maps no transparent huge pages (companion/__init__.py, issue 15: numpy 2
advises them for the readers' zero-filled pixel-class grids, which then became resident 2 MB at a
time: 5.8 MB of the camera loop's peak), unless the user set numpy's own NUMPY_MADVISE_HUGEPAGE.
Each check runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

# a grid-sized zero array with one byte touched every 256 kB (as the grid's cells are met here and
# there), then the process's THP flag (PR_GET_THP_DISABLE) and the array's resident memory
CODE = r"""
import companion, ctypes
import numpy as np
def resident_kb():
    with open("/proc/self/smaps_rollup") as f:
        return {l.split()[0]: int(l.split()[1]) for l in f if l.split()[-1:] == ["kB"]}
before = resident_kb()
grid = np.zeros(2 * 105 * 197 * 215, dtype=np.int8)  # two classifiers' grids, 8.9 MB
grid[::1 << 18] = 1
after = resident_kb()
print(companion.huge_pages_disabled, ctypes.CDLL(None).prctl(42, 0, 0, 0, 0),
      after["Rss:"] - before["Rss:"], after.get("AnonHugePages:", 0), np.__version__.split(".")[0])
"""


def _run(env: dict[str, str]) -> tuple[str, int, int, int, int]:
    """The child's answers; it starts with the THP flag clear (the flag is inherited, and this
    test process has it set once it imported companion)."""
    import ctypes

    def clear_flag() -> None:
        ctypes.CDLL(None).prctl(41, 0, 0, 0, 0)  # PR_SET_THP_DISABLE 0, between fork and exec

    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=60,
                         env=env, preexec_fn=clear_flag)
    disabled, flag, rss_kb, huge_kb, numpy_major = out.stdout.split()
    return disabled, int(flag), int(rss_kb), int(huge_kb), int(numpy_major)


def test_no_huge_pages_the_grid_is_resident_only_where_touched():
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    disabled, flag, rss_kb, huge_kb, _ = _run(env)
    assert (disabled, flag) == ("True", 1)
    assert huge_kb == 0
    assert rss_kb < 1024  # 35 pages touched (4 kB each), not 35 x 2 MB


def test_huge_pages_as_the_user_set_them():
    # numpy's own switch set: the process's THP flag is left alone (whether the kernel then finds
    # a free 2 MB page for the grid depends on its memory at that moment, so it is not asserted)
    env = dict(os.environ, NUMPY_MADVISE_HUGEPAGE="1")
    disabled, flag, _, _, _ = _run(env)
    assert (disabled, flag) == ("False", 0)
