"""Make ``calibration/carrossel-letters.json`` (the animal letters' look) from photographs of a
known Carrossel table: the unobstructed tiles' discs, sampled in each tile's frame, median per
animal (:func:`companion.vision.carrossel.letter_templates_from`).

    .venv/bin/python -m companion.vision.carrossel_letters DATA_DIR PHOTO [PHOTO] [--out FILE]

``DATA_DIR`` holds ``truth.json`` and ``images/`` in the form of shared/data/carrossel-table
(README there). The shipped file was made from carrossel_036.jpg and carrossel_051.jpg, the
same two photographs the tile colours were measured on; use at most two so the rest stay a test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2

from companion.vision.carrossel import CarrosselReader, letter_templates_from


def truth_tiles(image_truth: dict) -> dict:
    """``{"board_angle_deg", "tiles": {slot: animal}}`` of one photo's truth (README's truth
    format), only tiles with no standee and no hand over them."""
    hidden = {tuple(x) for x in image_truth.get("hands_over_cells_sector_slot", [])}
    tiles = {}
    for cell in image_truth["cells"]:
        t = cell["tile"]
        if (t is None or t["standee"] is not None or (cell["sector"], cell["slot"]) in hidden
                or cell["visibility"]["visible_fraction"] < 1.0):
            continue
        tiles[f"{cell['sector_label']}{cell['slot']}"] = t["animal"]
    return {"board_angle_deg": image_truth["board_angle_deg"], "tiles": tiles}


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module's docstring); returns the exit status, 2 on a bad argument."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("photos", nargs="+")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "calibration"
                                         / "carrossel-letters.json"))
    args = ap.parse_args(argv)
    data = Path(args.data)
    try:
        truth = {im["image"]: im for im in json.loads((data / "truth.json").read_text())["images"]}
    except (OSError, ValueError, KeyError) as exc:
        print(f"{data / 'truth.json'}: cannot read the truth: {exc}", file=sys.stderr)
        return 2
    frames, truths = [], []
    for name in args.photos:
        if name not in truth:
            print(f"{name}: not in {data / 'truth.json'}", file=sys.stderr)
            return 2
        frame = cv2.imread(str(data / "images" / name))
        if frame is None:
            print(f"{data / 'images' / name}: not an image", file=sys.stderr)
            return 2
        frames.append(frame)
        truths.append(truth_tiles(truth[name]))
    reader = CarrosselReader()
    try:
        templates = letter_templates_from(frames, truths, reader)
    except ValueError as exc:
        print(f"letters: {exc}", file=sys.stderr)
        return 2
    note = ("median lightness of the unobstructed tiles of path-traced photographs of the table "
            f"(shared/data/carrossel-table/images/{' and '.join(args.photos)}), made by "
            "companion.vision.carrossel_letters; lightness relative to the disc's cream, 0-255")
    Path(args.out).write_text(json.dumps(templates.to_json(note)) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {', '.join(templates.animals)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
