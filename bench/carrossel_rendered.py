"""Carrossel reader on frames of the simulated camera (companion/vision/sim_carrossel.py): right and
wrong readings of the board angle, the facing sectors and the 48 slots over N rendered frames
across light, colour temperature, tilt, blur, noise, hands and glare, each with its exact truth;
the reader's time per frame (one thread, full registration) as a ratio to one cv2.cvtColor
BGR -> Lab of a 640 x 480 frame timed in the same run.

Each frame is a fresh table drawn as the photographs have it (board angle 90 q + -12..12 deg,
tiles on 30-65 % of the cells, a standee on about 30 % of them) under conditions of one kind,
the kinds taken in turn (``any`` twice as often).

    .venv/bin/python bench/carrossel_rendered.py [--frames 2000] [--seed 1] [--start 0] [--wrong-out DIR] [--kinds harsh]

``--frames`` is the end of the range read (``--start 1000 --frames 2000`` reads frames
1000-1999 of the same sequence as one run of 2,000).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time
from pathlib import Path

# one thread: numpy's BLAS too (the service sets this in companion/__init__.py; here numpy is
# imported first)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import machine, percentile, reference_op_s  # noqa: E402
from companion.vision.carrossel import CarrosselReader  # noqa: E402
from companion.vision.sim_carrossel import (  # noqa: E402
    CONDITION_KINDS,
    EXTRA_KINDS,
    CarrosselRenderer,
    random_carrossel_conditions,
    random_tiles,
    score_reading,
    slot_verdict,
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="the first frame read (each frame i is drawn from "
                    "the generator seeded (seed, i), so a run splits across processes)")
    ap.add_argument("--wrong-out", default="", help="write each frame with a wrong reading here (PNG + JSON)")
    ap.add_argument("--kinds", default="", help="comma-separated condition kinds taken in turn instead of the "
                    "default rotation (e.g. harsh: noise sigma 10-20, JPEG 25-40, hands; sim_carrossel.EXTRA_KINDS)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    ref0 = reference_op_s()
    renderer = CarrosselRenderer()
    reader = CarrosselReader()
    g = renderer.geometry
    kinds = [k for k in CONDITION_KINDS] + ["any"]
    shown = kinds[:-1]  # the table's rows ("any" is drawn twice as often)
    if args.kinds:
        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        bad = [k for k in kinds if k not in CONDITION_KINDS + EXTRA_KINDS]
        if bad:
            ap.error(f"unknown kind(s) {', '.join(bad)}: expected {', '.join(CONDITION_KINDS + EXTRA_KINDS)}")
        shown = list(dict.fromkeys(kinds))
    per_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    total: collections.Counter = collections.Counter()
    tiles_right = tiles_seen = empty_right = empty_seen = standee_seen = standee_partial = 0
    wrong_examples: list[dict] = []
    t_read: list[float] = []
    statuses: collections.Counter = collections.Counter()
    if args.start:
        print(f"frames {args.start}..{args.frames - 1} of seed {args.seed}", file=sys.stderr)
    for i in range(args.start, args.frames):
        kind = kinds[i % len(kinds)]
        rng = np.random.default_rng([args.seed, i])  # frame i's own draws: a run splits across processes
        cond = random_carrossel_conditions(rng, kind, g.cell_names)
        tiles = random_tiles(rng, g)
        angle = (90.0 * int(rng.integers(4)) + rng.uniform(-12, 12)) % 360.0
        image, truth = renderer.render(angle, tiles, cond, rng, layout_seed=i)
        t0 = time.perf_counter()
        reading = reader.read(image)
        t_read.append(time.perf_counter() - t0)
        statuses[reading.status.split(":")[0]] += 1
        s = score_reading(reading, truth)
        per_kind[kind].update(s)
        total.update(s)
        per_kind[kind]["frames"] += 1
        covered = set(truth.hidden) | set(truth.out_of_frame)
        for name, want in truth.slots.items():
            got = reading.slots[name].to_json() if name in reading.slots else "unknown"
            if name in covered:
                if slot_verdict(got, want) == "wrong":
                    wrong_examples.append({"frame": i, "kind": kind, "slot": name, "covered": True, "truth": want,
                                           "read": got})
                continue
            if want == "empty":
                empty_seen += 1
                empty_right += got == want
            else:
                tiles_seen += 1
                tiles_right += got == want
            if want != "empty" and want["standee"]:
                standee_seen += 1
                standee_partial += slot_verdict(got, want) == "partial"
            if slot_verdict(got, want) == "wrong":
                wrong_examples.append({"frame": i, "kind": kind, "slot": name, "truth": want, "read": got})
        for booth, (label, _m) in truth.facing.items():
            got = reading.facing.get(booth)
            if got not in (label, "unknown", "ambiguous"):
                wrong_examples.append({"frame": i, "kind": kind, "booth": booth, "truth": label, "read": got})
        if args.wrong_out and (s["slot_wrong"] or s["facing_wrong"] or s["slot_covered_wrong"] or s["angle_wrong"]):
            os.makedirs(args.wrong_out, exist_ok=True)
            cv2.imwrite(os.path.join(args.wrong_out, f"frame{i:05d}.png"), image)
        if (i + 1) % 200 == 0:
            print(f"... {i + 1} frames", file=sys.stderr, flush=True)
    ref1 = reference_op_s()
    ref = statistics.median([ref0, ref1])
    med = statistics.median(t_read)
    print(f"machine: {machine()}; one thread; reference op {ref * 1e3:.2f} ms (before {ref0 * 1e3:.2f}, after {ref1 * 1e3:.2f})")
    print(f"frames: {args.start}..{args.frames - 1}, seed {args.seed}; statuses: {dict(statuses)}")

    def pct(a: int, b: int) -> str:
        return f"{a}/{b} = {100.0 * a / b:.1f} %" if b else "-"

    print("| kind | frames | facing right | facing wrong | slots right (not covered) | slots wrong | covered slots wrong | angle wrong |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in shown:
        c = per_kind[kind]
        nf = c["facing_right"] + c["facing_wrong"] + c["facing_abstain"]
        ns = c["slot_right"] + c["slot_wrong"] + c["slot_abstain"] + c["slot_partial"]
        print(f"| {kind} | {c['frames']} | {pct(c['facing_right'], nf)} | {c['facing_wrong']} | {pct(c['slot_right'], ns)} "
              f"| {c['slot_wrong']} | {c['slot_covered_wrong']} | {c['angle_wrong']} |")
    nf = total["facing_right"] + total["facing_wrong"] + total["facing_abstain"]
    ns = total["slot_right"] + total["slot_wrong"] + total["slot_abstain"] + total["slot_partial"]
    print(f"| all | {args.frames - args.start} | {pct(total['facing_right'], nf)} | {total['facing_wrong']} | {pct(total['slot_right'], ns)} "
          f"| {total['slot_wrong']} | {total['slot_covered_wrong']} | {total['angle_wrong']} |")
    print(f"standee tiles read with the colour and the standee, the animal unknown: {pct(standee_partial, standee_seen)}; "
          f"slots partial (not covered): {total['slot_partial']}")
    print(f"tiles right {pct(tiles_right, tiles_seen)}; empty cells right {pct(empty_right, empty_seen)}; "
          f"board angle read in {total['angle_read']} frames")
    print(f"read time per frame: median {med * 1e3:.1f} ms ({med / ref:.0f} x the reference op), "
          f"p95 {percentile(t_read, 95) * 1e3:.1f} ms")
    if wrong_examples:
        print("wrong readings (first 20):")
        for w in wrong_examples[:20]:
            print("  " + json.dumps(w))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
