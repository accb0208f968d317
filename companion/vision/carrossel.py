"""The Carrossel reader: the round board's angle, the sector facing each ticket booth, and each
of the 48 slots' tile (animal and player colour), empty or unknown, with its client standee.

Geometry is data (``calibration/carrossel-board.toml``, millimetres, each value with its
source or assumption); the animal letters' look is data too (``calibration/carrossel-letters.json``,
made by :func:`letter_templates_from` from photographs of a known table).

How a frame is read:

1. **Registration**: the four fixed ArUco markers (``DICT_4X4_50``) give the homography from
   the base board (z = 0.12 mm) to the image (:class:`~companion.vision.registration.Registrar`).
2. **The board's angle**: the base board around the axis is rectified through the homography;
   the centre marker (id 14, on the round board's top at z = 4.12 mm) is found there by its
   printed pattern (:meth:`CarrosselReader.centre_marker_match`): its edges give the angle
   modulo 90 degrees, its bits matched at the four right angles the quarter, the print's match
   turned within a few degrees the angle itself (the zero mark's direction ``(cos b, sin b)``).
   Its place does not land on the axis under tilt: the shift is the parallax of its height,
   which gives the camera's position over the board, and with it where every raised part (tile
   tops at 7 mm, booth roofs at 55 mm) appears (:class:`TableView`).
3. **Facing sectors**: each booth faces the sector whose middle (``b + 90 s``) is nearest its
   angle; within ``ambiguous_margin_deg`` of a boundary it is ``"ambiguous"``; without the centre
   marker, ``"unknown"``.
4. **Slots**: each cell is sampled on a 0.75 mm grid in its own frame (its edges along the
   sector's u and v, "up" towards the centre along the sector's middle, as its number and a
   tile's letter are printed). The tile's corners outside its cream disc give the player colour
   (CIE Lab against the markers' white paper, nearest reference with abstention:
   :class:`~companion.vision.colour.RegionClassifier`); white corners around a white middle are
   an empty cell. The letter is matched (Pearson r, slid +-2.25 mm) against the five templates
   and read only when clear. A client standee on a tile is told by its look where the geometry
   puts it (:meth:`CarrosselReader.standee_mask`, :meth:`CarrosselReader._standees`): the tile
   reads its colour and ``standee`` with its animal unknown (the standee hides the letter); a
   frame too blurred to tell a standee from a smeared letter (:meth:`CarrosselReader.edge_width_mm`)
   reports none. A board still turning (its print smeared along the turn) reads nothing.
5. **Colour check**: the markers' paper white and the booth roofs' colours must be those of a
   colour frame of the calibrated light (:class:`~companion.vision.colour.ColourCheck`), and
   each booth roof's hue that of its print, not of the print with the camera's channels
   swapped (:class:`~companion.vision.colour.PrintCheck`: a red/blue swap of a camera driver),
   else the status is ``"colour lost: ..."`` and nothing is read.

Angles: degrees counter-clockwise seen from above, from +x of the base board (the table
description's convention, shared/data/carrossel-table/README.md). The referee's
``board_turned.angle_deg`` (clockwise from setup) is ``(angle at setup - board_angle_deg) mod 360``.

Rulebook: ``shared/rules/carrossel.txt`` (Game Components: 4 sectors of 12 slots, animal tiles of 4
colours, clients). Sources: S. Garrido-Jurado et al. (2014) (ArUco); R. Hartley and A.
Zisserman, Multiple View Geometry, 2nd ed., 6.1 and 8.1 (central projection, plane homography).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.calibration_checks import between, expect, positive, within_turn
from companion.calibration_dir import calibration_path
from companion.vision.colour import (
    CLIPPED,
    LAB_FAST_ERROR,
    OFFSET,
    UNKNOWN,
    ColourCheck,
    ColourReferences,
    FrozenFrames,
    PrintCheck,
    RegionClassifier,
    lab_exact,
    lab_fast,
    linear_to_lab,
    load_json,
    srgb_to_linear,
)
from companion.vision.frames import check_bgr_frame
from companion.vision.skin import brighter_than_white, median_chroma
from companion.vision import standee_checks
from companion.vision.registration import (
    Registrar,
    Registration,
    dictionary,
    distort,
)

__all__ = [
    "AMBIGUOUS",
    "EMPTY",
    "BOOTHS",
    "BOOTH_PRINT_SRGB",
    "CarrosselGeometry",
    "LetterTemplates",
    "TableView",
    "SlotReading",
    "CarrosselReading",
    "CarrosselReader",
    "draw_overlay",
    "letter_templates_from",
]

#: every 8-bit sRGB level in linear light (``256 float32``)
_LEVELS_LINEAR = srgb_to_linear(np.arange(256, dtype=np.uint8))

AMBIGUOUS = "ambiguous"
EMPTY = "empty"
BOOTHS = ("south", "east", "north", "west")
#: sample step (mm) of a tile's top, and its half extent: the disc (21 mm) and the corners (28 mm)
STEP_MM = 0.75
HALF_MM = 14.25


def _check_ranges(g: CarrosselGeometry, p: Path, d: Mapping[str, Any]) -> None:
    """What each value of ``carrossel-board.toml`` means on a real table (after the type checks
    of :meth:`CarrosselGeometry.load`): sizes above 0, the fixed markers and the booths off the
    round board, the centre marker and every cell on it, heights in their order (base board <
    round board's top <= centre marker < tiles' top < camera), sectors that do not overlap,
    angles within one turn, colours of 0-255 and CIE Lab.

    Raises:
        ValueError: one line naming the file, the field and the range expected.
    """
    r = positive(p, "round_board.radius_mm", g.radius_mm)
    size = positive(p, "fixed_markers.size_mm", g.marker_size_mm, at_most=r, limit="round_board.radius_mm")
    expect(p, "fixed_markers.paper_mm", g.marker_paper_mm >= size,
           f"at least fixed_markers.size_mm ({size:g} mm): the paper around the black square", g.marker_paper_mm)
    top = between(p, "round_board.top_z_mm", g.board_top_z_mm, 0.0, r, why="the base board's top to the board's radius")
    between(p, "fixed_markers.z_mm", g.marker_z_mm, 0.0, top, why="on the base board, below round_board.top_z_mm")
    for k, corners in g.markers.items():
        c = corners.mean(axis=0)
        expect(p, f"fixed_markers.centres_mm.{k}", float(np.hypot(*c)) > r,
               f"a point off the round board (farther than round_board.radius_mm = {r:g} mm from the axis)",
               [float(c[0]), float(c[1])])
    expect(p, "round_board.centre_marker_id",
           g.centre_marker_id >= 0 and float(d["round_board"]["centre_marker_id"]).is_integer()
           and g.centre_marker_id not in g.markers, "a marker id (a whole number from 0) that is not a fixed marker's",
           d["round_board"]["centre_marker_id"])
    csize = positive(p, "round_board.centre_marker_size_mm", g.centre_marker_size_mm, at_most=r,
                     limit="round_board.radius_mm")
    expect(p, "round_board.centre_marker_paper_mm", g.centre_marker_paper_mm >= csize,
           f"at least round_board.centre_marker_size_mm ({csize:g} mm)", g.centre_marker_paper_mm)
    tile_top = between(p, "tiles.top_z_mm", g.tile_top_z_mm, top, top + 50.0, low_open=True,
                       why="above round_board.top_z_mm")
    between(p, "round_board.centre_marker_z_mm", g.centre_marker_z_mm, top, tile_top,
            why="round_board.top_z_mm to tiles.top_z_mm")
    head = g.standee[3] + g.standee[4]
    between(p, "round_board.camera_height_mm", g.camera_height_mm, max(tile_top, head), 10000.0, low_open=True,
            why="above the tiles and the standees' heads")
    for i, m in enumerate(g.middle_deg):
        within_turn(p, f"sectors.middle_deg[{i}]", m)
    n = len(g.labels)
    half = between(p, "sectors.half_width_deg", g.half_width_deg, 0.0, 180.0 / n, unit="deg", low_open=True,
                   why=f"{n} sectors that do not overlap")
    between(p, "sectors.ambiguous_margin_deg", g.ambiguous_margin_deg, 0.0, half, unit="deg", high_open=True,
            why="from 0 to below sectors.half_width_deg")
    cell = positive(p, "cells.size_mm", g.cell_size_mm, at_most=r, limit="round_board.radius_mm")
    far = float(np.hypot(*g.cell_centres_board_mm.T).max()) + cell / math.sqrt(2.0)
    expect(p, "cells.row_u_mm", far <= r, f"cells within the round board (round_board.radius_mm = {r:g} mm); "
           f"the farthest cell corner is {far:.1f} mm from the axis", d["cells"]["row_u_mm"])
    tile = positive(p, "tiles.size_mm", g.tile_size_mm, at_most=cell, limit="cells.size_mm")
    positive(p, "tiles.disc_diameter_mm", g.disc_diameter_mm, at_most=tile, limit="tiles.size_mm")
    for name, rgb in g.tile_colours.items():
        expect(p, f"tiles.colours_srgb.{name}", all(0 <= v <= 255 for v in rgb), "[R, G, B] of 0-255", list(rgb))
    between(p, "tiles.paper_white_srgb", g.paper_white, 0.0, 255.0, unit="(sRGB 0-255)", low_open=True)
    for name, lab in (g.colours_lab or {}).items():
        expect(p, f"tiles.colours_lab.{name}", 0 <= lab[0] <= 100 and abs(lab[1]) <= 128 and abs(lab[2]) <= 128,
               "[L, a, b] with L 0-100, a and b -128 to 128", list(lab))
    body_r, bottom, body_top, head_r, head_z = g.standee
    positive(p, "standees.body_radius_mm", body_r, at_most=tile, limit="tiles.size_mm")
    between(p, "standees.body_bottom_z_mm", bottom, top, top + 50.0, why="on the round board: round_board.top_z_mm up")
    between(p, "standees.body_top_z_mm", body_top, bottom, bottom + 200.0, low_open=True,
            why="above standees.body_bottom_z_mm")
    positive(p, "standees.head_radius_mm", head_r, at_most=tile, limit="tiles.size_mm")
    between(p, "standees.head_centre_z_mm", head_z, bottom, bottom + 200.0, low_open=True,
            why="above standees.body_bottom_z_mm")
    for name, (centre, angle) in g.booths.items():
        expect(p, f"booths.{name}.centre_mm", float(np.hypot(*centre)) > r,
               f"a point off the round board (farther than round_board.radius_mm = {r:g} mm from the axis)",
               [float(v) for v in centre])
        within_turn(p, f"booths.{name}.angle_deg", angle)


def _corners(centre: Sequence[float], size: float, up_deg: float = 90.0) -> np.ndarray:
    """A square marker's 4 corners (TL, TR, BR, BL), ``4 x 2`` mm, its top edge towards ``up_deg``."""
    a = math.radians(up_deg)
    up = np.array([math.cos(a), math.sin(a)])
    right = np.array([up[1], -up[0]])
    h = size / 2
    c = np.asarray(centre, dtype=np.float64)
    return np.stack([c + h * (up - right), c + h * (up + right), c + h * (-up + right), c + h * (-up - right)])


@dataclasses.dataclass(frozen=True)
class CarrosselGeometry:
    """The Carrossel table in millimetres (``calibration/carrossel-board.toml``).

    Attributes:
        dictionary: the markers' ArUco dictionary name.
        markers: fixed marker id -> ``4 x 2`` corners (TL, TR, BR, BL) on the base board.
        marker_size_mm, marker_paper_mm, marker_z_mm: the fixed markers' black square, paper, height.
        centre_marker_id, centre_marker_size_mm, centre_marker_paper_mm, centre_marker_z_mm:
            the round board's centre marker.
        radius_mm, board_top_z_mm: the round board.
        camera_height_mm: assumed camera height when it cannot be measured.
        labels: sector letters (``("A", "B", "C", "D")``); ``middle_deg`` their middles (board frame).
        half_width_deg: a sector's half width; ``ambiguous_margin_deg`` the facing margin.
        cell_names: the 48 slot names ``"A1"`` .. ``"D12"``.
        cell_centres_board_mm: ``48 x 2``, board frame (board angle 0).
        cell_size_mm, tile_size_mm, tile_top_z_mm, disc_diameter_mm: the cells and tiles.
        letters: letter -> animal; ``tile_colours``: colour -> sRGB; ``paper_white``: 8-bit level.
        standee: body radius, body bottom z, body top z, head radius, head centre z (mm).
        booths: name -> (centre ``2``, angle deg).
        source: the file it came from.
    """

    dictionary: str
    markers: Mapping[int, np.ndarray]
    marker_size_mm: float
    marker_paper_mm: float
    marker_z_mm: float
    centre_marker_id: int
    centre_marker_size_mm: float
    centre_marker_paper_mm: float
    centre_marker_z_mm: float
    radius_mm: float
    board_top_z_mm: float
    camera_height_mm: float
    labels: tuple[str, ...]
    middle_deg: tuple[float, ...]
    half_width_deg: float
    ambiguous_margin_deg: float
    cell_names: tuple[str, ...]
    cell_centres_board_mm: np.ndarray
    cell_size_mm: float
    tile_size_mm: float
    tile_top_z_mm: float
    disc_diameter_mm: float
    letters: Mapping[str, str]
    tile_colours: Mapping[str, tuple[int, int, int]]
    paper_white: float
    colours_lab: Mapping[str, tuple[float, float, float]] | None
    standee: tuple[float, float, float, float, float]
    booths: Mapping[str, tuple[np.ndarray, float]]
    source: str = ""

    @classmethod
    def load(cls, path: str | Path | None = None, config: Any = None) -> CarrosselGeometry:
        """Read the geometry file (default: ``carrossel-board.toml`` of the calibration folder,
        :func:`~companion.calibration_dir.calibration_path`).

        Raises:
            ValueError: a missing file, bad TOML or a missing/ill-shaped field, naming the file
                and the field and what was expected.
        """
        p = Path(path) if path is not None else calibration_path("carrossel-board.toml", config)
        try:
            d = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ValueError(f"{p}: no such file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{p}: not valid TOML: {exc}") from None

        def get(key: str) -> Any:
            obj: Any = d
            for part in key.split("."):
                if not isinstance(obj, dict) or part not in obj:
                    raise ValueError(f"{p}: {key}: missing")
                obj = obj[part]
            return obj

        def num(key: str) -> float:
            v = get(key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{p}: {key}: expected a finite number, got {v!r}")
            return float(v)

        def nums(key: str, n: int | None = None, v: Any = None) -> tuple[float, ...]:
            v = get(key) if v is None else v
            if not (isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                and math.isfinite(x) for x in v)
                    and (n is None or len(v) == n)):
                raise ValueError(f"{p}: {key}: expected {n or 'a list of'} finite numbers, got {v!r}")
            return tuple(float(x) for x in v)

        size = num("fixed_markers.size_mm")
        centres = get("fixed_markers.centres_mm")
        if not isinstance(centres, dict) or not centres:
            raise ValueError(f"{p}: fixed_markers.centres_mm: expected {{id = [x, y]}}")
        markers = {}
        for k, v in centres.items():
            if not str(k).isdigit():
                raise ValueError(f"{p}: fixed_markers.centres_mm: {k!r} is not a marker id")
            markers[int(k)] = _corners(nums(f"fixed_markers.centres_mm.{k}", 2, v), size)
        labels = get("sectors.labels")
        if not (isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels)):
            raise ValueError(f"{p}: sectors.labels: expected a list of sector letters, got {labels!r}")
        labels = tuple(labels)
        middle = nums("sectors.middle_deg", len(labels))
        rows = nums("cells.row_u_mm")
        cols = nums("cells.column_v_mm")
        names, pts = [], []
        for label, m in zip(labels, middle):
            a = math.radians(m)
            u = np.array([math.cos(a), math.sin(a)])
            v = np.array([-math.sin(a), math.cos(a)])
            for r, uu in enumerate(rows):
                for c, vv in enumerate(cols):
                    names.append(f"{label}{1 + len(cols) * r + c}")
                    pts.append(uu * u + vv * v)
        letters = get("tiles.letters")
        colours = get("tiles.colours_srgb")
        if not isinstance(letters, dict) or not isinstance(colours, dict):
            raise ValueError(f"{p}: tiles.letters and tiles.colours_srgb: expected tables")
        booths = {}
        for name in BOOTHS:
            b = get(f"booths.{name}")
            if not isinstance(b, dict):
                raise ValueError(f"{p}: booths.{name}: expected a table with centre_mm and angle_deg, got {b!r}")
            booths[name] = (np.array(nums(f"booths.{name}.centre_mm", 2, b.get("centre_mm"))),
                            num(f"booths.{name}.angle_deg"))
        geo = cls(
            dictionary=str(get("marker_dictionary")), markers=markers, marker_size_mm=size,
            marker_paper_mm=num("fixed_markers.paper_mm"), marker_z_mm=num("fixed_markers.z_mm"),
            centre_marker_id=int(num("round_board.centre_marker_id")),
            centre_marker_size_mm=num("round_board.centre_marker_size_mm"),
            centre_marker_paper_mm=num("round_board.centre_marker_paper_mm"),
            centre_marker_z_mm=num("round_board.centre_marker_z_mm"),
            radius_mm=num("round_board.radius_mm"), board_top_z_mm=num("round_board.top_z_mm"),
            camera_height_mm=num("round_board.camera_height_mm"),
            labels=labels, middle_deg=middle, half_width_deg=num("sectors.half_width_deg"),
            ambiguous_margin_deg=num("sectors.ambiguous_margin_deg"),
            cell_names=tuple(names), cell_centres_board_mm=np.array(pts), cell_size_mm=num("cells.size_mm"),
            tile_size_mm=num("tiles.size_mm"), tile_top_z_mm=num("tiles.top_z_mm"),
            disc_diameter_mm=num("tiles.disc_diameter_mm"),
            letters={str(k): str(v) for k, v in letters.items()},
            tile_colours={str(k): tuple(int(x) for x in nums(f"tiles.colours_srgb.{k}", 3, v))  # type: ignore[misc]
                          for k, v in colours.items()},
            paper_white=num("tiles.paper_white_srgb"),
            colours_lab=({str(k): nums(f"tiles.colours_lab.{k}", 3, v) for k, v in d["tiles"]["colours_lab"].items()}
                         if isinstance(d.get("tiles", {}).get("colours_lab"), dict) else None),  # type: ignore[misc]
            standee=(num("standees.body_radius_mm"), num("standees.body_bottom_z_mm"), num("standees.body_top_z_mm"),
                     num("standees.head_radius_mm"), num("standees.head_centre_z_mm")),
            booths=booths, source=str(p))
        _check_ranges(geo, p, d)
        return geo

    def tile_references(self) -> ColourReferences:
        """The player colours as CIE Lab against the paper white: the measured ``colours_lab``
        when the file has them, else from the printed sRGB."""
        if self.colours_lab:
            return ColourReferences.from_dict(self.colours_lab, f"{self.source}: tiles.colours_lab")
        white = srgb_to_linear(np.full((1, 3), int(round(self.paper_white)), np.uint8))[0]
        names = tuple(self.tile_colours)
        bgr = np.array([self.tile_colours[n][::-1] for n in names], dtype=np.uint8)
        return ColourReferences(names, linear_to_lab(srgb_to_linear(bgr), white))

    def cell_centres_mm(self, board_angle_deg: float) -> np.ndarray:
        """The 48 cell centres in the world (base board) frame for board angle ``b`` (deg CCW), ``48 x 2``."""
        a = math.radians(board_angle_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return self.cell_centres_board_mm @ rot.T

    def cell_ups(self, board_angle_deg: float) -> np.ndarray:
        """The 48 cells' "up" directions in the world frame for board angle ``b``, ``48 x 2`` unit
        vectors: towards the centre along the cell's sector middle (README: cell edges along the
        sector's u and v; slot numbers and letters upright for a person outside the board, text up
        towards the centre), i.e. ``-(cos(b + m), sin(b + m))`` for the sector middle ``m``."""
        n = len(self.cell_names) // len(self.middle_deg)
        a = np.radians(np.repeat(np.asarray(self.middle_deg, dtype=np.float64), n) + board_angle_deg)
        return -np.stack([np.cos(a), np.sin(a)], axis=1)

    def facing(self, board_angle_deg: float) -> dict[str, tuple[str, float]]:
        """booth -> (the sector facing it or ``"ambiguous"``, the distance in degrees from the
        nearest boundary). The facing sector's middle is angularly nearest the booth's angle."""
        out = {}
        for name, (_c, booth_deg) in self.booths.items():
            offs = [((board_angle_deg + m - booth_deg + 180.0) % 360.0) - 180.0 for m in self.middle_deg]
            k = int(np.argmin(np.abs(offs)))
            margin = self.half_width_deg - abs(offs[k])
            out[name] = (self.labels[k] if margin >= self.ambiguous_margin_deg else AMBIGUOUS, margin)
        return out


class TableView:
    """Where a point of the table at some height appears in the image.

    The fixed markers' homography maps the base board (z = ``marker_z_mm``) to the image. A point
    at height z is seen where the camera's ray through it meets the base plane:
    ``G = C + (P - C) * Cz / (Cz - z)`` for the camera centre ``C`` (mm; heights above the
    markers' plane). ``C``'s x, y come from the centre marker's parallax (its centre, at
    ``centre_marker_z_mm``, lies on the axis); its height ``Cz`` is the geometry's assumed
    ``camera_height_mm`` (it only scales the small term that grows with the distance from the
    axis).

    Args:
        registration: the fixed markers' registration.
        camera_xy_mm: the camera centre over the board (x, y mm).
        camera_height_mm: its height above the markers' plane (mm).
        base_z_mm: the markers' plane height (mm).
    """

    def __init__(self, registration: Registration, camera_xy_mm: np.ndarray, camera_height_mm: float,
                 base_z_mm: float = 0.0):
        self.registration = registration
        self.camera_xy_mm = np.asarray(camera_xy_mm, dtype=np.float64)
        self.camera_height_mm = float(camera_height_mm)
        self.base_z_mm = float(base_z_mm)

    def ground(self, points_mm: np.ndarray, z_mm: float | np.ndarray) -> np.ndarray:
        """Points (``N x 2`` mm) at height ``z_mm`` (scalar or ``N``) -> where they appear on the
        markers' plane (``N x 2`` mm)."""
        p = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        h = np.asarray(z_mm, dtype=np.float64).reshape(-1, 1) - self.base_z_mm
        k = self.camera_height_mm / np.maximum(self.camera_height_mm - h, 1.0)
        return self.camera_xy_mm + (p - self.camera_xy_mm) * k

    def to_image(self, points_mm: np.ndarray, z_mm: float | np.ndarray) -> np.ndarray:
        """Points (``N x 2`` mm) at height ``z_mm`` -> image pixels (``N x 2 float64``)."""
        return self.registration.to_image(self.ground(points_mm, z_mm))

    def matrix(self, z_mm: float) -> np.ndarray:
        """The ``3 x 3`` homography from points at height ``z_mm`` (mm, homogeneous) to the
        image's (undistorted) pixels: the registration's homography after the parallax's
        scaling about the camera's foot, ``G = C + (P - C) k``."""
        h = float(z_mm) - self.base_z_mm
        k = self.camera_height_mm / max(self.camera_height_mm - h, 1.0)
        cx, cy = self.camera_xy_mm
        a = np.array([[k, 0.0, (1.0 - k) * cx], [0.0, k, (1.0 - k) * cy], [0.0, 0.0, 1.0]])
        return self.registration.board_to_image @ a

    def project_many(self, matrices: np.ndarray, points_h: np.ndarray) -> np.ndarray:
        """Homogeneous points ``3 x M`` through ``n x 3 x 3`` matrices (from :meth:`matrix`,
        times a rotation) -> ``n x M x 2`` image pixels, the lens's distortion applied when the
        registration has one."""
        q = np.matmul(matrices, points_h)
        px = np.stack([q[:, 0] / q[:, 2], q[:, 1] / q[:, 2]], axis=-1)
        lens = self.registration.lens
        if lens is not None:
            px = distort(px.reshape(-1, 2), *lens).reshape(px.shape)
        return px


@dataclasses.dataclass(frozen=True)
class LetterTemplates:
    """The five animal letters' lightness on a tile's disc, in the tile's frame (letter up).

    Attributes:
        animals: the animal of each template.
        images: ``K x N x N float32``, lightness relative to the disc's cream (0 dark, 1 cream),
            sampled every :data:`STEP_MM` over +-:data:`HALF_MM` (row 0 is the letter's top).
        source: where they came from.
    """

    animals: tuple[str, ...]
    images: np.ndarray
    source: str = ""

    @classmethod
    def load(cls, path: str | Path | None = None, config: Any = None) -> LetterTemplates:
        """Read ``carrossel-letters.json`` (default: the calibration folder's).

        Raises:
            ValueError: a missing file, ill-shaped templates, levels not finite within 0-255, or
                ``step_mm`` / ``half_mm`` other than the reader's sampling, naming the file and
                the field.
        """
        p = Path(path) if path is not None else calibration_path("carrossel-letters.json", config)
        d = load_json(p)
        n = _grid_n()
        try:
            animals = tuple(d["templates"])
            images = np.array([d["templates"][a] for a in animals], dtype=np.float32) / 255.0
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{p}: templates: expected {{animal: {n} rows of {n} levels 0-255}}") from None
        if images.shape != (len(animals), n, n) or not animals:
            raise ValueError(f"{p}: templates: expected {n} x {n} levels per animal, got shape {images.shape}")
        for a, im in zip(animals, images):
            expect(p, f"templates.{a}", bool(np.isfinite(im).all() and im.min() >= 0 and im.max() <= 1),
                   f"{n} rows of {n} levels 0-255", f"levels {float(np.nanmin(im)) * 255:g}-{float(np.nanmax(im)) * 255:g}")
        for key, want in (("step_mm", STEP_MM), ("half_mm", HALF_MM)):
            if key in d:  # templates sampled on another grid would not match the reader's samples
                expect(p, key, _is_num(d[key]) and abs(float(d[key]) - want) < 1e-6,
                       f"{want:g} mm, the reader's sampling (make the templates again with companion.vision.carrossel_letters)",
                       d[key])
        return cls(animals, images, str(p))

    def to_json(self, note: str = "") -> dict[str, Any]:
        """The file's content: ``{"step_mm", "half_mm", "note", "templates": {animal: rows}}``."""
        return {"step_mm": STEP_MM, "half_mm": HALF_MM, "note": note,
                "templates": {a: np.clip(np.rint(im * 255), 0, 255).astype(int).tolist()
                              for a, im in zip(self.animals, self.images)}}


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _grid_n() -> int:
    return int(round(2 * HALF_MM / STEP_MM)) + 1


def _tile_grid() -> np.ndarray:
    """The tile-frame sample points (x right, y up), ``N*N x 2`` mm, row-major from the top."""
    u = np.linspace(-HALF_MM, HALF_MM, _grid_n())
    xx, yy = np.meshgrid(u, -u)
    return np.stack([xx.ravel(), yy.ravel()], axis=1)


@dataclasses.dataclass(frozen=True)
class SlotReading:
    """One slot: a tile (``animal``, ``colour``, ``standee``), ``"empty"`` or ``"unknown"``.

    Attributes:
        label: ``"tile"``, ``"empty"`` or ``"unknown"``.
        animal, colour: the tile's (None unless ``label == "tile"``; ``colour`` also for an
            ``"unknown"`` tile with a standee on it, whose animal is hidden).
        standee: a client standee stands on the tile.
        confidence: 0-1 (the colour's and the letter's margins combined).
        reason: why it is unknown ("" otherwise).
    """

    label: str
    animal: str | None = None
    colour: str | None = None
    standee: bool = False
    confidence: float = 0.0
    reason: str = ""

    def to_json(self) -> Any:
        """``{"animal", "colour", "standee"}``, ``"empty"`` or ``"unknown"`` (the issue's form);
        a tile under a standee whose animal is not read: ``{"animal": "unknown", "colour": ...,
        "standee": true}`` (its label stays ``"unknown"``)."""
        if self.label == "tile":
            return {"animal": self.animal, "colour": self.colour, "standee": self.standee}
        if self.label == UNKNOWN and self.standee and self.colour is not None:
            return {"animal": UNKNOWN, "colour": self.colour, "standee": True}
        return self.label


@dataclasses.dataclass(frozen=True)
class CarrosselReading:
    """Everything read from one frame.

    Attributes:
        status: ``"ok"``; ``"board not visible: ..."``; ``"centre marker not seen: ..."`` (the
            board's angle is unknown: facing sectors and slots unknown); ``"colour lost: ..."``;
            ``"camera frozen: ..."``.
        board_angle_deg: the zero mark's direction, degrees CCW from +x (0-360), or None.
        facing: booth -> sector letter, ``"ambiguous"`` or ``"unknown"``.
        slots: slot name (``"A1"`` .. ``"D12"``) -> :class:`SlotReading`.
        registration: the fixed markers' registration, or None.
        view: the :class:`TableView` used, or None.
        centre_corners_px: the centre marker's detected corners (``4 x 2``) or None.
    """

    status: str
    board_angle_deg: float | None = None
    facing: Mapping[str, str] = dataclasses.field(default_factory=lambda: {b: UNKNOWN for b in BOOTHS})
    slots: Mapping[str, SlotReading] = dataclasses.field(default_factory=dict)
    registration: Registration | None = None
    view: TableView | None = None
    centre_corners_px: np.ndarray | None = None

    def slot_json(self, names: Sequence[str]) -> dict[str, Any]:
        """slot name -> the issue's form, for every name (``"unknown"`` when not read)."""
        return {n: (self.slots[n].to_json() if n in self.slots else UNKNOWN) for n in names}

    def to_json(self, names: Sequence[str]) -> dict[str, Any]:
        """``status``, ``board_angle_deg``, ``facing``, ``slots`` (all of ``names``), markers."""
        d: dict[str, Any] = {
            "status": self.status,
            "board_angle_deg": None if self.board_angle_deg is None else round(self.board_angle_deg, 2),
            "facing": dict(self.facing), "slots": self.slot_json(names)}
        reasons = {n: s.reason for n, s in self.slots.items() if s.label == UNKNOWN and s.reason}
        if reasons:
            d["unknown_because"] = reasons
        if self.registration is not None:
            d["markers"] = list(self.registration.marker_ids)
            d["residual_px"] = round(self.registration.residual_px, 2)
        return d


#: The booths' printed colours (8-bit sRGB R, G, B), from the table's description
#: (shared/data/carrossel-table/README.md, "Ticket booths"): the camera's channel order is told
#: from them (:class:`~companion.vision.colour.PrintCheck`).
BOOTH_PRINT_SRGB: Mapping[str, tuple[int, int, int]] = {
    "south": (196, 62, 56), "east": (58, 92, 184), "north": (56, 150, 82), "west": (226, 184, 44)}


class CarrosselReader:
    """Reads the Carrossel table from frames.

    Args:
        geometry: the table (default: ``calibration/carrossel-board.toml``).
        letters: the letter templates (default: ``calibration/carrossel-letters.json``).
        registrar: the fixed markers' :class:`Registrar` (default: one for the geometry).
        colour_classifier: overrides the tile-colour abstention thresholds.
        frozen_s: in a stream read with times, identical frames for more than this many
            seconds read ``"camera frozen: ..."``.

    Example::

        reader = CarrosselReader()
        reading = reader.read(cv2.imread("table.jpg"))
        reading.facing["south"], reading.slots["A7"].to_json()

    Raises:
        ValueError: a bad calibration file (naming it).
    """

    #: a letter is read when its correlation (Pearson r over the letter's window, best shift)
    #: is at least LETTER_MIN and the second letter leaves at least LETTER_MARGIN times its
    #: unexplained share: ``1 - r2 >= LETTER_MARGIN (1 - r1)``. Printed letters of one font
    #: differ by far more; a covered, shaded or blurred disc matches none well.
    LETTER_MIN = 0.8
    LETTER_MARGIN = 2.0
    #: the letter window's half width and the shift search's reach, in samples of STEP_MM
    #: (+-7.5 mm: the 10 mm letter with a margin; +-2.25 mm: the tile's placement and the
    #: registration's error)
    LETTER_HALF = 10
    LETTER_SHIFT = 3
    #: the standee's footprint looks like the letter (no standee) when the letter fitted outside
    #: it explains it to within this RMS lightness (share of the cream).
    FOOTPRINT_FIT = 0.16
    #: a client standee (:meth:`_standees`): the disc's middle within STANDEE_CENTRE_MM of the
    #: tile's centre is always under its body (radius 6 mm, README; the tile's placement 1.2 mm
    #: and the registration's 1-2 mm off that); there its lightness spread (share of the cream)
    #: is at most STANDEE_CENTRE_SPREAD and at most STANDEE_CENTRE_CREAM of it is as light as
    #: the cream (a printed letter's 2 mm strokes on cream spread far more)
    STANDEE_CENTRE_MM = 3.0
    STANDEE_CENTRE_SPREAD = 0.12
    STANDEE_CENTRE_CREAM = 0.05
    #: ... and its median lightness at least STANDEE_CENTRE_MIN of the cream: a letter's 3 mm
    #: stroke over the middle is as even, but printed ink (the letter templates' darkest 5 %:
    #: 0.09-0.12, carrossel_036 and carrossel_051) is darker than any standee's paint there (the
    #: darkest, natural wood: 0.19 on the same two photographs)
    STANDEE_CENTRE_MIN = 0.15
    #: ... unless that middle has a colour: printed ink is neutral (the median a*, b* of a disc's
    #: middle under a letter's stroke, against the markers' white, has CIE Lab chroma 0.3-5.8 on
    #: the two calibration photographs' 28 plain tiles whose middle is at most 0.3 of the cream;
    #: at most 5.8 on all 34), the standees' pastel and wood paints are not (14.1-29.6 on their 17
    #: standees): a middle darker than STANDEE_CENTRE_MIN (a paint in the body's own shade) is a
    #: standee's when its chroma is at least STANDEE_CENTRE_CHROMA, about midway (the other tests
    #: all still apply; a grey or black paint that dark stays unknown), and its level at least
    #: STANDEE_CENTRE_INK, the lighter end of printed ink itself (the templates' 0.09-0.12): as
    #: dark as ink, a middle's colour is the noise's and the JPEG's chroma bleeding from the tile
    #: (a swan's stroke at 0.03 of the cream measured chroma 11.9 on a rendered frame, JPEG 69)
    STANDEE_CENTRE_CHROMA = 10.0
    STANDEE_CENTRE_INK = 0.12
    #: the camera heights the standee's region is taken over (mm above the board; README 450-700)
    STANDEE_CAMERA_HEIGHTS_MM = (450.0, 700.0)
    #: a tile's corners of two colours are read again without those where a standee's region
    #: lies, if at least this many of its 48 samples (1.5 mm apart) are left
    MIN_CORNERS_LEFT = 24
    #: and its body, leaning away from the camera's foot, hides the disc's cream rim (7.5-9.5 mm
    #: from the centre) where the geometry puts it at every camera height: at least
    #: STANDEE_RIM_MIN samples there, their median at most STANDEE_RIM_MAX of the visible rim's
    #: cream (a blurred letter leaves the rim cream; a cell under the camera shows no lean and is
    #: left unknown)
    STANDEE_RIM_MIN = 8
    STANDEE_RIM_MAX = 0.75
    #: the markers' edges are sampled across every EDGE_STEP_MM; a frame whose printed steps
    #: are wider than STANDEE_EDGE_MAX_MM (:meth:`edge_width_mm`) is too blurred to tell a
    #: standee from a smeared letter (a 3 mm stroke smeared flat looks like the standee's even
    #: top): no standee is reported there, its tiles read unknown. 2.75 mm = 1.25 x the wider
    #: step of the two photographs the letter templates were made from (carrossel_036: 2.2 mm,
    #: carrossel_051: 1.9 mm): the letters' look within a quarter of the sharpness they were
    #: measured at
    EDGE_STEP_MM = 0.5
    STANDEE_EDGE_MAX_MM = 2.75
    #: share of the centre marker's expected size (mm, measured through the homography) within
    #: which a detection is the round board's marker.
    CENTRE_SIZE_TOLERANCE = 0.15
    #: how far (deg) the cells' edges may move the centre marker's angle
    REFINE_RANGE_DEG = 3.0
    #: the rectified patch around the axis where the centre marker is matched: its sample
    #: step and half extent (mm; the 38 mm paper plus any parallax of its 4 mm height)
    PATCH_STEP_MM = 0.75
    PATCH_HALF_MM = 25.0
    #: an empty cell's middle is the same white print as its corners but for a 5 mm slot number:
    #: at least this share of it must read as the white (a standee or a finger over a pale
    #: tile is not white)
    EMPTY_MIDDLE_WHITE = 0.75
    #: an empty cell's corners are the paper's neutral white print (``tiles.paper_white_srgb``,
    #: R = G = B): against the markers' white reference their median colour's CIE Lab chroma is
    #: near 0 (at most 2.3 over the 45 empty cells of the two calibration photographs,
    #: carrossel_036 and carrossel_051: noise, the lamps' mixed light). Skin, even the palest,
    #: is warm: a* 5-15, b* 10-20 (chroma 12 and more; the path-traced hands over the
    #: photographs' cells 12.6). Corners whose median chroma passes this are not the print
    #: (a pale hand over the cell, whatever lies under it): the slot is unknown.
    EMPTY_MAX_CHROMA = 8.0
    #: a stream's cell keeps its last reading while its samples differ from that reading's by at
    #: most this mean (8-bit levels: about a sensor's noise; a tile, a standee or a hand moves
    #: them by tens) and the board has turned by at most CACHE_ANGLE_DEG
    CACHE_LEVELS = 6.0
    CACHE_ANGLE_DEG = 0.3
    #: a stream's centre marker keeps its last match while its rectified patch, smoothed over
    #: a sample, differs from the one matched by at most this mean (8-bit levels) on that one's
    #: edges (its strongest fifth of gradients within 16 mm of the axis). Measured on the two
    #: calibration photographs (carrossel_036, carrossel_051) with sensor noise of 3 levels:
    #: still 0.7-0.9, turned 0.1 deg 0.9-1.0, 0.2 deg 1.25-1.3, 0.3 deg 1.6-1.8, 0.5 deg 2.5-2.9
    #: (a turn of 0.3 deg or more is matched afresh)
    CENTRE_CACHE_LEVELS = 1.3
    #: a still board's print (letters, numbers, the cells' and tiles' edges) has about as much
    #: detail along the turn as across it (the steps' ratio is near 1); a turning board smears
    #: only along it. Below this ratio the frame is of a board still turning: nothing is read.
    MIN_TANGENTIAL_DETAIL = 0.85
    #: the centre marker's print matched turned by this step (deg) within this reach of its
    #: edges' angle
    MATCH_STEP_DEG = 1.5
    MATCH_REACH_DEG = 9.0
    #: the centre marker's match: its least score, and its lead over the next right angle
    CENTRE_MATCH_MIN = 0.8
    CENTRE_MATCH_MARGIN = 0.1

    def __init__(self, geometry: CarrosselGeometry | None = None, letters: LetterTemplates | None = None,
                 registrar: Registrar | None = None, colour_classifier: RegionClassifier | None = None,
                 frozen_s: float = 3.0):
        self.geometry = g = geometry if geometry is not None else CarrosselGeometry.load()
        self.letters = letters if letters is not None else LetterTemplates.load()
        # the centre marker is found by its print (centre_marker_match), not by ArUco: the full
        # detection looks only for the four fixed markers
        self.registrar = registrar if registrar is not None else Registrar(g.markers, g.dictionary, layout_only=True)
        self.references = g.tile_references()
        self.classifier = colour_classifier or RegionClassifier(
            self.references, background_label=EMPTY, near=30.0, max_other=0.2, max_cover=1.01,
            min_colour=0.5, max_second=0.15, max_colour_in_background=0.05, min_background=0.8,
            background_chroma=18.0, shadow_like=())
        self.colour_check = ColourCheck(self.references)
        booths = [n for n in g.booths if n in BOOTH_PRINT_SRGB]
        #: the booths' printed colours against the markers' paper: the camera's channel order
        self.print_check = PrintCheck.from_print({n: BOOTH_PRINT_SRGB[n] for n in booths}, (g.paper_white,) * 3) \
            if len(booths) >= 2 else None
        self.frozen = FrozenFrames(frozen_s)
        self._slot_cache: dict[str, Any] | None = None
        self._centre_cache: dict[str, Any] | None = None
        self._pose_cache: dict[str, Any] | None = None
        #: a full read's frame and its grey (None in a stream)
        self._grey: tuple[np.ndarray, np.ndarray] | None = None
        # the centre marker's print (black 14/255 bits on its paper, README) on the rectified
        # patch's grid, its top edge up (+y), and the patch's geometry
        step = self.PATCH_STEP_MM
        self._patch_n = n_patch = round(2 * self.PATCH_HALF_MM / step)
        self._patch_to_board = np.array([[step, 0.0, -self.PATCH_HALF_MM + step / 2],
                                         [0.0, -step, self.PATCH_HALF_MM - step / 2], [0.0, 0.0, 1.0]])
        jj, ii = np.meshgrid(np.arange(n_patch), np.arange(n_patch))
        pxy = np.stack([-self.PATCH_HALF_MM + step / 2 + jj * step, self.PATCH_HALF_MM - step / 2 - ii * step], -1)
        self._patch_points = pxy.reshape(-1, 2)
        self._patch_disc = (np.hypot(pxy[..., 0], pxy[..., 1]) < 16.0).astype(np.float32)
        side = round(g.centre_marker_size_mm / step)
        self._tpl_n = round(g.centre_marker_paper_mm / step)
        bits = cv2.aruco.generateImageMarker(dictionary(g.dictionary), g.centre_marker_id, side)
        tpl = np.full((self._tpl_n, self._tpl_n), g.paper_white, np.float32)
        o = (self._tpl_n - side) // 2
        tpl[o:o + side, o:o + side] = np.where(bits > 127, g.paper_white, 14.0)
        self._tpl = tpl
        grid = _tile_grid()
        self._grid = grid
        r = np.hypot(grid[:, 0], grid[:, 1])
        half_tile = g.tile_size_mm / 2
        cheb = np.max(np.abs(grid), axis=1)
        disc_r = g.disc_diameter_mm / 2
        #: tile corners: 2 mm inside the tile and 3 mm inside the cell (the 2 mm gaps between
        #: cells show the sector's tint), outside the disc (1.5 mm out), every second sample each
        #: way (1.5 mm apart: about a pixel; the colour needs no finer grid)
        n_grid = _grid_n()
        every_other = np.zeros((n_grid, n_grid), bool)
        every_other[::2, ::2] = True
        self._corner_mask = (cheb <= half_tile - 2.0) & (r >= disc_r + 1.5) & every_other.ravel()
        #: the disc, less its rim (1 mm)
        self._disc_mask = r <= disc_r - 1.0
        self._cream_mask = (r >= disc_r - 3.0) & (r <= disc_r - 1.0)
        # the points a slot's reading samples: the letter's region (row-major, the shift search's
        # reach around the letter window) first, then the rest of the corners, disc and cream
        c, reach = n_grid // 2, self.LETTER_HALF + self.LETTER_SHIFT
        ii, jj = np.meshgrid(np.arange(c - reach, c + reach + 1), np.arange(c - reach, c + reach + 1), indexing="ij")
        region = (ii * n_grid + jj).ravel()
        in_region = np.zeros(n_grid * n_grid, bool)
        in_region[region] = True
        rest = np.flatnonzero((self._corner_mask | self._disc_mask | self._cream_mask) & ~in_region)
        sel = np.concatenate([region, rest])
        where = np.full(n_grid * n_grid, -1)
        where[sel] = np.arange(len(sel))
        self._n_region = len(region)
        self._sel_corner, self._sel_disc, self._sel_cream = (where[np.flatnonzero(mask)] for mask in
                                                             (self._corner_mask, self._disc_mask, self._cream_mask))
        self._sel_grid = sel
        self._region_points = grid[region]
        # a standee's places among the letter region's points (_standees): the disc's middle, its
        # cream rim (7.5-9.5 mm from the centre) and the rim's points
        r_region = np.hypot(self._region_points[:, 0], self._region_points[:, 1])
        ring = (r_region >= disc_r - 3.0) & (r_region <= disc_r - 1.0)
        self._standee_places = (r_region <= self.STANDEE_CENTRE_MM, ring, self._region_points[ring])
        self._corner_points = grid[sel[self._sel_corner]]
        body_r, z0, z1, head_r, head_z = g.standee
        #: the standee's regions' table-only terms, per set of widenings (_standee_masks)
        self._standee_terms: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._standee_discs = (
            np.concatenate([np.linspace(z0, z1, 8), [head_z - head_r / 2, head_z, head_z + head_r / 2]]),
            np.concatenate([np.linspace(body_r, body_r - 0.5, 8), [head_r * 0.87, head_r, head_r * 0.87]]))
        # the fixed markers' edges sampled across (edge_width_mm): per marker, its points (mm)
        # and each profile's direction (0: TL-TR and BR-BL edges, 1: the other two)
        offs = np.arange(-4.0, 4.0 + 1e-9, self.EDGE_STEP_MM)
        self._edge_offsets = offs
        self._edge_profiles: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        #: the profiles of a set of markers (ids) concatenated, kept per set
        self._edge_sets: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        for mid, m in g.markers.items():
            centre_m = m.mean(axis=0)
            pts_m, dirs_m = [], []
            for e in range(4):
                a, b = m[e], m[(e + 1) % 4]
                normal = (a + b) / 2 - centre_m
                normal = normal / max(float(np.linalg.norm(normal)), 1e-9)
                along = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
                for t in (-0.3, -0.1, 0.1, 0.3):
                    base = (a + b) / 2 + along * t * g.marker_size_mm
                    pts_m.append(base[None, :] + offs[:, None] * normal[None, :])
                    dirs_m.append(e % 2)
            self._edge_profiles[mid] = (np.concatenate(pts_m), np.array(dirs_m))
        #: an empty cell's middle (the disc's place), every second sample each way
        every_other_mid = np.zeros((n_grid, n_grid), bool)
        every_other_mid[::2, ::2] = True
        self._sel_middle = where[np.flatnonzero(self._disc_mask & every_other_mid.ravel())]
        # the white references: the fixed markers' paper band, and the centre marker's
        band = []
        for m in g.markers.values():
            c = m.mean(axis=0)
            band.append(_square_band(c, g.marker_size_mm / 2 + 1.2, g.marker_paper_mm / 2 - 1.2))
        self._paper = np.concatenate(band)
        # the cells' outlines (board top) and the tiles' edges (tile top), board frame at angle 0
        outlines = []
        for half, z in ((g.cell_size_mm / 2, g.board_top_z_mm), (g.tile_size_mm / 2, g.tile_top_z_mm)):
            t = np.linspace(-half + 2.0, half - 2.0, 9)
            sq = np.concatenate([np.stack([t, np.full_like(t, s)], 1) for s in (-half, half)]
                                + [np.stack([np.full_like(t, s), t], 1) for s in (-half, half)])
            pts = []
            for c, up in zip(g.cell_centres_board_mm, g.cell_ups(0.0)):
                right = np.array([up[1], -up[0]])
                pts.append(c + sq[:, :1] * right + sq[:, 1:] * up)
            outlines.append((np.concatenate(pts), z))
        self._outlines = outlines
        self._outlines_h = [(np.vstack([pts.T, np.ones(len(pts))]), z) for pts, z in outlines]
        t = np.radians(np.arange(0.0, 360.0, 10.0))
        self._rim = (g.radius_mm + 2.0) * np.stack([np.cos(t), np.sin(t)], axis=1)
        # every cell's tile-frame sample points on the board at angle 0, homogeneous (3 x 48 N N)
        c0 = g.cell_centres_board_mm
        up0 = g.cell_ups(0.0)
        right0 = np.stack([up0[:, 1], -up0[:, 0]], axis=1)
        tp = (c0[:, None, :] + grid[None, :, 0, None] * right0[:, None, :]
              + grid[None, :, 1, None] * up0[:, None, :]).reshape(-1, 2)
        self._tile_points = np.ascontiguousarray(tp.reshape(-1, 1, 2), dtype=np.float32)
        ngrid = len(grid)
        self._slot_points = np.ascontiguousarray(
            tp.reshape(len(c0), ngrid, 2)[:, self._sel_grid].reshape(-1, 1, 2), dtype=np.float32)
        n, w = _grid_n(), self.LETTER_HALF
        c = n // 2
        lw = self.letters.images[:, c - w:c + w + 1, c - w:c + w + 1].reshape(len(self.letters.animals), -1)
        lw = lw - lw.mean(axis=1, keepdims=True)
        self._letter_windows = (lw / np.maximum(np.linalg.norm(lw, axis=1, keepdims=True), 1e-6)).astype(np.float32)
        # the letter match as matrix products (_letter_region_scores): over a region of S x S
        # samples, for each shift (dy, dx) of the 2 w + 1 window, each template placed there
        # (columns letter-major), then each shift's box of ones
        q, k = 2 * w + 1, 2 * self.LETTER_SHIFT + 1
        side = q + k - 1
        templates = self._letter_windows.reshape(-1, q, q)
        place = np.zeros((side, side, len(templates), k, k), np.float32)
        boxes = np.zeros((side, side, k, k), np.float32)
        for dy in range(k):
            for dx in range(k):
                place[dy:dy + q, dx:dx + q, :, dy, dx] = templates.transpose(1, 2, 0)
                boxes[dy:dy + q, dx:dx + q, dy, dx] = 1.0
        self._n_shifts = k * k
        self._letter_boxes = boxes.reshape(side * side, k * k)
        self._letter_matrix = np.ascontiguousarray(
            np.concatenate([place.reshape(side * side, -1), self._letter_boxes], axis=1))
        lut = srgb_to_linear(np.arange(256, dtype=np.uint8))
        self._lum_b, self._lum_g, self._lum_r = (lut * np.float32(k) for k in (0.0722, 0.7152, 0.2126))
        self._lum_lut = np.stack([self._lum_b, self._lum_g, self._lum_r], axis=1).reshape(1, 256, 3).astype(np.float32)
        self._booth_roofs = {n: _disc_points(c, 9.0, 2.0) for n, (c, _a) in g.booths.items()}
        #: every roof's points in one array (projected at once) and where each roof's end
        self._roof_points = np.concatenate(list(self._booth_roofs.values()))
        self._roof_ends = np.cumsum([len(v) for v in self._booth_roofs.values()]).tolist()

    # ------------------------------------------------------------------ geometry of a frame
    def centre_marker_match(self, frame: np.ndarray, reg: Registration,
                            stream: bool = False) -> tuple[float, np.ndarray, float] | str:
        """Find the centre marker by its known pattern around the axis.

        The base board around the axis (+-:attr:`PATCH_HALF_MM`) is rectified through the
        registration at :attr:`PATCH_STEP_MM` a pixel (the marker, 4 mm up, then differs from a
        rotated copy of its print only by a shift: the parallax). The marker's edges give its
        angle modulo 90 degrees (the gradients' 4-fold orientation, weighted by magnitude, within
        16 mm of the axis); its printed bits (``DICT_4X4_50`` id 14 on its 38 mm paper) at the
        four right angles are matched (normalised cross-correlation, OpenCV ``matchTemplate``)
        and the best must score :attr:`CENTRE_MATCH_MIN` and beat the second by
        :attr:`CENTRE_MATCH_MARGIN` (the three wrong right angles of the same print score about
        0.67: the black square and half the bits agree; another marker scores about the same).
        This reads markers of 20 px, which ArUco's detector misses in dim photographs.

        Args:
            frame: ``H x W x 3 uint8`` BGR or ``H x W`` grey.
            reg: the fixed markers' registration.
            stream: frames of one stream: when the registration is the last frame's and the
                rectified patch (smoothed, sigma one sample) differs from the one last matched by
                at most :attr:`CENTRE_CACHE_LEVELS` on average over that one's edges, that
                match is kept.

        Returns:
            (board angle deg CCW 0-360 (the marker's up vector), where its centre appears on the
            base board ``2`` mm, the match score), or why it is not seen.
        """
        half = self.PATCH_HALF_MM
        n = self._patch_n
        m = reg.board_to_image @ self._patch_to_board
        if reg.lens is not None:
            m = None
        if m is not None:
            corners = cv2.perspectiveTransform(np.array([[[0, 0], [n, 0], [n, n], [0, n]]], np.float64), m)[0]
        else:
            corners = reg.to_image(np.array([[-half, half], [half, half], [half, -half], [-half, -half]]))
        h, w = frame.shape[:2]
        if corners[:, 0].min() < 0 or corners[:, 1].min() < 0 or corners[:, 0].max() > w or corners[:, 1].max() > h:
            return "the board's centre is out of the frame"
        if m is not None:
            patch = cv2.warpPerspective(frame, m, (n, n), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
        else:
            px = reg.to_image(self._patch_points).astype(np.float32).reshape(n, n, 2)
            patch = cv2.remap(frame, px[..., 0], px[..., 1], cv2.INTER_LINEAR)
        if patch.ndim == 3:
            patch = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
        if stream:
            smooth = cv2.GaussianBlur(patch, (0, 0), 1.0)
            cache = self._centre_cache
            if (cache is not None and cache["registration"] is reg
                    and float(cv2.absdiff(smooth, cache["patch"])[cache["edges"]].mean()) <= self.CENTRE_CACHE_LEVELS):
                return cache["found"]
        found = self._match_patch(patch)
        if stream:
            f32 = smooth.astype(np.float32)
            mag = cv2.magnitude(cv2.Sobel(f32, cv2.CV_32F, 1, 0), cv2.Sobel(f32, cv2.CV_32F, 0, 1)) * self._patch_disc
            edges = mag > np.percentile(mag[self._patch_disc > 0], 80)
            self._centre_cache = {"registration": reg, "patch": smooth, "edges": edges, "found": found}
        return found

    def _match_patch(self, patch: np.ndarray) -> tuple[float, np.ndarray, float] | str:
        """:meth:`centre_marker_match` on the rectified grey patch (``n x n uint8``)."""
        step, half = self.PATCH_STEP_MM, self.PATCH_HALF_MM
        n = self._patch_n
        patch = patch.astype(np.float32)
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
        wgt = (gx * gx + gy * gy) * self._patch_disc
        total = float(wgt.sum())
        if total <= 0:
            return f"marker {self.geometry.centre_marker_id} not found (nothing at the board's centre)"
        theta = np.arctan2(-gy, gx)  # the patch's rows run towards -y
        z = complex(float((wgt * np.cos(4 * theta)).sum()), float((wgt * np.sin(4 * theta)).sum()))
        phi = math.degrees(math.atan2(z.imag, z.real)) / 4.0
        def rotated(deg: float) -> np.ndarray:
            rot = cv2.getRotationMatrix2D(((self._tpl_n - 1) / 2, (self._tpl_n - 1) / 2), deg - 90.0, 1.0)
            return cv2.warpAffine(self._tpl, rot, (self._tpl_n, self._tpl_n), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=float(self.geometry.paper_white))

        def match(deg: float, x0: int = 0, y0: int = 0, x1: int = n, y1: int = n) -> tuple[float, tuple[int, int], np.ndarray]:
            res = cv2.matchTemplate(patch[y0:y1, x0:x1], rotated(deg), cv2.TM_CCOEFF_NORMED)
            _lo, hi, _lo_at, at = cv2.minMaxLoc(res)
            return hi, (at[0] + x0, at[1] + y0), res

        scores = [match(phi + 90.0 * q) for q in range(4)]
        order = sorted(range(4), key=lambda i: -scores[i][0])
        best, second = scores[order[0]][0], scores[order[1]][0]
        mid = self.geometry.centre_marker_id
        if not best >= self.CENTRE_MATCH_MIN:
            return f"marker {mid} not found (best match {best:.2f}; covered, or the board not here)"
        if best - second < self.CENTRE_MATCH_MARGIN:
            return f"marker {mid}: its turn is unclear (match {best:.2f}, next {second:.2f})"
        # the edges' orientation is biased by blur and a small print's pixels: the print's own
        # match, turned every REFINE_STEP_DEG within +-REFINE_REACH_DEG, finds the angle
        # (only near the place found: 3 samples each way)
        angle = phi + 90.0 * order[0]
        ax, ay = scores[order[0]][1]
        t = self._tpl_n
        win = (max(ax - 3, 0), max(ay - 3, 0), min(ax + t + 3, n), min(ay + t + 3, n))
        offs = np.arange(-self.MATCH_REACH_DEG, self.MATCH_REACH_DEG + 1e-9, self.MATCH_STEP_DEG)
        turned = self._turned_matches(patch, [rotated(angle + o) for o in offs], win)
        k = int(np.argmax([m[0] for m in turned]))
        if 0 < k < len(offs) - 1:
            angle += offs[k] + self.MATCH_STEP_DEG * _peak_offset(turned[k - 1][0], turned[k][0], turned[k + 1][0])
        else:
            angle += offs[k]
        _hi, (x, y), res = turned[k]
        x, y = x - win[0], y - win[1]  # the peak within the window's result
        dx = _peak_offset(res[y, x - 1] if x > 0 else None, res[y, x], res[y, x + 1] if x + 1 < res.shape[1] else None)
        dy = _peak_offset(res[y - 1, x] if y > 0 else None, res[y, x], res[y + 1, x] if y + 1 < res.shape[0] else None)
        cpx = win[0] + x + dx + (self._tpl_n - 1) / 2
        cpy = win[1] + y + dy + (self._tpl_n - 1) / 2
        centre = np.array([-half + step / 2 + cpx * step, half - step / 2 - cpy * step])
        return angle % 360.0, centre, float(best)

    @staticmethod
    def _turned_matches(patch: np.ndarray, templates: Sequence[np.ndarray],
                        win: tuple[int, int, int, int]) -> list[tuple[float, tuple[int, int], np.ndarray]]:
        """OpenCV's ``matchTemplate(patch[win], t, TM_CCOEFF_NORMED)`` of each template (each
        ``t x t float32``) in a small window (``x0, y0, x1, y1``: a few positions each way), as
        one matrix product of the window's ``t x t`` sub-windows with the zero-mean templates
        (the same scores to float rounding, about 1e-6): each template's (best score, its
        place in the patch, the score map), as :meth:`_match_patch`'s ``match``. The sums of
        each sub-window and of its squares come from integral images in double precision;
        OpenCV's bounds on a score whose denominator vanishes are kept (0 for a flat window).

        Source: OpenCV ``cv::matchTemplate`` (``TM_CCOEFF_NORMED``: the correlation of the
        zero-mean template with the window, over the template's norm times the window's
        standard deviation times its size's root)."""
        x0, y0, x1, y1 = win
        sub = np.ascontiguousarray(patch[y0:y1, x0:x1], dtype=np.float32)
        t = templates[0].shape[0]
        ky, kx = sub.shape[0] - t + 1, sub.shape[1] - t + 1
        tpl = np.stack(templates).reshape(len(templates), -1)
        tpl = tpl - tpl.mean(axis=1, keepdims=True)
        tnorm = np.sqrt(np.square(tpl, dtype=np.float64).sum(axis=1))
        windows = np.lib.stride_tricks.sliding_window_view(sub, (t, t)).reshape(ky * kx, t * t)
        num = (windows @ tpl.T).astype(np.float64)  # positions x templates
        s1, s2 = cv2.integral2(sub, sdepth=cv2.CV_64F)

        def box(a: np.ndarray) -> np.ndarray:
            return (a[t:t + ky, t:t + kx] - a[:ky, t:t + kx] - a[t:t + ky, :kx] + a[:ky, :kx]).reshape(-1)

        w1, w2 = box(s1), box(s2)
        lim = np.sqrt(np.maximum(w2 - w1 * w1 / (t * t), 0.0))[:, None] * tnorm[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            res = np.where(np.abs(num) < lim, num / lim,
                           np.where(np.abs(num) < lim * 1.125, np.sign(num), 0.0)).astype(np.float32)
        out = []
        for r in res.T.reshape(len(templates), ky, kx):
            at = int(np.argmax(r))
            out.append((float(r.flat[at]), (at % kx + x0, at // kx + y0), r))
        return out

    def centre_marker(self, frame: np.ndarray, reg: Registration) -> tuple[np.ndarray | None, str]:
        """The centre marker's corners in the image, found by :meth:`centre_marker_match`.

        Returns:
            (its ``4 x 2`` pixel corners TL, TR, BR, BL or None, why not found).
        """
        found = self.centre_marker_match(frame, reg)
        if isinstance(found, str):
            return None, found
        angle, centre, _score = found
        corners = _corners(centre, self.geometry.centre_marker_size_mm, angle)
        return reg.to_image(corners).astype(np.float32), ""

    def board_pose(self, reg: Registration, corners_px: np.ndarray) -> tuple[float, TableView] | str:
        """The board's angle (deg CCW) and the :class:`TableView` from the centre marker's
        corners, or why they cannot be trusted (a marker of the wrong size, far off the axis)."""
        g = self.geometry
        q = reg.to_board(corners_px)
        up = (q[0] + q[1]) / 2 - (q[3] + q[2]) / 2
        angle = math.degrees(math.atan2(up[1], up[0])) % 360.0
        sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
        if np.any(np.abs(sides / g.centre_marker_size_mm - 1.0) > self.CENTRE_SIZE_TOLERANCE):
            return (f"centre marker not seen: marker {g.centre_marker_id} measures "
                    f"{', '.join(f'{s:.0f}' for s in sides)} mm, not {g.centre_marker_size_mm:.0f} mm")
        return self.pose_from(reg, angle, q.mean(axis=0))

    def pose_from(self, reg: Registration, angle_deg: float, centre_mm: np.ndarray) -> tuple[float, TableView] | str:
        """The board's angle and :class:`TableView` from the centre marker's angle (deg CCW) and
        where its centre appears on the base board (mm): the shift from the axis is the
        parallax of its height, ``shift = -C h / (Cz - h)`` for the camera's foot ``C``; a
        shift no camera over this table explains is refused (a string saying so)."""
        g = self.geometry
        shift = np.asarray(centre_mm, dtype=np.float64)
        h = g.centre_marker_z_mm - g.marker_z_mm
        cz = g.camera_height_mm
        if np.hypot(*shift) > cz * h / (cz - h):  # the camera as far off the axis as it is high
            return f"centre marker not seen: marker {g.centre_marker_id} is {np.hypot(*shift):.0f} mm off the axis"
        camera_xy = -shift * (cz - h) / h
        return angle_deg % 360.0, TableView(reg, camera_xy, cz, g.marker_z_mm)

    # ------------------------------------------------------------------ reading
    def read(self, frame: np.ndarray, registration: Registration | None = None,
             stream: bool = False, t: float | None = None) -> CarrosselReading:
        """Read one frame.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            registration: use this fixed-marker registration instead of registering the frame.
            stream: frames of one video stream: keep the registration between frames
                (:meth:`Registrar.update`); else detect every time.
            t: the frame's time (s) in a stream (a frozen camera is told).

        Returns:
            The :class:`CarrosselReading` (every region unknown unless the status is ``"ok"``).

        Raises:
            ValueError: a frame that is not ``H x W x 3 uint8``.
        """
        check_bgr_frame(frame)
        if t is not None:
            held = self.frozen.update(t, frame)
            if held is not None:
                return CarrosselReading(f"camera frozen: the same frame for {held:.1f} s")
        reg = registration
        # a full read converts the frame to grey once: the registration's detection and the
        # markers' edges (edge_width_mm) both read it (a stream, or a read with the registration
        # given, converts only what it samples)
        self._grey = None if stream or reg is not None else (frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        if reg is None:
            reg = self.registrar.update(frame) if stream else self.registrar.register(self._grey[1])
        if reg is None:
            return CarrosselReading(self.registrar.status or "board not visible")
        flat = frame.reshape(-1, 3)
        paper = _sample(flat, frame.shape, reg.to_image(self._paper))
        white = _white_of(paper) if len(paper) >= 0.25 * len(self._paper) else None
        if white is None:
            return CarrosselReading("board not visible: the markers' white paper is out of the frame",
                                    registration=reg)
        found = self.centre_marker_match(frame, reg, stream=stream)
        if isinstance(found, str):
            return CarrosselReading(f"centre marker not seen: {found}", registration=reg)
        corners = reg.to_image(_corners(found[1], self.geometry.centre_marker_size_mm, found[0])).astype(np.float32)
        pose = self.pose_from(reg, found[0], found[1])
        if isinstance(pose, str):
            return CarrosselReading(pose, registration=reg, centre_corners_px=corners)
        angle, view = pose
        fault = self._colour_fault(flat, frame.shape, view, white, _row_median(np.ascontiguousarray(paper.T)))
        if fault:
            return CarrosselReading(fault, registration=reg, view=view, centre_corners_px=corners)
        facing = {b: f for b, (f, _m) in self.geometry.facing(angle).items()}
        slots, sharpness = self._read_slots(frame, view, angle, white, stream=stream)
        if sharpness < self.MIN_TANGENTIAL_DETAIL:
            return CarrosselReading(f"board turning: its detail along the turn is {sharpness:.2f} of that across "
                                    "it (smeared); read when it stops", registration=reg, view=view,
                                    centre_corners_px=corners)
        return CarrosselReading("ok", angle, facing, slots, reg, view, corners)

    def refine_angle(self, frame: np.ndarray, view: TableView, angle_deg: float) -> float:
        """Refine the board's angle (deg CCW) on the cells' and tiles' edges.

        The centre marker is small (30 mm): its angle is off by up to a degree, which puts the
        rim's cells millimetres off. The 48 cells' outlines (30 mm squares at the board top) and
        the tiles' edges (28 mm at the tile top) are sampled on the gradient magnitude of the
        board's part of the frame for angles within :attr:`REFINE_RANGE_DEG` of the marker's,
        every 0.25 deg then every 0.05 deg, all candidates at once (one ``n x 3 x 3`` matrix
        product per height); the angle whose outlines lie on the strongest edges wins.

        Args:
            frame: ``H x W x 3 uint8`` BGR or ``H x W uint8`` grey.
            view: the frame's :class:`TableView`.
            angle_deg: the centre marker's angle.

        Returns:
            The refined angle, degrees CCW in 0-360.
        """
        grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        g = self.geometry
        h, w = grey.shape
        rim = view.to_image(self._rim, g.tile_top_z_mm)
        x0, y0 = np.maximum(np.floor(rim.min(axis=0)).astype(int) - 3, 0)
        x1, y1 = np.minimum(np.ceil(rim.max(axis=0)).astype(int) + 4, (w, h))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return angle_deg % 360.0
        roi = cv2.GaussianBlur(grey[y0:y1, x0:x1], (0, 0), 1.0)
        mag = cv2.magnitude(cv2.Sobel(roi, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(roi, cv2.CV_32F, 0, 1, ksize=3))
        rh, rw = mag.shape
        flat = mag.ravel()
        mats = [(view.matrix(z), pts) for pts, z in self._outlines_h]
        best = angle_deg
        for span, step in ((self.REFINE_RANGE_DEG, 0.25), (0.25, 0.05)):
            cands = best + np.arange(-span, span + 1e-9, step)
            rad = np.radians(cands)
            rot = np.zeros((len(cands), 3, 3))
            rot[:, 0, 0] = rot[:, 1, 1] = np.cos(rad)
            rot[:, 0, 1] = -np.sin(rad)
            rot[:, 1, 0] = np.sin(rad)
            rot[:, 2, 2] = 1.0
            scores = np.zeros(len(cands))
            for m, pts in mats:
                px = view.project_many(m @ rot, pts)
                u = np.rint(px[..., 0]).astype(np.int64) - x0
                v = np.rint(px[..., 1]).astype(np.int64) - y0
                ok = (u >= 0) & (u < rw) & (v >= 0) & (v < rh)
                vals = np.where(ok, flat[np.where(ok, v * rw + u, 0)], 0.0)
                scores += vals.sum(axis=1)
            best = float(cands[int(np.argmax(scores))])
        return best % 360.0

    def edge_width_mm(self, frame: np.ndarray, reg: Registration) -> float | None:
        """How wide a printed black-to-white step appears in this frame (mm): the fixed markers'
        outer edges (black 14/255 square on 236/255 paper, README), each sampled across at
        :attr:`EDGE_STEP_MM` along its outward normal at 4 places; the step's contrast (the
        paper 2-4 mm outside less the black 2-4 mm inside) over its steepest rise, times the
        step. A sharp frame measures about a pixel (1-2 mm at 450-700 mm); motion blur or
        defocus widens it along the blur's direction (the wider of the two edge directions'
        medians is kept).

        Args:
            frame: ``H x W x 3 uint8`` BGR or ``H x W uint8`` grey.
            reg: the frame's registration (its markers are sampled).

        Returns:
            The width (mm), or None when fewer than 4 profiles of each direction are in the frame.
        """
        ids = tuple(m for m in reg.marker_ids if m in self._edge_profiles)
        if not ids:
            return None
        k = len(self._edge_offsets)
        have = self._edge_sets.get(ids)
        if have is None:
            have = self._edge_sets[ids] = (np.concatenate([self._edge_profiles[m][0] for m in ids]),
                                           np.concatenate([self._edge_profiles[m][1] for m in ids]))
        pts, dirs = have
        px = reg.to_image(pts).astype(np.float32)
        h, w = frame.shape[:2]
        # (each coordinate a contiguous row: numpy reduces a short last axis slowly)
        pu, pv = np.ascontiguousarray(px.T)
        inside = ((pu >= 0) & (pv >= 0) & (pu <= w - 1) & (pv <= h - 1)).reshape(-1, k).all(axis=1)
        if not inside.any():
            return None
        use = np.repeat(inside, k)
        x0, y0 = math.floor(pu[use].min()), math.floor(pv[use].min())
        x1, y1 = math.ceil(pu[use].max()) + 2, math.ceil(pv[use].max()) + 2
        crop = frame[max(y0, 0):min(y1, h), max(x0, 0):min(x1, w)]
        grey = crop if crop.ndim == 2 else cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        q = px - np.array([max(x0, 0), max(y0, 0)], np.float32)
        prof = cv2.remap(grey, q[:, 0].reshape(-1, 1), q[:, 1].reshape(-1, 1), cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE).astype(np.float32).reshape(-1, k)
        # the means of the paper's and the black's samples, summed column by column (as
        # numpy's mean adds a short row: left to right), over their count
        cols = np.ascontiguousarray(prof.T)
        light, dark = np.flatnonzero(self._edge_offsets >= 2.0), np.flatnonzero(self._edge_offsets <= -2.0)
        contrast = (sum(cols[light[1:]], cols[light[0]].copy()) / np.float32(len(light))
                    - sum(cols[dark[1:]], cols[dark[0]].copy()) / np.float32(len(dark)))
        rise = np.maximum.reduce(cols[1:] - cols[:-1], axis=0)
        good = inside & (contrast > 20.0) & (rise > 0)
        width = contrast / np.maximum(rise, 1e-6) * self.EDGE_STEP_MM
        meds = []
        for d in (0, 1):
            sel = width[good & (dirs == d)]
            if len(sel) >= 4:
                meds.append(float(_row_median(sel.reshape(1, -1))[0]))
        return max(meds) if meds else None

    def _colour_fault(self, flat: np.ndarray, shape: tuple[int, ...], view: TableView, white: np.ndarray,
                      code: np.ndarray) -> str:
        """The colour check on the paper white and the booth roofs (always on the table), then
        the booth roofs' hues against their print (:attr:`print_check`)."""
        # every roof's points sampled at once (those in the frame), then split by roof
        p = np.rint(view.to_image(self._roof_points, 55.0)).astype(np.int64)
        h, w = shape[:2]
        pu, pv = np.ascontiguousarray(p.T)
        ok = (pu >= 0) & (pu < w) & (pv >= 0) & (pv < h)
        ends = np.cumsum(ok)[np.array(self._roof_ends) - 1].tolist()
        px = flat[pv[ok] * w + pu[ok]]
        roofs = [px[a:b] for a, b in zip([0] + ends[:-1], ends)]
        lab = linear_to_lab(srgb_to_linear(px), white) if len(px) else np.zeros((0, 3), np.float32)
        fault = self.colour_check.problem(white, code, lab)
        if fault or self.print_check is None:
            return fault
        roof = dict(zip(self._booth_roofs, roofs))
        measured = np.full((len(self.print_check.names), 3), np.nan)
        for i, name in enumerate(self.print_check.names):
            p = roof[name]
            p = p[(p < CLIPPED).any(axis=1)]  # glare: not the print's colour
            if len(p) >= 0.5 * len(self._booth_roofs[name]) and len(p) >= 10:
                # (each channel a contiguous row: numpy reduces a short last axis slowly)
                measured[i] = _row_median(srgb_to_linear(np.ascontiguousarray(p.T))) / np.maximum(white, 1e-4)
        return self.print_check.problem(measured)

    def tile_samples(self, frame: np.ndarray, view: TableView, angle: float, z_mm: float | None = None) -> np.ndarray:
        """Every cell's tile top sampled in the tile frame: ``48 x N x N x 3 uint8`` BGR
        (bilinear; row 0 towards the board's centre; outside the frame = 0), at the tile
        top's height unless ``z_mm`` is given."""
        g = self.geometry
        a = math.radians(angle)
        rot = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
        m = view.matrix(g.tile_top_z_mm if z_mm is None else z_mm) @ rot
        px = cv2.perspectiveTransform(self._tile_points, m)
        if view.registration.lens is not None:
            px = distort(px.reshape(-1, 2), *view.registration.lens).astype(np.float32)
        n = _grid_n()
        maps = px.reshape(len(g.cell_names) * n, n, 2)
        out = cv2.remap(frame, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                        borderValue=(0, 0, 0))
        return out.reshape(len(g.cell_names), n, n, 3)

    def footprint(self, view: TableView, centre_mm: np.ndarray, up: np.ndarray) -> np.ndarray:
        """The tile-frame grid points (``N*N`` bool) a standee on this tile would hide: its body
        and head, seen from the camera, where they cross the tile top's plane (+1 mm)."""
        g = self.geometry
        body_r, z0, z1, head_r, head_z = g.standee
        right = np.array([up[1], -up[0]])
        top = g.tile_top_z_mm
        # a point at height z above the tile centre appears on the tile plane at c + s(z)
        zs = np.concatenate([np.linspace(z0, z1, 8), [head_z - head_r / 2, head_z, head_z + head_r / 2]])
        radii = np.concatenate([np.full(8, body_r), [head_r * 0.87, head_r, head_r * 0.87]]) + 1.0
        cam = view.camera_xy_mm
        cz = view.camera_height_mm
        k = (zs - top) / np.maximum(cz - zs, 1.0)
        shift = (centre_mm - cam)[None, :] * k[:, None]
        sx, sy = shift @ right, shift @ up
        grid = self._grid
        d2 = (grid[:, None, 0] - sx[None, :]) ** 2 + (grid[:, None, 1] - sy[None, :]) ** 2
        return np.any(d2 <= (radii * (cz - top) / np.maximum(cz - zs, 1.0))[None, :] ** 2, axis=1)

    def _pose_cache_for(self, view: TableView, angle: float) -> dict[str, Any]:
        """What depends only on the registration, the camera's foot and the board's angle (the
        cells' sample points in the image, the standees' regions), kept while those stay the
        same (a stream of a still table; the same frame read again)."""
        key = (view.registration, float(angle), tuple(view.camera_xy_mm.tolist()), view.camera_height_mm)
        cache = self._pose_cache
        if cache is None or cache["key"][0] is not key[0] or cache["key"][1:] != key[1:]:
            cache = self._pose_cache = {"key": key}
        return cache

    def _cells_at(self, view: TableView, angle: float) -> tuple[np.ndarray, np.ndarray]:
        """The cells' world centres and ups (``48 x 2`` each, :meth:`CarrosselGeometry.cell_centres_mm`
        and :meth:`~CarrosselGeometry.cell_ups`) at this pose, worked out once per pose."""
        pose = self._pose_cache_for(view, angle)
        cells = pose.get("cells")
        if cells is None:
            cells = pose["cells"] = (self.geometry.cell_centres_mm(angle), self.geometry.cell_ups(angle))
        return cells

    def _read_slots(self, frame: np.ndarray, view: TableView, angle: float, white: np.ndarray,
                    stream: bool = False) -> tuple[dict[str, SlotReading], float]:
        """All 48 slots at once: the samples, the corners' colours, the empty cells' middles and
        the tiles' letters as array operations; one region rule per cell. In a stream, a cell
        whose samples differ from those of its last reading by at most :attr:`CACHE_LEVELS` on
        average (the same registration, the board within :attr:`CACHE_ANGLE_DEG`) keeps that
        reading: a still table costs the sampling alone.

        Returns:
            (slot name -> reading, the board's tangential detail: the summed absolute lightness
            steps across the cells' middles along each cell's v axis (nearly the turn's
            direction) over those along its u axis (radial), cells in the frame only).
        """
        g = self.geometry
        ncell = len(g.cell_names)
        pose = self._pose_cache_for(view, angle)
        px = pose.get("px")
        if px is None:
            a = math.radians(angle)
            rot = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
            px = cv2.perspectiveTransform(self._slot_points, view.matrix(g.tile_top_z_mm) @ rot)
            if view.registration.lens is not None:
                px = distort(px.reshape(-1, 2), *view.registration.lens).astype(np.float32)
            px = pose["px"] = px.reshape(ncell, -1, 2)
        # the sample points as one two-channel map (OpenCV's CV_32FC2: the same samples as a
        # map per coordinate, without splitting it)
        flat = cv2.remap(frame, px, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        h, w = frame.shape[:2]
        bounds = pose.get("bounds")
        if bounds is None:
            u, v = np.ascontiguousarray(px.reshape(-1, 2).T)  # contiguous rows: fast reductions
            bounds = pose["bounds"] = (u.min(), v.min(), u.max(), v.max())
        if bounds[0] >= 0 and bounds[1] >= 0 and bounds[2] <= w - 1 and bounds[3] <= h - 1:  # all in the frame
            black = np.zeros(flat.shape[:2], bool)
            outside = np.zeros(ncell, bool)
        else:
            black = (flat[..., 0] == 0) & (flat[..., 1] == 0) & (flat[..., 2] == 0)  # outside the frame
            seen_all = ~black[:, self._sel_corner]
            outside = (seen_all.mean(axis=1) < 0.95) | (black.mean(axis=1) > 0.02)
        # each sample's relative luminance: one table look-up per channel (OpenCV's LUT), summed
        # as b + g + r
        lum3 = cv2.LUT(flat, self._lum_lut)
        lum_all = lum3[..., 0] + lum3[..., 1] + lum3[..., 2]
        side = 2 * (self.LETTER_HALF + self.LETTER_SHIFT) + 1
        middles = lum_all[~outside, :self._n_region].reshape(-1, side, side)
        across = float(np.abs(np.diff(middles, axis=1)).sum())
        along = float(np.abs(np.diff(middles, axis=2)).sum())
        detail = along / across if across > 0 else 0.0
        # a stream's still table: a cell whose samples are those of its last reading keeps it
        todo = np.arange(ncell)
        cache = self._slot_cache if stream else None
        if (cache is not None and cache["registration"] is view.registration
                and abs((angle - cache["angle"] + 180.0) % 360.0 - 180.0) <= self.CACHE_ANGLE_DEG):
            diff = np.abs(flat.astype(np.int16) - cache["samples"]).reshape(ncell, -1).mean(axis=1)
            todo = np.flatnonzero(diff > self.CACHE_LEVELS)
        else:
            cache = None
        out: dict[str, SlotReading] = {}
        self._pose = (view, angle)
        self._frame = frame
        if len(todo) == ncell:  # every cell (a full read): the arrays themselves, not copies of them
            out = self._read_cells(flat, black, outside, lum_all, todo, white)
        elif len(todo):
            out = self._read_cells(flat[todo], black[todo], outside[todo], lum_all[todo], todo, white)
        if stream:
            if cache is None:
                cache = {"registration": view.registration, "angle": angle, "samples": flat.astype(np.int16),
                         "slots": {}}
            else:
                cache["samples"][todo] = flat[todo]
            cache["slots"].update(out)
            self._slot_cache = cache
            out = cache["slots"]
        return {name: out[name] for name in g.cell_names}, detail

    def _read_cells(self, flat: np.ndarray, black: np.ndarray, outside: np.ndarray, lum: np.ndarray,
                    index: np.ndarray, white: np.ndarray) -> dict[str, SlotReading]:
        """The slots of the cells ``index`` (their samples ``flat``, ``n x P x 3`` uint8; ``black``
        and ``outside`` where they leave the frame; their luminance ``lum``): the corners'
        colours, the empty cells' middles and the tiles' letters as array operations, one
        region rule per cell."""
        g = self.geometry
        ncell = len(index)
        corner_px = flat[:, self._sel_corner]
        # numpy reduces a short last axis slowly: the three channels compared one by one
        cb, cg, cr = corner_px[..., 0], corner_px[..., 1], corner_px[..., 2]
        seen = ~black[:, self._sel_corner]
        clipped = (cb >= CLIPPED) & (cg >= CLIPPED) & (cr >= CLIPPED)
        # white-relative linear light from one table (the divisions of linear_to_lab), one
        # vectorised Lab conversion (within LAB_FAST_ERROR), the classes from the classifier's
        # grid, a pixel near a class boundary classified from its exact Lab: the classes of
        # linear_to_lab's Lab
        table = self._relative_table(white)
        corner_rel = _relative(table, corner_px.reshape(-1, 3))
        lab = lab_fast(corner_rel)
        cls = self.classifier.pixel_classes_near(lab, lambda i: lab_exact(corner_rel[i]))
        cls = cls.reshape(ncell, -1).astype(np.int64)
        cls[clipped] = -1
        width = len(self.references.names) + OFFSET
        code = np.arange(ncell)[:, None] * width + cls + OFFSET
        counts = np.bincount(code[seen], minlength=ncell * width).reshape(ncell, width)
        decided = self.classifier.decide_many(counts)
        # empty cells: the middle as light as the corners (a 5 mm number, no disc or letter)
        corner_lum = _row_median(lum[:, self._sel_corner])
        dark = (lum[:, self._sel_disc] < 0.55 * np.maximum(corner_lum, 1e-4)[:, None]).mean(axis=1)
        # tiles: the letter against the disc's cream
        cream = _row_upper_quartile(lum[:, self._sel_cream])
        side = 2 * (self.LETTER_HALF + self.LETTER_SHIFT) + 1
        out: dict[str, SlotReading] = {}
        tiles: list[tuple[int, str, float]] = []
        empties: list[tuple[int, float]] = []
        retry: list[int] = []
        outside_l, dark_l = outside.tolist(), dark.tolist()
        for j, i in enumerate(index.tolist()):
            name = g.cell_names[i]
            if outside_l[j]:
                out[name] = SlotReading(UNKNOWN, reason="out of the frame")
                continue
            colour = decided[j]
            if colour.label == UNKNOWN:
                out[name] = SlotReading(UNKNOWN, reason=f"corners: {colour.reason}")
                retry.append(j)
            elif colour.label == EMPTY:
                # a printed number is a few per cent of the disc; a letter far more
                if dark_l[j] <= 0.12:
                    empties.append((j, colour.confidence))
                else:
                    out[name] = SlotReading(UNKNOWN, reason=f"white corners but {dark_l[j]:.0%} of the middle dark")
            else:
                tiles.append((j, colour.label, colour.confidence))
        if retry:
            # corners of two colours: a standee leaning over them (its head reaches past the
            # tile's edge under tilt) shows its paint there; without the corners where the
            # geometry puts a standee the tile's own colour may remain (a standee still has to
            # be seen on the disc, or the letter read, for the tile to be read)
            view, angle = self._pose
            rows = np.array(retry)
            cells = index[rows]
            known = self._pose_cache_for(view, angle).setdefault("corners", {})  # cell -> hidden corners
            new = [int(c) for c in cells if int(c) not in known]
            if new:
                centres, ups = self._cells_at(view, angle)
                known.update(zip(new, self.standee_mask(view, centres[new], ups[new], self._corner_points, 1.0)))
            hidden = np.array([known[int(c)] for c in cells])
            keep = seen[rows] & ~hidden
            recount = np.bincount((np.arange(len(rows))[:, None] * width + cls[rows] + OFFSET)[keep],
                                  minlength=len(rows) * width).reshape(len(rows), width)
            for j, colour, n_keep in zip(retry, self.classifier.decide_many(recount), keep.sum(axis=1).tolist()):
                if n_keep < self.MIN_CORNERS_LEFT:
                    continue
                if colour.label not in (UNKNOWN, EMPTY):
                    tiles.append((j, colour.label, colour.confidence))
        # the letters of the empty cells' middles and of the tiles, in one match
        rows_e, rows_t = [e[0] for e in empties], [t[0] for t in tiles]
        if rows_e or rows_t:
            both = np.array(rows_e + rows_t)
            region = lum[both, :self._n_region] / np.maximum(cream[both], 1e-4)[:, None]
            letter_r = self._letter_region_scores(region.reshape(-1, side, side))[0]
        if empties:
            # white corners around a letter: a pale tile (glare washes a yellow print out); around
            # something not white: a standee on a pale tile, a finger
            idx = np.array(rows_e)
            scores = letter_r[:len(rows_e)]
            middle = flat[idx][:, self._sel_middle]
            middle_rel = _relative(table, middle.reshape(-1, 3))
            mcls = self.classifier.pixel_classes_near(lab_fast(middle_rel), lambda i: lab_exact(middle_rel[i]))
            mcls = mcls.reshape(len(idx), -1)
            mb, mg, mr = middle[..., 0], middle[..., 1], middle[..., 2]
            white_mid = ((mcls == -1) | ((mb >= CLIPPED) & (mg >= CLIPPED) & (mr >= CLIPPED))).mean(axis=1)
            # the corners' median colour against the white reference: the print's neutral white
            # (chroma near 0), not a pale hand's skin over a tile (chroma 12 and more)
            lit = seen[idx] & ~clipped[idx]

            def corner_chroma(rows: np.ndarray, corner_lab: np.ndarray) -> np.ndarray:
                # the medians of a* and of b* (rows of one array: one sort)
                ab = np.concatenate([corner_lab[..., 1], corner_lab[..., 2]])
                med = np.nan_to_num(_masked_quantile(ab, np.concatenate([lit[rows], lit[rows]]), 0.5))
                return np.hypot(med[:len(rows)], med[len(rows):])

            every = np.arange(len(idx))
            chroma = corner_chroma(every, lab.reshape(ncell, -1, 3)[idx])
            # a median moves no more than its values: with the fast Lab's error in a* and b*
            # the chroma is within sqrt(2) LAB_FAST_ERROR; near the bound, or reported (over
            # it), it is measured on the exact Lab
            near = np.flatnonzero(chroma > self.EMPTY_MAX_CHROMA - 1.5 * LAB_FAST_ERROR)
            if len(near):
                exact = lab_exact(corner_rel.reshape(ncell, -1, 3)[idx[near]].reshape(-1, 3))
                chroma[near] = corner_chroma(near, exact.reshape(len(near), -1, 3))
            # a hand brighter than the white in every channel (nearer the lamp, in a dim frame)
            # reads as the white itself in the table above: where it is most of the corners, their
            # hue from the unclipped light of those pixels (companion/vision/skin.py)
            bright = np.flatnonzero((brighter_than_white(corner_px[idx], white) & lit).mean(axis=1) >= 0.5)
            if len(bright):
                chroma[bright] = np.maximum(chroma[bright], median_chroma(corner_px[idx[bright]], white, lit[bright],
                                                                          brighter_only=True))
            for (j, conf), best, wm, ch in zip(empties, scores.max(axis=1).tolist(), white_mid.tolist(),
                                               chroma.tolist()):
                name = g.cell_names[int(index[j])]
                if best >= self.LETTER_MIN:
                    out[name] = SlotReading(UNKNOWN, reason=f"white corners but a letter in the middle (r {best:.2f})")
                elif ch > self.EMPTY_MAX_CHROMA:
                    out[name] = SlotReading(UNKNOWN, reason=f"pale corners of chroma {ch:.1f}, not the print's "
                                            f"white (at most {self.EMPTY_MAX_CHROMA:g}): a hand over the cell?")
                elif wm < self.EMPTY_MIDDLE_WHITE:
                    out[name] = SlotReading(UNKNOWN, reason=f"white corners but only {wm:.0%} of the middle white")
                else:
                    out[name] = SlotReading(EMPTY, confidence=conf)
        if tiles:
            scores = letter_r[len(rows_e):]
            unclear: list[tuple[int, str, float, float, float]] = []
            # each tile's letters from the best (the first of equals, as a stable sort)
            order = np.argsort(-scores, axis=1, kind="stable")[:, :2]
            top2 = np.take_along_axis(scores, order, axis=1).tolist()
            for (j, colour_name, conf), (k1, _k2), (best, second) in zip(tiles, order.tolist(), top2):
                name = g.cell_names[int(index[j])]
                if best < self.LETTER_MIN or (1.0 - second) < self.LETTER_MARGIN * (1.0 - best):
                    unclear.append((j, colour_name, conf, best, second))
                else:
                    out[name] = SlotReading("tile", self.letters.animals[k1], colour_name, False, conf * best)
            if unclear:
                out.update(self._standees(lum, index, unclear, flat, table))
        return out

    @staticmethod
    def _relative_table(white: np.ndarray) -> np.ndarray:
        """Every 8-bit level of each channel in linear light over ``white`` (``3`` linear BGR),
        clipped to 1: ``3 x 256 float32``, the same divisions as :func:`linear_to_lab`."""
        w = np.maximum(np.asarray(white, dtype=np.float32).reshape(3, 1), 1e-4)
        table = np.divide(_LEVELS_LINEAR[None, :], w)
        return np.minimum(table, np.float32(1.0), out=table)

    def standee_mask(self, view: TableView, centres_mm: np.ndarray, ups: np.ndarray,
                     points: np.ndarray | None = None, grow_mm: float = 1.0, surely: bool = False) -> np.ndarray:
        """Which tile-frame points a client standee on each of these tiles hides.

        A point of the standee at height z over the tile's centre appears on the tile top's
        plane shifted by ``(c - C) (z - z_top) / (Cz - z)`` (C the camera's foot, Cz its height;
        Hartley and Zisserman 6.1): the body (radius 6 -> 5.5 mm from z 7 to 29, README) and the
        head (radius 5 at z 32) sweep a region from the tile's centre away from the camera's
        foot, 3-9 mm for the outer cells. The foot's direction comes from the centre marker's
        parallax, which fixes ``C / Cz``; the height itself is not measured, so the region is
        taken at each height of :attr:`STANDEE_CAMERA_HEIGHTS_MM` (the table's 450-700 mm).

        Args:
            view: the frame's :class:`TableView`.
            centres_mm: the tiles' centres (world, ``n x 2`` or ``2`` mm); ups: their letters'
                up directions (same shape, unit vectors).
            points: tile-frame points (``M x 2`` mm; default the whole sample grid).
            grow_mm: each disc of the standee widened by this (mm; negative: narrowed), for the
                tile's placement (1.2 mm) and the registration's error.
            surely: the points hidden at every height (else at any height).

        Returns:
            ``n x M`` bool (``M`` for one tile given as ``2``).
        """
        one = np.ndim(centres_mm) == 1
        out = self._standee_masks(view, centres_mm, ups, points, (grow_mm,), (surely,))[0]
        return out[0] if one else out

    def _standee_masks(self, view: TableView, centres_mm: np.ndarray, ups: np.ndarray, points: np.ndarray | None,
                       grows_mm: Sequence[float], surely: Sequence[bool]) -> np.ndarray:
        """:meth:`standee_mask` for several ``grow_mm`` (each with its ``surely``) at once:
        ``G x n x M`` bool, each as :meth:`standee_mask` computes it."""
        g = self.geometry
        c = np.asarray(centres_mm, dtype=np.float64).reshape(-1, 2)
        up = np.asarray(ups, dtype=np.float64).reshape(-1, 2)
        pts = self._grid if points is None else np.asarray(points, dtype=np.float64)
        px, py = np.ascontiguousarray(pts.T)  # each coordinate a contiguous row
        h = g.centre_marker_z_mm - g.marker_z_mm
        czs = np.asarray(self.STANDEE_CAMERA_HEIGHTS_MM, dtype=np.float64)
        key = (tuple(float(v) for v in grows_mm), g.standee, g.tile_top_z_mm)
        terms = self._standee_terms.get(key)
        if terms is None:
            # what depends on the table alone: each disc's shift per mm of lean (H x D) and
            # its squared radius on the tile's plane (G x H x D), as a loop over the heights
            # computes them
            zs, radii0 = self._standee_discs
            top = g.tile_top_z_mm
            radii = np.maximum(radii0[None, :] + np.asarray(grows_mm, dtype=np.float64)[:, None], 0.0)  # G x D
            k = (zs - top)[None, :] / np.maximum(czs[:, None] - zs[None, :], 1.0)
            rr = (radii[:, None, :] * (czs[None, :, None] - top) / np.maximum(czs[:, None] - zs[None, :], 1.0)[None]) ** 2
            terms = self._standee_terms[key] = (k, rr)
        k, rr = terms
        # both camera heights at once (H x ...), each value as a loop over the heights computes it
        cam = view.camera_xy_mm[None, :] * (czs - h)[:, None] / max(view.camera_height_mm - h, 1.0)  # H x 2
        dx, dy = c[None, :, 0] - cam[:, None, 0], c[None, :, 1] - cam[:, None, 1]  # H x n
        # the lean along each tile's right (up[1], -up[0]) and up: two-term dot products
        sx = (dx * up[None, :, 1] + dy * -up[None, :, 0])[:, None, :] * k[:, :, None]  # H x D x n
        sy = (dx * up[None, :, 0] + dy * up[None, :, 1])[:, None, :] * k[:, :, None]
        # H x D x n x M squared distances; the discs reduced first (not the last axis: numpy
        # reduces a short last axis slowly), then the heights
        dist = np.square(px - sx[..., None])
        dist += np.square(py - sy[..., None])
        out = []
        for rr_g, surely_g in zip(rr, surely):
            hidden = np.logical_or.reduce(dist <= rr_g[:, :, None, None], axis=1)  # H x n x M
            out.append(np.logical_and.reduce(hidden, axis=0) if surely_g else np.logical_or.reduce(hidden, axis=0))
        return np.stack(out)

    def _standees(self, lum: np.ndarray, index: np.ndarray,
                  unclear: Sequence[tuple[int, str, float, float, float]],
                  flat: np.ndarray | None = None, table: np.ndarray | None = None) -> dict[str, SlotReading]:
        """Tiles whose corners read a colour but whose letter is unclear: a client standee on
        the tile, or not.

        A standee stands on the tile's centre, so its body always hides the middle of the disc
        (within :attr:`STANDEE_CENTRE_MM` of the centre, less than its 6 mm radius less the
        tile's placement and the registration's error): there a standee is one even surface
        (lightness spread at most :attr:`STANDEE_CENTRE_SPREAD` of the cream, at most
        :attr:`STANDEE_CENTRE_CREAM` of it as light as the cream, its median lighter than ink:
        :attr:`STANDEE_CENTRE_MIN`, or of a colour where ink is neutral:
        :attr:`STANDEE_CENTRE_CHROMA`), where a printed letter is dark strokes on cream. The tile's colour comes from its corners, outside the standee's
        region (:meth:`standee_mask`); its animal stays unknown: the body hides the disc within
        6-7 mm of the centre, and the 10 mm letter lies within 5 mm of it, so what it leaves
        visible is a stroke's end or none (matched on those samples alone, the five letters
        score alike on the photographs of the table: no reading of it is never wrong).

        Args:
            lum: the cells' luminance samples (``n x P``, the reader's sample order).
            index: the cells' indices (``n``).
            unclear: (row in ``lum``, colour, colour confidence, best letter r, next letter r).
            flat, table: the cells' samples (``n x P x 3 uint8`` BGR, rows as ``lum``) and the
                white-relative table (:meth:`_relative_table`) for a dark middle's colour; None:
                a dark middle is never a standee's.

        Returns:
            slot name -> :class:`SlotReading` for each of ``unclear``.
        """
        g = self.geometry
        view, angle = self._pose
        centres, ups = self._cells_at(view, angle)
        centre, ring, ring_pts = self._standee_places
        blurred: bool | None = None
        rows = np.array([u[0] for u in unclear])
        cells = index[rows]
        rim = self._pose_cache_for(view, angle).setdefault("rim", {})  # cell -> (seen, under)
        new = [int(c) for c in cells if int(c) not in rim]
        if new:
            # the rim the standee's region (widened) leaves seen, and where its body (narrowed)
            # is at every camera height
            hidden_new, under_new = self._standee_masks(view, centres[new], ups[new], ring_pts, (1.0, -1.0),
                                                        (False, True))
            seen_new = ~hidden_new
            rim.update({c: (a, b) for c, a, b in zip(new, seen_new, under_new)})
        seen_all = np.array([rim[int(c)][0] for c in cells])
        under_all = np.array([rim[int(c)][1] for c in cells])
        region = lum[rows, :self._n_region]
        ring_lum = region[:, ring]
        n_seen, n_under = seen_all.sum(axis=1), under_all.sum(axis=1)
        cream = np.maximum(_masked_quantile(ring_lum, seen_all, 0.75), 1e-4)
        mid = region[:, centre] / cream[:, None]
        spread, light, level = mid.std(axis=1), (mid > 0.85).mean(axis=1), _row_median(mid)
        # a middle darker than STANDEE_CENTRE_MIN: its colour (the median a* and b* of its exact
        # Lab against the white) tells a standee's paint from printed ink
        chroma = np.zeros(len(rows))
        dim = np.flatnonzero((level < self.STANDEE_CENTRE_MIN) & (level >= self.STANDEE_CENTRE_INK))
        if len(dim) and flat is not None and table is not None:
            px = flat[rows[dim], :self._n_region][:, centre]  # d x m x 3 uint8
            lab = lab_exact(_relative(table, px.reshape(-1, 3))).reshape(len(dim), -1, 3)
            ab = _row_median(np.ascontiguousarray(np.concatenate([lab[..., 1], lab[..., 2]])))
            chroma[dim] = np.hypot(ab[:len(dim)], ab[len(dim):])
        rim = _masked_quantile(ring_lum, under_all, 0.5) / cream
        # a hand is larger than the figure: the middle's colour on the corners outside the
        # region a standee may cover (companion/vision/standee_checks.py)
        # (only for the tiles every other test would read as a standee's)
        beyond = np.zeros(len(rows))
        best_all = np.array([u[3] for u in unclear])
        cand = np.flatnonzero((n_seen >= 20) & (n_under >= self.STANDEE_RIM_MIN) & (spread <= self.STANDEE_CENTRE_SPREAD)
                              & (light <= self.STANDEE_CENTRE_CREAM) & (rim <= self.STANDEE_RIM_MAX)
                              & ~((level < self.STANDEE_CENTRE_MIN) & (chroma < self.STANDEE_CENTRE_CHROMA))
                              & (best_all < self.LETTER_MIN))
        if len(cand) and flat is not None and table is not None:
            grown = self._pose_cache_for(view, angle).setdefault("corners_grown", {})  # cell -> corners it may cover
            cand_cells = cells[cand]
            new_cells = [int(c) for c in cand_cells if int(c) not in grown]
            if new_cells:
                grown.update(zip(new_cells, self.standee_mask(view, centres[new_cells], ups[new_cells], self._corner_points,
                                                              standee_checks.REGION_GROW_MM)))
            hidden = np.array([grown[int(c)] for c in cand_cells])
            corner_px = flat[rows[cand]][:, self._sel_corner]
            lit = ~np.all(corner_px >= CLIPPED, axis=-1) & ~np.all(corner_px == 0, axis=-1)
            # the fast Lab (within LAB_FAST_ERROR): the test's distances are of 12 units
            corner_lab = lab_fast(_relative(table, corner_px.reshape(-1, 3))).reshape(len(cand), -1, 3)
            middle_px = flat[rows[cand], :self._n_region][:, centre]
            middle_lab = lab_fast(_relative(table, middle_px.reshape(-1, 3))).reshape(len(cand), -1, 3)
            tile_lab = np.array([self.references.lab[self.references.names.index(unclear[k][1])] for k in cand])
            beyond[cand] = standee_checks.paint_beyond(corner_lab, lit & ~hidden, middle_lab, tile_lab)
        out: dict[str, SlotReading] = {}
        for k, (j, colour, conf, best, second) in enumerate(unclear):
            name = g.cell_names[int(index[j])]
            unclear_why = (f"letter unclear (r {best:.2f}, next {second:.2f}): covered or blurred")
            if n_seen[k] < 20 or n_under[k] < self.STANDEE_RIM_MIN:
                out[name] = SlotReading(UNKNOWN, reason=f"{unclear_why}; a standee would not show on its rim here")
                continue
            if (spread[k] > self.STANDEE_CENTRE_SPREAD or light[k] > self.STANDEE_CENTRE_CREAM
                    or (level[k] < self.STANDEE_CENTRE_MIN and chroma[k] < self.STANDEE_CENTRE_CHROMA)
                    or rim[k] > self.STANDEE_RIM_MAX):
                out[name] = SlotReading(UNKNOWN, reason=f"{unclear_why}; not a standee's look (middle spread "
                                                        f"{spread[k]:.2f}, {light[k]:.0%} cream, level "
                                                        f"{level[k]:.2f}"
                                                        + (f" of chroma {chroma[k]:.1f}" if self.STANDEE_CENTRE_INK <= level[k]
                                                           < self.STANDEE_CENTRE_MIN else "")
                                                        + f"; rim where it would stand {rim[k]:.2f} of the cream)")
                continue
            if best >= self.LETTER_MIN:
                # a standee's body hides the whole letter (standee_checks)
                out[name] = SlotReading(UNKNOWN, reason=f"{unclear_why}; the letter is seen (r {best:.2f}), which a "
                                                        "standee's body would hide")
                continue
            if beyond[k] > standee_checks.PAINT_BEYOND_MAX:
                out[name] = SlotReading(UNKNOWN, reason=f"{unclear_why}; the middle's colour on {beyond[k]:.0%} of the "
                                                        "corners beyond a standee's place: a hand?")
                continue
            if blurred is None:
                known = self._grey
                width = self.edge_width_mm(known[1] if known is not None and known[0] is self._frame else self._frame,
                                           view.registration)
                blurred = width is None or width > self.STANDEE_EDGE_MAX_MM
            if blurred:
                out[name] = SlotReading(UNKNOWN, reason=f"{unclear_why}; the frame is too blurred to tell a "
                                                        "standee (the markers' edges)")
                continue
            out[name] = SlotReading(UNKNOWN, colour=colour, standee=True, confidence=conf,
                                    reason="a standee on it hides its letter")
        return out

    def letter_scores(self, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Match discs against the five letters, each slid over +-:attr:`LETTER_SHIFT` samples.

        Args:
            rel: ``N x N`` or ``N*N`` (one disc) or ``n x N*N`` (n discs) lightness relative to
                the disc's cream, in the tile frame.

        Returns:
            (the best Pearson r of each letter over the shifts, its shift's index): ``K`` each
            for one disc, ``n x K`` for n. The letter window is +-:attr:`LETTER_HALF` samples
            around the tile's centre. The tile lies within 1.2 mm of its cell's centre (README)
            and the registration is off by up to a pixel (about 1 mm): the shift search
            absorbs both.
        """
        n = _grid_n()
        rel = np.asarray(rel, dtype=np.float32)
        one = rel.size == n * n
        rel = rel.reshape(-1, n, n)
        c, w, s = n // 2, self.LETTER_HALF, self.LETTER_SHIFT
        best, at = self._letter_region_scores(rel[:, c - w - s:c + w + s + 1, c - w - s:c + w + s + 1])
        return (best[0], at[0]) if one else (best, at)

    def _letter_region_scores(self, region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`letter_scores` on ``n x S x S`` letter regions (``S = 2 (LETTER_HALF +
        LETTER_SHIFT) + 1``): ``n x K`` best r and shift index (row-major over the shifts).

        Every shift's window products with the five zero-mean unit-norm templates, and the
        window's sum, are one matrix product of the flattened regions with a fixed matrix
        (:attr:`_letter_matrix`: each template placed at each shift, and each shift's box);
        the sums of squares another. Pearson r = products / sqrt(sum x^2 - (sum x)^2 / n)."""
        region = np.asarray(region, dtype=np.float32)
        m = len(region)
        flat = region.reshape(m, -1)
        n_letters, n_shifts = len(self._letter_windows), self._n_shifts
        both = flat @ self._letter_matrix
        num = both[:, :n_letters * n_shifts].reshape(m, n_letters, n_shifts)
        sx = both[:, n_letters * n_shifts:]
        sxx = (flat * flat) @ self._letter_boxes
        q = 2 * self.LETTER_HALF + 1
        den = np.sqrt(np.maximum(sxx - sx * sx / (q * q), 1e-9))
        r = num / den[:, None, :]
        return r.max(axis=2), r.argmax(axis=2)


#: the weight of the upper of the two order statistics between which a quartile lies, in the
#: type ``np.percentile`` computes it in for float32 values (float32 on NumPy 2, float64 on 1.x)
_QUARTILE_DTYPE = np.percentile(np.zeros(2, np.float32), 50).dtype


def _row_upper_quartile(values: np.ndarray) -> np.ndarray:
    """``np.percentile(values, 75, axis=1)`` (linear, NumPy's arithmetic and type) of an
    ``n x M float32`` array, from one partition (without percentile's general machinery)."""
    m = values.shape[1]
    pos = (m - 1) * 0.75
    lo = math.floor(pos)
    if lo + 1 >= m:
        return np.percentile(values, 75, axis=1)
    part = np.partition(values, (lo, lo + 1), axis=1)
    a, b = part[:, lo], part[:, lo + 1]
    t = pos - lo
    if t >= 0.5:  # NumPy's lerp from the upper value then
        return np.percentile(values, 75, axis=1)
    return a + (b - a) * np.full(1, t, dtype=_QUARTILE_DTYPE)


def _row_median(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=1)`` of an ``n x M`` array (float, or integer: then float64),
    from one partition: the middle value, or the mean of the two middle ones as NumPy takes it."""
    m = values.shape[1]
    if m == 0:
        return np.median(values, axis=1)
    k = m // 2
    if m % 2:
        return np.mean(np.partition(values, k, axis=1)[:, k:k + 1], axis=1)
    part = np.partition(values, (k - 1, k), axis=1)
    return np.mean(part[:, k - 1:k + 1], axis=1)


def _white_of(bgr: np.ndarray) -> np.ndarray | None:
    """:func:`~companion.vision.colour.white_of` (the per-channel median in linear light,
    ``3 float32``, or None under 10 pixels), each channel's median on a contiguous row."""
    if len(bgr) < 10:
        return None
    return _row_median(srgb_to_linear(np.ascontiguousarray(np.asarray(bgr, dtype=np.uint8).reshape(-1, 3).T))
                       ).astype(np.float32)


def _relative(table: np.ndarray, px: np.ndarray) -> np.ndarray:
    """``N x 3 uint8`` BGR pixels to linear light over the white, at most 1 (``N x 3 float32``),
    through the ``3 x 256`` table of :meth:`CarrosselReader._relative_table`."""
    return np.take(table.reshape(-1), px.astype(np.intp) + _CHANNEL_OFFSET)


#: each channel's row in a ``3 x 256`` table, flattened
_CHANNEL_OFFSET = np.array([0, 256, 512], dtype=np.intp)


def _masked_quantile(values: np.ndarray, mask: np.ndarray, q: float) -> np.ndarray:
    """Per row of ``values`` (``n x M``), the ``q`` quantile (0-1, linear between order
    statistics, as ``np.percentile``) of the entries where ``mask`` (``n x M`` bool) holds;
    NaN for a row with none."""
    v = np.where(mask, values, np.inf)
    v.sort(axis=1)
    count = mask.sum(axis=1)
    pos = np.maximum(count - 1, 0) * q
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(count - 1, 0))
    rows = np.arange(len(v))
    frac = pos - lo
    with np.errstate(invalid="ignore"):
        out = v[rows, lo] * (1 - frac) + v[rows, hi] * frac
    return np.where(count > 0, out, np.nan)


def _peak_offset(left: float | None, mid: float, right: float | None) -> float:
    """The sub-sample offset (-0.5..0.5) of a peak from a parabola through three samples."""
    if left is None or right is None:
        return 0.0
    den = float(left) - 2.0 * float(mid) + float(right)
    return 0.0 if den >= 0 else float(np.clip(0.5 * (float(left) - float(right)) / den, -0.5, 0.5))


def _pearson(x: np.ndarray, templates: np.ndarray) -> np.ndarray:
    """Pearson correlation of ``x`` (``N``) with each row of ``templates`` (``K x N``)."""
    x = x - x.mean()
    t = templates - templates.mean(axis=1, keepdims=True)
    den = np.sqrt((x * x).sum() * (t * t).sum(axis=1))
    return (t @ x) / np.maximum(den, 1e-9)


def _sample(flat: np.ndarray, shape: tuple[int, ...], px: np.ndarray) -> np.ndarray:
    p = np.rint(px).astype(np.int64)
    h, w = shape[:2]
    ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    return flat[p[ok, 1] * w + p[ok, 0]]


def _square_band(centre: np.ndarray, inner: float, outer: float, step: float = 1.0) -> np.ndarray:
    u = np.arange(-outer, outer + 1e-9, step)
    xx, yy = np.meshgrid(u, u)
    p = np.stack([xx.ravel(), yy.ravel()], axis=1)
    cheb = np.max(np.abs(p), axis=1)
    return p[(cheb >= inner) & (cheb <= outer)] + centre


def _disc_points(centre: np.ndarray, radius: float, step: float) -> np.ndarray:
    u = np.arange(-radius, radius + 1e-9, step)
    xx, yy = np.meshgrid(u, u)
    p = np.stack([xx.ravel(), yy.ravel()], axis=1)
    return p[np.hypot(p[:, 0], p[:, 1]) <= radius] + centre


# ---------------------------------------------------------------------- calibration of the letters
def letter_templates_from(frames: Sequence[np.ndarray], truths: Sequence[Mapping[str, Any]],
                          reader: CarrosselReader) -> LetterTemplates:
    """Make the letter templates from photographs of a known table.

    Args:
        frames: ``H x W x 3 uint8`` BGR photos.
        truths: per photo ``{"board_angle_deg": b or None, "tiles": {slot: animal}}``, only
            tiles with nothing on them (no standee, no hand).
        reader: a reader of the table's geometry (its own templates are not used).

    Returns:
        The :class:`LetterTemplates`: per animal the median lightness of its tiles' discs,
        relative to the disc's cream.

    Raises:
        ValueError: a photo that cannot be registered, or an animal never seen.
    """
    per: dict[str, list[np.ndarray]] = {}
    for i, (frame, truth) in enumerate(zip(frames, truths)):
        reg = reader.registrar.register(frame)
        if reg is None:
            raise ValueError(f"photo {i + 1}: {reader.registrar.status}")
        found = reader.centre_marker_match(frame, reg)
        if isinstance(found, str):
            raise ValueError(f"photo {i + 1}: {found}")
        pose = reader.pose_from(reg, found[0], found[1])
        if isinstance(pose, str):
            raise ValueError(f"photo {i + 1}: {pose}")
        angle, view = pose
        samples = reader.tile_samples(frame, view, angle)
        for k, name in enumerate(reader.geometry.cell_names):
            animal = truth["tiles"].get(name)
            if animal is None:
                continue
            lum = srgb_to_linear(samples[k].reshape(-1, 3)) @ np.array([0.0722, 0.7152, 0.2126], dtype=np.float32)
            cream = float(np.percentile(lum[reader._cream_mask], 75))
            per.setdefault(animal, []).append(np.clip(lum / max(cream, 1e-4), 0, 1.0))
    animals = tuple(sorted(set(reader.geometry.letters.values())))
    missing = [a for a in animals if a not in per]
    if missing:
        raise ValueError(f"no tile of {', '.join(missing)} in the photos given: the templates need every animal")
    n = _grid_n()
    images = np.array([np.median(np.stack(per[a]), axis=0).reshape(n, n) for a in animals], dtype=np.float32)
    # each tile lies up to 1.2 mm off its cell's centre: align every sample on its animal's
    # median by the reader's own shift search, then take the median again
    s = reader.LETTER_SHIFT
    k = 2 * s + 1
    probe = dataclasses.replace(reader.letters, animals=animals, images=images)
    aligner = CarrosselReader(reader.geometry, probe, reader.registrar)
    for j, a in enumerate(animals):
        stack = np.stack(per[a]).reshape(-1, n, n)
        _best, at = aligner.letter_scores(stack.reshape(len(stack), -1))
        shifted = []
        for img, where in zip(stack, at[:, j]):
            dy, dx = divmod(int(where), k)
            dy, dx = dy - s, dx - s
            shifted.append(np.roll(img, (-dy, -dx), axis=(0, 1)))
        images[j] = np.median(np.stack(shifted), axis=0)
    return LetterTemplates(animals, images, "from photographs")


# ---------------------------------------------------------------------- overlay
_BGR = {"red": (40, 40, 230), "blue": (255, 90, 0), "green": (60, 180, 60), "yellow": (0, 220, 255),
        EMPTY: (235, 235, 235), UNKNOWN: (255, 0, 255)}


def draw_overlay(frame: np.ndarray, reading: CarrosselReading, geometry: CarrosselGeometry) -> np.ndarray:
    """The frame annotated for people: the markers used, the zero mark's direction, each cell's
    outline in its reading's colour with the animal's letter (a ring for a standee, ``?`` for
    unknown: a standee's tile with its animal unknown is outlined in the tile's colour, a ``?``
    in a ring), the facing sector at each booth, and the status with a legend of the letters
    written whole on a band at the top (:func:`~companion.vision.images.draw_header`, wrapped
    onto as many lines as it takes). A frame under
    :data:`~companion.vision.images.OVERLAY_MIN_SIDE_PX` on its shorter side is drawn enlarged
    (:class:`~companion.vision.images.OverlayCanvas`), and the band says so.

    Args:
        frame: ``H x W x 3 uint8`` BGR (not modified).
        reading: what :meth:`CarrosselReader.read` returned for it.
        geometry: the table.

    Returns:
        A new ``H' x W' x 3 uint8`` BGR image (``H x W`` unless the frame was enlarged).
    """
    from companion.vision.images import LabelPlacer, OverlayCanvas, draw_header

    canvas = OverlayCanvas(frame)
    out = canvas.img
    font = cv2.FONT_HERSHEY_SIMPLEX
    reg, view = reading.registration, reading.view
    status = reading.status
    if reading.board_angle_deg is not None:
        status += f"; board {reading.board_angle_deg:.1f} deg; " + " ".join(f"{b[0]}:{f}" for b, f in reading.facing.items())
        animals = sorted(set(geometry.letters.values()))
        status += ("\ntiles: " + ", ".join(f"{a[0].upper()} {a}" for a in animals)
                   + "; ring: a standee; ?: unknown  booths: the sector facing them")
    header = (status + canvas.note, (80, 220, 80) if reading.status == "ok" else (60, 60, 255))
    band = draw_header(out, *header)
    drawn = out[:band + 1].copy()  # put back over the outlines and letters that reach into the band
    if reg is not None:
        for mid, c in reg.image_corners.items():
            cv2.polylines(out, [canvas.poly(c)], True, (0, 255, 0), 2, cv2.LINE_AA)
    if reading.centre_corners_px is not None:
        cv2.polylines(out, [canvas.poly(reading.centre_corners_px)], True, (0, 255, 255), 2, cv2.LINE_AA)
    if view is None or reading.board_angle_deg is None:
        out[:band + 1] = drawn
        return out
    b = reading.board_angle_deg
    a = math.radians(b)
    tip = canvas.points(view.to_image(np.array([[0.0, 0.0], [geometry.radius_mm * math.cos(a),
                                                             geometry.radius_mm * math.sin(a)]]),
                                      geometry.board_top_z_mm))
    cv2.arrowedLine(out, tuple(int(v) for v in tip[0]), tuple(int(v) for v in tip[1]), (0, 255, 255), 2, cv2.LINE_AA,
                    tipLength=0.05)
    centres = geometry.cell_centres_mm(b)
    h = geometry.cell_size_mm / 2
    for name, c, up in zip(geometry.cell_names, centres, geometry.cell_ups(b)):
        s = reading.slots.get(name)
        right = np.array([up[1], -up[0]])
        sq = np.stack([c + h * (up - right), c + h * (up + right), c + h * (-up + right), c + h * (-up - right)])
        p = view.to_image(sq, geometry.board_top_z_mm)
        label = s.label if s is not None else UNKNOWN
        # a tile read (or read but for its animal, under a standee) in its colour
        colour = _BGR.get(s.colour if s is not None and s.colour is not None else label, (255, 0, 255))
        cv2.polylines(out, [canvas.poly(p)], True, colour, 2, cv2.LINE_AA)
        m = canvas.pt(view.to_image(c.reshape(1, 2), geometry.tile_top_z_mm)[0])
        text = "?" if label == UNKNOWN else "" if label == EMPTY else s.animal[0].upper()  # type: ignore[union-attr,index]
        if text:
            cv2.putText(out, text, (m[0] - 4, m[1] + 4), font, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(out, text, (m[0] - 4, m[1] + 4), font, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
        if s is not None and s.standee:
            cv2.circle(out, m, 9, (255, 255, 255), 1, cv2.LINE_AA)
    labels = LabelPlacer(out, 0.45, top_px=band + 1)  # a box, not a thick shadow (it runs longer than the text)
    for name, (c, _deg) in geometry.booths.items():
        p = canvas.points(view.to_image(c.reshape(1, 2), 55.0))[0]
        labels.put(f"{name}: {reading.facing.get(name, UNKNOWN)}", (p[0], p[1]), (255, 255, 255))
    out[:band + 1] = drawn
    return out
