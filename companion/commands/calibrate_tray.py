"""Calibrate the dice tray seen by the dice camera and write dice-tray.toml in the calibration
folder (``[calibration] dir``), where ``companion run`` and ``companion dice`` read it.

Take a photo with the camera where it will stay (a frame saved by any viewer, at the size the
camera will give), then give the four corners of a rectangle on the tray's floor and its size in
millimetres: the floor's own corners (for a tray with rounded corners, where its straight edges
would meet), or the corners of a card or sheet laid flat on the floor (an A4 sheet is 297 x 210
mm; for a round tray, lay one in the middle and give --round-mm). The corners go in turn around
the rectangle (either sense), in quotes (the shell splits a command at ";"); the first side is
the first size. From them the reader knows the camera's pose over the tray, so a die's size and
shape in pixels anywhere in the tray (its top face 16 mm above the floor, --die-mm); no die size
to set. When the camera looks almost straight
down its focal length cannot be found from the corners: give the lens's field of view
(--hfov-deg; Pi Camera Module 3: 66, v2: 62.2). The dice reader is run once on the photo, and
what it sees is printed as a check, with the size of the dice in pixels, and a warning when they
are too small to read at this resolution.

The older form, --box x0,y0,x1,y1 (a pixel box around the floor), still works; the reader then
needs [dice] die_px_min/die_px_max instead of the geometry.

Examples:
  companion calibrate tray tray.jpg --corners "101,96;538,88;553,402;92,410" --size-mm 220x160
  companion calibrate tray tray.jpg --corners "250,180;400,182;398,290;252,288" --size-mm 297x210 --round-mm 200 --hfov-deg 66
  companion calibrate tray tray.jpg --box 90,140,545,495
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

__all__ = ["configure", "run", "parse_corners", "parse_size"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion calibrate tray``."""
    # the file name of companion.sources.dice_camera.TRAY_FILE, not imported: every command's
    # parser is built at start, and that import loads numpy and the dice reader into each one
    # (3 MB of a Carrousel service; tests/test_import_weight.py checks the name)
    TRAY_FILE = "dice-tray.toml"
    parser.add_argument("image", metavar="IMAGE", help="a photo from the dice camera, at its place")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--corners", metavar='"X,Y;X,Y;X,Y;X,Y"',
                     help="the corners (px) of a rectangle on the tray's floor, in turn around it, in quotes")
    how.add_argument("--box", metavar="X0,Y0,X1,Y1",
                     help="(older form) the tray's floor in the photo, pixels (left, top, right, bottom)")
    parser.add_argument("--size-mm", metavar="AxB", help="the rectangle's sides in mm: first side x second side")
    parser.add_argument("--hfov-deg", type=float, metavar="DEG",
                        help="the lens's horizontal field of view (needed when the camera looks straight down)")
    parser.add_argument("--round-mm", type=float, metavar="D",
                        help="the floor is round, this diameter (mm), centred on the rectangle")
    parser.add_argument("--die-mm", type=float, default=16.0, metavar="MM", help="the dice's edge (default 16)")
    parser.add_argument("--out", help=f"the calibration file (default {TRAY_FILE} in the calibration folder)")
    parser.add_argument("--overlay", metavar="PNG", help="also write the photo with the floor and the dice read")


def _box(text: str) -> tuple[int, int, int, int]:
    try:
        x0, y0, x1, y1 = (int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--box {text}: expected four whole numbers x0,y0,x1,y1 (pixels)") from None
    if not (0 <= x0 < x1 and 0 <= y0 < y1):
        raise ValueError(f"--box {text}: expected 0 <= x0 < x1 and 0 <= y0 < y1 (left, top, right, bottom)")
    return x0, y0, x1, y1


def parse_corners(text: str) -> list[tuple[float, float]]:
    """``"x,y;x,y;x,y;x,y"`` -> four ``(x, y)`` px.

    Raises:
        ValueError: not four pairs of numbers (one line naming --corners and the form).
    """
    try:
        pts = [tuple(float(v) for v in p.split(",")) for p in text.replace(" ", "").split(";") if p]
    except ValueError:
        pts = []
    if len(pts) != 4 or any(len(p) != 2 or not all(math.isfinite(v) for v in p) for p in pts):
        raise ValueError(f'--corners {text}: expected four corners "x,y;x,y;x,y;x,y" (pixels, in turn around '
                         'the rectangle; in quotes, or the shell splits them at each ;)')
    return [(p[0], p[1]) for p in pts]


def parse_size(text: str | None) -> tuple[float, float]:
    """``"220x160"`` -> ``(220.0, 160.0)`` mm.

    Raises:
        ValueError: missing, or not two positive numbers (one line naming --size-mm).
    """
    if not text:
        raise ValueError("--size-mm: give the rectangle's sides in mm (e.g. --size-mm 220x160: the tray's floor)")
    try:
        a, b = (float(v) for v in text.lower().replace("*", "x").split("x"))
    except ValueError:
        raise ValueError(f"--size-mm {text}: expected two sides in mm, AxB (e.g. 220x160)") from None
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"--size-mm {text}: expected two sides in mm > 0")
    return a, b


def run(args: argparse.Namespace) -> int:
    """Check the corners (or box) against the photo, read the dice, write the file (its path on
    standard output, the check on standard error).

    Raises:
        ValueError: bad --corners/--size-mm/--box, a photo that cannot be read, corners outside
            the photo, a focal length that cannot be found, an unwritable file (each one line;
            ``companion calibrate`` turns it into a usage error).
    """
    import cv2
    import numpy as np

    from companion.readers.dice import DiceReader, draw_readings, roll_values
    from companion.readers.dice_tray import TrayGeometry
    from companion.sources.dice_camera import TRAY_FILE, tray_toml
    from companion.vision.images import check_image_path, read_image, write_image

    if args.overlay:  # before the photo is read: an extension without an image writer
        check_image_path(args.overlay)
    image = read_image(args.image)  # ImageError (a ValueError): one line; a pixel limit before decoding
    h, w = image.shape[:2]
    geometry = None
    for name, default in (("corners", None), ("size_mm", None), ("hfov_deg", None), ("round_mm", None), ("die_mm", 16.0)):
        if not hasattr(args, name):
            setattr(args, name, default)
    if args.corners is not None:
        corners = parse_corners(args.corners)  # an empty one too: one line naming --corners
        size = parse_size(args.size_mm)
        if any(not (0 <= x <= w - 1 and 0 <= y <= h - 1) for x, y in corners):
            raise ValueError(f"--corners {args.corners}: a corner lies outside the {w} x {h} px photo {args.image}")
        floor = None
        if args.round_mm is not None:
            if not args.round_mm > 0:
                raise ValueError(f"--round-mm {args.round_mm}: expected the floor's diameter in mm > 0")
            a = np.linspace(0, 2 * np.pi, 96, endpoint=False)
            floor = np.column_stack([np.cos(a), np.sin(a)]) * args.round_mm / 2
        if not 4 <= args.die_mm <= 60:
            raise ValueError(f"--die-mm {args.die_mm}: expected the dice's edge in mm, 4 to 60")
        geometry = TrayGeometry.from_corners(corners, size, (w, h), hfov_deg=args.hfov_deg, floor_mm=floor,
                                             die_mm=args.die_mm)
        face_hi = geometry.face_px_range()[1]
        if face_hi < 4:
            raise ValueError(f"--corners/--size-mm: a die would be at most {face_hi:.1f} px across in this photo; check "
                             "the corners (in turn around the rectangle) and --size-mm (its real sides, first side "
                             "first), or give the lens's field of view (--hfov-deg)")
        box = geometry.roi()
    else:
        box = _box(args.box)
        if box[2] > w or box[3] > h:
            raise ValueError(f"--box {args.box}: outside the {w} x {h} px photo {args.image}")
    try:
        reader = DiceReader(tray=box, geometry=geometry)
        readings = reader.read(image)
    except FileNotFoundError as exc:
        raise ValueError(f"the dice face model: {exc}") from None
    if geometry is not None:
        c = geometry.camera_centre_mm
        lo, hi = geometry.face_px_range()
        print(f"the camera is {c[2]:.0f} mm above the floor, tilted {geometry.tilt_deg:.0f} deg "
              f"(focal length from the {geometry.focal_from}); a die's top face is {lo:.0f}-{hi:.0f} px across "
              f"in the tray", file=sys.stderr)
        small = geometry.too_small()
        if small:
            print(f"warning: {small}", file=sys.stderr)
    values = [r.value for r in readings]
    roll = roll_values(readings)
    check = f"{len(readings)} dice seen in the tray: {values}" if readings else "no dice seen in the tray"
    if readings and roll is None:
        check += " (a roll needs exactly three)"
    print(check, file=sys.stderr, flush=True)
    from companion.calibration_dir import check_writable, writable_path
    from companion.config import load

    out = check_writable(args.out) if args.out else writable_path(TRAY_FILE.name, load(getattr(args, "config", None)))
    text = (geometry.to_toml(Path(args.image).name, corners_px=parse_corners(args.corners), size_mm=parse_size(args.size_mm))
            if geometry is not None else tray_toml(box, (w, h), Path(args.image).name))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{out}: cannot write the tray calibration ({exc.strerror})") from None
    if args.overlay:
        drawn = draw_readings(image, readings, box)
        if geometry is not None:
            for z in (0.0, geometry.die_mm):
                pts = geometry.project(np.column_stack([geometry.floor_mm, np.full(len(geometry.floor_mm), z)]))
                cv2.polylines(drawn, [np.round(pts).astype(np.int32)], True, (255, 200, 0) if z else (200, 120, 0), 1)
        write_image(args.overlay, drawn, "overlay image")
    print(out)
    return 0
