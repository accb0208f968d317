"""Read the dice in camera images: what the dice reader sees, as JSON.

One JSON line per image: each die found (its box in pixels, its value 1-6, "cocked", or "unknown"
with the reason) and the roll's three values when the tray holds exactly three dice. The tray and
the die's size in pixels everywhere in it come from the tray's calibration (dice-tray.toml in the
calibration folder, written by `companion calibrate tray`; or --calibration FILE), scaled to the
image's size; no die size to set. When the dice are too small to read at the images' resolution,
it says so on standard error. Without a calibration, --tray (or [dice] tray) gives a pixel box
(refused when it lies outside an image) and [dice] die_px_min/die_px_max the die's size; with
neither, a warning says that the whole image is read.

Examples:
  companion dice tray.jpg
  companion dice --calibration my-tray.toml tray.jpg
  companion dice tray.jpg --overlay tray_read.png
  companion dice --tray 60,90,600,520 photos/*.jpg --overlay annotated/
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion dice``."""
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="camera images (JPEG, PNG ...)")
    parser.add_argument("--calibration", metavar="FILE",
                        help="the tray calibration (default: dice-tray.toml in the calibration folder)")
    parser.add_argument("--tray", metavar="X0,Y0,X1,Y1",
                        help="tray region in pixels, without a calibration (default: [dice] tray)")
    parser.add_argument("--overlay", metavar="OUT",
                        help="write the image annotated with each die's box and value: a file for one "
                             "image, a folder for several (NAME_dice.png)")


def _tray(text: str | None, configured: list[int]) -> tuple[int, int, int, int] | None:
    from companion.cli import UsageError

    if text is None:
        return tuple(configured) if configured else None  # type: ignore[return-value]
    try:
        x0, y0, x1, y1 = (int(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--tray {text}: expected four integers x0,y0,x1,y1 (pixels)") from None
    if not (0 <= x0 < x1 and 0 <= y0 < y1):
        raise UsageError(f"--tray {text}: expected 0 <= x0 < x1 and 0 <= y0 < y1")
    return (x0, y0, x1, y1)


def _calibration(args: argparse.Namespace, config, tray) -> Path | None:
    """The tray calibration file to use: --calibration, else the calibration folder's
    dice-tray.toml when no --tray/[dice] tray is given and it exists, else None."""
    from companion.cli import UsageError

    if args.calibration:
        path = Path(args.calibration)
        if path.is_dir():
            raise UsageError(f"--calibration {path}: a directory; give the tray calibration file in it "
                             f"(e.g. {path / 'dice-tray.toml'}, written by companion calibrate tray IMAGE --corners ...)")
        if not path.exists():
            raise UsageError(f"--calibration {path}: no such file (companion calibrate tray IMAGE --corners ... writes it)")
        if not path.is_file():
            raise UsageError(f"--calibration {path}: not a regular file; give the tray calibration file "
                             "(TOML, written by companion calibrate tray IMAGE --corners ...)")
        return path
    if tray is not None:
        return None
    from companion.calibration_dir import calibration_path
    from companion.sources.dice_camera import TRAY_FILE

    path = calibration_path(TRAY_FILE.name, config)
    return path if path.is_file() else None


def run(args: argparse.Namespace) -> int:
    """Run ``companion dice``; exit status 0, or 2 when an image could not be read (the
    others are still read; each failure is one line on stderr)."""

    from companion.cli import UsageError
    from companion.config import load
    from companion.readers.dice import DiceReader, FaceModel, draw_readings, roll_values

    config = load(args.config)
    section = config["dice"]
    tray = _tray(args.tray, section["tray"])
    tray_from = "--tray" if args.tray is not None else "[dice] tray"
    calibration = _calibration(args, config, tray)
    if calibration is None and tray is None:
        from companion.calibration_dir import calibration_path
        from companion.sources.dice_camera import TRAY_COMMAND, TRAY_FILE

        sys.stderr.write(
            f"companion: warning: no tray calibration ({calibration_path(TRAY_FILE.name, config)}): the whole image "
            f"is read, a die's side taken as [dice] die_px_min-die_px_max = {section['die_px_min']:g}-"
            f"{section['die_px_max']:g} px; {TRAY_COMMAND} writes it (or give --tray x0,y0,x1,y1)\n")
    try:
        model = FaceModel()
    except (OSError, ValueError) as exc:
        raise UsageError(f"the dice face model: {exc}") from None
    readers: dict[tuple[int, int], DiceReader] = {}

    def reader_for(size: tuple[int, int]) -> DiceReader:
        """One reader per image size: the calibration's geometry scaled to it."""
        if size in readers:
            return readers[size]
        geometry = None
        box = tray
        if calibration is None and box is not None and (box[2] > size[0] or box[3] > size[1]):
            raise UsageError(f"{tray_from} {','.join(map(str, box))}: outside the {size[0]} x {size[1]} px image "
                             f"(expected x1 <= {size[0]} and y1 <= {size[1]}: the tray's box in this image's pixels)")
        if calibration is not None:
            from companion.sources.dice_camera import load_tray_geometry

            try:
                box, geometry = load_tray_geometry(calibration, size)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        small = geometry.too_small() if geometry is not None else ""
        try:
            readers[size] = DiceReader(tray=box, die_px=(section["die_px_min"], section["die_px_max"]),
                                       model=model, geometry=geometry)
        except ValueError as exc:
            if geometry is not None:  # the size comes from the calibration, not from [dice]
                raise UsageError(f"{size[0]} x {size[1]} px image: {small or exc}; no die can be read at this "
                                 f"size with the tray calibration {calibration}") from None
            raise UsageError(f"[dice] {exc}") from None
        if small:
            sys.stderr.write(f"companion: warning: {small}\n")
        return readers[size]
    overlay_dir = None
    if args.overlay and (len(args.images) > 1 or Path(args.overlay).is_dir()):
        overlay_dir = Path(args.overlay)
        try:
            overlay_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--overlay {args.overlay}: cannot make the folder ({exc.strerror})") from None
    from companion.vision.images import (
        ImageError,
        check_image_path,
        read_image,
        write_image,
    )

    if args.overlay and overlay_dir is None:
        try:  # before any image is read
            check_image_path(args.overlay)
        except ImageError as exc:
            raise UsageError(f"--overlay {exc}") from None
    failed = 0

    for path in args.images:
        try:  # the size from the header first: a pixel limit before decoding
            frame, why = read_image(path), ""
        except ImageError as exc:
            frame, why = None, str(exc).removeprefix(f"{path}: ")
        if frame is None:
            sys.stderr.write(f"companion: error: {path}: {why}\n")
            failed += 1
            continue
        reader = reader_for((frame.shape[1], frame.shape[0]))
        try:
            readings = reader.read(frame)
        except ValueError as exc:
            raise UsageError(f"{path}: {exc}") from None
        from companion.readers.dice_cover import CoverCheck

        # a hand over the tray may hide dice: no roll, whatever the dice read (the camera's rule)
        cover = CoverCheck(reader.tray, reader.geometry, reader.die_px).check(frame)
        out = {
            "image": path,
            "dice": [
                {"box": [round(v, 1) for v in r.box], "value": r.value, **({"reason": r.reason} if r.reason else {})}
                for r in readings
            ],
            "roll": None if cover.covered else roll_values(readings),
            **({"covered": "a hand is over the tray", "cover_box": list(cover.box or ())} if cover.covered else {}),
        }
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        if args.overlay:
            target = overlay_dir / f"{Path(path).stem}_dice.png" if overlay_dir else Path(args.overlay)
            try:
                write_image(target, draw_readings(frame, readings, reader.tray), "overlay image")
            except ImageError as exc:
                raise UsageError(f"--overlay {exc}") from None
    return 2 if failed else 0
