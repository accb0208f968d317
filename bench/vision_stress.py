"""Stress set: the Carrousel reader on thousands of rendered frames across conditions.

Usage: python bench/vision_stress.py [--frames 5000] [--seed 1] [--out bench/out/vision_stress.json]

Each frame shows a random position (five horses on consecutive spaces) and four random cards,
rendered by the simulated camera under one kind of conditions (normal, dim, bright, warm, cool,
tilted, blur, hands, any, covers: see companion.vision.sim.random_conditions), and is read on its own
(full registration). A *wrong* reading is a space or card given a wrong value (never allowed);
*unknown* is an abstention, counted separately for spaces a hand covers. Frames where the
board is not visible (markers out of the frame at a steep tilt) are counted apart.
A normal frame refused by the colour check (status ``colour lost``) is counted apart and
must never happen. Exit status 1 when any reading is wrong or any frame is refused.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.vision.carrousel import CarrouselReader  # noqa: E402
from companion.vision.sim import COLOURS, TableRenderer, random_conditions  # noqa: E402

KINDS = ("normal", "dim", "bright", "warm", "cool", "tilted", "blur", "hands", "any", "covers")
CARDS = list(itertools.permutations(COLOURS, 3))


def random_table(rng: np.random.Generator) -> tuple[tuple[str, ...], dict[str, tuple[str, str, str]]]:
    horses = list(rng.permutation(COLOURS))
    start = int(rng.integers(7))
    spaces = ["empty"] * 7
    for i, h in enumerate(horses):
        spaces[(start + i) % 7] = str(h)
    picks = rng.choice(len(CARDS), 4, replace=False)
    return tuple(spaces), {seat: CARDS[i] for seat, i in zip(("south", "east", "north", "west"), picks)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated condition kinds")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "out" / "vision_stress.json"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    renderer = TableRenderer()
    reader = CarrouselReader()
    stats: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    wrong_examples = []
    refused: list[dict] = []
    t0 = time.time()
    kinds = [k for k in args.kinds.split(",") if k]
    out_dir = Path(args.out).parent
    out_dir.mkdir(parents=True, exist_ok=True)
    for i in range(args.frames):
        kind = kinds[i % len(kinds)]
        spaces, cards = random_table(rng)
        cond = random_conditions(rng, kind)
        image, truth = renderer.render(spaces, cards, cond, rng, layout_seed=i)
        reading = reader.read(image)
        s = stats[kind]
        s["frames"] += 1
        if reading.status.startswith("colour lost"):
            s["colour_lost"] += 1  # a normal frame refused by the colour check: must stay 0
            refused.append({"frame": i, "kind": kind, "status": reading.status})
            continue
        if reading.status != "ok":
            s["not_visible"] += 1
            continue
        for k, (got, want) in enumerate(zip(reading.labels, spaces)):
            s["spaces"] += 1
            hidden = k in truth.hidden
            s["hidden"] += hidden
            if got == "unknown":
                s["unknown_hidden" if hidden else "unknown"] += 1
            elif got != want:
                s["wrong"] += 1
                wrong_examples.append({"frame": i, "kind": kind, "space": k, "read": got, "truth": want,
                                       "fractions": reading.spaces[k].fractions, "hidden": hidden})
                cv2.imwrite(str(out_dir / f"wrong_{i:05d}.png"), image)
        for seat, triple in cards.items():
            s["cards"] += 1
            got = reading.cards[seat].triple
            if got is None:
                s["card_unknown"] += 1
            elif tuple(got) != triple:
                s["card_wrong"] += 1
                wrong_examples.append({"frame": i, "kind": kind, "card": seat, "read": got, "truth": triple})
                cv2.imwrite(str(out_dir / f"wrong_{i:05d}.png"), image)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} frames, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print("| conditions | frames | board not visible | colour lost | spaces read | wrong | unknown (not hidden) | "
          "unknown under a hand | cards wrong | cards unknown |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    total = defaultdict(int)
    for kind in kinds:
        s = stats[kind]
        for key, v in s.items():
            total[key] += v
    for kind, s in [(k, stats[k]) for k in kinds] + [("all", total)]:
        visible = s["spaces"] - s["hidden"]
        pct = 100.0 * s["unknown"] / visible if visible else 0.0
        print(f"| {kind} | {s['frames']} | {s['not_visible']} | {s['colour_lost']} | {s['spaces']} | {s['wrong']} | "
              f"{s['unknown']} ({pct:.2f}%) | {s['unknown_hidden']} of {s['hidden']} | {s['card_wrong']} | "
              f"{s['card_unknown']} of {s['cards']} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"stats": {k: dict(v) for k, v in stats.items()},
                                          "wrong": wrong_examples, "colour_lost": refused}, indent=1))
    print(f"\n{args.frames} frames in {time.time() - t0:.0f} s; details in {args.out}")
    return 1 if wrong_examples or refused else 0


if __name__ == "__main__":
    sys.exit(main())
