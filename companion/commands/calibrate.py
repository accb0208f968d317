"""Calibrate the camera reader; every result is a human-readable file in your calibration
folder (``[calibration] dir``, default ~/.local/share/carousel-companion/calibration/), which
``companion read``, ``run`` and ``doctor`` read before the defaults shipped in the package. The
shipped defaults are never written.

Subcommands:
  markers      the printable sheet of the table's ArUco markers at true size, with a mm ruler
  mat          the printable Carrousel mat at true size (spaces, marker places, card places)
  intrinsics   the camera's intrinsics from photos of a chessboard
  geometry     fit the board's space positions from a photo of the table
  colours      capture the horses' and cards' reference colours under the table's own light
  encoder      the shaft encoder's counts per turn of the rotating part (turn it N times)
  tray         the dice tray's geometry in the dice camera's frame (Carnival)

Examples:
  companion calibrate markers
  companion calibrate mat --out mat.pdf --paper a4
  companion calibrate intrinsics shots/left*.jpg --pattern 9x6 --square-mm 25
  companion calibrate geometry table.jpg
  companion calibrate colours table1.jpg --spaces .gbyrk. --card south=red,blue,green
  companion calibrate colours photo.jpg --truth photo.json
  companion calibrate encoder --turns 10
  companion calibrate tray tray.jpg --corners "101,96;538,88;553,402;92,410" --size-mm 220x160
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["configure", "run", "write_colours"]

IN_DIR = "in the calibration folder, [calibration] dir"
GEOMETRY_HELP = "board geometry (default carrousel-board.json of the calibration folder, else the shipped one)"


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion calibrate``."""
    sub = parser.add_subparsers(dest="what", metavar="WHAT")
    sub.required = True
    m = sub.add_parser("markers", help="printable marker sheet (PDF, or PNG with the print resolution)")
    m.add_argument("--out", help=f"a .pdf or .png file (default markers.pdf {IN_DIR})")
    m.add_argument("--geometry", metavar="FILE", help=GEOMETRY_HELP)
    m.add_argument("--dpi", type=int, default=300, help="PNG print resolution (default %(default)s)")
    mat = sub.add_parser("mat", help="printable Carrousel mat at true size (PDF, tiled on A4/Letter or one page)")
    mat.add_argument("--out", default="mat.pdf", help="a .pdf file (default %(default)s)")
    mat.add_argument("--geometry", metavar="FILE", help=GEOMETRY_HELP)
    mat.add_argument("--paper", default="a4", help="a4, letter, a3, tabloid, a2, a1 or fit (one page of the "
                                                    "mat's size, for a large-format printer); default %(default)s")
    mat.add_argument("--print-markers", action="store_true", help="print the markers in their places "
                                                                  "(one page, or no seam across a marker)")
    i = sub.add_parser("intrinsics", help="camera intrinsics from chessboard photos")
    i.add_argument("images", nargs="+", metavar="IMAGE")
    i.add_argument("--pattern", default="9x6", help="inner corners per row x per column (default %(default)s)")
    i.add_argument("--square-mm", type=float, default=25.0, help="side of a square in mm (default %(default)s)")
    i.add_argument("--out", help=f"default camera.json {IN_DIR}")
    g = sub.add_parser("geometry", help="fit the spaces' positions from a photo of the table")
    g.add_argument("image", metavar="IMAGE")
    g.add_argument("--geometry", metavar="FILE", help="the nominal " + GEOMETRY_HELP)
    g.add_argument("--out", help=f"where to write the fitted geometry (default: over --geometry's file, or "
                                 f"carrousel-board.json {IN_DIR})")
    c = sub.add_parser("colours", help="reference colours from photos whose contents are known")
    c.add_argument("images", nargs="+", metavar="IMAGE")
    c.add_argument("--truth", nargs="*", metavar="JSON", default=[],
                   help="per photo, a truth file (space_list, occluded, cards) as in shared/data/carrousel-table")
    c.add_argument("--spaces", help="what stands on spaces 0-6 in every photo, e.g. .gbyrk. "
                                    "(k black, y yellow, b blue, g green, r red, . empty)")
    c.add_argument("--card", action="append", default=[], metavar="SEAT=C1,C2,C3",
                   help="a card in every photo, e.g. south=red,blue,green (repeatable)")
    c.add_argument("--geometry", metavar="FILE", help=GEOMETRY_HELP)
    c.add_argument("--out", help=f"default carrousel-colours.json {IN_DIR}")
    from companion.commands import calibrate_encoder

    e = sub.add_parser("encoder", help="measure the shaft encoder's counts per revolution (turn it N times)",
                       description=(calibrate_encoder.__doc__ or "").strip(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    calibrate_encoder.configure(e)
    from companion.commands import calibrate_tray

    tr = sub.add_parser("tray", help="the dice tray's geometry in the dice camera's frame (dice-tray.toml)",
                        description=(calibrate_tray.__doc__ or "").strip(),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    calibrate_tray.configure(tr)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _config(args: argparse.Namespace):
    from companion.config import load

    return load(getattr(args, "config", None))


def _geometry_file(args: argparse.Namespace) -> Path:
    """--geometry, else the calibration folder's board geometry, else the shipped one."""
    from companion.calibration_dir import explicit_or_calibration

    return explicit_or_calibration(args.geometry, "carrousel-board.json", _config(args))


def _out(args: argparse.Namespace, name: str) -> Path:
    """--out (refused inside the shipped defaults), else ``name`` in the calibration folder."""
    from companion.calibration_dir import check_writable, writable_path

    if getattr(args, "out", None):
        return check_writable(args.out)
    return writable_path(name, _config(args))


def run(args: argparse.Namespace) -> int:
    """Run one calibration step; prints progress on standard error and the file written."""
    from companion.cli import UsageError

    if args.what == "encoder":
        from companion.commands import calibrate_encoder

        return calibrate_encoder.run(args)
    if args.what == "tray":
        from companion.commands import calibrate_tray

        try:
            return calibrate_tray.run(args)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    try:
        return {"markers": _markers, "mat": _mat, "intrinsics": _intrinsics, "geometry": _geometry, "colours": _colours}[args.what](args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _write_bytes(out: Path, data: bytes) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return out


def _written(args: argparse.Namespace, out: Path, write: Callable[[], Any]) -> Any:
    """``write()``, the file it writes being ``out``; a file that cannot be written is one line
    naming ``--out`` (when given) and the path, and what is wrong.

    Raises:
        companion.cli.UsageError: ``write`` raised an OSError (a folder that cannot be made, no
            permission, a read-only file system).
    """
    from companion.cli import UsageError

    try:
        return write()
    except OSError as exc:
        said = f"--out {args.out}" if getattr(args, "out", None) else str(out)
        where = f"{exc.filename}: " if exc.filename and Path(exc.filename) != Path(out) else ""
        raise UsageError(f"{said}: cannot write the file ({where}{exc.strerror or exc})") from None


def _markers(args: argparse.Namespace) -> int:
    from companion.vision.calibration import marker_sheet_pdf, marker_sheet_png
    from companion.vision.carrousel import CarrouselGeometry

    geometry = _geometry_file(args)
    geo = CarrouselGeometry.load(geometry)
    ids = sorted(geo.markers)
    side = float(abs(geo.markers[ids[0]][1][0] - geo.markers[ids[0]][0][0]))
    out = _out(args, "markers.pdf")
    if out.suffix.lower() == ".pdf":
        from companion.vision.mat import load_mat_layout, marker_places

        data = marker_sheet_pdf(ids, geo.dictionary, side, "Carousel Companion: Carrousel table markers",
                                places=marker_places(load_mat_layout(geometry)))
    elif out.suffix.lower() == ".png":
        data = marker_sheet_png(ids, geo.dictionary, side, args.dpi)
    else:
        raise ValueError(f"{out}: expected a .pdf or .png file name")
    _written(args, out, lambda: _write_bytes(out, data))
    _say(f"markers {', '.join(map(str, ids))} ({geo.dictionary}, {side:g} mm) written; "
         f"print at 100 % and check the 150 mm ruler")
    print(out)
    return 0


def _mat(args: argparse.Namespace) -> int:
    from companion.vision.mat import load_mat_layout, mat_pages, mat_pdf

    from companion.calibration_dir import check_writable

    out = check_writable(args.out)
    if out.suffix.lower() != ".pdf":
        raise ValueError(f"{out}: expected a .pdf file name")
    layout = load_mat_layout(_geometry_file(args))
    data = mat_pdf(layout, args.paper, print_markers=args.print_markers)
    pages = mat_pages(layout.mat_mm, args.paper)
    _written(args, out, lambda: _write_bytes(out, data))
    _say(f"Carrousel mat {layout.mat_mm:g} mm square on {len(pages)} {args.paper} page(s) "
         f"({pages[0].rows} x {pages[0].cols}); print at 100 % and check both 100 mm rulers")
    print(out)
    return 0


def _intrinsics(args: argparse.Namespace) -> int:
    from companion.vision.calibration import calibrate_intrinsics, write_json

    try:
        cols, rows = (int(v) for v in args.pattern.lower().split("x"))
    except ValueError:
        raise ValueError(f"--pattern {args.pattern!r}: expected inner corners as COLSxROWS, e.g. 9x6") from None
    for p in args.images:
        if not Path(p).is_file():
            raise ValueError(f"{p}: no such file")
    out = _out(args, "camera.json")
    result = calibrate_intrinsics(args.images, (cols, rows), args.square_mm, progress=_say)
    print(_written(args, out, lambda: write_json(out, result.to_json())))
    return 0


def _geometry(args: argparse.Namespace) -> int:
    from companion.calibration_dir import check_writable
    from companion.vision.calibration import fit_space_centres, write_json
    from companion.vision.colour import load_json
    from companion.vision.registration import Registrar

    src = _geometry_file(args)
    # the fitted geometry goes over the user's own file, never over the shipped default
    out = check_writable(args.out) if args.out else (
        check_writable(src) if args.geometry else _out(args, "carrousel-board.json"))
    doc = load_json(src)
    from companion.vision.images import read_image, to_reader_size

    image = read_image(args.image)  # ImageError (a ValueError): one line; a pixel limit before decoding
    image, _ = to_reader_size(image)  # the readers' 640 x 480 frame, as companion read sees it
    try:
        markers = {int(k): v["corners_mm"] for k, v in doc["markers"].items()}
        centres = [s["centre_mm"] for s in doc["spaces"]]
        radius = float(doc["spaces"][0]["diameter_mm"]) / 2 - float(doc.get("space_outline_width_mm", 3.0)) / 2
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{src}: markers or spaces missing or ill-formed ({exc})") from None
    _say(f"registering {args.image} ...")
    import numpy as np

    fitted, contrast = fit_space_centres(image, Registrar(markers, doc.get("marker_dictionary", "DICT_4X4_50")),
                                         np.array(centres, float), radius)
    for k, (old, new, con) in enumerate(zip(centres, fitted, contrast)):
        seen = con >= 15
        _say(f"space {k}: nominal ({old[0]:.1f}, {old[1]:.1f}) -> fitted ({new[0]:.1f}, {new[1]:.1f}) mm, "
             f"outline contrast {con:.0f}{'' if seen else ' (outline not seen: kept nominal)'}")
        if seen:
            doc["spaces"][k]["centre_mm"] = [round(float(new[0]), 2), round(float(new[1]), 2)]
    doc["_fitted_from"] = str(args.image)
    print(_written(args, out, lambda: write_json(out, doc)))
    return 0


def _colours(args: argparse.Namespace) -> int:
    from companion.games.carrousel import COLOURS, Position
    from companion.vision.carrousel import SEATS

    if args.truth and len(args.truth) != len(args.images):
        raise ValueError(f"--truth: {len(args.truth)} files for {len(args.images)} images")
    if not args.truth and not args.spaces:
        raise ValueError("say what the photos show: --spaces (and --card) or --truth")
    truths = []
    for n, img in enumerate(args.images):
        if args.truth:
            t = json.loads(Path(args.truth[n]).read_text())
            try:
                spaces = ["unknown" if k in t.get("occluded", []) else v for k, v in enumerate(t["space_list"])]
                cards = {c["position"]: c["triple"] for c in t.get("cards", [])
                         if c.get("visibility", {}).get("visible_fraction", 1.0) >= 1.0}
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{args.truth[n]}: expected space_list and cards ({exc})") from None
        else:
            try:
                spaces = list(Position.from_text(args.spaces).spaces)
            except ValueError as exc:
                raise ValueError(f"--spaces {args.spaces!r}: {exc}") from None
            cards = {}
            for item in args.card:
                seat, _, colours = item.partition("=")
                if seat not in SEATS or len(colours.split(",")) != 3 or not set(colours.split(",")) <= set(COLOURS):
                    raise ValueError(f"--card {item!r}: expected SEAT=C1,C2,C3 with SEAT one of {', '.join(SEATS)} "
                                     f"and the colours among {', '.join(COLOURS)}")
                cards[seat] = colours.split(",")
        truths.append({"spaces": spaces, "cards": cards})
    out = _out(args, "carrousel-colours.json")
    frames = []
    for img in args.images:
        from companion.vision.images import read_image, to_reader_size

        f = read_image(img)  # ImageError (a ValueError): one line; a pixel limit before decoding
        frames.append(to_reader_size(f)[0])  # the readers' 640 x 480 frame, as companion read sees it
        _say(f"reading {img} ...")
    print(_written(args, out, lambda: write_colours(frames, truths, _geometry_file(args), out,
                                                    [Path(i).name for i in args.images], _say)))
    return 0


def write_colours(frames: list, truths: list[dict], geometry: str | Path, out: str | Path,
                  sources: list[str], say=_say) -> Path:
    """Measure the reference colours in ``frames`` and write them as a colours file (what
    ``companion calibrate colours`` does after reading its photos; the web page's set-up
    captures through it too).

    Args:
        frames: ``H x W x 3 uint8`` BGR photos of the table under its own light.
        truths: per photo, ``{"spaces": [7 labels, "unknown" to skip], "cards": {seat: [3 colours]}}``.
        geometry: the board geometry file.
        out: the colours file to write (``carrousel-colours.json`` of the calibration folder).
        sources: where the photos came from (named in the file's comment).
        say: ``say(line)`` for each colour measured and each warning.

    Returns:
        The file written.

    Raises:
        ValueError: a photo where the board is not visible, or colours that could not all be
            read (the message names the file, what is missing and how to show it).
    """
    import numpy as np

    from companion.vision.calibration import close_reference_pairs, write_json
    from companion.vision.carrousel import CarrouselGeometry, CarrouselReader, reference_colours_from
    from companion.vision.colour import ColourReferences

    out = Path(out)
    placeholder = ColourReferences(("a", "b"), np.zeros((2, 3)))
    reader = CarrouselReader(CarrouselGeometry.load(geometry), (placeholder, placeholder))
    refs = reference_colours_from(frames, truths, reader)
    for kind in ("horses", "cards"):
        for colour, lab in refs[kind].items():
            say(f"{kind[:-1]} {colour}: L* {lab[0]:.1f} a* {lab[1]:.1f} b* {lab[2]:.1f}")
    problems = _unreadable(refs, truths)
    if problems:
        raise ValueError(f"{out} not written: it could not read every colour: {'; '.join(problems)}")
    for kind, classifier in (("horse", reader.space_classifier), ("card", reader.card_classifier)):
        for pair in close_reference_pairs(refs[kind + "s"], classifier):
            say(f"warning: {kind} colours {pair}: under this light the reader will often answer unknown "
                f"for them; light the table brighter and more evenly (no coloured lamp) and calibrate again")
    doc = {"_comment": "Reference colours in CIE L*a*b* (D65) seen against the white reference: horses "
                       "against the plain board, card discs against the card's white. Captured by "
                       f"`companion calibrate colours` from {', '.join(sources)}.",
           **refs}
    return write_json(out, doc)


def _unreadable(refs: dict, truths: list[dict]) -> list[str]:
    """What a colours file from ``refs`` could not read: one phrase per kind, naming the
    colours never seen and how to show them (empty when every colour has a reference)."""
    from companion.games.carrousel import COLOURS
    from companion.vision.calibration import missing_colours

    out = []
    horses = missing_colours(refs["horses"], COLOURS)
    if horses:
        out.append(f"no photo shows the {', '.join(horses)} horse{'s' if len(horses) > 1 else ''} in plain view "
                   f"(put every horse on a space in at least one photo, and say where: --spaces or --truth)")
    cards = missing_colours(refs["cards"], COLOURS)
    if cards and not any(t["cards"] for t in truths):
        out.append("no card at all (lay cards in front of the players and give them: --card SEAT=C1,C2,C3, "
                   "or cards in the --truth files); every card colour is missing: " + ", ".join(cards))
    elif cards:
        out.append(f"no card shows {', '.join(cards)} in plain view (add a card with "
                   f"{'this colour' if len(cards) == 1 else 'these colours'}: --card SEAT=C1,C2,C3 or --truth)")
    return out
