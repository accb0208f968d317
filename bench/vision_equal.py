"""The vectorised Carrousel reader against the per-region reader on the stress set.

Usage: python bench/vision_equal.py [--frames 5000] [--seed 1]

Renders the same frames as bench/vision_stress.py (same seed, same random tables and
conditions) and reads each one with both readers, each registering the frame itself (a full
read): the per-region reader kept in tests/carrousel_reference.py and
companion.vision.carrousel.CarrouselReader. Every field must be equal (status, each space's and
card disc's label, confidence, reason and fractions, each card, the white level). Prints the
count of frames compared, of differing frames, and the outcomes seen; exit status 1 on any
difference.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from carrousel_reference import ReferenceCarrouselReader  # noqa: E402
from vision_stress import KINDS, random_table  # noqa: E402

from companion.vision.carrousel import CarrouselReader  # noqa: E402
from companion.vision.sim import TableRenderer, random_conditions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    renderer = TableRenderer()
    new, old = CarrouselReader(), ReferenceCarrouselReader()
    differ: list[int] = []
    statuses: Counter[str] = Counter()
    t0 = time.time()
    for i in range(args.frames):
        kind = KINDS[i % len(KINDS)]
        spaces, cards = random_table(rng)
        image, _ = renderer.render(spaces, cards, random_conditions(rng, kind), rng, layout_seed=i)
        a, b = new.read(image), old.read(image)
        statuses[a.status.split(":")[0]] += 1
        if (a.status, a.spaces, a.cards, a.white_level) != (b.status, b.spaces, b.cards, b.white_level):
            differ.append(i)
            print(f"frame {i} ({kind}) differs: {a.status!r} / {b.status!r}", file=sys.stderr)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} frames, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{args.frames} frames compared (seed {args.seed}), {len(differ)} differ; statuses {dict(statuses)}; "
          f"{time.time() - t0:.0f} s")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
