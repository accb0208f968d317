"""Full marker detection: the half-size pass and windows (registration.MarkerFinder) against
OpenCV's one-pass detector in the whole frame (registration._detector), on the table photographs
and rendered frames; optionally the Carrousel readings of the stress set with each.

Usage:
    python bench/marker_detection.py [--rendered 100] [--rounds 3]
    python bench/marker_detection.py --readings 5000 [--seed 1]

The first form prints, per table (the 20 photographs of each of the three camera tables, then
N rendered frames of each table's simulator across its kinds of conditions): markers found by
the one-pass detector, those the finder does not find, corners that differ by more than 0.002 px
(and the largest difference), how often the whole frame had to be searched, and the median CPU
time of the thread of each detector (interleaved rounds) with its ratio to the reference op
(one cv2.cvtColor BGR to Lab of a 640 x 480 frame) timed in the same round.

The second form renders the stress set of bench/vision_stress.py (same seed, same tables and
conditions) and reads every frame twice with the Carrousel reader (full registration): with the
finder and with the one-pass detector. Every field must be equal (status, each space's and card
disc's label, confidence, reason and fractions, each card, the white level): it prints the
frames where any field differs, and those where the status, a space's label or a card's triple
does (what the referee sees); exit status 1 for the latter.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import cv2
import numpy as np

from companion.vision.registration import MarkerFinder, _detector, detect_markers

cv2.setNumThreads(1)
SHARED = next((p for p in (ROOT.parent / "shared" / "data", Path("/work/shared/data")) if p.is_dir()), ROOT / "tests" / "data")


def _tables():
    from companion.vision.carrossel import CarrosselGeometry
    from companion.vision.carrousel import CarrouselGeometry
    from companion.vision.monsieur_geometry import MonsieurGeometry

    return {"carrousel": CarrouselGeometry.load(), "monsieur": MonsieurGeometry.load(), "carrossel": CarrosselGeometry.load()}


def rendered(table: str, n: int, seed: int) -> list[np.ndarray]:
    """``n`` rendered frames of one table's simulator, every kind of conditions in turn."""
    rng = np.random.default_rng(seed)
    out = []
    if table == "carrousel":
        from vision_stress import KINDS, random_table

        from companion.vision.sim import TableRenderer, random_conditions
        r = TableRenderer()
        for i in range(n):
            spaces, cards = random_table(rng)
            out.append(r.render(spaces, cards, random_conditions(rng, KINDS[i % len(KINDS)]), rng, layout_seed=i)[0])
    elif table == "monsieur":
        from companion.vision.sim_monsieur import (
            CONDITION_KINDS,
            MonsieurRenderer,
            random_monsieur_conditions,
            random_scene,
        )
        r = MonsieurRenderer()
        for i in range(n):
            cond = random_monsieur_conditions(rng, CONDITION_KINDS[i % len(CONDITION_KINDS)])
            out.append(r.render(random_scene(rng, r.geometry), cond, rng)[0])
    else:
        from companion.vision.sim_carrossel import (
            CONDITION_KINDS,
            CarrosselRenderer,
            random_carrossel_conditions,
            random_tiles,
        )
        r = CarrosselRenderer()
        kinds = list(CONDITION_KINDS) + ["any"]
        for i in range(n):
            cond = random_carrossel_conditions(rng, kinds[i % len(kinds)], r.geometry.cell_names)
            tiles = random_tiles(rng, r.geometry)
            angle = (90.0 * int(rng.integers(4)) + rng.uniform(-12, 12)) % 360.0
            out.append(r.render(angle, tiles, cond, rng, layout_seed=i)[0])
    return out


def compare_detections(args) -> int:
    whole = _detector("DICT_4X4_50")
    ref = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    print(f"python {platform.python_version()}, numpy {np.__version__}, opencv {cv2.__version__}, {platform.machine()}, "
          f"cv2 threads 1, load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print("\n| frames | markers | not found | corners > 0.002 px (largest) | whole frame searched | "
          "one pass | finder | finder / one pass |")
    print("|---|---|---|---|---|---|---|---|")
    for name, geometry in _tables().items():
        finder = MarkerFinder(geometry.dictionary, geometry.markers)
        photos = [cv2.imread(str(p)) for p in sorted((SHARED / f"{name}-table" / "images").glob("*.jpg"))]
        for label, frames in ((f"{name}: {len(photos)} photographs", photos),
                              (f"{name}: {args.rendered} rendered", rendered(name, args.rendered, args.seed))):
            if not frames:
                continue
            greys = [cv2.cvtColor(f, cv2.COLOR_BGR2GRAY) for f in frames]
            markers = lost = moved = searched = 0
            worst = 0.0
            for g in greys:
                a, b = detect_markers(g, detector=whole), finder.find(g)
                searched += finder.last == "whole frame"
                markers += len(a)
                lost += sum(i not in b for i in a)
                for i in a:
                    if i in b:
                        d = float(np.abs(a[i] - b[i]).max())
                        moved += d > 0.002
                        worst = max(worst, d)
            t = {"ref": [], "one": [], "finder": []}
            for _ in range(args.rounds):
                for key, fn in (("one", whole.detectMarkers), ("finder", finder.find)):
                    ts = []
                    for g in greys:
                        t0 = time.thread_time()
                        fn(g)
                        ts.append(time.thread_time() - t0)
                    t[key].append(statistics.median(ts))
                ts = []
                for _ in range(30):
                    t0 = time.thread_time()
                    cv2.cvtColor(ref, cv2.COLOR_BGR2Lab)
                    ts.append(time.thread_time() - t0)
                t["ref"].append(statistics.median(ts))
            r, one, fi = (statistics.median(t[k]) for k in ("ref", "one", "finder"))
            print(f"| {label} | {markers} | {lost} | {moved} ({worst:.1e} px) | {searched} | {one * 1e3:.2f} ms "
                  f"({one / r:.2f} ref) | {fi * 1e3:.2f} ms ({fi / r:.2f} ref) | {fi / one:.2f} |")
    print(f"\nreference op {r * 1e3:.2f} ms (last round)")
    return 0


def compare_readings(args) -> int:
    from vision_stress import KINDS, random_table

    from companion.vision.carrousel import CarrouselReader
    from companion.vision.sim import TableRenderer, random_conditions

    rng = np.random.default_rng(args.seed)
    renderer = TableRenderer()
    fast, one = CarrouselReader(), CarrouselReader()
    one.registrar._detector = _detector(one.registrar.dictionary_name)
    differ, labels_differ, statuses, t0 = [], [], {}, time.time()
    for i in range(args.readings):
        kind = KINDS[i % len(KINDS)]
        spaces, cards = random_table(rng)
        image, _ = renderer.render(spaces, cards, random_conditions(rng, kind), rng, layout_seed=i)
        a, b = fast.read(image), one.read(image)
        key = a.status.split(":")[0]
        statuses[key] = statuses.get(key, 0) + 1
        if (a.status, a.spaces, a.cards, a.white_level) != (b.status, b.spaces, b.cards, b.white_level):
            differ.append(i)
            same = (a.status == b.status and [x.label for x in a.spaces] == [y.label for y in b.spaces]
                    and {s: c.triple for s, c in a.cards.items()} == {s: c.triple for s, c in b.cards.items()})
            if not same:
                labels_differ.append(i)
            print(f"frame {i} ({kind}) differs: {a.status!r} / {b.status!r}; status, space labels and card "
                  f"triples {'the same' if same else 'DIFFER'}", file=sys.stderr)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} frames, {len(differ)} differ, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{args.readings} frames read with both detectors (seed {args.seed}), {len(differ)} differ in some field "
          f"(frames {differ}), {len(labels_differ)} in a status, a space's label or a card's triple "
          f"(frames {labels_differ}); statuses {statuses}; {time.time() - t0:.0f} s; opencv {cv2.__version__}")
    return 1 if labels_differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rendered", type=int, default=100, help="rendered frames per table")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--readings", type=int, default=0, help="compare the Carrousel readings on this many stress-set frames")
    args = ap.parse_args()
    return compare_readings(args) if args.readings else compare_detections(args)


if __name__ == "__main__":
    sys.exit(main())
