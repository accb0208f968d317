"""Benchmark: the Monsieur reader's die in a stream, where the die's reading is kept while the
die area is unchanged (``MonsieurReader.die_change_points``).

Two parts, each with the cache's change threshold as it was (65 sample points changed by more
than 40 levels: 1 % of the area's 6,486 points on the 4 mm grid) and as it is (8: half the die's
top face at that grid), the two readers interleaved:

* **moving dice**: ``--tables`` rendered tables (:mod:`companion.vision.sim_monsieur`, every
  condition kind in turn), each read as one stream of 10 frames: the die at rest, then moved
  twice to a new place with a new top and no hand over the board (a die that tumbled in
  view), taken away, and put down again. Die readings wrong / right / eligible against each
  frame's truth (:func:`companion.vision.sim_monsieur.compare`).
* **still tables**: ``--still`` rendered tables of the plain kinds, 8 frames each that differ
  only by the sensor's noise and JPEG (as a camera's do): the frames after the first timed
  (this thread's CPU, ``time.thread_time``), with the reference op (one cv2.cvtColor BGR->Lab
  of a 640 x 480 frame) timed the same way in each of 3 rounds, and the frames whose die was
  read again (a cache miss) counted.

Run: ``nice -n 5 .venv/bin/python bench/monsieur_die_stream.py [--tables 130] [--still 22]``.
Figures: docs/BENCHMARKS.md (Monsieur Carrousel: the camera reads the carousel).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine, reference_op_s  # noqa: E402
import companion.vision.monsieur as monsieur  # noqa: E402
from companion.vision.monsieur import MonsieurReader  # noqa: E402
from companion.vision.sim_monsieur import (  # noqa: E402
    CONDITION_KINDS,
    EXTRA_KINDS,
    MonsieurRenderer,
    compare,
    die_place,
    random_monsieur_conditions,
    random_scene,
)

#: the change threshold as it was (1 % of the area's points) and as it is (None: the reader's own)
THRESHOLDS = (("1 % (65 points)", 65), ("half a top face", None))


def reader(points: int | None) -> MonsieurReader:
    """A reader with the die cache's change threshold ``points`` (None: the reader's own)."""
    r = MonsieurReader()
    if points is not None:
        r.die_change_points = points
    return r


def moving_dice(tables: int, seed: int) -> dict[str, list[int]]:
    """Wrong, right and eligible die readings per threshold on streams whose die moves."""
    renderer = MonsieurRenderer()
    g = renderer.geometry
    kinds = list(CONDITION_KINDS) + list(EXTRA_KINDS)
    rng = np.random.default_rng(seed)
    totals = {name: [0, 0, 0] for name, _ in THRESHOLDS}
    for i in range(tables):
        scene = random_scene(rng, g)
        if scene.die is None:
            scene = dataclasses.replace(scene, die="red")
        cond = random_monsieur_conditions(rng, kinds[i % len(kinds)])
        frames = []
        s = scene
        for step in range(10):
            if step in (3, 6):  # tumbled to a new place, a new top, no hand
                s = dataclasses.replace(s, die=str(rng.choice(g.die_colours)), die_xy_mm=die_place(rng, g),
                                        die_yaw_deg=float(rng.uniform(0, 360)))
            elif step == 8:  # taken away
                s = dataclasses.replace(s, die=None)
            elif step == 9:  # put down again
                s = dataclasses.replace(s, die=str(rng.choice(g.die_colours)), die_xy_mm=die_place(rng, g))
            frames.append(renderer.render(s, cond, rng))
        order = THRESHOLDS if i % 2 == 0 else THRESHOLDS[::-1]
        for name, points in order:
            r = reader(points)
            for image, truth in frames:
                counts = compare(r.read(image, stream=True), truth, r.seat_margin_deg)["die"]
                for k in range(3):
                    totals[name][k] += counts[k]
    return totals


def still_tables(tables: int, seed: int) -> dict[str, tuple[list[float], int, int, float]]:
    """Per threshold: CPU seconds per frame, die re-reads, frames, and the reference op (s)."""
    renderer = MonsieurRenderer()
    rng = np.random.default_rng(seed)
    streams = []
    for i in range(tables):
        scene = random_scene(rng, renderer.geometry)
        cond = random_monsieur_conditions(rng, CONDITION_KINDS[i % len(CONDITION_KINDS)])
        streams.append([renderer.render(scene, cond, rng)[0] for _ in range(8)])
    reads = [0]
    plain = monsieur.die_under_clipped_white

    def counted(*args, **kwargs):
        reads[0] += 1
        return plain(*args, **kwargs)

    monsieur.die_under_clipped_white = counted
    out: dict[str, tuple[list[float], int, int, float]] = {}
    cpu: dict[str, list[float]] = {name: [] for name, _ in THRESHOLDS}
    again = {name: 0 for name, _ in THRESHOLDS}
    frames = {name: 0 for name, _ in THRESHOLDS}
    refs = []
    try:
        for rnd in range(3):
            refs.append(reference_op_s(clock=time.thread_time))
            for name, points in THRESHOLDS if rnd % 2 == 0 else THRESHOLDS[::-1]:
                for seq in streams:
                    r = reader(points)
                    r.read(seq[0], stream=True)
                    for f in seq[1:]:
                        before = reads[0]
                        c0 = time.thread_time()
                        r.read(f, stream=True)
                        cpu[name].append(time.thread_time() - c0)
                        again[name] += reads[0] - before
                        frames[name] += 1
    finally:
        monsieur.die_under_clipped_white = plain
    ref = statistics.median(refs)
    for name, _ in THRESHOLDS:
        out[name] = (cpu[name], again[name], frames[name], ref)
    return out


def main() -> None:
    """Run both parts and print their figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=130, help="moving-die streams (10 frames each)")
    ap.add_argument("--still", type=int, default=22, help="still-table streams (8 frames each)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(machine())
    print(f"load average {os.getloadavg()[0]:.1f}")
    if args.tables > 0:
        totals = moving_dice(args.tables, args.seed)
        for name, (wrong, right, eligible) in totals.items():
            print(f"moving dice, threshold {name}: {wrong} wrong, {right} right of {eligible} eligible die readings")
    if args.still > 0:
        for name, (cpu, again, frames, ref) in still_tables(args.still, args.seed + 2).items():
            m = statistics.median(cpu)
            print(f"still tables, threshold {name}: {m * 1e3:.2f} ms CPU per frame (median) = {m / ref:.2f} x the "
                  f"reference op ({ref * 1e6:.0f} us); die read again on {again} of {frames} frames")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
