"""Benchmark of the dice reader on the real labelled photos (nell-byler/dice_detection).

For every labelled die of a split it measures:

* **reading** (given the labelled box): right, wrong, ``unknown``;
* **end to end** (the reader finds the dice itself, then reads them): each labelled die is
  matched to the found region that covers it best (intersection over union >= 0.5); a die with
  no match counts as missed; found regions matching no label are counted apart. The data
  set's boxes take in the die's sides seen in perspective, the reader's the top face, so a
  second, looser match is also counted: each box's centre lies inside the other;
* **time per frame** (``DiceReader.read`` on the whole 640 x 640 frame), median and 95th
  percentile, in milliseconds.

Develop on ``train``; report figures on ``test`` only (docs/BENCHMARKS.md). ``holdout`` is
the part of the train split the face classifier was not trained on (its training record,
companion/data/dice_faces.json), where its thresholds were chosen.

Two more modes compare the reader with the reader as it was before it was made fast
(tests/dice_reference.py), with the same face model (whichever companion/data/dice_faces.onnx
is there):

* ``--equal``: every photo of the split (and the four of tests/data/dice), read end to end
  and die by die (the labelled boxes) by both: the readings must be the same - each die found
  or not, its box within a pixel, its value (1-6, ``unknown``, ``cocked``) and its reason's
  class (the reason with its probabilities and shares masked: the fast reader's classifier takes two views
  where they agree, so a probability shown in a reason may differ); the photos that differ
  are listed, the photos whose readings are equal to the letter counted, and the exit status
  is 1 if any differs (the reference's readings with the fast reader's changes made on purpose,
  tests/dice_reference.py's ``ON_PURPOSE``);
* ``--speed``: time per frame, CPU time of the thread (``time.thread_time``, the machine is
  shared) and as a ratio to the reference operation (bench/_common.py) timed in the same
  round, the two readers interleaved photo by photo over ``--rounds`` rounds, on the three
  dice of tests/data/dice/IMG_20191208_112847.jpg and on the split's photos; with the CPU time
  of each part of the fast reader (finder, search, pips, classifier's forward passes).

``--tray-photos`` does both (``--equal --speed``) on the path-traced dice-tray photographs
instead (../shared/data/dice-tray, each read with its tray geometry from the floor's corners,
as bench/dice_tray_bench.py does).

Usage:
  python bench/dice_bench.py --split test [--data /work/shared/data/dice] [--json out.json]
  python bench/dice_bench.py --split test --pips-only   # without the face classifier
  python bench/dice_bench.py --split test --equal       # the fast reader against the old one
  python bench/dice_bench.py --split test --speed [--rounds 3]
  python bench/dice_bench.py --split test --tray-photos [--rounds 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine, reference_op_s  # noqa: E402
from companion.readers import dice as dice_module  # noqa: E402
from companion.readers.dice import MODEL_PATH, UNKNOWN, DiceReader  # noqa: E402

THREE_DICE = Path(__file__).resolve().parents[1] / "tests" / "data" / "dice" / "IMG_20191208_112847.jpg"

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


def _iou_match(box, readings, used) -> int | None:
    """The unused reading whose box overlaps ``box`` best, with IoU >= 0.5."""
    best, best_iou = None, 0.5
    for i, r in enumerate(readings):
        o = iou(box, r.box)
        if o >= best_iou and i not in used:
            best, best_iou = i, o
    return best


def _centre_match(box, readings, used) -> int | None:
    """The unused reading nearest ``box``'s centre whose box and ``box`` hold each other's centres."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    best, best_d = None, float("inf")
    for i, r in enumerate(readings):
        rx, ry = r.centre
        inside = r.box[0] <= cx <= r.box[2] and r.box[1] <= cy <= r.box[3] and box[0] <= rx <= box[2] and box[1] <= ry <= box[3]
        d = (rx - cx) ** 2 + (ry - cy) ** 2
        if inside and i not in used and d < best_d:
            best, best_d = i, d
    return best


def _reference_reader(tray):
    """The reader as it was before it was made fast (tests/dice_reference.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from dice_reference import ReferenceDiceReader

    return ReferenceDiceReader(tray=tray)


def _key(readings) -> list:
    return [(r.box, r.value, r.reason) for r in readings]


def _reason_class(reason: str) -> str:
    """A reading's reason with its probabilities and shares masked ("face classifier unsure
    (0.45)" -> "face classifier unsure (#)", "12% off" -> "# off"); a value in it stays."""
    return re.sub(r"\d+\.\d+|\d+%", "#", reason)


def on_purpose(split: str, photo: str, readings: list) -> list:
    """The reference's readings (:func:`_key` list) of one photo with the changes the fast reader
    makes on purpose (tests/dice_reference.py's ``ON_PURPOSE``) made."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from dice_reference import ON_PURPOSE

    out = []
    for box, value, reason in readings:
        for (s, p, b), (old, new) in ON_PURPOSE.items():
            if (s, p) == (split, photo) and max(abs(x - y) for x, y in zip(box, b)) <= 1.0 and (value, reason) == old:
                value, reason = new
        out.append((box, value, reason))
    return out


def same_readings(a: list, b: list) -> bool:
    """Whether two frames' readings (:func:`_key` lists) are the same: as many dice, each one's
    box within a pixel, its value and its reason's class equal."""
    return len(a) == len(b) and all(
        max(abs(p - q) for p, q in zip(ba, bb)) <= 1.0 and va == vb and _reason_class(ra) == _reason_class(rb)
        for (ba, va, ra), (bb, vb, rb) in zip(a, b))


def equal(folder: Path, labels: dict, tray, pips_only: bool = False) -> int:
    """Read every photo with both readers; print the differences; 0 when there are none."""
    model = None if pips_only else "default"
    new = DiceReader(tray=tray, model=model)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from dice_reference import ReferenceDiceReader

    old = ReferenceDiceReader(tray=tray, model=model)
    photos = [(folder / name, dice) for name, dice in sorted(labels.items())]
    own = THREE_DICE.parent
    photos += [(path, dice) for path, dice in sorted((own / n, d) for n, d in load_labels(own).items())]
    differ = frames = boxes = letter = 0
    t0 = time.perf_counter()
    for path, dice in photos:
        frame = cv2.imread(str(path))
        if frame is None:
            print(f"{path}: cannot read the image", file=sys.stderr)
            return 1
        a, b = _key(old.read(frame)), _key(new.read(frame))
        a = on_purpose(folder.name, path.name, a) if path.parent == folder else a
        frames += 1
        bad = not same_readings(a, b)
        letter += a == b
        for box, _ in dice:
            boxes += 1
            (v0, r0), (v1, r1) = old.read_die(frame, box), new.read_die(frame, box)
            if v0 != v1 or _reason_class(r0) != _reason_class(r1):
                bad = True
                print(f"{path.name}: box {tuple(round(v, 1) for v in box)}: {(v0, r0)} != {(v1, r1)}")
        if bad:
            print(f"{path.name}: old {a}\n  new {b}")
        differ += bad
    print(json.dumps({
        "compared": "tests/dice_reference.py against companion/readers/dice.py, the same model",
        "model": None if pips_only else str(MODEL_PATH), "photos": frames, "labelled_boxes": boxes,
        "photos_that_differ": differ, "photos_equal_to_the_letter_end_to_end": letter,
        "seconds": round(time.perf_counter() - t0, 1),
        "machine": f"{machine()}, OpenCV {cv2.__version__}, numpy {np.__version__}",
    }, indent=2))
    return 1 if differ else 0


class _PartTimer:
    """CPU time of the thread (ms) spent in some of the fast reader's functions, per frame
    (the search's scoring is the classifier's quick look: counted in both)."""

    PARTS = {
        "finder": (DiceReader, "_regions"),
        "search scoring": (DiceReader, "_scores"),
        "pips": (DiceReader, "_pip_evidence"),
        "classifier": (dice_module.FaceModel, "view_rows"),
    }

    def __init__(self):
        self.totals = Counter()
        self._saved = {}
        for part, (owner, name) in self.PARTS.items():
            fn = getattr(owner, name)
            self._saved[part] = (owner, name, fn)
            setattr(owner, name, self._wrap(part, fn))

    def _wrap(self, part, fn):
        def timed(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.totals[part] += (time.thread_time() - t0) * 1000

        return timed

    def close(self):
        for owner, name, fn in self._saved.values():
            setattr(owner, name, fn)


def speed(folder: Path, labels: dict, tray, rounds: int, three_only: bool = False) -> dict:
    """Interleaved rounds: the reference op, then each photo read by the fast and the old reader."""
    new, old = DiceReader(tray=tray), _reference_reader(tray)
    sets = {"three dice": [cv2.imread(str(THREE_DICE))]}
    if not three_only:
        sets[f"{len(labels)} photos"] = [cv2.imread(str(folder / n)) for n in sorted(labels)]
    for frames in sets.values():
        for f in frames[:2]:
            new.read(f), old.read(f)  # warm up (OpenCV's tables, the network's buffers)
    times = {(s, who): [] for s in sets for who in ("new", "old")}
    ratios = {(s, who): [] for s in sets for who in ("new", "old")}
    parts = {s: Counter() for s in sets}
    refs = []
    for _ in range(rounds):
        ref = reference_op_s(clock=time.thread_time) * 1000
        refs.append(ref)
        for s, frames in sets.items():
            for f in frames:
                timer = _PartTimer()
                t0 = time.thread_time()
                new.read(f)
                t_new = (time.thread_time() - t0) * 1000
                timer.close()
                parts[s].update(timer.totals)
                t0 = time.thread_time()
                old.read(f)
                t_old = (time.thread_time() - t0) * 1000
                for who, t in (("new", t_new), ("old", t_old)):
                    times[(s, who)].append(t)
                    ratios[(s, who)].append(t / ref)
    out = {"machine": f"{machine()}, OpenCV {cv2.__version__}, numpy {np.__version__}",
           "load_average": [round(v, 2) for v in __import__("os").getloadavg()],
           "clock": "thread CPU time", "rounds": rounds,
           "reference_op_ms": [round(v, 3) for v in refs]}
    for s, frames in sets.items():
        row = {}
        for who in ("new", "old"):
            t = sorted(times[(s, who)])
            r = sorted(ratios[(s, who)])
            row[who] = {"median_ms": round(statistics.median(t), 2), "p95_ms": round(t[int(0.95 * (len(t) - 1))], 2),
                        "median_ref": round(statistics.median(r), 2), "p95_ref": round(r[int(0.95 * (len(r) - 1))], 2)}
        n = rounds * len(frames)
        row["new_parts_ms_per_frame"] = {k: round(v / n, 2) for k, v in parts[s].items()}
        out[s] = row
    return out


def tray_photos(rounds: int) -> dict:
    """The dice-tray photographs, each with its geometry: readings compared, and time per frame
    (thread CPU time, as reference ops of the same round) of both readers, interleaved."""
    from bench.dice_tray_bench import DEFAULT_DATA, geometry_of

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from dice_reference import ReferenceDiceReader

    truth = json.loads((DEFAULT_DATA / "truth.json").read_text())["images"]
    cases = []
    for im in truth:
        g = geometry_of(im, "corners")
        cases.append((im["image"], cv2.imread(str(DEFAULT_DATA / "images" / im["image"])),
                      DiceReader(geometry=g), ReferenceDiceReader(geometry=g)))
    differ, letter = [], 0
    times = {"new": [], "old": []}
    ratios = {"new": [], "old": []}
    for r in range(rounds):
        ref = reference_op_s(clock=time.thread_time) * 1000
        for name, frame, new, old in cases:
            t0 = time.thread_time()
            a = _key(new.read(frame))
            t_new = (time.thread_time() - t0) * 1000
            t0 = time.thread_time()
            b = _key(old.read(frame))
            t_old = (time.thread_time() - t0) * 1000
            if r == 0 and not same_readings(a, b):
                differ.append(name)
                print(f"{name}: old {b}\n  new {a}")
            letter += r == 0 and a == b
            for who, t in (("new", t_new), ("old", t_old)):
                times[who].append(t)
                ratios[who].append(t / ref)
    out = {"photos": len(cases), "photos_that_differ": len(differ), "differ": differ,
           "photos_equal_to_the_letter": letter, "rounds": rounds,
           "clock": "thread CPU time",
           "machine": f"{machine()}, OpenCV {cv2.__version__}, numpy {np.__version__}",
           "load_average": [round(v, 2) for v in __import__("os").getloadavg()]}
    for who in ("new", "old"):
        t, q = sorted(times[who]), sorted(ratios[who])
        out[who] = {"median_ms": round(statistics.median(t), 1), "p95_ms": round(t[int(0.95 * (len(t) - 1))], 1),
                    "median_ref": round(statistics.median(q), 1), "p95_ref": round(q[int(0.95 * (len(q) - 1))], 1)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["train", "holdout", "test"], required=True)
    ap.add_argument("--pips-only", action="store_true", help="read by the pips alone (no face classifier)")
    ap.add_argument("--data", default="/work/shared/data/dice", help="folder with train/ and test/")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--equal", action="store_true", help="compare the readings with tests/dice_reference.py's")
    ap.add_argument("--speed", action="store_true", help="time the fast reader against tests/dice_reference.py's")
    ap.add_argument("--rounds", type=int, default=3, help="--speed: interleaved rounds (default 3)")
    ap.add_argument("--three-only", action="store_true", help="--speed: the three dice photo alone")
    ap.add_argument("--tray-photos", action="store_true",
                    help="--equal and --speed on the dice-tray photographs, each with its geometry")
    ap.add_argument(
        "--tray",
        default="0,70,640,555",
        help="tray region x0,y0,x1,y1 in px (default: the tray of these photos, from the train "
        "split's label extents; it leaves out the white stand below the tray)",
    )
    args = ap.parse_args(argv)
    folder = Path(args.data) / ("train" if args.split == "holdout" else args.split)
    labels = load_labels(folder)
    if args.split == "holdout":
        record = json.loads(MODEL_PATH.with_suffix(".json").read_text())
        labels = {k: v for k, v in labels.items() if k in set(record["held_out"])}
    try:
        tray = tuple(int(v) for v in args.tray.split(","))
        assert len(tray) == 4
    except (ValueError, AssertionError):
        ap.error(f"--tray: expected x0,y0,x1,y1 in pixels, got {args.tray!r}")
    if args.tray_photos:
        cv2.setNumThreads(1)
        result = tray_photos(max(1, args.rounds))
        print(json.dumps(result, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        return 1 if result["photos_that_differ"] else 0
    if args.equal:
        return equal(folder, labels, tray, args.pips_only)
    if args.speed:
        cv2.setNumThreads(1)
        result = speed(folder, labels, tray, max(1, args.rounds), args.three_only)
        print(json.dumps(result, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        return 0
    reader = DiceReader(tray=tray, model=None if args.pips_only else "default")
    given = Counter()
    e2e = Counter()
    e2e_centre = Counter()
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
        for counts, match in ((e2e, _iou_match), (e2e_centre, _centre_match)):
            used = set()
            for box, value in dice:
                best = match(box, readings, used)
                if best is None:
                    counts["missed"] += 1
                    continue
                used.add(best)
                v = readings[best].value
                counts["unknown" if v == UNKNOWN else "right" if v == value else "wrong"] += 1
            if counts is e2e:
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
        "end_to_end_centre_match": {k: e2e_centre[k] for k in ("right", "wrong", "unknown", "missed")},
        "face_classifier": not args.pips_only,
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
    print(
        f"end to end, centres matched: right {pct('right', e2e_centre, n)}, wrong {pct('wrong', e2e_centre, n)}, "
        f"unknown {pct('unknown', e2e_centre, n)}, missed {pct('missed', e2e_centre, n)}"
    )
    print("confusion (label -> unknown, 1..6):")
    for v in range(1, 7):
        print(f"  {v}: " + " ".join(f"{confusion[(v, g)]:4d}" for g in (None, 1, 2, 3, 4, 5, 6)))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
