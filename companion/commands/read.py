"""Read a game's table from photographs and print what the camera reader sees, as JSON.

One JSON object per image (JSON Lines): the status ("ok" or "board not visible: ..."), the 7
spaces (a horse colour, "empty" or "unknown"), each space's confidence or the reason it
abstained, each player's card (three colours in reading order, or "unknown") and the markers
used. An image that cannot be read gives {"image": ..., "status": "error: ..."} and the exit
status 1; the other images are still read.

Examples:
  companion read carrousel photo.jpg
  companion read carrousel photo.jpg --overlay photo_read.png
  companion read carrousel shots/*.jpg --overlay annotated/
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["configure", "run", "read_each"]

READERS = ("carrousel", "monsieur-carrousel", "carrossel")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion read``."""
    parser.add_argument("game", choices=READERS, help="the game whose table is photographed")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photographs (JPEG, PNG, ...)")
    parser.add_argument("--overlay", metavar="OUT",
                        help="write the image annotated with regions, labels and confidences: a file "
                             "(.png, .jpg, ...) for one image, a folder for several or an existing one "
                             "(NAME_overlay.png)")
    parser.add_argument("--geometry", metavar="FILE",
                        help="board geometry (default: [camera] geometry, else carrousel-board.json of the "
                             "calibration folder, else the shipped one)")
    parser.add_argument("--colours", metavar="FILE",
                        help="reference colours (default: [camera] colours, else carrousel-colours.json of "
                             "the calibration folder, else the shipped one)")
    parser.add_argument("--intrinsics", metavar="FILE",
                        help="camera intrinsics from `companion calibrate intrinsics` (default: [camera] "
                             "intrinsics, else camera.json of the calibration folder when there is one, else "
                             "none: the lens is treated as distortion-free)")


def run(args: argparse.Namespace) -> int:
    """Read every image; returns 0, or 1 when an image could not be read."""
    from companion.calibration_dir import explicit_or_calibration, optional_calibration
    from companion.cli import UsageError
    from companion.config import load
    from companion.vision.calibration import load_lens
    from companion.vision.carrousel import (
        CarrouselGeometry,
        CarrouselReader,
        draw_overlay,
        load_references,
    )
    from companion.vision.registration import Registrar

    config = load(getattr(args, "config", None))
    if args.game == "monsieur-carrousel":
        from companion.vision.monsieur_read import read_images
        return read_images(args, config)
    if args.game == "carrossel":
        return _run_carrossel(args, config)
    cam = config["camera"]
    try:
        geometry = CarrouselGeometry.load(explicit_or_calibration(args.geometry or cam["geometry"],
                                                                  "carrousel-board.json", config))
        intrinsics = optional_calibration(args.intrinsics or cam["intrinsics"], "camera.json", config)
        lens = load_lens(intrinsics) if intrinsics is not None else None
        reader = CarrouselReader(geometry, load_references(explicit_or_calibration(
                                     args.colours or cam["colours"], "carrousel-colours.json", config)),
                                 Registrar(geometry.markers, geometry.dictionary, lens=lens))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return read_each(args.images, args.overlay, reader.read, lambda reading: reading.to_json(),
                     lambda frame, reading: draw_overlay(frame, reading, geometry))


def read_each(images: Sequence[str], overlay: str | None, read: Callable[[Any], Any],
              describe: Callable[[Any], dict[str, Any]], draw: Callable[[Any, Any], Any]) -> int:
    """The loop every ``companion read GAME`` shares: each image read (its size checked from the
    header before decoding), one JSON object printed per image, its overlay drawn.

    Args:
        images: image paths, in order.
        overlay: an output image for one image, or a folder for several or for one
            (``STEM_overlay.png``), or None.
        read: ``read(frame) -> reading``, the frame ``H x W x 3 uint8, BGR``.
        describe: ``describe(reading) -> dict``, the JSON fields after ``image``.
        draw: ``draw(frame, reading) -> H x W x 3 uint8`` image, the overlay.

    Returns:
        0, or 1 when an image could not be read (it gives ``{"image": ..., "status":
        "error: ..."}`` and one line on standard error; the others are still read).

    Raises:
        companion.cli.UsageError: an overlay that cannot be written (naming the file; an
            extension without an image writer is refused before any image is read).
    """
    from companion.cli import UsageError
    from companion.vision.images import (
        ImageError,
        check_image_path,
        read_image,
        write_image,
    )

    overlay_dir = None
    if overlay and (len(images) > 1 or Path(overlay).is_dir()):
        overlay_dir = Path(overlay)
        try:
            overlay_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--overlay {overlay}: cannot make the folder ({exc.strerror})") from None
    elif overlay:
        try:  # before any image is read
            check_image_path(overlay)
        except ImageError as exc:
            raise UsageError(f"--overlay {exc}") from None
    failed = 0
    for name in images:
        try:  # the size from the header first: a pixel limit before decoding
            frame = read_image(name)
        except ImageError as exc:
            why = str(exc).removeprefix(f"{name}: ")
            print(json.dumps({"image": name, "status": f"error: {why}"}))
            print(f"companion read: {name}: {why}", file=sys.stderr)
            failed += 1
            continue
        reading = read(frame)
        print(json.dumps({"image": name, **describe(reading)}), flush=True)
        if overlay:
            out = overlay_dir / f"{Path(name).stem}_overlay.png" if overlay_dir else Path(overlay)
            try:
                write_image(out, draw(frame, reading), "overlay image")
            except ImageError as exc:
                raise UsageError(f"--overlay {exc}") from None
    return 1 if failed else 0


def _run_carrossel(args: argparse.Namespace, config: object) -> int:
    """``companion read carrossel``: one JSON object per image with ``image``, ``status``,
    ``board_angle_deg`` (degrees counter-clockwise from the base board's +x, or null), ``facing``
    (booth -> sector letter, "ambiguous" or "unknown") and ``slots`` (all 48: a tile's animal,
    colour and standee, "empty" or "unknown"); returns 1 when an image could not be read."""

    from companion.calibration_dir import explicit_or_calibration
    from companion.cli import UsageError
    from companion.vision.carrossel import (
        CarrosselGeometry,
        CarrosselReader,
        LetterTemplates,
        draw_overlay,
    )

    try:
        geometry = CarrosselGeometry.load(explicit_or_calibration(args.geometry, "carrossel-board.toml", config))
        reader = CarrosselReader(geometry, LetterTemplates.load(None, config))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return read_each(args.images, args.overlay, reader.read, lambda reading: reading.to_json(geometry.cell_names),
                     lambda frame, reading: draw_overlay(frame, reading, geometry))
