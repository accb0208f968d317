"""Draw the dice tray's box on a photo from the dice camera and write dice-tray.toml in the
calibration folder (``[calibration] dir``), where ``companion run`` reads it.

Take a photo with the camera where it will stay (for example `companion dice` on a saved frame,
or a frame of `opencv:0` saved by any viewer), find the pixel corners of the tray's floor, and
give them as --box x0,y0,x1,y1 (left, top, right, bottom). Keep the box inside the floor: the
tray's walls and the table around it only slow the reader down and can look like dice. The dice
reader is run once on the photo inside the box, and what it sees is printed as a check.

Examples:
  companion calibrate tray tray.jpg --box 90,140,545,495
  companion calibrate tray tray.jpg --box 90,140,545,495 --overlay tray_check.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion calibrate tray``."""
    from companion.sources.dice_camera import TRAY_FILE

    parser.add_argument("image", metavar="IMAGE", help="a photo from the dice camera, at its place")
    parser.add_argument("--box", required=True, metavar="X0,Y0,X1,Y1",
                        help="the tray's floor in the photo, pixels (left, top, right, bottom)")
    parser.add_argument("--out", help=f"the calibration file (default {TRAY_FILE} in the calibration folder)")
    parser.add_argument("--overlay", metavar="PNG", help="also write the photo with the box and the dice read")


def _box(text: str) -> tuple[int, int, int, int]:
    try:
        x0, y0, x1, y1 = (int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--box {text}: expected four whole numbers x0,y0,x1,y1 (pixels)") from None
    if not (0 <= x0 < x1 and 0 <= y0 < y1):
        raise ValueError(f"--box {text}: expected 0 <= x0 < x1 and 0 <= y0 < y1 (left, top, right, bottom)")
    return x0, y0, x1, y1


def run(args: argparse.Namespace) -> int:
    """Check the box against the photo, read the dice inside it, write the file (its path on
    standard output, the check on standard error).

    Raises:
        ValueError: a bad --box, a photo that cannot be read, a box outside the photo, an
            unwritable file (each one line; ``companion calibrate`` turns it into a usage error).
    """
    import cv2

    from companion.readers.dice import DiceReader, draw_readings, roll_values
    from companion.sources.dice_camera import tray_toml

    box = _box(args.box)
    from companion.vision.images import read_image

    image = read_image(args.image)  # ImageError (a ValueError): one line; a pixel limit before decoding
    h, w = image.shape[:2]
    if box[2] > w or box[3] > h:
        raise ValueError(f"--box {args.box}: outside the {w} x {h} px photo {args.image}")
    try:
        readings = DiceReader(tray=box).read(image)
    except FileNotFoundError as exc:
        raise ValueError(f"the dice face model: {exc}") from None
    values = [r.value for r in readings]
    roll = roll_values(readings)
    check = f"{len(readings)} dice seen in the tray: {values}" if readings else "no dice seen in the tray"
    if readings and roll is None:
        check += " (a roll needs exactly three)"
    print(check, file=sys.stderr, flush=True)
    from companion.calibration_dir import check_writable, writable_path
    from companion.config import load
    from companion.sources.dice_camera import TRAY_FILE

    out = check_writable(args.out) if args.out else writable_path(TRAY_FILE.name, load(getattr(args, "config", None)))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(tray_toml(box, (w, h), Path(args.image).name), encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{out}: cannot write the tray calibration ({exc.strerror})") from None
    if args.overlay and not cv2.imwrite(args.overlay, draw_readings(image, readings, box)):
        raise ValueError(f"{args.overlay}: cannot write the overlay image (folder missing or unknown extension?)")
    print(out)
    return 0
