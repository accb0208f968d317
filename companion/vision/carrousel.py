"""The Carrousel reader: which horse (or none) stands on each of the 7 spaces, and the three
colours on each player's card, from one camera frame.

Geometry is data (``calibration/carrousel-board.json``, board millimetres): the markers, the
7 spaces, the plain board used as white reference, and the card slots with their three discs.
Reference colours are data too (``calibration/carrousel-colours.json``, CIE Lab against the
white reference), captured under the table's own light by ``companion calibrate colours``.

Each space is sampled on a 1.5 mm grid inside its printed outline; its white is the plain
board just around it (its lightness) and the whole board's reference patch (its hue), so a
shadow does not look like a black horse and a colour cast does not shift the hues. A hand over
a space gives "other" pixels or covers too much of it, and the space reads ``unknown``. A card
disc is read against the card's own white; a card whose white is uneven (partly covered) or
whose discs are not clear reads ``unknown``.

Rulebook: ``shared/rules/carrousel.txt`` (Components: 5 horses, 7 spaces, cards of three
horses). Board numbering and reading order: DESIGN.md (Carrousel) and the geometry file.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.calibration_checks import between, expect, positive
from companion.calibration_dir import SHIPPED_DIR, calibration_path
from companion.vision.carrousel_checks import SpaceChecks, disc_points
from companion.vision.colour import (
    _GRID_LO,
    _GRID_NEW,
    _GRID_SHAPE,
    _GRID_SHIFT,
    _GRID_SIZE,
    _GRID_UNSURE,
    _LUT,
    BACKGROUND_CLASS,
    CLIPPED,
    DECIDE_KEPT,
    LAB_FAST_ERROR,
    OFFSET,
    UNKNOWN,
    ColourCheck,
    ColourReferences,
    FrozenFrames,
    RegionClassifier,
    RegionReading,
    _in_blocks,
    grid_cells,
    lab_exact,
    lab_fast,
    linear_to_lab,
    load_json,
    new_grid,
    srgb_to_linear,
    white_of,
)
from companion.vision.frames import check_bgr_frame
from companion.vision.registration import Registrar, Registration

__all__ = [
    "CALIBRATION_DIR",
    "CarrouselGeometry",
    "CardSlot",
    "CardReading",
    "CarrouselReading",
    "CarrouselReader",
    "load_references",
    "draw_overlay",
]

#: The shipped calibration defaults (read-only package data); a file is read through
#: :func:`companion.calibration_dir.calibration_path` (the user's own first).
CALIBRATION_DIR = SHIPPED_DIR
GRID_MM = 1.5
SEATS = ("south", "east", "north", "west")


def _disc(radius: float, inner: float = 0.0, step: float = GRID_MM) -> np.ndarray:
    """:func:`~companion.vision.carrousel_checks.disc_points` on the reader's grid (``GRID_MM``)."""
    return disc_points(radius, inner, step)


@dataclasses.dataclass(frozen=True)
class CardSlot:
    """Where a player's card lies, board mm.

    Attributes:
        seat: ``"south"``, ``"east"``, ``"north"`` or ``"west"`` (the table edge).
        centre_mm: the card's centre.
        reading_direction: unit vector (x, y) of "left to right" for the player at that seat.
        disc_centres_mm: ``3 x 2``, the three colour discs in reading order.
        disc_diameter_mm: the printed discs' diameter.
    """

    seat: str
    centre_mm: np.ndarray
    reading_direction: np.ndarray
    disc_centres_mm: np.ndarray
    disc_diameter_mm: float

    @property
    def outward(self) -> np.ndarray:
        """Unit vector from the board towards the player at this seat."""
        r = self.reading_direction
        return np.array([r[1], -r[0]])


@dataclasses.dataclass(frozen=True)
class CarrouselGeometry:
    """The Carrousel table in board millimetres (origin at the mat centre, x right, y up).

    Attributes:
        markers: marker id -> ``4 x 2`` corners (TL, TR, BR, BL).
        dictionary: the markers' ArUco dictionary name.
        space_centres_mm: ``7 x 2``, spaces 0-6 counter-clockwise.
        space_diameter_mm: the printed spaces' diameter.
        white_reference: (centre (x, y), inner radius, outer radius) of the plain-board annulus.
        cards: the card slots, one per seat.
        source: the file it came from.
    """

    markers: Mapping[int, np.ndarray]
    dictionary: str
    space_centres_mm: np.ndarray
    space_diameter_mm: float
    white_reference: tuple[tuple[float, float], float, float]
    cards: tuple[CardSlot, ...]
    source: str = ""

    @classmethod
    def load(cls, path: str | Path | None = None) -> CarrouselGeometry:
        """Read the geometry file (default: ``carrousel-board.json`` of the calibration folder,
        :func:`~companion.calibration_dir.calibration_path`).

        Raises:
            ValueError: a missing file, bad JSON or a missing, ill-shaped, wrong-typed or
                non-finite field: one line ``FILE: FIELD: expected ...``.
        """
        p = Path(path) if path is not None else calibration_path("carrousel-board.json")
        d = load_json(p)

        def field(obj: Any, key: str, where: str) -> Any:
            if not isinstance(obj, dict) or key not in obj:
                raise ValueError(f"{p}: {where}{key}: missing")
            return obj[key]

        def arr(v: Any, shape: tuple[int, ...], where: str) -> np.ndarray:
            try:
                a = np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                a = np.zeros(0)
            if a.shape != shape or not np.isfinite(a).all() or _has_bool(v):
                raise ValueError(f"{p}: {where}: expected finite numbers of shape {shape}, got {v!r}")
            return a

        def num(obj: Any, key: str, where: str) -> float:
            v = field(obj, key, where)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{p}: {where}{key}: expected a finite number (mm), got {v!r}")
            return float(v)

        def kind(obj: Any, key: str, where: str, typ: type, expected: str) -> Any:
            v = field(obj, key, where)
            if not isinstance(v, typ):
                raise ValueError(f"{p}: {where}{key}: expected {expected}, got {v!r}")
            return v

        if not isinstance(d, dict):
            raise ValueError(f"{p}: expected a JSON object of the board's fields, got {type(d).__name__}")
        markers = {}
        for k, m in kind(d, "markers", "", dict, '{"id": {"corners_mm": [[x, y] x 4]}}').items():
            if not str(k).isdigit():
                raise ValueError(f"{p}: markers: {k!r} is not a marker id")
            markers[int(k)] = arr(field(m, "corners_mm", f"markers.{k}."), (4, 2), f"markers.{k}.corners_mm")
        spaces = field(d, "spaces", "")
        if not isinstance(spaces, list) or len(spaces) != 7:
            raise ValueError(f"{p}: spaces: expected a list of 7 spaces")
        centres = np.stack([arr(field(s, "centre_mm", f"spaces[{i}]."), (2,), f"spaces[{i}].centre_mm")
                            for i, s in enumerate(spaces)])
        diam = num(spaces[0], "diameter_mm", "spaces[0].")
        wr = field(d, "white_reference", "")
        white = (tuple(arr(field(wr, "centre_mm", "white_reference."), (2,), "white_reference.centre_mm")),
                 num(wr, "inner_radius_mm", "white_reference."),
                 num(wr, "outer_radius_mm", "white_reference."))
        cards = []
        for i, c in enumerate(kind(d, "cards", "", list, "a list of card slots")):
            seat = field(c, "seat", f"cards[{i}].")
            if seat not in SEATS:
                raise ValueError(f"{p}: cards[{i}].seat: expected one of {', '.join(SEATS)}, got {seat!r}")
            cards.append(CardSlot(
                seat=seat,
                centre_mm=arr(field(c, "centre_mm", f"cards[{i}]."), (2,), f"cards[{i}].centre_mm"),
                reading_direction=arr(field(c, "reading_direction", f"cards[{i}]."), (2,), f"cards[{i}].reading_direction"),
                disc_centres_mm=arr(field(c, "disc_centres_mm", f"cards[{i}]."), (3, 2), f"cards[{i}].disc_centres_mm"),
                disc_diameter_mm=num(c, "disc_diameter_mm", f"cards[{i}]."),
            ))
        _check_ranges(p, d, markers, centres, diam, white, cards)
        return cls(markers=markers, dictionary=kind(d, "marker_dictionary", "", str, "an ArUco dictionary name (e.g. \"DICT_4X4_50\")"),
                   space_centres_mm=centres, space_diameter_mm=diam, white_reference=white,  # type: ignore[arg-type]
                   cards=tuple(cards), source=str(p))


def _check_ranges(p: Path, d: Mapping[str, Any], markers: Mapping[int, np.ndarray], centres: np.ndarray,
                  diam: float, white: tuple[tuple[float, float], float, float], cards: Sequence[Any]) -> None:
    """What the values of ``carrousel-board.json`` mean on a real mat (after the type checks of
    :meth:`CarrouselGeometry.load`): at least one marker, each a square of side above 0 (and
    ``marker_size_mm``, when given, that side), sizes and radii above 0, the white reference's
    annulus with its inner radius below its outer, every point on the mat (``mat_size_mm`` when
    given), card reading directions that are not zero.

    Raises:
        ValueError: one line naming the file, the field and the range expected.
    """
    expect(p, "markers", len(markers) > 0, 'at least one marker {"id": {"corners_mm": [[x, y] x 4]}}', d["markers"])
    half = math.inf
    if "mat_size_mm" in d:
        half = positive(p, "mat_size_mm", d["mat_size_mm"]) / 2
    where = "on the mat" + (f" (within {half:g} mm of its centre, mat_size_mm)" if math.isfinite(half) else "")

    def on_mat(field: str, pts: np.ndarray) -> None:
        expect(p, field, bool(np.all(np.abs(pts) <= half)), f"points {where}", np.asarray(pts).tolist())

    sides = []
    for k, c in markers.items():
        on_mat(f"markers.{k}.corners_mm", c)
        side = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
        expect(p, f"markers.{k}.corners_mm", bool(side.min() > 0 and side.max() <= 1.05 * side.min()),
               "the four corners of a square (sides above 0 mm and equal)", c.tolist())
        sides.append(float(side.mean()))
    if "marker_size_mm" in d:
        size = positive(p, "marker_size_mm", d["marker_size_mm"])
        expect(p, "marker_size_mm", all(abs(s - size) <= 0.5 for s in sides),
               f"the markers' side as their corners_mm give it ({', '.join(f'{s:g}' for s in sorted(set(sides)))} mm)",
               d["marker_size_mm"])
    for i, c in enumerate(centres):
        on_mat(f"spaces[{i}].centre_mm", c)
    positive(p, "spaces[0].diameter_mm", diam, at_most=half * 2 if math.isfinite(half) else None, limit="mat_size_mm")
    (wx, wy), inner, outer = white
    on_mat("white_reference.centre_mm", np.array([wx, wy]))
    between(p, "white_reference.inner_radius_mm", inner, 0.0, outer, high_open=True,
            why="from 0 to below white_reference.outer_radius_mm")
    positive(p, "white_reference.outer_radius_mm", outer)
    for i, c in enumerate(cards):
        on_mat(f"cards[{i}].centre_mm", c.centre_mm)
        on_mat(f"cards[{i}].disc_centres_mm", c.disc_centres_mm)
        expect(p, f"cards[{i}].reading_direction", float(np.hypot(*c.reading_direction)) > 0,
               "a direction [dx, dy] other than [0, 0]", c.reading_direction.tolist())
        positive(p, f"cards[{i}].disc_diameter_mm", c.disc_diameter_mm)


def _has_bool(v: Any) -> bool:
    """Whether a JSON value holds a true/false anywhere (numpy would read it as 1/0)."""
    return isinstance(v, bool) or (isinstance(v, list) and any(_has_bool(x) for x in v))


def load_references(path: str | Path | None = None) -> tuple[ColourReferences, ColourReferences]:
    """Read the reference colours file (default: ``carrousel-colours.json`` of the calibration
    folder, :func:`~companion.calibration_dir.calibration_path`).

    Returns:
        (horse references, card disc references), CIE Lab against the white reference.

    Raises:
        ValueError: a missing file, bad JSON or a bad value (not three finite numbers, or not
            CIE Lab: L 0-100, a and b -128 to 128), naming the file and the field.
    """
    p = Path(path) if path is not None else calibration_path("carrousel-colours.json")
    d = load_json(p)
    for key in ("horses", "cards"):
        if not isinstance(d, dict) or not isinstance(d.get(key), dict):
            raise ValueError(f"{p}: {key}: missing (expected {{colour: [L, a, b]}})")
    refs = (ColourReferences.from_dict(d["horses"], f"{p}: horses"),
            ColourReferences.from_dict(d["cards"], f"{p}: cards"))
    for key in ("horses", "cards"):  # CIE Lab: L 0-100; a and b within what sRGB reaches
        for name, lab in d[key].items():
            expect(p, f"{key}.{name}", 0 <= lab[0] <= 100 and abs(lab[1]) <= 128 and abs(lab[2]) <= 128,
                   "[L, a, b] with L 0-100, a and b -128 to 128", lab)
    return refs


@dataclasses.dataclass(frozen=True)
class CardReading:
    """One player's card: the three discs in reading order and the triple when all are read.

    Attributes:
        seat: the table edge.
        discs: three :class:`RegionReading`.
        triple: the three colours, or None when any disc is ``unknown``.
        reason: why the card is unknown as a whole ("" otherwise).
    """

    seat: str
    discs: tuple[RegionReading, ...]
    triple: tuple[str, str, str] | None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d: dict[str, Any] = {"triple": list(self.triple) if self.triple else UNKNOWN,
                             "discs": [r.to_json() for r in self.discs]}
        if self.reason:
            d["reason"] = self.reason
        return d


@dataclasses.dataclass(frozen=True)
class CarrouselReading:
    """Everything read from one frame.

    Attributes:
        status: ``"ok"`` or why nothing was read (``"board not visible: ..."``,
            ``"colour lost: ..."``, ``"camera frozen: ..."``).
        spaces: 7 :class:`RegionReading`, spaces 0-6 (labels: a colour, ``"empty"``,
            ``"unknown"``); empty tuple when the board is not visible.
        cards: seat -> :class:`CardReading`.
        registration: the registration used, or None.
        white_level: luminance (linear, 0-1) of the board's reference patch: how much light
            the camera gets; 0 when the board is not visible.
    """

    status: str
    spaces: tuple[RegionReading, ...] = ()
    cards: Mapping[str, CardReading] = dataclasses.field(default_factory=dict)
    registration: Registration | None = None
    white_level: float = 0.0

    @property
    def labels(self) -> tuple[str, ...]:
        """The 7 space labels (all ``"unknown"`` when the board is not visible)."""
        return tuple(r.label for r in self.spaces) if self.spaces else (UNKNOWN,) * 7

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: status, spaces (labels), details, cards, markers used."""
        d: dict[str, Any] = {"status": self.status, "spaces": list(self.labels)}
        if self.spaces:
            d["space_details"] = [r.to_json() for r in self.spaces]
            d["cards"] = {seat: c.to_json() for seat, c in self.cards.items()}
        if self.registration is not None:
            d["markers"] = list(self.registration.marker_ids)
            d["residual_px"] = round(self.registration.residual_px, 2)
        return d


class CarrouselReader:
    """Reads the Carrousel table from frames.

    Args:
        geometry: the table (default: ``calibration/carrousel-board.json``).
        references: (horse, card) reference colours (default: ``calibration/carrousel-colours.json``).
        registrar: the :class:`Registrar` to use (default: one for the geometry's markers).
        space_classifier, card_classifier: override the abstention thresholds.
        colour_check: the :class:`~companion.vision.colour.ColourCheck` a frame must pass
            (default: one for the horse references); a frame that fails it reads
            ``"colour lost: ..."`` with every region unknown.
        frozen_s: in a stream read with times (``read(..., t=...)``), identical frames for more
            than this many seconds read ``"camera frozen: ..."`` (no reading).

    Raises:
        ValueError: a bad calibration file (naming it).
    """

    #: lightness of a space's surroundings relative to the board's reference patch outside
    #: which the space is unknown (deep shadow or glare).
    LIGHT_RANGE = (0.3, 2.0)
    #: share of a space's printed outline that must be seen for "empty" and for a colour: a
    #: hand hides the outline; a horse leaning out of its space hides a little of it.
    OUTLINE_FOR_EMPTY = 0.85
    OUTLINE_FOR_COLOUR = 0.5
    #: the outline is seen at an angle when it is at most this fraction of the lightness
    #: just inside and just outside it.
    OUTLINE_CONTRAST = 0.65

    def __init__(self, geometry: CarrouselGeometry | None = None,
                 references: tuple[ColourReferences, ColourReferences] | None = None,
                 registrar: Registrar | None = None,
                 space_classifier: RegionClassifier | None = None,
                 card_classifier: RegionClassifier | None = None,
                 colour_check: ColourCheck | None = None,
                 frozen_s: float = 3.0):
        self.geometry = geometry if geometry is not None else CarrouselGeometry.load()
        horses, cards = references if references is not None else load_references()
        self.colour_check = colour_check if colour_check is not None else ColourCheck(horses)
        self.frozen = FrozenFrames(frozen_s)
        self.registrar = registrar if registrar is not None else Registrar(
            self.geometry.markers, self.geometry.dictionary)
        self.space_classifier = space_classifier or RegionClassifier(horses, background_label="empty")
        self.card_classifier = card_classifier or RegionClassifier(
            cards, background_label=None, near=30.0, max_other=0.15, max_cover=1.01,
            min_colour=0.6, max_second=0.1, background_chroma=12.0, near_achromatic=30.0, achromatic_chroma=15.0)
        g = self.geometry
        r = g.space_diameter_mm / 2
        self._space_disc = _disc(r - 5.0)  # inside the printed outline
        self._space_ring = _disc(r + 10.0, inner=r + 5.0, step=2.5)
        ang = np.linspace(0.0, 2 * np.pi, 48, endpoint=False)
        unit = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        ro = r - 1.5  # the printed outline's middle (3 mm wide, inside the space's diameter)
        self._outline = [unit * rr for rr in (ro - 1.0, ro, ro + 1.0)]
        self._outline_in = unit * (ro - 4.5)
        self._outline_out = unit * (ro + 5.0)
        (cx, cy), r0, r1 = g.white_reference
        self._white_patch = _disc(r1, inner=r0, step=3.0) + np.array([cx, cy])
        #: the checks of each space's reading against its own print and of the board as a whole
        self.checks = SpaceChecks(g.space_centres_mm, self._space_disc, self._white_patch)
        self._card_disc = _disc(max(g.cards[0].disc_diameter_mm / 2 - 3.5, 2.0), step=1.0) if g.cards else None
        self._card_white = {}
        for slot in g.cards:
            o, rd = slot.outward, slot.reading_direction
            pts = [slot.centre_mm + o * a + rd * b for a in np.arange(-24, -13, 1.5) for b in np.arange(-36, 37, 2.0)]
            self._card_white[slot.seat] = np.array(pts)
        #: the pixel-class grids of the space and the card classifier, the grids of the cards'
        #: white test and of the colour check's chroma test (:func:`_fill_test_cells`), in one
        #: array; the check's holds the answers for the bound ``_check_bound``
        self._grids = new_grid(4)
        self._check_bound: float | None = None
        #: the cards' readings by their discs' readings (see _cards)
        self._card_kept: dict[tuple[int, int, int, int], tuple[Any, ...]] = {}
        #: (LIGHT_RANGE, its bounds as a float32 scalar compares them: see _SCALAR_FLOAT)
        self._light_range: tuple[Any, tuple[float, ...]] = (None, ())
        self._plan: _Plan | None = None
        #: the spaces the region rule read black in the last frame read (their discs likely read
        #: again: :meth:`_shaded_blacks`), and this frame's readings of them again by space
        self._black_before: list[int] = []
        self._again: dict[int, tuple[np.ndarray, RegionReading]] = {}
        #: this frame's rim ratios of those spaces (SpaceChecks.rim_ratios), by space
        self._ratios: dict[int, float] = {}
        self._points: tuple[np.ndarray, dict[str, list[tuple[int, int]]]] | None = None
        #: the plans' layouts of a board wholly inside the frame, by ``board_sum`` (:class:`_Layout`)
        self._layouts: dict[bool, _Layout] = {}

    def _all_points(self) -> tuple[np.ndarray, dict[str, list[tuple[int, int]]]]:
        """Every sample point (board mm, ``N x 2``) and, per kind, the (start, end) of each
        region in it."""
        if self._points is None:
            g = self.geometry
            chunks: list[np.ndarray] = []
            segs: dict[str, list[tuple[int, int]]] = {}
            n = 0

            def add(name: str, pts: np.ndarray) -> None:
                nonlocal n
                chunks.append(pts)
                segs.setdefault(name, []).append((n, n + len(pts)))
                n += len(pts)

            add("board", np.concatenate([self._white_patch] + [self._space_ring + c for c in g.space_centres_mm]))
            for c in g.space_centres_mm:
                add("rings", self._space_ring + c)
            for c in g.space_centres_mm:
                add("discs", self._space_disc + c)
            for c in g.space_centres_mm:
                for r in self._outline + [self._outline_in, self._outline_out]:
                    add("outline", r + c)
            for slot in g.cards:
                add("card_white", self._card_white[slot.seat])
            for slot in g.cards:
                for c in slot.disc_centres_mm:
                    add("card_discs", self._card_disc + c)
            segs.setdefault("card_white", [])
            segs.setdefault("card_discs", [])
            self._points = (np.concatenate(chunks), segs)
        return self._points

    def _layout(self, inside: np.ndarray | None, board_sum: bool) -> _Layout:
        """The :class:`_Layout` for the points ``inside`` the frame (``N`` bools; None: all of
        them, a layout then kept: it depends on ``board_sum`` alone)."""
        if inside is not None:
            return _Layout(self, inside, board_sum)
        layout = self._layouts.get(board_sum)
        if layout is None:
            layout = self._layouts[board_sum] = _Layout(self, np.ones(len(self._all_points()[0]), bool), board_sum)
        return layout

    # ------------------------------------------------------------------ reading
    def read(self, frame: np.ndarray, registration: Registration | None = None,
             stream: bool = False, t: float | None = None) -> CarrouselReading:
        """Read one frame.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            registration: use this registration instead of registering the frame.
            stream: frames of one video stream: keep the registration between frames and
                re-detect only when needed (:meth:`Registrar.update`); else detect every time.
            t: the frame's time (s) in a stream: the same frame for more than ``frozen_s``
                is a frozen camera, not a new reading.

        Returns:
            The :class:`CarrouselReading`: status ``"ok"``; ``"board not visible: ..."`` when
            it cannot register; ``"colour lost: ..."`` when the frame is not a colour frame of
            the calibrated light (:class:`~companion.vision.colour.ColourCheck`: grayscale, a
            cast beyond the calibrated range, too dark, clipped); ``"camera frozen: ..."``.
            Every region is unknown unless the status is ``"ok"``.

        Raises:
            ValueError: a frame that is not ``H x W x 3 uint8``.
        """
        check_bgr_frame(frame)
        if t is not None:
            held = self.frozen.update(t, frame)
            if held is not None:
                return CarrouselReading(f"camera frozen: the same frame for {held:.1f} s")
        reg = registration
        if reg is None:
            reg = self.registrar.update(frame) if stream else self.registrar.register(frame)
        if reg is None:
            return CarrouselReading(self.registrar.status or "board not visible")
        plan = self._plan
        if plan is None or plan.reg is not reg or plan.shape != frame.shape:
            plan = self._plan = _Plan(self, reg, frame.shape)
        return self._read_planned(frame, plan)

    def _read_planned(self, frame: np.ndarray, plan: _Plan) -> CarrouselReading:
        """The steady read: every sampled pixel gathered at once, the white references from
        one histogram, linear light against each pixel's white from one table, one Lab
        conversion, one grid cell per classified pixel, every region's votes from one
        ``np.bincount``, the region rules on all rows (:meth:`RegionClassifier.decide_many`).
        """
        reg = plan.reg
        # one gather of every sampled pixel (OpenCV's nearest-pixel remap through integer
        # coordinates: each pixel as it is, fewer instructions than numpy's take)
        px = cv2.remap(frame, plan.full_map, None, cv2.INTER_NEAREST).reshape(-1, 3)
        medians = plan.medians(px[:plan.n_hist])
        if medians is None:
            return CarrouselReading("board not visible: the board's reference patch is out of the frame",
                                    registration=reg)
        whites, codes = medians
        table = whites.copy()
        board_white = whites[0]
        # luminances (the Python float arithmetic of _luminance, a dozen rows)
        lum = [max(0.0722 * b + 0.7152 * g + 0.2126 * r, 1e-6) for b, g, r in whites.tolist()]
        board_y = lum[0]
        n = plan.n_spaces
        # the spaces' local light, against the board's (float32, compared as a float32
        # scalar compares: see _SCALAR_FLOAT)
        gains = np.array([v / board_y for v in lum[1:1 + n]], dtype=np.float32)
        gain_l = gains.tolist()
        if self._light_range[0] != self.LIGHT_RANGE:
            self._light_range = (self.LIGHT_RANGE, tuple(float(_SCALAR_FLOAT(v)) for v in self.LIGHT_RANGE))
        lo, hi = self._light_range[1]
        bad_light = [not lo <= v <= hi for v in gain_l]
        # the white of each row: 0 the board, 1..n the spaces (board x local gain), n+1.. the
        # cards (the board's where the card is out of the frame)
        if plan.any_ring_missing:
            gains[plan.ring_missing] = 1.0
        np.multiply(board_white, gains[:, None], out=table[1:1 + n])
        if plan.any_card_missing:
            table[1 + n:][plan.card_missing] = board_white
        np.maximum(table, 1e-4, out=table)
        # linear light over the white, at most 1 (it is never below 0), for every level of
        # every channel of every white (the same divisions as pixel by pixel), then one
        # look-up per pixel
        rel_table = np.divide(_LUT, table[:, :, None])
        np.minimum(rel_table, 1.0, out=rel_table)
        lab_px = px[plan.lab_start:plan.lab_start + plan.n_lab]
        # the look-up as OpenCV's nearest-pixel remap of the table (a row per white and channel,
        # a column per level): each pixel's byte its column, its white's row its row (fewer
        # instructions than numpy's take of the table at lab_px + rel_offset, the same values)
        rel = cv2.remap(rel_table.reshape(-1, 256), lab_px.reshape(1, -1).astype(np.float32), plan.rel_rows,
                        cv2.INTER_NEAREST).reshape(-1, 3)
        e1, _, e3, _ = plan.lab_bounds
        # a space read black in the frame before, whose rim is in a shadow, will likely be read
        # again against its rim's own light (SpaceChecks.black_in_own_light): its disc's light
        # over that white joins the Lab part now, counted in a row of its own (the same
        # reading as a read apart, which stays for a guess that misses)
        self._ratios = {}
        again = self._shaded_blacks(plan, px, table[1:1 + n]) if self._black_before else []
        if again:
            discs = px[plan.lab_start + e1:plan.lab_start + e1 + plan.n_disc_px].reshape(n, -1, 3)
            rel = np.concatenate([rel] + [self._rel_against(discs[k], own) for k, own in again])
        # one vectorised conversion (within LAB_FAST_ERROR of the exact one); every test on a
        # pixel's Lab is then settled exactly: a pixel near a threshold is converted again
        # exactly (OpenCV's scalar path, as linear_to_lab converts it)
        lab = lab_fast(rel)
        # every test on the Lab part's pixels from their grids, counted in one bincount: the
        # cards' white test, the classes, the colour check's chroma
        counts = self._votes(plan, lab, rel, lab_px[e1:e3], [k for k, _ in again])
        nv, m = plan.n_votes, plan.n_cards
        self._again = {}
        if again:
            width, total = plan.space_width, plan.n_votes + 2 * m + 2
            for j, (k, own) in enumerate(again):
                row = counts[total + j * width:total + (j + 1) * width].astype(np.float64)
                self._again[k] = (own, self.space_classifier.decide(row))

        def check_lab() -> np.ndarray:  # every pixel of the colour check (rarely needed)
            lin = np.take(_LUT, np.take(frame.reshape(-1, 3), plan.check_index, axis=0))
            return linear_to_lab(lin, board_white)

        fault = self.colour_check.problem_counted(board_white, codes, check_lab, int(counts[nv + 2 * m + 1]),
                                                  len(plan.check_index))
        if fault:
            return CarrouselReading(fault, registration=reg, white_level=board_y)
        spaces = self._spaces(plan, counts[:n * plan.space_width].reshape(n, -1),
                              px[plan.outline_start:plan.outline_end], gain_l, bad_light)
        if plan.checks_sampled:  # the checks' pixels gathered with the rest
            shadow_like = self.space_classifier.shadow_like
            self._black_before = [k for k, rd in enumerate(spaces) if rd.label in shadow_like]
            lab0 = plan.lab_start + e1
            spaces = tuple(self.checks.apply_sampled(
                frame, reg, px[plan.check_start:plan.check_end].reshape(n, -1, 3), px[:plan.n_patch],
                px[lab0:lab0 + plan.n_disc_px].reshape(n, -1, 3), spaces, table[1:1 + n], self.space_classifier,
                self._read_again_at, self._ratios))
        else:
            self._black_before = []
            spaces = tuple(self.checks.apply(frame, reg, spaces, table[1:1 + n], self.space_classifier))
        cards = self._cards(plan, counts[nv + 1:nv + 2 * m:2].tolist(), counts[n * plan.space_width:nv].reshape(3 * m, -1),
                            [v / board_y for v in lum[1 + n:]])
        return CarrouselReading("ok", spaces, cards, reg, board_y)

    def _votes(self, plan: _Plan, lab: np.ndarray, rel: np.ndarray, px: np.ndarray,
               again: Sequence[int] = ()) -> np.ndarray:
        """Every region's vote counts from its pixels' classes, the cards' white pixels beyond
        Delta E 15 of the white, the colour check's pixels above its chroma bound: ``lab``
        (approximate: the whole Lab part, ``rel`` its white-relative light) and ``px``
        (``N x 3 uint8``, the discs' pixels). Each class (each white pixel's and each check
        pixel's test, :func:`_fill_test_cells`) is looked up on its grid; a pixel in an unsure
        cell is classified (tested) from its exact Lab (:func:`lab_exact` of its ``rel`` row); a
        clipped disc pixel counts as background. Returns the flat ``bincount``: the spaces'
        rows (``space_width`` each), the card discs' rows (``n_votes`` in all), per card its
        white pixels within and beyond Delta E 15, the check's pixels at or below and above
        the bound; then, for each space of ``again``, a row (``space_width``) of its disc's
        pixels read again by the space classifier (``lab`` and ``rel`` hold them after the Lab
        part, a disc each, in that order)."""
        e1, e2, e3, e4 = plan.lab_bounds  # e2 - e1 == plan.n_disc_px; e4 == plan.n_lab
        bound = self.colour_check.chroma_bound()
        if bound != self._check_bound:  # the check's grid holds one bound's answers
            if self._check_bound is not None:  # a new reader's grid is all new: its zero pages left untouched
                self._grids[3 * _GRID_SIZE:] = _GRID_NEW
            self._check_bound = bound
        cells = grid_cells(lab, inside=True)  # lab_fast of white-relative light in 0-1
        # each part's grid: the space classifier's, the card's, the white test's (the discs read
        # again: the space classifier's)
        cells[:e4] += plan.grid_offset
        # the colour check's chroma test does not depend on L* (nor does its cells' edge test, L*
        # being 0-100 here): its cells are all taken on one L* plane of its grid, the same
        # classes in 42 kB of pages instead of the planes of every L* met (1.7 MB resident)
        check = cells[e3:e4]
        check -= ((check - 3 * _GRID_SIZE) // _GRID_PLANE - _CHECK_PLANE) * _GRID_PLANE
        grids = self._grids
        values = grids[cells]  # = np.take(grids, cells), in a fifth of its time on numpy 1.24
        if values.min() == _GRID_NEW:  # cells met for the first time: each grid is filled its own way
            new = (values == _GRID_NEW).nonzero()[0]
            i1, i2, i3, i4 = (int(v) for v in np.searchsorted(new, (e1, e2, e3, e4)))
            for (a, b), test in (((0, i1), (2, _white_distance, 15.0)), ((i3, i4), (3, _chroma, bound))):
                if b > a:
                    g = test[0] * _GRID_SIZE
                    grid, mine = grids[g:g + _GRID_SIZE], cells[new[a:b]] - g
                    _fill_test_cells(grid, _in_blocks(mine, grid), *test[1:])
                    values[new[a:b]] = np.take(grid, mine)
            for a, b in ((i1, i2), (i4, len(new))):
                if b > a:
                    values[new[a:b]] = self.space_classifier.grid_values(cells[new[a:b]], grids[:_GRID_SIZE])
            if i3 > i2:
                values[new[i2:i3]] = self.card_classifier.grid_values(cells[new[i2:i3]] - _GRID_SIZE,
                                                                      grids[_GRID_SIZE:2 * _GRID_SIZE])
        unsure = (values == _GRID_UNSURE).nonzero()[0]
        if len(unsure):
            exact = lab_exact(rel[unsure])
            i1, i2, i3, i4 = (int(v) for v in np.searchsorted(unsure, (e1, e2, e3, e4)))
            if i1:  # the card white test, as the card rule computes it
                values[unsure[:i1]] = (_white_distance(exact[:i1]) > 15.0) + _GRID_SHIFT
            if i2 > i1 or len(unsure) > i4:  # the spaces' discs (and those read again): one pass
                mine = unsure[i1:i2] if len(unsure) == i4 else np.concatenate([unsure[i1:i2], unsure[i4:]])
                lab_mine = exact[i1:i2] if len(unsure) == i4 else np.concatenate([exact[i1:i2], exact[i4:]])
                values[mine] = self.space_classifier.pixel_classes_table(lab_mine) + _GRID_SHIFT
            if i3 > i2:
                values[unsure[i2:i3]] = self.card_classifier.pixel_classes_table(exact[i2:i3]) + _GRID_SHIFT
            if i4 > i3:  # the colour check's chroma, as ColourCheck counts it
                values[unsure[i3:i4]] = (_chroma(exact[i3:i4]) > bound) + _GRID_SHIFT
        # clipped highlights: background (every channel at or above CLIPPED)
        clipped = cv2.inRange(px.reshape(-1, 1, 3), _CLIPPED_LOW, _CLIPPED_HIGH)
        if cv2.countNonZero(clipped):
            at = clipped.reshape(-1).nonzero()[0]
            values[e1 + at] = _GRID_SHIFT + BACKGROUND_CLASS
            if again:  # the same pixels read again
                d = plan.n_disc_px // plan.n_spaces
                for j, k in enumerate(again):
                    mine = at[(at >= k * d) & (at < (k + 1) * d)]
                    values[e4 + j * d + mine - k * d] = _GRID_SHIFT + BACKGROUND_CLASS
        total = plan.n_votes + 2 * plan.n_cards + 2
        if not again:
            return np.bincount(plan.lab_vote_base + values, minlength=total)
        base = np.concatenate([plan.lab_vote_base, np.repeat(
            total + plan.space_width * np.arange(len(again)) + (OFFSET - _GRID_SHIFT), plan.n_disc_px // plan.n_spaces)])
        return np.bincount(base + values, minlength=total + len(again) * plan.space_width)

    def _shaded_blacks(self, plan: _Plan, px: np.ndarray, whites: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The spaces read black (by the region rule) in the frame before whose rim is in a
        shadow in this one (``px``: this frame's gathered pixels, ``whites``: the spaces'
        whites), each with its rim's own light (:meth:`SpaceChecks.own_white`): those
        :meth:`SpaceChecks.apply_sampled` will read again if they read black again."""
        if not plan.checks_sampled:
            return []
        checks, n = self.checks, plan.n_spaces
        ks = self._black_before
        ratios = checks.rim_ratios(px[plan.check_start:plan.check_end].reshape(n, -1, 3), ks, whites)
        self._ratios = dict(zip(ks, ratios))
        return [(k, checks.own_white(whites[k], r)) for k, r in zip(ks, ratios) if r < checks.SHADOW_RIM]

    @staticmethod
    def _rel_against(px: np.ndarray, white: np.ndarray) -> np.ndarray:
        """``N x 3 uint8`` pixels' linear light over ``white`` (``3`` linear BGR float32), at most
        1: ``N x 3 float32``, as :func:`linear_to_lab` divides and clips them (one table of
        each channel's levels over the white, one look-up)."""
        table = np.divide(_LUT[:, None], np.maximum(white, 1e-4))  # 256 x 3: each channel's levels
        np.minimum(table, 1.0, out=table)
        return cv2.LUT(px.reshape(-1, 1, 3), table.reshape(256, 1, 3)).reshape(-1, 3)  # = table[px, channel]

    def _read_again_at(self, k: int, px: np.ndarray, white: np.ndarray) -> RegionReading:
        """:meth:`_read_again` of space ``k``'s disc pixels: the reading counted with the
        frame's votes when ``k`` was guessed (:meth:`_shaded_blacks`) against this white."""
        hit = self._again.get(k)
        if hit is not None and np.array_equal(hit[0], white):
            return hit[1]
        return self._read_again(px, white)

    def _read_again(self, px: np.ndarray, white: np.ndarray) -> RegionReading:
        """The space classifier's reading of ``N x 3 uint8`` pixels against ``white`` (``3``
        linear BGR float32), the reading of ``classifier.read(linear_to_lab(srgb_to_linear(
        px[~clipped]), white), clipped)`` (a clipped pixel: every channel at or above CLIPPED,
        counted as background): the same white-relative light (one table of each channel's
        levels over the white, as :func:`linear_to_lab` divides and clips them), each pixel's
        class from the space grid (:meth:`_votes`' way: the exact Lab's class by construction),
        the same counts and rule."""
        classifier = self.space_classifier
        rel = self._rel_against(px, white)
        values = classifier.grid_values(grid_cells(lab_fast(rel), inside=True), self._grids[:_GRID_SIZE])
        unsure = (values == _GRID_UNSURE).nonzero()[0]
        if len(unsure):
            values[unsure] = classifier.pixel_classes_table(lab_exact(rel[unsure])) + _GRID_SHIFT
        clipped = cv2.inRange(px.reshape(-1, 1, 3), _CLIPPED_LOW, _CLIPPED_HIGH)  # every channel >= CLIPPED
        if cv2.countNonZero(clipped):
            values[clipped.reshape(-1).nonzero()[0]] = _GRID_SHIFT + BACKGROUND_CLASS
        counts = np.bincount(values.astype(np.intp) + (OFFSET - _GRID_SHIFT),
                             minlength=len(classifier.references.names) + OFFSET)
        return classifier.decide(counts.astype(np.float64))

    def _spaces(self, plan: _Plan, counts: np.ndarray, outline_px: np.ndarray, gains: list[float],
                bad_light: list[bool]) -> tuple[RegionReading, ...]:
        classifier = self.space_classifier
        seen = self._outline_shares(outline_px)
        out = classifier.decide_many(counts)
        for k, reading in enumerate(out):
            if plan.ring_missing[k]:  # the early rules, as in the per-region reader
                out[k] = RegionReading(UNKNOWN, 0.0, "the space's surroundings are out of the frame")
            elif bad_light[k]:
                out[k] = RegionReading(UNKNOWN, 0.0, f"light {gains[k]:.2f}x the board's: too dark or too bright")
            elif plan.disc_short[k]:
                out[k] = RegionReading(UNKNOWN, 0.0, "the space is partly out of the frame")
            elif reading.label != UNKNOWN:
                need = self.OUTLINE_FOR_EMPTY if reading.label == classifier.background_label else self.OUTLINE_FOR_COLOUR
                if seen[k] < need:
                    out[k] = RegionReading(UNKNOWN, 0.0, f"covered: {seen[k]:.0%} of the space's outline seen",
                                           reading.fractions)
        return tuple(out)

    def _outline_seen_px(self, px: np.ndarray) -> np.ndarray:
        """:meth:`_outline_seen` of the outlines' ``n x 5 x A x 3 uint8`` pixels (three
        samples across the line, one inside, one outside, at each of ``A`` angles):
        ``n float64``."""
        lin = cv2.LUT(np.ascontiguousarray(px).reshape(-1, 1, 3), _LUT).reshape(px.shape)  # = _LUT[px]
        lum = lin @ _LUMA
        line = lum[:, :3, :].min(axis=1)
        around = np.minimum(lum[:, 3, :], lum[:, 4, :])
        return (line <= self.OUTLINE_CONTRAST * around).mean(axis=1)

    def _outline_shares(self, px: np.ndarray) -> list[float]:
        """:meth:`_outline_seen_px` of ``N x 3 uint8`` outline pixels in the plan's order
        (``n x 5 x A``), as a list: the same arithmetic, the share as a count over ``A``."""
        n_angles = px.shape[0] // (5 * len(self.geometry.space_centres_mm))
        lum = (cv2.LUT(px.reshape(-1, 1, 3), _LUT).reshape(-1, 5, n_angles, 3) @ _LUMA)
        around = np.minimum(lum[:, 3], lum[:, 4])
        around *= self.OUTLINE_CONTRAST
        seen = (lum[:, :3].min(axis=1) <= around).sum(axis=1).tolist()
        return [v / n_angles for v in seen]

    def _outline_seen(self, flat: np.ndarray, plan: _Plan) -> np.ndarray:
        """Share (0-1) of each space's printed outline that is visible: at each of 48 angles,
        the darkest of three samples across the outline must be at most
        :attr:`OUTLINE_CONTRAST` times the lightness just inside and just outside it."""
        return self._outline_seen_px(flat[plan.outline])

    def outline_seen(self, frame: np.ndarray, reg: Registration, k: int) -> float:
        """Share (0-1) of space ``k``'s printed outline visible in ``frame`` (see
        :meth:`_outline_seen`)."""
        return float(self._outline_seen(frame.reshape(-1, 3), _Plan(self, reg, frame.shape))[k])

    def _cards(self, plan: _Plan, beyond: list[int], counts: np.ndarray,
               ratio: list[float]) -> dict[str, CardReading]:
        g = self.geometry
        if not g.cards:
            return {}
        # the card's white must be even: every patch pixel within Delta E 15 of the card's
        # white (``beyond``: each card's pixels beyond it)
        uneven = [v / size for v, size in zip(beyond, plan.card_white_sizes)]
        discs_all = self.card_classifier.decide_many(counts)
        blank = (RegionReading(UNKNOWN, 0.0),) * 3
        # a card whose three disc readings are the very objects of a frame before (the region
        # rule keeps each vote row's reading) reads the same: its reading is kept too
        kept = self._card_kept
        if len(kept) > 4 * DECIDE_KEPT:
            kept.clear()
        out = {}
        for i, slot in enumerate(g.cards):
            if not plan.card_ok[i]:
                problem = "the card is out of the frame"
            elif uneven[i] > 0.1:
                problem = f"the card's white is uneven ({uneven[i]:.0%}): covered"
            elif not 0.5 <= ratio[i] <= 2.5:
                problem = f"the card is {ratio[i]:.2f}x as bright as the board: not a card"
            else:
                problem = ""
            if problem:
                out[slot.seat] = CardReading(slot.seat, blank, None, problem)
                continue
            d0, d1, d2 = discs_all[3 * i:3 * i + 3]
            key = (i, id(d0), id(d1), id(d2))
            hit = kept.get(key)
            if hit is not None and hit[0] is d0 and hit[1] is d1 and hit[2] is d2:
                out[slot.seat] = hit[3]
                continue
            discs = (d0, d1, d2)
            labels = (d0.label, d1.label, d2.label)
            if UNKNOWN in labels:
                card = CardReading(slot.seat, discs, None, "a disc is unclear")
            elif len(set(labels)) != 3:
                card = CardReading(slot.seat, discs, None, "a card shows three different horses")
            else:
                card = CardReading(slot.seat, discs, labels)  # type: ignore[arg-type]
            kept[key] = (d0, d1, d2, card)  # the discs held: their ids stay theirs
            out[slot.seat] = card
        return out

    # kept for calibration: sample one set of board points
    @staticmethod
    def _sample(frame: np.ndarray, reg: Registration, pts_mm: np.ndarray) -> np.ndarray:
        p = np.rint(reg.to_image(pts_mm)).astype(np.int64)
        h, w = frame.shape[:2]
        ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
        return frame[p[ok, 1], p[ok, 0]]

    @staticmethod
    def _split_clipped(px: np.ndarray) -> tuple[np.ndarray, int]:
        ok = px.min(axis=1) < CLIPPED
        return px[ok], int((~ok).sum())


class _Layout:
    """The part of a :class:`_Plan` that does not depend on the homography: which sample
    points (rows of :meth:`CarrouselReader._all_points`) are gathered, in which order, and
    every count, offset and index set derived from their numbers alone.

    It depends only on which points fall inside the frame (``inside``, ``N`` bools) and on
    whether the board's ring points land on the rings' own pixels (``board_sum``); the reader
    keeps the one of a board wholly inside the frame (:meth:`CarrouselReader._layout`), so a
    new registration costs one projection and a few gathers.

    Attributes (beyond the :class:`_Plan` ones it gives): ``order`` (``intp``, the points of
    the gathered pixels in gather order), ``check_order`` (the colour check's points),
    ``outline_order`` (``n_spaces x 5 x 48``, every outline point, clipped not dropped).
    """

    def __init__(self, reader: CarrouselReader, inside: np.ndarray, board_sum: bool):
        _, segs = reader._all_points()

        def part(name: str, clip: bool = False) -> list[np.ndarray]:
            return [np.arange(a, b) if clip else np.flatnonzero(inside[a:b]) + a for a, b in segs[name]]

        (board,) = part("board")
        rings = part("rings")
        card_white = part("card_white")
        self.n_spaces = n = len(rings)
        self.n_cards = m = len(card_white)
        # --- the histogram part: one median per segment and channel, from one bincount
        ring_px = sum(len(r) for r in rings)
        patch = board[:len(board) - ring_px]
        self._board_sum = board_sum
        hist_segs = ([patch] if board_sum else [board]) + rings + card_white
        gathered = np.array([len(s) for s in hist_segs])
        self.n_hist = int(gathered.sum())
        seg_of = np.repeat(np.arange(len(hist_segs)), gathered)
        self._hist_offset = (seg_of[:, None] * 768 + np.arange(3)[None, :] * 256).astype(np.intp)
        self._n_segs = len(hist_segs)
        # the order statistics of each segment and channel (the median's two middle values,
        # lower then upper) as positions in the cumulative sum of all the histograms
        sizes = np.array([len(board)] + [len(s) for s in hist_segs[1:]])
        before = np.concatenate([[0], np.cumsum(3 * sizes)[:-1]])
        base = before[:, None] + np.arange(3)[None, :] * sizes[:, None]  # counts before (segment, channel)
        self._rank = np.stack([base + ((sizes - 1) // 2)[:, None], base + (sizes // 2)[:, None]]).ravel()
        self._rank_start = np.tile(np.arange(self._n_segs * 3) * 256, 2)
        board_planned = segs["board"][0][1] - segs["board"][0][0]
        self.board_ok = len(board) >= 0.3 * board_planned and len(board) >= 10
        self.ring_ok = np.array([len(r) >= 0.5 * len(reader._space_ring) and len(r) >= 10 for r in rings], dtype=bool)
        self.ring_missing = ~self.ring_ok
        self.card_ok = np.array([len(c) >= 10 and len(c) >= 0.9 * (b - a)
                                 for c, (a, b) in zip(card_white, segs["card_white"])], dtype=bool)
        self.card_missing = ~self.card_ok
        self.any_ring_missing, self.any_card_missing = bool(self.ring_missing.any()), bool(self.card_missing.any())
        # --- the Lab part
        discs = part("discs")
        disc_idx = np.concatenate(discs)
        disc_seg = np.repeat(np.arange(n), [len(d) for d in discs])
        self.n_disc_px = len(disc_idx)
        self.disc_short = np.array([len(d) < 0.8 * len(reader._space_disc) for d in discs], dtype=bool)
        cd = part("card_discs")
        card_disc_idx = np.concatenate(cd) if cd else np.zeros(0, np.intp)
        card_disc_seg = np.repeat(np.arange(len(cd)), [len(d) for d in cd]) if cd else np.zeros(0, np.int64)
        # the colour check's pixels (against the board's white): a quarter of them is converted
        # with the rest, all of them only when that quarter does not settle the check
        self.check_order = np.concatenate([disc_idx[::2], card_disc_idx[::2]])
        check_idx = self.check_order[::4]
        cw_idx = np.concatenate(card_white) if card_white else np.zeros(0, np.intp)
        self.card_white_seg = np.repeat(np.arange(m), [len(c) for c in card_white]) if m else np.zeros(0, np.int64)
        self.card_white_size = np.maximum(np.bincount(self.card_white_seg, minlength=m), 1)
        lab_parts = [cw_idx, disc_idx, card_disc_idx, check_idx]
        # white rows: 0 the board, 1..n the spaces (board x local gain), n+1.. the cards
        white_index = np.concatenate([1 + n + self.card_white_seg, 1 + disc_seg, 1 + n + card_disc_seg // 3,
                                      np.zeros(len(check_idx), np.int64)])
        #: each Lab-part byte's place in the table of linear light over the whites (row, channel, level)
        self.rel_offset = ((white_index[:, None] * 3 + np.arange(3)[None, :]) * 256).astype(np.intp)
        #: the same places as rows of that table (``1 x 3 n_lab float32``, row = white x 3 + channel)
        self.rel_rows = (self.rel_offset // 256).astype(np.float32).reshape(1, -1)
        bounds = np.cumsum([len(x) for x in lab_parts])
        self.lab_bounds = tuple(int(v) for v in bounds)
        self.n_lab = int(bounds[-1])
        self.lab_start = self.n_hist - len(cw_idx)
        self.outline_start = self.lab_start + self.n_lab
        # --- the votes: one bincount of (region, class) over the spaces' then the cards' discs,
        # from the grids' entries (class + _GRID_SHIFT; the counts' columns are class + OFFSET)
        self.space_width = len(reader.space_classifier.references.names) + OFFSET
        card_width = len(reader.card_classifier.references.names) + OFFSET
        self.vote_base = np.concatenate([disc_seg * self.space_width,
                                         n * self.space_width + card_disc_seg * card_width]).astype(np.intp)
        self.vote_base += OFFSET - _GRID_SHIFT
        self.n_votes = n * self.space_width + len(cd) * card_width
        # the same over the Lab part (the cards' white, the discs, the check's pixels): each
        # card's white pixels counted within and beyond Delta E 15 after the votes (two columns a
        # card), then the check's pixels at or below and above its chroma bound; and each
        # pixel's grid (the white test's third, the space classifier's, the card's, the check's)
        cw_base = self.n_votes + 2 * self.card_white_seg - _GRID_SHIFT
        check_base = np.full(len(check_idx), self.n_votes + 2 * m - _GRID_SHIFT)
        self.lab_vote_base = np.concatenate([cw_base, self.vote_base, check_base]).astype(np.intp)
        self.grid_offset = np.concatenate([np.full(len(cw_idx), 2 * _GRID_SIZE), np.zeros(len(disc_idx)),
                                           np.full(len(card_disc_idx), _GRID_SIZE),
                                           np.full(len(check_idx), 3 * _GRID_SIZE)]).astype(np.intp)
        self.card_white_sizes = self.card_white_size.tolist()
        self.outline_order = np.stack(part("outline", clip=True)).reshape(n, 5, -1)
        self.outline_end = self.outline_start + self.outline_order.size
        self.order = np.concatenate(hist_segs + lab_parts[1:] + [self.outline_order.ravel()]).astype(np.intp)
        #: the gathered pixels' count padded to whole rows of 64 (the remap map's shape)
        self.rows = -(-len(self.order) // 64)


class _Plan:
    """Where every sample point of the reader falls in the image, for one registration,
    computed once (one projection of all points) so that reading a frame is a few array
    operations on one gather of pixels.

    The gathered pixels are, in order: the histogram part (``n_hist`` pixels: the board's
    reference patch, each space's ring, each card's white patch; the board's white is the
    patch with the spaces' rings, so its histogram is theirs added), of which the cards'
    white patches also begin the Lab part (``n_lab`` pixels from ``lab_start``: the cards'
    white patches, the spaces' discs, the cards' discs, the colour check's pixels, each with
    the row of the white it is seen against), then the spaces' outlines (``n_spaces x 5 x
    48``, from ``outline_start``).

    Everything but the pixels' places comes from a :class:`_Layout` (the reader's own when
    every point is inside the frame): per registration, one projection of all points
    (:meth:`Registration.to_image`), their rounding, and gathers of the layout's orders.
    """

    def __init__(self, reader: CarrouselReader, reg: Registration, shape: tuple[int, ...]):
        self.reg, self.shape = reg, shape
        h, w = shape[:2]
        pts, segs = reader._all_points()
        p = np.rint(reg.to_image(pts)).astype(np.int64)
        x, y = p[:, 0], p[:, 1]
        all_inside = bool(x.min() >= 0 and x.max() < w and y.min() >= 0 and y.max() < h)
        if all_inside:
            inside = None
            flat = y * w + x
        else:
            inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
            flat = np.clip(y, 0, h - 1) * w + np.clip(x, 0, w - 1)
        # the board's points are the patch's then the rings' (projected in one batch): when
        # their pixels are the rings' own, the board's histogram is the patch's plus the rings'
        (b0, b1), rings = segs["board"][0], segs["rings"]
        if rings and all_inside:
            r0, r1 = rings[0][0], rings[-1][1]
            board_sum = bool(np.array_equal(flat[b1 - (r1 - r0):b1], flat[r0:r1]))
        elif rings:
            in_board = np.flatnonzero(inside[b0:b1]) + b0
            ring_pos = np.concatenate([np.flatnonzero(inside[a:b]) + a for a, b in rings])
            board_sum = bool(np.array_equal(flat[in_board[len(in_board) - len(ring_pos):]], flat[ring_pos]))
        else:
            board_sum = False
        layout = reader._layout(inside, board_sum)
        self.__dict__.update((k, v) for k, v in vars(layout).items()
                             if k not in ("order", "check_order", "outline_order", "rows"))
        self.check_index = flat[layout.check_order]
        self.outline = flat[layout.outline_order]
        self.index = flat[layout.order]
        #: those pixels' (x, y) as OpenCV's remap takes them (``rows x 64 x 2 int16``, the last
        #: row padded with the first pixel; a frame is narrower and lower than 32,767 pixels)
        k = len(self.index)
        if all_inside:  # the index's own x and y: each point's (x, y) pair taken as one int32
            pairs = p.astype(np.int16).view(np.int32).reshape(-1)
            xy32 = np.empty(layout.rows * 64, dtype=np.int32)
            np.take(pairs, layout.order, out=xy32[:k])
            xy32[k:] = xy32[0]
            xy = xy32.view(np.int16)
        else:
            xy = np.empty((layout.rows * 64, 2), dtype=np.int16)
            xy[:k, 0] = self.index % w
            xy[:k, 1] = self.index // w
            xy[k:] = xy[0]
        self.gather_map = xy.reshape(layout.rows, 64, 2)
        #: the map of every gathered pixel: ``gather_map``'s, then (when the space checks'
        #: points are all inside the frame, ``checks_sampled``) the space checks' rims and
        #: centres (:meth:`SpaceChecks.sample_points`, from ``check_start``), the checks' white
        #: patch being the histogram part's first ``n_patch`` pixels and their discs the Lab
        #: part's; one remap gathers them all
        self.full_map = self.gather_map
        self.checks_sampled = False
        self.n_patch = len(reader._white_patch)
        self.check_start = self.check_end = layout.rows * 64
        if all_inside:
            q = np.rint(reg.to_image(reader.checks.sample_points())).astype(np.int64)
            if q.min() >= 0 and q[:, 0].max() < w and q[:, 1].max() < h:
                pairs = q.astype(np.int16).view(np.int32).reshape(-1)
                rows = -(-len(pairs) // 64)
                xy32 = np.empty((layout.rows + rows) * 64, dtype=np.int32)
                xy32[:layout.rows * 64] = self.gather_map.reshape(-1, 2).view(np.int32).reshape(-1)
                xy32[self.check_start:self.check_start + len(pairs)] = pairs
                xy32[self.check_start + len(pairs):] = pairs[0]
                self.full_map = xy32.view(np.int16).reshape(-1, 64, 2)
                self.gather_map = self.full_map[:layout.rows]
                self.check_end = self.check_start + len(pairs)
                self.checks_sampled = True

    def medians(self, px: np.ndarray) -> tuple[np.ndarray, list[float]] | None:
        """Per-segment medians of the histogram part's ``n_hist x 3 uint8`` pixels.

        Returns:
            (``S x 3 float32`` linear medians of the board, each space's ring and each card's
            white, exactly :func:`white_of`'s; 3 floats, the board's median 8-bit levels,
            exactly ``np.median``'s), or None when the board's reference patch is out of the
            frame. Rows of segments too small to have a white are meaningless (see
            ``ring_ok``, ``card_ok``).
        """
        if not self.board_ok:
            return None
        hist = np.bincount((px + self._hist_offset).ravel(), minlength=self._n_segs * 768)
        if self._board_sum:
            board = hist[:768]
            board += hist[768:768 * (1 + self.n_spaces)].reshape(self.n_spaces, 768).sum(axis=0)
        # each order statistic: the bins of its histogram at or below its rank (an empty
        # segment, with no median, counts 0 or 256: the look-up clips it into the table)
        # (the cumulative sum by OpenCV's integral image: a third of numpy's cumsum's time,
        # exactly the same counts in float64, as they are integers far below 2**53)
        cum = cv2.integral(hist.astype(np.float64).reshape(1, -1))[1, 1:]
        level = np.searchsorted(cum, self._rank, side="right")
        level -= self._rank_start
        linear = np.take(_LUT, level, mode="clip")
        # np.median of an even count is the mean of the two middle values (in float32 for
        # linear light): the same sum and division here
        half = self._n_segs * 3
        whites = (linear[:half] + linear[half:]) / np.float32(2)
        lv = level[:3].tolist() + level[half:half + 3].tolist()
        return whites.reshape(self._n_segs, 3), [(lv[c] + lv[3 + c]) / 2.0 for c in range(3)]


_LUMA = np.array([0.0722, 0.7152, 0.2126], dtype=np.float32)  # linear B, G, R to luminance (Rec. 709)


_CLIPPED_LOW, _CLIPPED_HIGH = (CLIPPED,) * 3, (255,) * 3  # cv2.inRange's bounds of a clipped pixel



#: cells of one L* plane of a pixel-class grid, and the plane (L* 50) on which the colour check's
#: chroma test keeps its cells (:meth:`CarrouselReader._votes`)
_GRID_PLANE = _GRID_SHAPE[1] * _GRID_SHAPE[2]
_CHECK_PLANE = 52


def _fill_test_cells(grid: np.ndarray, cells: np.ndarray, measure: Any, bound: float) -> None:
    """Fill ``cells`` (flat indices) of a test's grid (``_GRID_SIZE int8``, the layout of
    :func:`~companion.vision.colour.grid_cells`) for the test ``measure(lab) > bound``, where
    ``measure`` is a Euclidean length of Lab or of part of it (:func:`_white_distance`,
    :func:`_chroma`): ``_GRID_SHIFT + 1`` where every Lab a pixel of the cell can have (its
    fast Lab rounds to the cell's centre: within 0.5 of it, and within LAB_FAST_ERROR of the
    exact Lab) passes the test, ``_GRID_SHIFT`` where none does, ``_GRID_UNSURE`` otherwise
    (and on the grid's edge): the exact Lab then decides. Such a length moves by at most the
    error's, sqrt(3) x (0.5 + LAB_FAST_ERROR), plus 0.05 for float32's rounding."""
    rest, b = np.divmod(cells, _GRID_SHAPE[2])
    l, a = np.divmod(rest, _GRID_SHAPE[1])
    centre = np.stack([l, a, b], axis=1).astype(np.float64) + _GRID_LO
    value = measure(centre)
    margin = (0.5 + LAB_FAST_ERROR) * 1.7321 + 0.05
    edge = ((l == 0) | (l == _GRID_SHAPE[0] - 1) | (a == 0) | (a == _GRID_SHAPE[1] - 1)
            | (b == 0) | (b == _GRID_SHAPE[2] - 1))
    unsure = edge | (np.abs(value - bound) <= margin)
    grid[cells] = np.where(unsure, _GRID_UNSURE, _GRID_SHIFT + (value > bound)).astype(np.int8)


def _chroma(lab: np.ndarray) -> np.ndarray:
    """C*ab of ``N x 3`` L*a*b* (``np.hypot(a*, b*)``, as the colour check computes it)."""
    return np.hypot(lab[:, 1], lab[:, 2])


def _white_distance(lab: np.ndarray) -> np.ndarray:
    """CIE76 Delta E of ``N x 3`` L*a*b* from the white (100, 0, 0), as the card rule computes it."""
    return np.sqrt((lab[:, 0] - 100.0) ** 2 + lab[:, 1] ** 2 + lab[:, 2] ** 2)


def _luminances(linear_bgr: np.ndarray) -> np.ndarray:
    """:func:`_luminance` of each row of ``N x 3`` linear BGR, ``N float64`` (same arithmetic)."""
    w = linear_bgr.astype(np.float64)
    return np.maximum(0.0722 * w[:, 0] + 0.7152 * w[:, 1] + 0.2126 * w[:, 2], 1e-6)


#: the type numpy compares a float32 scalar with a Python float in (float64 on numpy 1.x,
#: float32 on numpy 2): the light-range test compares exactly as a scalar comparison would
_SCALAR_FLOAT = type(np.float32(1.0) + 1.0)

def _luminance(linear_bgr: np.ndarray) -> float:
    b, g, r = (float(x) for x in linear_bgr)
    return max(0.0722 * b + 0.7152 * g + 0.2126 * r, 1e-6)


# ---------------------------------------------------------------------- overlay
_BGR = {"black": (90, 90, 90), "yellow": (0, 220, 255), "blue": (255, 90, 0), "green": (60, 180, 60),
        "red": (40, 40, 230), "empty": (235, 235, 235), UNKNOWN: (255, 0, 255)}


def draw_overlay(frame: np.ndarray, reading: CarrouselReading, geometry: CarrouselGeometry) -> np.ndarray:
    """The frame annotated for people: markers used (each with its id on a label), each space's
    outline with its label and confidence, each card disc and the card's triple, and the status
    written whole on a band at the top (:func:`~companion.vision.images.draw_header`, wrapped
    onto as many lines as it takes). A frame under
    :data:`~companion.vision.images.OVERLAY_MIN_SIDE_PX` on its shorter side is drawn enlarged
    (:class:`~companion.vision.images.OverlayCanvas`), and the band says so.

    Args:
        frame: ``H x W x 3 uint8`` BGR (not modified).
        reading: what :meth:`CarrouselReader.read` returned for it.
        geometry: the table.

    Returns:
        A new ``H' x W' x 3 uint8`` BGR image (``H x W`` unless the frame was enlarged).
    """
    from companion.vision.images import LabelPlacer, OverlayCanvas, draw_header

    canvas = OverlayCanvas(frame)
    out = canvas.img
    reg = reading.registration
    ok_colour = (80, 220, 80) if reading.status == "ok" else (60, 60, 255)
    status = reading.status
    if reg is not None and status == "ok":
        status = (f"ok: markers {','.join(map(str, reg.marker_ids))}, residual {reg.residual_px:.2f} px; "
                  f"spaces {' '.join(reading.labels)}")
    band = draw_header(out, status + canvas.note, ok_colour)
    header = out[:band + 1].copy()  # put back over the outlines that reach into the band
    if reg is None:
        return out
    labels = LabelPlacer(out, 0.36, top_px=band + 1)  # no label covers another (nor the status band)
    for mid, corners in reg.image_corners.items():
        cv2.polylines(out, [canvas.poly(corners)], True, (0, 255, 0), 2, cv2.LINE_AA)
        c = canvas.points(corners.mean(axis=0))[0]
        labels.put(f"id {mid}", (c[0], c[1]), (0, 255, 0))  # white on black: not lost on the marker
    angles = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    r = geometry.space_diameter_mm / 2
    for k, (centre, rd) in enumerate(zip(geometry.space_centres_mm, reading.spaces)):
        ring = reg.to_image(centre + r * np.stack([np.cos(angles), np.sin(angles)], axis=1))
        colour = _BGR.get(rd.label, (255, 0, 255))
        cv2.polylines(out, [canvas.poly(ring)], True, colour, 2, cv2.LINE_AA)
        p = canvas.points(reg.to_image(centre.reshape(1, 2)))[0]
        text = f"{k}:{rd.label}" + (f" {rd.confidence:.2f}" if rd.label != UNKNOWN else "")
        labels.put(text, (p[0], p[1]), colour)
    for slot in geometry.cards:
        card = reading.cards.get(slot.seat)
        if card is None:
            continue
        for c, d in zip(slot.disc_centres_mm, card.discs):
            ring = reg.to_image(c + (slot.disc_diameter_mm / 2) * np.stack([np.cos(angles), np.sin(angles)], axis=1))
            cv2.polylines(out, [canvas.poly(ring)], True, _BGR.get(d.label, (255, 0, 255)), 1, cv2.LINE_AA)
        p = canvas.points(reg.to_image((slot.centre_mm - slot.outward * 24).reshape(1, 2)))[0]
        text = f"{slot.seat}: " + ("-".join(card.triple) if card.triple else UNKNOWN)
        labels.put(text, (p[0], p[1] - 4), (255, 255, 255) if card.triple else (255, 0, 255))
    out[:band + 1] = header
    return out


def reference_colours_from(frames: Sequence[np.ndarray], truths: Sequence[Mapping[str, Any]],
                           reader: CarrouselReader) -> dict[str, dict[str, list[float]]]:
    """Capture the reference colours from photos of the table whose contents are known.

    Args:
        frames: ``H x W x 3 uint8`` BGR photos of the table under its own light.
        truths: per photo, ``{"spaces": [7 labels], "cards": {seat: [3 colours]}}``; spaces
            that a hand hides are given as ``"unknown"`` and skipped.
        reader: a reader with the table's geometry (its reference colours are not used).

    Returns:
        ``{"horses": {colour: [L, a, b]}, "cards": {colour: [L, a, b]}}``: the median Lab of
        each colour's foreground pixels (the horse's own pixels: chroma at least 16 or L* below
        40; every pixel of a card disc).

    Raises:
        ValueError: a photo where the board is not visible, or a colour never seen.
    """
    horse_px: dict[str, list[np.ndarray]] = {}
    card_px: dict[str, list[np.ndarray]] = {}
    g = reader.geometry
    for i, (frame, truth) in enumerate(zip(frames, truths)):
        reg = reader.registrar.register(frame)
        if reg is None:
            raise ValueError(f"photo {i + 1}: {reader.registrar.status}")
        board_white = white_of(reader._sample(frame, reg, np.concatenate(
            [reader._white_patch] + [reader._space_ring + c for c in g.space_centres_mm])))
        if board_white is None:
            raise ValueError(f"photo {i + 1}: the board's reference patch is out of the frame")
        board_y = _luminance(board_white)
        for label, centre in zip(truth["spaces"], g.space_centres_mm):
            if label in ("empty", UNKNOWN):
                continue
            local = white_of(reader._sample(frame, reg, reader._space_ring + centre))
            px, _ = reader._split_clipped(reader._sample(frame, reg, reader._space_disc + centre))
            if local is None or not len(px):
                continue
            lab = linear_to_lab(srgb_to_linear(px), board_white * (_luminance(local) / board_y))
            fg = (np.hypot(lab[:, 1], lab[:, 2]) >= 16.0) | (lab[:, 0] < 40.0)
            horse_px.setdefault(label, []).append(lab[fg])
        for slot in g.cards:
            triple = truth.get("cards", {}).get(slot.seat)
            if not triple:
                continue
            white = white_of(reader._sample(frame, reg, reader._card_white[slot.seat]))
            if white is None:
                continue
            for colour, c in zip(triple, slot.disc_centres_mm):
                px, _ = reader._split_clipped(reader._sample(frame, reg, reader._card_disc + c))
                card_px.setdefault(colour, []).append(linear_to_lab(srgb_to_linear(px), white))
    out: dict[str, dict[str, list[float]]] = {"horses": {}, "cards": {}}
    for key, store in (("horses", horse_px), ("cards", card_px)):
        for colour, chunks in sorted(store.items()):
            allpx = np.concatenate(chunks)
            if len(allpx):
                out[key][colour] = [round(float(v), 1) for v in np.median(allpx, axis=0)]
    return out
