"""Read a game's table from photographs and print what the camera reader sees, as JSON.

One JSON object per image (JSON Lines), with ``image``, ``status`` ("ok", "board not visible:
...", "colour lost: ..."), the markers used, the size the photograph was read at and the
calibration files used, and the game's own fields (docs/vision.md lists them all):

* carrousel: the 7 spaces (a horse colour, "empty" or "unknown"), each space's confidence or
  the reason it abstained, each player's card (three colours in reading order, or "unknown");
* monsieur-carrousel: ``carousel_angle_deg`` (from the roof marker, or null), ``pointed_seat``
  (0-11, "ambiguous" or "unknown"), ``seats`` (12 of "kid", "empty", "unknown"), each seat's
  weather ``zones``, the ``die``'s top colour (or "unknown"), ``roof`` and ``die_status`` (why
  the roof marker or the die was not read);
* carrossel: ``board_angle_deg``, ``facing`` (the sector letter facing each booth: south, east,
  north, west, or "ambiguous" / "unknown") and the 48 ``slots`` ({"animal", "colour",
  "standee"}, "empty" or "unknown").

Every object has the same fields whatever the status: when the board is not read, every
reading is "unknown" with the status as its reason. An image that cannot be read gives the
status "error: ..." and the exit status 1; the other images are still read.

A photograph larger than the readers' 640 x 480 working frame (a 2592 x 1944 or 4056 x 3040
camera photo) is brought down to it first (:func:`companion.vision.images.to_reader_size`):
the readers' pixel constants are those of that frame. Intrinsics (``camera.json``) are used
only on photographs of the size they were calibrated at (scaled with the photograph).

Examples:
  companion read carrousel photo.jpg
  companion read carrousel photo.jpg --overlay photo_read.png
  companion read carrousel shots/*.jpg --overlay annotated/
  companion read monsieur-carrousel table.jpg --overlay table_read.png
  companion read carrossel board.jpg
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CalibrationUse", "complete_monsieur", "configure", "given_as", "read_each", "run", "too_small"]

#: A lens from this camera removes distortion, so the homography through its undistorted
#: corners fits at least as well as through the raw ones, but for the corners' noise (a few
#: hundredths of a pixel between the two fits on the photographs here). A fit this many times
#: worse with the lens says the lens is another camera's (the OpenCV chessboard camera's
#: camera.json doubles the residual on the Carrousel photographs: 1.46 against 0.73 px).
LENS_WORSE_FACTOR = 1.25

READERS = ("carrousel", "monsieur-carrousel", "carrossel")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion read``."""
    parser.add_argument("game", choices=READERS, type=_reader_game,
                        help="the game whose table is photographed (Carnival's dice: companion dice)")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photographs (JPEG, PNG, ...)")
    parser.add_argument("--overlay", metavar="OUT",
                        help="write the image annotated with regions, labels and confidences: a file "
                             "(.png, .jpg, ...) for one image; with several images (or a folder, or a path ending in /) a "
                             "folder, made if missing, that gets one NAME_overlay.png per image (an image "
                             "file name is refused then)")
    parser.add_argument("--geometry", metavar="FILE",
                        help="board geometry (default: for carrousel [camera] geometry, else carrousel-board.json; "
                             "monsieur-board.toml for monsieur-carrousel; carrossel-board.toml for carrossel: "
                             "of the calibration folder, else the shipped one)")
    parser.add_argument("--colours", metavar="FILE",
                        help="carrousel only: reference colours (default: [camera] colours, else "
                             "carrousel-colours.json of the calibration folder, else the shipped one)")
    parser.add_argument("--intrinsics", metavar="FILE",
                        help="camera intrinsics from `companion calibrate intrinsics` (default: [camera] "
                             "intrinsics, else camera.json of the calibration folder when there is one, else "
                             "none: the lens is treated as distortion-free)")


def _reader_game(text: str) -> str:
    """The ``game`` argument; Carnival, whose camera reads only the dice, is sent to
    ``companion dice`` in one line (argparse's own check refuses any other unknown name).

    Raises:
        argparse.ArgumentTypeError: ``carnival``.
    """
    if text == "carnival":
        raise argparse.ArgumentTypeError("carnival has no table reader here: its camera reads the dice; "
                                         "use companion dice IMAGE (see companion dice --help)")
    return text


def run(args: argparse.Namespace) -> int:
    """Read every image; returns 0, or 1 when an image could not be read."""
    from companion.calibration_dir import explicit_or_calibration
    from companion.cli import UsageError
    from companion.config import load
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
        geometry_file = explicit_or_calibration(args.geometry or cam["geometry"], "carrousel-board.json", config)
        colours_file = explicit_or_calibration(args.colours or cam["colours"], "carrousel-colours.json", config)
        geometry = CarrouselGeometry.load(geometry_file)
        registrar = Registrar(geometry.markers, geometry.dictionary)
        use = CalibrationUse.build(
            {"geometry": (geometry_file, given_as(args.geometry, "--geometry", cam["geometry"], "[camera] geometry")),
             "colours": (colours_file, given_as(args.colours, "--colours", cam["colours"], "[camera] colours"))},
            args.intrinsics, cam["intrinsics"], config, registrar)
        reader = CarrouselReader(geometry, load_references(colours_file), registrar)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return read_each(args.images, args.overlay, reader.read, lambda reading: reading.to_json(),
                     lambda frame, reading: draw_overlay(frame, reading, geometry),
                     complete=lambda d: _complete_carrousel(d, geometry), calibration=use)


#: Pixels a cell of a marker needs, at least, for the detector to tell black from white: two (a
#: cell one pixel wide blurs into its neighbours at any offset; sampling needs two per period).
PX_PER_MARKER_CELL = 2


def too_small(frame_wh: tuple[int, int], registrar: Any) -> str | None:
    """Why a frame the reader could not read is too small for it, or None.

    The reader needs every marker at least ``PX_PER_MARKER_CELL x (bits + 2)`` pixels across
    (a 4x4 marker and its black border are 6 cells: 12 px). The frame is too small when

    * even with the markers' layout filling it (the closest the board can be with every marker
      in view) a marker would be smaller than that: the geometry's marker size (mm) over the
      layout's extent (mm) times the frame's side; or
    * the largest marker of the layout found in it is smaller than that (the frame's scale
      measured).

    Args:
        frame_wh: the frame's ``(width, height)`` in pixels, as read.
        registrar: the reader's :class:`~companion.vision.registration.Registrar` after reading
            the frame (``layout``: id -> ``4 x 2`` mm corners; ``found``: id -> ``4 x 2`` pixel
            corners; ``dictionary_name``).

    Returns:
        ``"image too small: W x H px; ...: at least W' x H' px"`` (the least size of the same
        shape the markers need), or None.
    """
    import math

    import numpy as np

    from companion.vision.registration import dictionary

    layout = {i: np.asarray(c, np.float64).reshape(4, 2) for i, c in getattr(registrar, "layout", {}).items()}
    w, h = (int(v) for v in frame_wh)
    if not layout or w < 1 or h < 1:
        return None
    bits = int(dictionary(registrar.dictionary_name).markerSize)
    need = PX_PER_MARKER_CELL * (bits + 2)

    def side(c: np.ndarray) -> float:
        return float(np.mean(np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1)))

    marker_mm = min(side(c) for c in layout.values())
    corners = np.vstack(list(layout.values()))
    ew, eh = np.ptp(corners[:, 0]), np.ptp(corners[:, 1])
    scale = max(min(w / ew, h / eh), min(w / eh, h / ew))  # px per mm, the layout filling the frame
    found = [side(np.asarray(c, np.float64).reshape(4, 2)) for i, c in getattr(registrar, "found", {}).items()
             if i in layout]
    if scale * marker_mm < need:
        px, how = scale * marker_mm, "would be at most"
    elif found and max(found) < need:
        px, how = max(found), "are"
    else:
        return None
    factor = need / max(px, 1e-9)
    return (f"image too small: {w} x {h} px; its {marker_mm:g} mm markers {how} {px:.1f} px across and the "
            f"reader needs {need} px ({PX_PER_MARKER_CELL} px a cell of a {bits}x{bits} marker and its border): "
            f"at least {math.ceil(w * factor)} x {math.ceil(h * factor)} px")


def _with_status(reading: Any, status: str) -> Any:
    """``reading`` (a reader's dataclass) with another ``status``, or as it is when it has none."""
    import dataclasses

    if dataclasses.is_dataclass(reading) and any(f.name == "status" for f in dataclasses.fields(reading)):
        return dataclasses.replace(reading, status=status)
    return reading


def given_as(option: Any, option_name: str, key: Any, key_name: str) -> str | None:
    """The option or configuration key that named a calibration file (the option first), or
    None when neither did (the file comes from the calibration folders)."""
    if option not in (None, ""):
        return option_name
    if key not in (None, ""):
        return key_name
    return None


class CalibrationUse:
    """The calibration files one ``companion read GAME`` reads with, said in every image's
    ``calibration`` field, and the lens each photograph is read with.

    Intrinsics (``camera.json``) describe one camera at one image size
    (:class:`companion.vision.calibration.Intrinsics` ``image_size``): on a photograph of another
    size they are not used (one warning line on standard error per size, and the field says
    why); on a photograph of their size brought down to the readers' working frame, the camera
    matrix is scaled with it (fx, cx by the width's factor; fy, cy by the height's; the
    distortion coefficients are unitless and kept). When the lens makes the markers' fit worse
    than no lens (:data:`LENS_WORSE_FACTOR`), a warning says that ``camera.json`` is probably
    another camera's.

    Args:
        files: name (``"geometry"``, ...) -> ``{"file": path, "from": where}``
            (:func:`companion.calibration_dir.where_from`).
        registrar: the reader's :class:`~companion.vision.registration.Registrar`, whose
            ``lens`` is set for each photograph, or None (a reader without a lens).
        intrinsics: the loaded intrinsics, or None.
        intrinsics_from: ``{"file": ..., "from": ...}`` of ``camera.json``, or None.
        warn: where warnings go (one line each; default standard error).
    """

    def __init__(self, files: Mapping[str, Mapping[str, str]], registrar: Any = None, intrinsics: Any = None,
                 intrinsics_from: Mapping[str, str] | None = None, warn: Callable[[str], None] | None = None):
        self.files = {k: dict(v) for k, v in files.items()}
        self.registrar = registrar
        self.intrinsics = intrinsics
        self.intrinsics_from = dict(intrinsics_from) if intrinsics_from else None
        self._warn = warn or (lambda line: print(f"companion read: warning: {line}", file=sys.stderr))
        self._warned: set[str] = set()
        self._plain: Any = None
        self._entry: dict[str, Any] | None = None

    @classmethod
    def build(cls, files: Mapping[str, tuple[Any, str | None]], intrinsics_option: Any, intrinsics_key: Any,
              config: Any, registrar: Any) -> CalibrationUse:
        """From the files a reader loaded (name -> ``(path, given_as)``) and the
        ``--intrinsics`` option / ``[camera] intrinsics`` key (else ``camera.json`` of the
        calibration folder when there is one).

        Raises:
            ValueError: an unreadable ``camera.json`` (naming it).
        """
        import json as _json

        from companion.calibration_dir import optional_calibration, where_from
        from companion.vision.calibration import Intrinsics

        path = optional_calibration(intrinsics_option or intrinsics_key, "camera.json", config)
        intrinsics = None
        if path is not None:
            try:
                intrinsics = Intrinsics.from_json(_json.loads(Path(path).read_text(encoding="utf-8")), str(path))
            except FileNotFoundError:
                raise ValueError(f"{path}: no such file") from None
            except _json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
        return cls({name: where_from(p, given) for name, (p, given) in files.items()}, registrar,
                   intrinsics, where_from(path, given_as(intrinsics_option, "--intrinsics", intrinsics_key,
                                                         "[camera] intrinsics")) if path else None)

    def warn_once(self, line: str) -> None:
        """One warning line, the first time only."""
        if line not in self._warned:
            self._warned.add(line)
            self._warn(line)

    def prepare(self, photo_wh: tuple[int, int] | None, read_wh: tuple[int, int] | None) -> None:
        """Set the registrar's lens for a photograph of ``photo_wh`` pixels read at
        ``read_wh`` (both ``(width, height)``; None for an image that could not be decoded)."""
        import numpy as np

        intr = self.intrinsics
        if intr is None or self.registrar is None or photo_wh is None or read_wh is None:
            self._entry = None
            return
        entry: dict[str, Any] = dict(self.intrinsics_from or {})
        w, h = intr.image_size
        if tuple(photo_wh) != (w, h):
            lens = None
            entry.update(used=False, why=f"made at {w} x {h} pixels, this photograph is {photo_wh[0]} x {photo_wh[1]}")
            self.warn_once(f"{entry['file']}: intrinsics made at {w} x {h} pixels, not used on {photo_wh[0]} x "
                           f"{photo_wh[1]} photographs (calibrate intrinsics with views at the camera's size)")
        else:
            scale = np.diag([read_wh[0] / w, read_wh[1] / h, 1.0])
            lens = (scale @ np.asarray(intr.camera_matrix, np.float64), np.asarray(intr.dist_coeffs, np.float64))
            entry["used"] = True
        old = self.registrar.lens
        if (old is None) != (lens is None) or (lens is not None and not np.array_equal(old[0], lens[0])):
            self.registrar.lens = lens
            self.registrar.current = None  # a registration of another lens is not tracked on
        self._entry = entry

    def check_fit(self, frame: Any) -> None:
        """After a read of ``frame`` with the lens: the markers' fit without it; a warning when
        the lens makes it :data:`LENS_WORSE_FACTOR` times worse or more."""
        reg = self.registrar.current if self.registrar is not None else None
        if self._entry is None or not self._entry.get("used") or reg is None:
            return
        from companion.vision.registration import Registrar

        if self._plain is None:
            r = self.registrar
            self._plain = Registrar(r.layout, r.dictionary_name, min_markers=r.min_markers,
                                    max_residual_px=float("inf"), min_spread=r.min_spread)
        plain = self._plain.register(frame, found=self.registrar.found)
        if plain is None:
            return
        with_lens, without = float(reg.residual_px), float(plain.residual_px)
        self._entry["residual_px_without"] = round(without, 2)
        if with_lens > LENS_WORSE_FACTOR * max(without, 0.05):
            line = (f"{self._entry['file']}: the markers fit worse with these intrinsics than with none "
                    f"(residual {with_lens:.2f} px against {without:.2f} px): are they another camera's? "
                    "(calibrate intrinsics with this camera, or remove camera.json)")
            self._entry["warning"] = line
            self.warn_once(line)

    def to_json(self) -> dict[str, Any]:
        """The ``calibration`` field of the photograph last prepared: every file
        (``{"file", "from"}``) and ``intrinsics`` (null when none is used: the lens is taken as
        distortion-free; else with ``used`` and, when not used, ``why``)."""
        return {**self.files, "intrinsics": self._entry}


def _ordered(d: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """``d`` with ``keys`` first in that order (every object of one game in one order)."""
    return {**{k: d[k] for k in keys if k in d}, **{k: v for k, v in d.items() if k not in keys}}


def _unknown_region(why: str) -> dict[str, Any]:
    return {"label": "unknown", "confidence": 0.0, "reason": why}


def _complete_carrousel(d: dict[str, Any], geometry: Any) -> dict[str, Any]:
    """The Carrousel reading's fields a reading without a board lacks: every space's and
    card's details ``unknown`` with the status as their reason, no markers used."""
    why = d.get("status", "")
    d.setdefault("spaces", ["unknown"] * len(geometry.space_centres_mm))
    d.setdefault("space_details", [_unknown_region(why) for _ in d["spaces"]])
    d.setdefault("cards", {slot.seat: {"triple": "unknown", "discs": [_unknown_region(why) for _ in slot.disc_centres_mm],
                                       "reason": why} for slot in geometry.cards})
    d.setdefault("markers", [])
    d.setdefault("residual_px", None)
    return _ordered(d, ("image", "status", "spaces", "space_details", "cards", "markers", "residual_px"))


def complete_monsieur(d: dict[str, Any], geometry: Any) -> dict[str, Any]:
    """The Monsieur Carrousel reading's fields a reading without a board lacks (``fields``
    the JSON object, completed in place and returned; ``geometry`` a
    :class:`~companion.vision.monsieur_geometry.MonsieurGeometry`)."""
    n = geometry.n_seats
    d.setdefault("carousel_angle_deg", None)
    d.setdefault("pointed_seat", "unknown")
    d.setdefault("seats", ["unknown"] * n)
    d.setdefault("zones", ["unknown"] * n)
    d.setdefault("die", "unknown")
    # why the roof marker or the die was not read: "" when it was, the status when nothing was
    why = "" if d.get("status", "").startswith("ok") else d.get("status", "")
    d.setdefault("roof", why if d["carousel_angle_deg"] is None else "")
    d.setdefault("die_status", why if d["die"] == "unknown" else "")
    d.setdefault("markers", [])
    return _ordered(d, ("image", "status", "carousel_angle_deg", "pointed_seat", "seats", "zones", "die", "roof",
                        "die_status", "markers"))


def _complete_carrossel(d: dict[str, Any], geometry: Any) -> dict[str, Any]:
    """The Carrossel reading's fields a reading without a board lacks: every slot unknown,
    each with the status as the reason when the board was not read."""
    why = d.get("status", "")
    d.setdefault("board_angle_deg", None)
    d.setdefault("facing", {booth: "unknown" for booth in ("south", "east", "north", "west")})
    d.setdefault("slots", {name: "unknown" for name in geometry.cell_names})
    d.setdefault("unknown_because", {name: why for name, v in d["slots"].items() if v == "unknown"}
                 if not why.startswith("ok") else {})
    d.setdefault("markers", [])
    d.setdefault("residual_px", None)
    return _ordered(d, ("image", "status", "board_angle_deg", "facing", "slots", "unknown_because", "markers",
                        "residual_px"))


def read_each(images: Sequence[str], overlay: str | None, read: Callable[[Any], Any],
              describe: Callable[[Any], dict[str, Any]], draw: Callable[[Any, Any], Any], *,
              complete: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
              calibration: CalibrationUse | None = None) -> int:
    """The loop every ``companion read GAME`` shares: each image read (its size checked from the
    header before decoding) and brought to the readers' working size
    (:func:`companion.vision.images.to_reader_size`), one JSON object printed per image, its
    overlay drawn (on the frame as read).

    Args:
        images: image paths, in order.
        overlay: an output image for one image, or a folder for several or for one (an
            existing folder, or a path ending in ``/``, made if missing: ``STEM_overlay.png``),
            or None.
        read: ``read(frame) -> reading``, the frame ``H x W x 3 uint8, BGR``.
        describe: ``describe(reading) -> dict``, the JSON fields after ``image``.
        draw: ``draw(frame, reading) -> H x W x 3 uint8`` image, the overlay.
        complete: ``complete(fields) -> fields``: adds the fields a reading without a board
            (or an image that cannot be read) lacks, so that every object has the same fields.
        calibration: the calibration files used (the ``calibration`` field) and the lens set
            for each photograph's size, or None.

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
        to_reader_size,
        write_image,
    )

    def fields(d: dict[str, Any], read_wh: list[int] | None) -> dict[str, Any]:
        if complete is not None:
            d = complete(d)
        d["read_size_px"] = read_wh
        if calibration is not None:
            d["calibration"] = calibration.to_json()
        return d

    overlay_dir = None
    if overlay is not None and not overlay.strip():
        raise UsageError("--overlay: empty; give an image file to write (one image) or a folder (several)")
    if overlay and len(images) > 1 and not Path(overlay).is_dir():
        if Path(overlay).exists():
            raise UsageError(f"--overlay {overlay}: a file; {len(images)} images write one NAME_overlay.png "
                             "each into a folder: give a folder")
        if Path(overlay).suffix.lower() in (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"):
            raise UsageError(f"--overlay {overlay}: an image file name, but {len(images)} images write one "
                             "NAME_overlay.png each into a folder: give a folder (or one image)")
    if overlay and (len(images) > 1 or Path(overlay).is_dir() or overlay.endswith("/")):  # "new/": a folder
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
            if calibration is not None:
                calibration.prepare(None, None)  # no photograph, no lens
            print(json.dumps(fields({"image": name, "status": f"error: {why}"}, None)))
            print(f"companion read: {name}: {why}", file=sys.stderr)
            failed += 1
            continue
        photo_wh = (frame.shape[1], frame.shape[0])
        frame, _scale = to_reader_size(frame)
        read_wh = [frame.shape[1], frame.shape[0]]
        if calibration is not None:
            calibration.prepare(photo_wh, (read_wh[0], read_wh[1]))
        reading = read(frame)
        if calibration is not None:
            calibration.check_fit(frame)
        d = {"image": name, **describe(reading)}
        if calibration is not None and calibration.registrar is not None and \
                not str(d.get("status", "ok")).startswith("ok"):
            small = too_small((frame.shape[1], frame.shape[0]), calibration.registrar)
            if small:
                d["status"] = small
                reading = _with_status(reading, small)  # the overlay's band says it too
        print(json.dumps(fields(d, read_wh)), flush=True)
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

    from companion.calibration_dir import calibration_path, explicit_or_calibration
    from companion.cli import UsageError
    from companion.vision.carrossel import (
        CarrosselGeometry,
        CarrosselReader,
        LetterTemplates,
        draw_overlay,
    )
    from companion.vision.registration import Registrar

    try:
        geometry_file = explicit_or_calibration(args.geometry, "carrossel-board.toml", config)
        letters_file = calibration_path("carrossel-letters.json", config)
        geometry = CarrosselGeometry.load(geometry_file)
        registrar = Registrar(geometry.markers, geometry.dictionary, layout_only=True)
        use = CalibrationUse.build({"geometry": (geometry_file, given_as(args.geometry, "--geometry", None, "")),
                                    "letters": (letters_file, None)},
                                   args.intrinsics, config["camera"]["intrinsics"], config, registrar)
        reader = CarrosselReader(geometry, LetterTemplates.load(letters_file, config), registrar=registrar)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return read_each(args.images, args.overlay, reader.read, lambda reading: reading.to_json(geometry.cell_names),
                     lambda frame, reading: draw_overlay(frame, reading, geometry),
                     complete=lambda d: _complete_carrossel(d, geometry), calibration=use)
