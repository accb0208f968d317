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
    from companion.calibration_dir import calibration_path, explicit_or_calibration
    from companion.cli import UsageError
    from companion.commands.read import (
        CalibrationUse,
        complete_monsieur,
        given_as,
        read_each,
    )
    from companion.vision.monsieur import (
        MonsieurReader,
        draw_overlay,
        seat_margin_from_table,
    )
    from companion.vision.monsieur_geometry import GEOMETRY_FILE, MonsieurGeometry
    from companion.vision.registration import Registrar

    try:
        geometry_file = explicit_or_calibration(args.geometry, GEOMETRY_FILE, config)
        table_file = calibration_path("monsieur_carrousel.toml", config)
        geometry = MonsieurGeometry.load(geometry_file)
        seat_margin, zone_margin = seat_margin_from_table(table_file, config=config)
        registrar = Registrar(geometry.markers, geometry.dictionary)
        use = CalibrationUse.build({"geometry": (geometry_file, given_as(args.geometry, "--geometry", None, "")),
                                    "table": (table_file, None)},
                                   getattr(args, "intrinsics", None), config["camera"]["intrinsics"], config, registrar)
        reader = MonsieurReader(geometry, seat_margin, zone_margin, registrar)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return read_each(args.images, args.overlay, reader.read, lambda reading: reading.to_json(),
                     lambda frame, reading: draw_overlay(frame, reading, geometry),
                     complete=lambda d: complete_monsieur(d, geometry), calibration=use)
