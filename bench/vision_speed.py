"""Speed and memory of the Carrousel reader at 640 x 480, one thread, side by side with a
naive reader and the reference operation.

Usage: python bench/vision_speed.py [--frames N] [--rounds R]

In one process, on a path-traced table photo and on a rendered frame, interleaved in R rounds
(so that a load on the machine falls on every figure alike), it times:
* the reference operation: one ``cv2.cvtColor`` BGR to Lab of the whole 640 x 480 frame;
* the naive reader's full read (bench/naive_carrousel.py: ArUco in the whole frame, Lab of the
  whole frame, medians per region);
* the steady read with the registration kept (a still camera's cost per frame), and the same
  read by the per-region reader it replaced (tests/carrousel_reference.py);
* the steady read of a new frame each time: the same table with fresh sensor noise (a
  Gaussian of 2 levels per channel, made outside the timing; 300 such frames read first), so
  that no frame repeats the last one's pixels (what a still camera gives). Making a noisy frame
  streams some 26 MB through the caches just before the read (the read then finds its code
  and data evicted, as after a camera's other work between frames); the same read is also
  timed over 8 noisy frames made beforehand and read in turn (a camera's ring of buffers,
  nothing else run between frames), which leaves the caches as the last read left them;
* the stream path (``read(stream=True)``: the marker-cell check, re-detecting every 30 frames);
* re-detection near the last places (``Registrar.register_near``), alone and with a read;
* a full read (marker detection in the whole frame and the homography on every frame).
Each figure is the median over the rounds of the per-round median, in ms of the thread's CPU
time (``--clock wall`` for wall time: on a machine other jobs share, wall time counts the waits
for a core), also as a ratio to the reference operation of the same round; then the targets of issue 15. Prints Markdown for
docs/BENCHMARKS.md, and the peak resident memory of the process.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from carrousel_reference import ReferenceCarrouselReader  # noqa: E402
from naive_carrousel import NaiveCarrouselReader  # noqa: E402

from companion.vision.carrousel import CarrouselReader  # noqa: E402
from companion.vision.sim import Conditions, TableRenderer  # noqa: E402

cv2.setNumThreads(1)


#: the clock the figures are timed with: the thread's CPU time by default (what the call costs
#: the core, not the time spent waiting for a core that other jobs hold), or wall time
CLOCK = time.thread_time


def median_ms(fn, n: int, prepare=None) -> float:
    """Median ms of ``fn()`` over ``n`` calls (``fn(prepare())`` when ``prepare`` is given:
    ``prepare`` runs outside the timing)."""
    ts = []
    for _ in range(n):
        arg = prepare() if prepare is not None else None
        t0 = CLOCK()
        fn() if prepare is None else fn(arg)
        ts.append(CLOCK() - t0)
    return statistics.median(ts) * 1000.0


NAMES = ("reference op", "naive full read", "steady read", "steady read, fresh sensor noise",
         "per-region steady read (before)", "stream read", "re-detect near the last places",
         "re-detect near + read", "full read", "steady read, fresh noise, 8 frames made beforehand")


def noisy(frame: np.ndarray, rng: np.random.Generator, sigma: float = 2.0):
    """A function giving ``frame`` with fresh Gaussian sensor noise (``sigma`` 8-bit levels)
    at each call."""
    base = frame.astype(np.float32)

    def make() -> np.ndarray:
        return np.clip(np.rint(base + rng.normal(0.0, sigma, frame.shape).astype(np.float32)), 0, 255).astype(np.uint8)
    return make


def time_frame(frame: np.ndarray, n: int, rounds: int) -> tuple[list[float], list[float]]:
    """Per figure of NAMES: (median ms, median ratio to the reference op of the same round)."""
    reader, before, naive = CarrouselReader(), ReferenceCarrouselReader(), NaiveCarrouselReader()
    reg = reader.registrar.register(frame)
    assert reg is not None and naive.read(frame) is not None
    reader.read(frame, registration=reg)
    before.read(frame, registration=reg)
    few = max(n // 4, 10)
    fresh = noisy(frame, np.random.default_rng(2))
    for _ in range(300):  # the grid and the kept region readings meet the noise's first cells
        reader.read(fresh(), registration=reg)

    ring = [fresh() for _ in range(8)]
    turn = iter(range(10 ** 9))

    def near_read():
        r = reader.registrar.register_near(frame, reg)
        reader.read(frame, registration=r)

    fns = (
        (lambda: cv2.cvtColor(frame, cv2.COLOR_BGR2Lab), n),
        (lambda: naive.read(frame), few),
        (lambda: reader.read(frame, registration=reg), n),
        ((lambda f: reader.read(f, registration=reg)), n, fresh),
        (lambda: before.read(frame, registration=reg), few),
        (lambda: reader.read(frame, stream=True), n),
        (lambda: reader.registrar.register_near(frame, reg), few),
        (near_read, few),
        (lambda: reader.read(frame), few),
        ((lambda f: reader.read(f, registration=reg)), n, lambda: ring[next(turn) % len(ring)]),
    )
    per_round = [[median_ms(*f) for f in fns] for _ in range(rounds)]
    ms = [statistics.median(r[i] for r in per_round) for i in range(len(NAMES))]
    ratio = [statistics.median(r[i] / r[0] for r in per_round) for i in range(len(NAMES))]
    return ms, ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=100, help="timed calls per figure per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time each call by the thread's CPU time (default) or by wall time")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    photo = cv2.imread(str(ROOT / "tests/data/carrousel-table/images/carrousel_039.jpg"))
    rendered, _ = TableRenderer().render(("empty", "empty", "black", "yellow", "blue", "green", "red"),
                                         {"south": ("red", "blue", "green"), "north": ("black", "yellow", "red")},
                                         Conditions(tilt_deg=20, azimuth_deg=40, roll_deg=30), np.random.default_rng(1))
    print(f"python {platform.python_version()}, numpy {np.__version__}, opencv {cv2.__version__}, "
          f"{platform.machine()}, cv2 threads 1, {args.rounds} rounds of {args.frames} calls, "
          f"{args.clock} time, load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    results = {label: time_frame(frame, args.frames, args.rounds)
               for label, frame in (("path-traced photo", photo), ("rendered frame", rendered))}
    print("\n| figure | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for i, name in enumerate(NAMES):
        print(f"| {name} | " + " | ".join(f"{ms[i]:.2f} ms ({ratio[i]:.2f} ref)" for ms, ratio in results.values()) + " |")
    print("\n| target (issue 15) | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for text, i, j, bound in (("steady read <= 1/10 of the naive full read", 2, 1, 0.1),
                              ("steady read, fresh noise <= 1/10 of the naive full read", 3, 1, 0.1),
                              ("steady read, fresh noise (8 frames made beforehand) <= 1/10 of the naive", 9, 1, 0.1),
                              ("full read <= 1/2 of the naive full read", 8, 1, 0.5)):
        cells = []
        for ms, _ in results.values():
            share = ms[i] / ms[j]
            cells.append(f"{share:.2f} of it: {'met' if share <= bound else 'NOT met'}")
        print(f"| {text} | " + " | ".join(cells) + " |")
    for text, i, bound in (("steady read < 1 ms", 2, 1.0), ("steady read, fresh noise < 1 ms", 3, 1.0),
                           ("steady read, fresh noise (8 frames made beforehand) < 1 ms", 9, 1.0),
                           ("re-detect near the last places < 4 ms", 6, 4.0)):
        print(f"| {text} | " + " | ".join(f"{ms[i]:.2f} ms: {'met' if ms[i] < bound else 'NOT met'}"
                                         for ms, _ in results.values()) + " |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory of the process: {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
