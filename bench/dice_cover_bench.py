"""The hand-over-the-tray check (companion/readers/dice_cover.py): its thread CPU time per reading
and how often it is right on rendered trays (companion/sim/dice_render.py, half of them with a hand
over a die), each figure with the reference operation timed in the same run.

Run on demand (not a test): ``nice -n 5 .venv/bin/python bench/dice_cover_bench.py [N_SCENES]``.
Prints the machine, the load, the rounds' times (ms and ratio) and the counts.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench._common import machine, reference_op_s  # noqa: E402
from companion.readers.dice_cover import CoverCheck  # noqa: E402
from companion.sim.dice_render import HAND_LABEL, TrayRenderer, random_scene  # noqa: E402


def scenes(n: int, seed: int = 21):
    """``n`` rendered trays: (frame, geometry, the hand covers at least one die face of the felt)."""
    renderer = TrayRenderer()
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        scene = random_scene(rng)
        if i % 2 == 0 and scene.hand is None and scene.dice:
            target = scene.dice[0].centre_mm[:2]
            scene = dataclasses.replace(scene, hand=(float(target[0] + rng.normal(0, 12)),
                                                     float(target[1] + rng.normal(0, 12)), float(rng.uniform(34, 80)),
                                                     float(math.atan2(target[1], target[0]) + rng.normal(0, 0.4)),
                                                     float(rng.uniform(85, 105)), float(rng.uniform(70, 90))))
        frame, labels, _ = renderer.render(scene)
        geo = scene.geometry
        x0, y0, x1, y1 = geo.roi()
        hand_px = int((labels[y0:y1, x0:x1] == HAND_LABEL).sum())
        out.append((frame, geo, hand_px >= geo.face_px_range()[1] ** 2, hand_px == 0))
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    print(machine(), f"load {os.getloadavg()[0]:.1f}")
    trays = scenes(n)
    checks = [CoverCheck(geo.roi(), geo) for _, geo, _, _ in trays]
    for c, (frame, _, _, _) in zip(checks, trays):
        c.check(frame)  # the masks made once per camera
    rounds = []
    for r in range(5):
        ref = reference_op_s(100, clock=time.thread_time)
        t0 = time.thread_time()
        for c, (frame, _, _, _) in zip(checks, trays):
            c.check(frame)
        per = (time.thread_time() - t0) / len(trays)
        rounds.append((per, ref))
        print(f"round {r}: {per * 1e3:.2f} ms a reading, reference {ref * 1e3:.2f} ms, ratio {per / ref:.2f}")
    ratios = [p / q for p, q in rounds]
    print(f"median {statistics.median(p for p, _ in rounds) * 1e3:.2f} ms, ratio median {statistics.median(ratios):.2f}")
    found = sum(1 for c, (f, _, hand, _) in zip(checks, trays) if hand and c.check(f).covered)
    hands = sum(1 for *_, hand, _ in trays if hand)
    false = sum(1 for c, (f, _, _, bare) in zip(checks, trays) if bare and c.check(f).covered)
    bare = sum(1 for *_, bare in trays if bare)
    print(f"hands over a die face: {found} of {hands} found; bare trays: {false} of {bare} called covered")


if __name__ == "__main__":
    main()
