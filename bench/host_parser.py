"""Benchmark: host parser throughput (lines per second) on the Pico's count lines.

    python bench/host_parser.py
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "firmware"))

from companion.rotation.protocol import parse_line  # noqa: E402
from protocol import count_line  # noqa: E402  (firmware/protocol.py)


def main() -> None:
    lines = [count_line(i, i * 1000, (i * 37) - 500000) for i in range(100_000)]
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        for line in lines:
            parse_line(line)
        dt = time.perf_counter() - t0
        best = max(best, len(lines) / dt)
    print(f"{platform.machine()} CPython {platform.python_version()}: "
          f"{best:,.0f} lines/s ({len(lines[0])} bytes a line)")


if __name__ == "__main__":
    main()
