"""Shared bits of the benchmarks: the machine description and percentiles."""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics


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
