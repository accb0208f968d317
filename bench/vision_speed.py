"""Speed and memory of the Carrousel reader at 640 x 480, one thread.

Usage: python bench/vision_speed.py [--frames N]

Measures, on a path-traced table photo and on rendered frames:
* steady-state read of all regions (7 spaces, 4 cards x 3 discs) with the registration kept
  (what a still camera costs per frame);
* a read with re-registration (marker detection and homography on every frame);
* the stream path (Registrar.update: the marker-cell check, re-detecting every 30 frames);
* frames per second of each, and the peak resident memory of the process.
Prints a Markdown table; the figures go in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.vision.carrousel import CarrouselReader  # noqa: E402
from companion.vision.sim import Conditions, TableRenderer  # noqa: E402

cv2.setNumThreads(1)


def timed(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=300)
    args = ap.parse_args()
    root = Path(__file__).resolve().parents[1]
    photo = cv2.imread(str(root / "tests/data/carrousel-table/images/carrousel_039.jpg"))
    rendered, _ = TableRenderer().render(("empty", "empty", "black", "yellow", "blue", "green", "red"),
                                         {"south": ("red", "blue", "green"), "north": ("black", "yellow", "red")},
                                         Conditions(tilt_deg=20, azimuth_deg=40, roll_deg=30), np.random.default_rng(1))
    print(f"python {platform.python_version()}, numpy {np.__version__}, opencv {cv2.__version__}, "
          f"{platform.machine()}, cv2 threads 1")
    print("| frame | steady read (registration kept) | re-detect near the last places + read | "
          "read with full re-registration | stream (update) |")
    print("|---|---|---|---|---|")
    for name, frame in (("path-traced photo", photo), ("rendered frame", rendered)):
        reader = CarrouselReader()
        reg = reader.registrar.register(frame)
        assert reg is not None
        reader.read(frame, registration=reg)
        steady = timed(lambda: reader.read(frame, registration=reg), args.frames)
        full = timed(lambda: reader.read(frame), max(args.frames // 5, 20))

        def near_read():
            r = reader.registrar.register_near(frame, reg)
            reader.read(frame, registration=r)

        near = timed(near_read, max(args.frames // 5, 20))
        stream = timed(lambda: reader.read(frame, stream=True), args.frames)

        def fmt(ts):
            med = statistics.median(ts) * 1000
            return f"median {med:.2f} ms, min {min(ts) * 1000:.2f} ms ({1000 / med:.0f} fps)"

        print(f"| {name} | {fmt(steady)} | {fmt(near)} | {fmt(full)} | {fmt(stream)} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory of the process: {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
