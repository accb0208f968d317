"""Benchmark of the dice reader on the real labelled photos (nell-byler/dice_detection).

For every labelled die of a split it measures:

* **reading** (given the labelled box): right, wrong, ``unknown``;
* **end to end** (the reader finds the dice itself, then reads them): each labelled die is
  matched to the found region that covers it best (intersection over union >= 0.5); a die with
  no match counts as ``unknown`` (missed); found regions matching no label are counted apart;
* **time per frame** (``DiceReader.read`` on the whole 640 x 640 frame), median and 95th
  percentile, in milliseconds.

Develop on ``train``; report figures on ``test`` only (docs/BENCHMARKS.md).

Usage:
  python bench/dice_bench.py --split test [--data /work/shared/data/dice] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.readers.dice import UNKNOWN, DiceReader  # noqa: E402

NAMES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def load_labels(folder: Path) -> dict[str, list[tuple[tuple[float, float, float, float], int]]]:
    """labels.csv -> file name -> [(box px, value)]. Boxes are stored normalised."""
    out: dict[str, list] = defaultdict(list)
    with open(folder / "labels.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            w, h = float(row["width"]), float(row["height"])
            box = (float(row["xmin"]) * w, float(row["ymin"]) * h, float(row["xmax"]) * w, float(row["ymax"]) * h)
            out[row["filename"]].append((box, NAMES[row["class_text"]]))
    return out


def iou(a, b) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["train", "test"], required=True)
    ap.add_argument("--data", default="/work/shared/data/dice", help="folder with train/ and test/")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument(
        "--tray",
        default="0,70,640,555",
        help="tray region x0,y0,x1,y1 in px (default: the tray of these photos, from the train "
        "split's label extents; it leaves out the white stand below the tray)",
    )
    args = ap.parse_args(argv)
    folder = Path(args.data) / args.split
    labels = load_labels(folder)
    try:
        tray = tuple(int(v) for v in args.tray.split(","))
        assert len(tray) == 4
    except (ValueError, AssertionError):
        ap.error(f"--tray: expected x0,y0,x1,y1 in pixels, got {args.tray!r}")
    reader = DiceReader(tray=tray)
    given = Counter()
    e2e = Counter()
    confusion = Counter()
    times = []
    extra = 0
    for name, dice in sorted(labels.items()):
        frame = cv2.imread(str(folder / name))
        if frame is None:
            print(f"{folder / name}: cannot read the image", file=sys.stderr)
            return 1
        for box, value in dice:
            got, _ = reader.read_die(frame, box)
            given["unknown" if got is None else "right" if got == value else "wrong"] += 1
            confusion[(value, got)] += 1
        t0 = time.perf_counter()
        readings = reader.read(frame)
        times.append((time.perf_counter() - t0) * 1000)
        used = set()
        for box, value in dice:
            best, best_iou = None, 0.5
            for i, r in enumerate(readings):
                o = iou(box, r.box)
                if o >= best_iou and i not in used:
                    best, best_iou = i, o
            if best is None:
                e2e["missed"] += 1
                continue
            used.add(best)
            v = readings[best].value
            e2e["unknown" if v == UNKNOWN else "right" if v == value else "wrong"] += 1
        extra += len(readings) - len(used)
    n = sum(given.values())
    times.sort()
    result = {
        "split": args.split,
        "images": len(labels),
        "tray": list(tray),
        "dice": n,
        "given_box": {k: given[k] for k in ("right", "wrong", "unknown")},
        "end_to_end": {k: e2e[k] for k in ("right", "wrong", "unknown", "missed")},
        "unmatched_regions": extra,
        "ms_per_frame_median": round(statistics.median(times), 1),
        "ms_per_frame_p95": round(times[int(0.95 * (len(times) - 1))], 1),
        "machine": f"{platform.machine()}, {platform.python_version()}, OpenCV {cv2.__version__}, numpy {np.__version__}",
    }
    print(json.dumps(result, indent=2))
    pct = lambda k, c, tot: f"{c[k]} ({100.0 * c[k] / tot:.1f} %)"  # noqa: E731
    print(f"given box: right {pct('right', given, n)}, wrong {pct('wrong', given, n)}, unknown {pct('unknown', given, n)}")
    print(
        f"end to end: right {pct('right', e2e, n)}, wrong {pct('wrong', e2e, n)}, "
        f"unknown {pct('unknown', e2e, n)}, missed {pct('missed', e2e, n)}"
    )
    print("confusion (label -> unknown, 1..6):")
    for v in range(1, 7):
        print(f"  {v}: " + " ".join(f"{confusion[(v, g)]:4d}" for g in (None, 1, 2, 3, 4, 5, 6)))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
