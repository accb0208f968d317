"""Benchmark of the dice reader on the path-traced dice-tray photographs (../shared/data/dice-tray).

Each photograph's tray geometry is either the camera of its truth record (``--geometry truth``:
a perfect calibration) or the one ``companion calibrate tray`` would make from the floor's four
corners (``--geometry corners``: the corners projected from the truth, with 1 px of noise, the
lens's field of view given when the camera looks straight down; round trays have no corners and
keep the truth's camera). The reader (:class:`~companion.readers.dice.DiceReader` with that
geometry) reads the whole frame; each reading is matched to the truth die whose visible pixels
(the label mask) hold most of its box's central half.

Counted per truth die:

* **readable**: flat, its top face fully visible (``top_face_visibility.visible_fraction`` 1) and
  at least 18 px across (the square root of its top face polygon's area) - the dice the issue's
  "right" target is about;
* **right** (a value equal to the truth), **wrong** (another value; any value on a cocked die),
  **unknown** (a reading of ``unknown``, or ``cocked`` on a flat die), **cocked** (a cocked die read
  ``cocked``), **missed** (no reading matched);
* readings that match no die at all (**phantoms**; one with a value is also counted wrong);
* **rolls**: photographs of exactly three readable dice; right when the reader gives exactly three
  readings whose values are the truth's (as a multiset);
* time per frame (``DiceReader.read``), median and 95th percentile, ms, and as a ratio to the
  reference operation (bench/_common.py) timed just before each read (the median of 30), so
  that a load that changes during the run changes both.

With ``--rendered N`` the photographs are replaced by N dice trays rendered by our renderer
(companion/sim/dice_render.py, seeds from ``RENDERED_SEED0``: scenes never trained on), each read
with its own camera as the geometry: the check of thresholds on frames other than the twenty.

Usage:
  python bench/dice_tray_bench.py [--data ../shared/data/dice-tray] [--geometry truth|corners] [--json out.json] [-v]
  python bench/dice_tray_bench.py --rendered 100 [--model companion/data/dice_faces.onnx]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine, percentile, reference_op_s  # noqa: E402
from companion.readers.dice import COCKED, UNKNOWN, DiceReader  # noqa: E402
from companion.readers.dice_tray import TrayGeometry  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice-tray"
#: Seeds of the rendered trays of this benchmark (the training uses others: tools/train_dice_model.py).
RENDERED_SEED0 = 20_000_000


def rendered_images(n: int, seed0: int = RENDERED_SEED0):
    """``(record, frame, labels, geometry)`` of ``n`` rendered trays, the record in the truth.json
    form this benchmark reads (the fields it uses)."""
    from companion.sim.dice_render import TrayRenderer, random_scene

    renderer = TrayRenderer()
    for k in range(n):
        scene = random_scene(np.random.default_rng(seed0 + k))
        frame, labels, dice = renderer.render(scene)
        recs = []
        for d in dice:
            recs.append({"value": d.value, "state": d.state, "colour": d.colour,
                         "top_face_visibility": {"visible_fraction": d.visible_fraction},
                         "top_face_polygon_px": d.top_quad_px.tolist()})
        im = {"image": f"rendered_{seed0 + k}", "dice": recs, "lighting": scene.lighting,
              "tray": {"shape": scene.shape, "felt": scene.felt},
              "case": {"hand": scene.hand is not None, "touching": any(d.touching for d in dice),
                       "cocked": any(d.state == "cocked" for d in dice)}}
        yield im, frame, labels, scene.geometry


def geometry_of(im: dict, how: str) -> TrayGeometry:
    """The tray geometry of one truth record: its camera, or calibrated from the floor's corners."""
    cam = im["camera"]
    floor = np.array(im["tray"]["inner_polygon_mm"], float)[:, :2]
    size = (im["width"], im["height"])
    truth = TrayGeometry.from_camera(cam["K"], cam["R_world_to_cam"], cam["t_world_to_cam_mm"], size, floor)
    if how == "truth" or im["tray"]["shape"] == "round":
        return truth
    wx, wy = im["tray"]["inner_size_mm"]
    corners = np.array([[-wx / 2, -wy / 2, 0], [wx / 2, -wy / 2, 0], [wx / 2, wy / 2, 0], [-wx / 2, wy / 2, 0]])
    px = truth.project(corners) + np.random.default_rng(im["seed"]).normal(0, 1.0, (4, 2))
    try:
        return TrayGeometry.from_corners(px, (wx, wy), size, floor_mm=floor)
    except ValueError:
        return TrayGeometry.from_corners(px, (wx, wy), size, hfov_deg=cam["hfov_deg"], floor_mm=floor)


def face_px(die: dict) -> float:
    """The top face's side (px): the square root of its polygon's area."""
    p = np.array(die["top_face_polygon_px"], float)
    x, y = p[:, 0], p[:, 1]
    return float(np.sqrt(0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))))


def readable(die: dict) -> bool:
    """Flat, top face fully visible, at least 18 px across."""
    return (die["state"] == "flat" and die["top_face_visibility"]["visible_fraction"] >= 0.999
            and face_px(die) >= 18.0)


def match(readings, mask: np.ndarray, n: int) -> list[int | None]:
    """For each reading, the truth die (index) whose label (10 + k) covers most of its box's
    central half, or None."""
    out = []
    h, w = mask.shape
    for r in readings:
        x0, y0, x1, y1 = r.box
        cx0, cx1 = int(max(0, (3 * x0 + x1) / 4)), int(min(w, np.ceil((x0 + 3 * x1) / 4)))
        cy0, cy1 = int(max(0, (3 * y0 + y1) / 4)), int(min(h, np.ceil((y0 + 3 * y1) / 4)))
        patch = mask[cy0:cy1, cx0:cx1]
        counts = Counter(int(v) - 10 for v in patch.ravel() if 10 <= v < 10 + n)
        best = counts.most_common(1)
        out.append(best[0][0] if best and best[0][1] >= 0.1 * max(1, patch.size) else None)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--geometry", choices=("truth", "corners"), default="corners")
    ap.add_argument("--calibration", type=Path, metavar="DIR",
                    help="the tray geometry of each photograph from DIR/<image stem>.toml (written by "
                         "`companion calibrate tray`), as `companion dice --calibration` reads it")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--repeat", type=int, default=3, help="reads per photograph for the times")
    ap.add_argument("--rendered", type=int, default=0, metavar="N", help="N rendered trays instead of the photographs")
    ap.add_argument("--model", type=Path, help="the face classifier (default: the packaged one)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    from companion.readers.dice import FaceModel

    model = FaceModel(args.model) if args.model else "default"
    if args.rendered:
        images = rendered_images(args.rendered)
        n_images = args.rendered
    else:
        truth = json.loads((args.data / "truth.json").read_text())
        n_images = len(truth["images"])

        def photos():
            for im in truth["images"]:
                frame = cv2.imread(str(args.data / "images" / im["image"]))
                mask = cv2.imread(str(args.data / "masks" / Path(im["image"]).with_suffix(".png").name),
                                  cv2.IMREAD_UNCHANGED)
                if args.calibration is None:
                    geometry = geometry_of(im, args.geometry)
                else:
                    toml = args.calibration / Path(im["image"]).with_suffix(".toml").name
                    if not toml.exists():
                        print(f"{im['image']}: no {toml.name} in {args.calibration}, left out", file=sys.stderr)
                        continue
                    geometry = TrayGeometry.from_toml(toml)
                    if geometry is None:
                        raise SystemExit(f"{toml}: no tray calibration there; write it with `companion calibrate tray`")
                    geometry = geometry.for_size((frame.shape[1], frame.shape[0]))
                yield im, frame, mask, geometry

        images = photos()
    ref_s = reference_op_s()
    tally: Counter = Counter()
    times: list[float] = []
    ratios: list[float] = []
    rolls = rolls_right = 0
    per_image = []
    for im, frame, mask, geometry in images:
        reader = DiceReader(geometry=geometry, model=model)
        readings = reader.read(frame)
        for _ in range(args.repeat):
            # the reference op timed beside each read: the machine's load changes during a run
            ref = reference_op_s(30)
            t0 = time.perf_counter()
            reader.read(frame)
            times.append(time.perf_counter() - t0)
            ratios.append(times[-1] / ref)
        dice = im["dice"]
        owner = match(readings, mask, len(dice))
        seen: dict[int, list] = {}
        for r, k in zip(readings, owner):
            if k is None:
                tally["phantom"] += 1
                if r.value not in (UNKNOWN, COCKED):
                    tally["wrong"] += 1
                    tally["wrong_phantom"] += 1
                continue
            seen.setdefault(k, []).append(r)
        lines = []
        for k, die in enumerate(dice):
            ok_die = readable(die)
            tally["dice"] += 1
            tally["readable"] += ok_die
            got = seen.get(k, [])
            vals = [r.value for r in got]
            if not got:
                outcome = "missed"
            elif die["state"] == "cocked":
                outcome = "cocked" if all(v in (COCKED, UNKNOWN) for v in vals) and COCKED in vals else (
                    "wrong" if any(v not in (COCKED, UNKNOWN) for v in vals) else "unknown")
            elif any(v not in (COCKED, UNKNOWN) and v != die["value"] for v in vals):
                outcome = "wrong"
            elif len(got) == 1 and vals[0] == die["value"]:
                outcome = "right"
            else:
                outcome = "unknown"
            tally[outcome] += 1
            if ok_die:
                tally[f"readable_{outcome}"] += 1
            if die["state"] == "cocked":
                tally["cocked_dice"] += 1
            lines.append(f"  die {k} {die['colour']:6s} {die['state']:6s} truth {die['value']} "
                         f"face {face_px(die):4.1f}px vis {die['top_face_visibility']['visible_fraction']:.2f} "
                         f"-> {outcome} {[(r.value, r.reason) for r in got]}")
        if len(dice) == 3 and all(readable(d) for d in dice):
            rolls += 1
            got_roll = sorted(str(r.value) for r in readings)
            right = len(readings) == 3 and got_roll == sorted(str(d["value"]) for d in dice)
            rolls_right += right
        per_image.append({"image": im["image"], "readings": [[list(r.box), r.value, r.reason] for r in readings]})
        if args.verbose:
            print(f"{im['image']} {im['lighting']} tray {im['tray']['shape']} {im['tray'].get('felt', '')} case {im['case']}")
            print("\n".join(lines))
            for r, k in zip(readings, owner):
                if k is None:
                    print(f"  phantom {[round(v) for v in r.box]} {r.value} {r.reason}")
    med, p95 = (statistics.median(times) * 1e3, percentile(times, 95) * 1e3) if times else (float("nan"), float("nan"))
    readable_n = max(1, tally["readable"])
    summary = {
        "machine": machine(),
        "geometry": "each scene's camera" if args.rendered else (f"calibration files in {args.calibration}" if args.calibration else args.geometry),
        "frames": f"{n_images} rendered trays (seeds from {RENDERED_SEED0})" if args.rendered else f"{n_images} photographs",
        "model": str(args.model or "packaged"),
        "dice": tally["dice"],
        "counts": dict(tally),
        "right_of_readable": tally["readable_right"] / readable_n,
        "missed_of_readable": tally["readable_missed"] / readable_n,
        "rolls": rolls,
        "rolls_right": rolls_right,
        "time_ms_median": med,
        "time_ms_p95": p95,
        "reference_op_ms": ref_s * 1e3,
        "ratio_median": statistics.median(ratios) if ratios else float("nan"),
        "ratio_p95": percentile(ratios, 95) if ratios else float("nan"),
    }
    print(json.dumps({k: v for k, v in summary.items()}, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**summary, "images": per_image}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
