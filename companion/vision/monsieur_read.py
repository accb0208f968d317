"""``companion read monsieur-carrousel IMAGE... [--overlay OUT]``: one JSON object per image.

Fields (issue 12, item 7): ``image``, ``status``, ``carousel_angle_deg`` (number or null),
``pointed_seat`` (0-11, ``"ambiguous"`` or ``"unknown"``), ``seats`` (12 of ``"kid"``,
``"empty"``, ``"unknown"``), ``zones`` (12 of ``"sun"``, ``"rain"``, ``"ambiguous"``,
``"unknown"``), ``die`` (a colour or ``"unknown"``), ``markers`` (fixed marker ids used) and,
when the roof marker could not be used, ``roof`` (why). An image that cannot be read gives
``{"image": ..., "status": "error: ..."}`` and the exit status 1; the others are still read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["read_images"]


def read_images(args: argparse.Namespace, config: Any) -> int:
    """Read every image of ``args.images`` (``--geometry`` a geometry file, ``--overlay`` an
    output file or folder, ``--intrinsics`` the lens); returns 0, or 1 when an image could not
    be read.

    Raises:
        companion.cli.UsageError: an unreadable geometry, table or intrinsics file, or an
            overlay that cannot be written (one line naming the file).
    """
    import cv2

    from companion.calibration_dir import explicit_or_calibration, optional_calibration
    from companion.cli import UsageError
    from companion.vision.calibration import load_lens
    from companion.vision.images import ImageError, read_image
    from companion.vision.monsieur import MonsieurReader, draw_overlay, seat_margin_from_table
    from companion.vision.monsieur_geometry import GEOMETRY_FILE, MonsieurGeometry
    from companion.vision.registration import Registrar

    try:
        geometry = MonsieurGeometry.load(explicit_or_calibration(args.geometry, GEOMETRY_FILE, config))
        seat_margin, zone_margin = seat_margin_from_table(config=config)
        intrinsics = optional_calibration(getattr(args, "intrinsics", None) or config["camera"]["intrinsics"],
                                          "camera.json", config)
        lens = load_lens(intrinsics) if intrinsics is not None else None
        reader = MonsieurReader(geometry, seat_margin, zone_margin,
                                Registrar(geometry.markers, geometry.dictionary, lens=lens))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    overlay_dir = None
    if args.overlay and len(args.images) > 1:
        overlay_dir = Path(args.overlay)
        overlay_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.images:
        try:
            frame, why = read_image(name), ""
        except ImageError as exc:
            frame, why = None, str(exc).removeprefix(f"{name}: ")
        if frame is None:
            print(json.dumps({"image": name, "status": f"error: {why}"}))
            print(f"companion read: {name}: {why}", file=sys.stderr)
            failed += 1
            continue
        reading = reader.read(frame)
        print(json.dumps({"image": name, **reading.to_json()}), flush=True)
        if args.overlay:
            out = overlay_dir / f"{Path(name).stem}_overlay.png" if overlay_dir else Path(args.overlay)
            if not cv2.imwrite(str(out), draw_overlay(frame, reading, geometry)):
                raise UsageError(f"{out}: cannot write the overlay image (folder missing or unknown extension?)")
    return 1 if failed else 0
