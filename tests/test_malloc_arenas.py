"""The companion's process keeps its threads to two glibc malloc arenas (companion/__init__.py,
issue 15: each thread's own arena kept up to 2.3 MB of the camera loop's peak), unless the user set
MALLOC_ARENA_MAX. Each check runs in a fresh interpreter: the limit holds for the threads
started after the package is imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION"),
                                reason="glibc only")

# six threads allocating at once, then the arenas counted in glibc's malloc_info(3) report
CODE = r"""
import companion, ctypes, re, tempfile, threading
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
go, ready = threading.Event(), threading.Semaphore(0)
def work():
    keep = [bytearray(3000) for _ in range(200)]
    ready.release()
    go.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
for _ in threads:
    ready.acquire()
with tempfile.NamedTemporaryFile("r") as report:
    f = libc.fopen(report.name.encode(), b"w")
    libc.malloc_info(0, f)
    libc.fclose(f)
    arenas = len(re.findall(r'<heap nr="[0-9]+"', report.read()))
go.set()
for t in threads:
    t.join()
print(companion.malloc_arenas_limited, arenas)
"""


def _run(env: dict[str, str]) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=60,
                         env=env)
    limited, arenas = out.stdout.split()
    return limited, int(arenas)


def test_the_threads_share_two_malloc_arenas():
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    assert _run(env) == ("True", 2)


def test_a_malloc_arena_max_set_by_the_user_wins():
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    env["MALLOC_ARENA_MAX"] = "8"
    limited, arenas = _run(env)
    assert limited == "False" and arenas > 2  # glibc's own limit: each thread its arena here
