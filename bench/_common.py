"""Shared bits of the benchmarks: the machine description, percentiles and the reference operation."""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
import time


def machine() -> str:
    """One line: CPU model, cores, Python, date (UTC)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d}"
    )


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100), linear interpolation."""
    if not values:
        raise ValueError("no values")
    return statistics.quantiles(values, n=1000, method="inclusive")[int(p * 10) - 1] if p < 100 else max(values)


def reference_op_s(repeat: int = 300, clock=time.perf_counter) -> float:
    """Median seconds of the reference operation: one ``cv2.cvtColor`` BGR -> Lab of a 640 x 480
    frame (``H x W x 3 uint8``). Every figure in docs/BENCHMARKS.md is also given as a ratio to it,
    timed in the same run, so that a figure measured here says what it costs on a slower core.
    ``clock``: ``time.perf_counter`` (wall) or ``time.thread_time`` (this thread's CPU time, to
    compare with reads timed the same way when the cores are shared)."""
    import cv2
    import numpy as np

    frame = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    times = []
    for _ in range(repeat):
        t0 = clock()
        cv2.cvtColor(frame, cv2.COLOR_BGR2LAB)
        times.append(clock() - t0)
    return statistics.median(times)


def child_env(bytecode_dir: str | os.PathLike[str] | None) -> dict[str, str]:
    """The environment of a measured child process: this one's, with the modules' bytecode cached
    in ``bytecode_dir`` (as an installed service has it), or compiled at every start when None."""
    env = dict(os.environ)
    if bytecode_dir is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_dir)
    return env
