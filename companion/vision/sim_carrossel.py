"""The simulated camera of the Carrossel table: rendered frames, each with its exact truth.

The table is drawn from the reader's geometry (``calibration/carrossel-board.toml``, the physical
table of ``shared/data/carrossel-table/README.md``) in layers, each a top view in millimetres
carried into the image by the homography of its own plane (so raised parts show their parallax
under tilt):

* the base board (z = 0.12 mm): the table's surface around it, the 420 mm board, the four fixed
  ArUco markers on their paper (236/255);
* the round board's top (z = 4 mm), turned to any angle: four light sector tints (pink, mint, light
  blue, light yellow) with their letters and boundary lines, the zero mark, the 48 white cells
  with their slot numbers, the centre marker (id 14) on its paper;
* the tiles (sides from z = 4, top at z = 7): the player-colour square, the cream disc and the
  animal's letter (its shape taken from the letters measured on photographs of the table,
  ``calibration/carrossel-letters.json``), letter up towards the centre, with a little position
  and yaw jitter;
* the solids, far to near: client standees (a shaded cylinder and head on a tile's centre) and
  the four ticket booths (box, roof; colours of the README), with soft cast shadows;
* a glossy glare spot on the print (under the solids and hands: they are matte and upright);
* a hand and sleeve hovering over some cells;
* then the camera (:mod:`companion.vision.sim`'s): light level, colour temperature, gradient,
  vignetting, motion blur, sensor noise, JPEG.

Tile colours are the reader's measured reference colours (``tiles.colours_lab``) turned back into
sRGB against the paper white, so the simulated table is the calibrated table. Every random choice
comes from one seeded generator: the same seed gives the same frames.

Camera model: R. Hartley and A. Zisserman, Multiple View Geometry, 2nd ed., 6.1 (pinhole) and
8.1 (the homography of a plane at height z: ``H = K [r1 r2 z r3 + t]``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from companion.vision.carrossel import BOOTH_PRINT_SRGB, EMPTY, CarrosselGeometry, LetterTemplates
from companion.vision.frames import Frame
from companion.vision.sim import TableRenderer, _lab_to_bgr8, kelvin_to_bgr

__all__ = ["CarrosselConditions", "CarrosselTruth", "CarrosselRenderer", "SimulatedCarrosselCamera",
           "random_carrossel_conditions", "random_tiles", "CONDITION_KINDS", "score_reading", "slot_verdict"]

PAPER = 236
CREAM = (196, 226, 240)  # BGR, the tiles' disc
SECTOR_TINTS = ((222, 212, 240), (212, 236, 205), (240, 222, 205), (190, 232, 240))  # BGR: pink, mint, blue, yellow
LINE = (70, 70, 80)
INK = (40, 40, 45)
SURFACES = {"dark_wood": (40, 62, 92), "oak": (96, 150, 196), "white_laminate": (222, 226, 228)}
BASE_BOARD = (150, 170, 182)
BOOTH_RGB = BOOTH_PRINT_SRGB  # the booths' print, as the reader's colour check has it
#: client standees' paints, BGR, as their heads' tops measure in the two calibration photographs
#: (carrossel_036 and carrossel_051, daylight, the paper at 236): pastel lilac, sky, lemon, mint,
#: pink and natural wood. Their bodies there measure 0.55-0.95 of the head (the side away from
#: the light darkest).
STANDEE_BGR = ((200, 158, 174), (196, 172, 150), (140, 195, 205), (165, 183, 154), (157, 154, 194), (95, 126, 163))
SKIN = ((165, 190, 232), (120, 150, 200), (90, 120, 170), (60, 85, 130))
SLEEVE = ((90, 50, 40), (60, 60, 60), (40, 90, 140), (120, 110, 40))
#: the kinds of conditions :func:`random_carrossel_conditions` draws
CONDITION_KINDS = ("normal", "dim", "bright", "warm", "cool", "tilted", "blur", "noise", "hands", "glare", "any")
#: kinds drawn only when asked (not in the benches' default rotation, which stays as it was):
#: ``"harsh"``, a cheap camera at its worst: sensor noise of sigma 10-20 levels, JPEG quality
#: 25-40, light 0.3-1.5 x, a hand over one or two cells half the time (the camera-like
#: transforms the readers must survive without a wrong reading)
EXTRA_KINDS = ("harsh",)


@dataclasses.dataclass(frozen=True)
class CarrosselConditions:
    """How one frame is taken.

    Attributes:
        height_mm: camera height above the board (mm; the photographs: 450-700).
        tilt_deg: angle between the optical axis and the vertical (0-35 degrees).
        azimuth_deg: direction the camera leans from (degrees CCW from +x).
        roll_deg: rotation of the image about the optical axis (degrees).
        look_mm: where the optical axis meets the board (x, y mm).
        light: light level (0.3 = dim, 1.0 = normal, 1.5 = bright).
        kelvin: colour temperature of the light (2700-6500 K).
        gradient: light falls off by this fraction across the frame (0-0.4).
        vignetting: strength of the fall-off towards the corners (0-1).
        noise_sigma: sensor noise, standard deviation in 8-bit levels.
        blur_px: motion blur length (pixels, 0 = none).
        jpeg_quality: 30-100, or 0 for none.
        hands: cells a hand hovers over (``"A7"``...; none, one or two neighbours).
        glare: strength of a glossy glare spot (0 = none, 1 = the photographs' bright lamp).
        surface: the table under the board (a key of ``SURFACES``).
    """

    height_mm: float = 575.0
    tilt_deg: float = 10.0
    azimuth_deg: float = 0.0
    roll_deg: float = 0.0
    look_mm: tuple[float, float] = (0.0, 0.0)
    light: float = 1.0
    kelvin: float = 5000.0
    gradient: float = 0.1
    vignetting: float = 0.3
    noise_sigma: float = 2.0
    blur_px: float = 0.0
    jpeg_quality: int = 90
    hands: tuple[str, ...] = ()
    glare: float = 0.0
    surface: str = "oak"


@dataclasses.dataclass(frozen=True)
class CarrosselTruth:
    """What a rendered frame shows.

    Attributes:
        board_angle_deg: the zero mark's direction, degrees CCW from +x (0-360).
        facing: booth -> (the sector label facing it, its distance from the nearest boundary, deg).
        slots: slot name -> ``{"animal", "colour", "standee"}`` or ``"empty"`` (the reader's form).
        hidden: slots a hand covers (any part of the tile's square under it), sorted.
        out_of_frame: slots whose tile square is not wholly inside the frame.
        markers_visible: ids (fixed and centre) whose whole black square is inside the frame and
            not under a hand.
        conditions: the :class:`CarrosselConditions` used.
        board_to_image: ``3 x 3`` homography of the markers' plane, board mm -> pixels.
    """

    board_angle_deg: float
    facing: Mapping[str, tuple[str, float]]
    slots: Mapping[str, Any]
    hidden: tuple[str, ...]
    out_of_frame: tuple[str, ...]
    markers_visible: tuple[int, ...]
    conditions: CarrosselConditions
    board_to_image: np.ndarray


def random_carrossel_conditions(rng: np.random.Generator, kind: str = "any",
                                cells: Sequence[str] = ()) -> CarrosselConditions:
    """Draw frame conditions.

    Args:
        rng: the generator.
        kind: one of :data:`CONDITION_KINDS`: ``"normal"`` (normal light, no hand), ``"dim"``
            (0.3-0.5x), ``"bright"`` (1.3-1.5x), ``"warm"`` (2700-3200 K), ``"cool"`` (6000-6500 K),
            ``"tilted"`` (25-35 degrees), ``"blur"`` (2-6 px, JPEG 40-70), ``"noise"`` (sigma 5-8),
            ``"hands"``, ``"glare"``, or ``"any"`` (everything in range, a hand one time in four,
            a glare spot one time in five); or one of :data:`EXTRA_KINDS` (``"harsh"``: noise
            sigma 10-20, JPEG 25-40).
        cells: the slot names a hand may hover over (the geometry's ``cell_names``).

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in CONDITION_KINDS + EXTRA_KINDS:
        raise ValueError(f"unknown condition kind {kind!r} (expected one of {', '.join(CONDITION_KINDS + EXTRA_KINDS)})")
    c: dict[str, Any] = dict(
        height_mm=rng.uniform(450, 700), tilt_deg=rng.uniform(0, 20), azimuth_deg=rng.uniform(0, 360),
        roll_deg=rng.uniform(-15, 15), look_mm=tuple(rng.uniform(-20, 20, 2)), light=rng.uniform(0.8, 1.2),
        kelvin=rng.uniform(4000, 6000), gradient=rng.uniform(0, 0.2), vignetting=rng.uniform(0.1, 0.4),
        noise_sigma=rng.uniform(1, 3), blur_px=0.0, jpeg_quality=int(rng.integers(80, 96)), hands=(), glare=0.0,
        surface=str(rng.choice(list(SURFACES))))
    hands = _random_hands(rng, cells) if cells else ()
    if kind == "any":
        c.update(tilt_deg=rng.uniform(0, 35), light=rng.uniform(0.3, 1.5), kelvin=rng.uniform(2700, 6500),
                 gradient=rng.uniform(0, 0.4), vignetting=rng.uniform(0, 0.8), noise_sigma=rng.uniform(1, 6),
                 blur_px=float(rng.choice([0, 0, 0, rng.uniform(1, 5)])), jpeg_quality=int(rng.integers(50, 96)),
                 hands=hands if rng.random() < 0.25 else (), glare=float(rng.uniform(0.5, 1.0)) if rng.random() < 0.2 else 0.0)
    elif kind == "dim":
        c.update(light=rng.uniform(0.3, 0.5), noise_sigma=rng.uniform(2, 5))
    elif kind == "bright":
        c.update(light=rng.uniform(1.3, 1.5))
    elif kind == "warm":
        c.update(kelvin=rng.uniform(2700, 3200))
    elif kind == "cool":
        c.update(kelvin=rng.uniform(6000, 6500))
    elif kind == "tilted":
        c.update(tilt_deg=rng.uniform(25, 35))
    elif kind == "blur":
        c.update(blur_px=rng.uniform(2, 6), jpeg_quality=int(rng.integers(40, 70)))
    elif kind == "noise":
        c.update(noise_sigma=rng.uniform(5, 8))
    elif kind == "hands":
        c.update(hands=hands)
    elif kind == "glare":
        c.update(glare=float(rng.uniform(0.6, 1.0)))
    elif kind == "harsh":
        c.update(light=rng.uniform(0.3, 1.5), noise_sigma=rng.uniform(10, 20), jpeg_quality=int(rng.integers(25, 41)),
                 hands=hands if rng.random() < 0.5 else ())
    return CarrosselConditions(**c)


def _random_hands(rng: np.random.Generator, cells: Sequence[str]) -> tuple[str, ...]:
    first = str(rng.choice(list(cells)))
    if rng.random() < 0.6:
        return (first,)
    sector, slot = first[0], int(first[1:])
    other = f"{sector}{slot + 1 if slot % 4 else slot - 1}"
    return tuple(sorted({first, other}))


def random_tiles(rng: np.random.Generator, geometry: CarrosselGeometry, share: tuple[float, float] = (0.3, 0.65),
                 standee_rate: float = 0.3) -> dict[str, tuple[str, str, bool]]:
    """A random table as the photographs have it: tiles on 30-65 % of the cells, a standee on
    about 30 % of them. Returns slot name -> (colour, animal, standee)."""
    names = list(geometry.cell_names)
    n = int(round(rng.uniform(*share) * len(names)))
    animals = sorted(set(geometry.letters.values()))
    colours = sorted(geometry.tile_colours)
    chosen = rng.choice(len(names), size=n, replace=False)
    return {names[i]: (str(rng.choice(colours)), str(rng.choice(animals)), bool(rng.random() < standee_rate))
            for i in sorted(chosen)}


def score_reading(reading: Any, truth: CarrosselTruth) -> dict[str, int]:
    """Count a reading's right, wrong and abstained answers against the frame's truth.

    A facing sector is right when it is the truth's label, wrong when it is another letter
    (``"ambiguous"`` and ``"unknown"`` abstain); a slot is judged by :func:`slot_verdict` (right,
    abstain, partial or wrong); the board angle is wrong when it is more
    than 3 degrees off. Slots under a hand or out of the frame are counted apart (``*_covered``).

    Returns:
        ``{"facing_right", "facing_wrong", "facing_abstain", "slot_right", "slot_wrong",
        "slot_abstain", "slot_partial", "slot_covered_right", "slot_covered_wrong",
        "slot_covered_abstain", "slot_covered_partial", "angle_wrong", "angle_read"}``.
    """
    out = dict.fromkeys(("facing_right", "facing_wrong", "facing_abstain", "slot_right", "slot_wrong",
                         "slot_abstain", "slot_partial", "slot_covered_right", "slot_covered_wrong",
                         "slot_covered_abstain", "slot_covered_partial", "angle_wrong", "angle_read"), 0)
    for booth, (label, _margin) in truth.facing.items():
        got = reading.facing.get(booth, "unknown")
        key = "right" if got == label else "abstain" if got in ("unknown", "ambiguous") else "wrong"
        out[f"facing_{key}"] += 1
    if reading.board_angle_deg is not None:
        out["angle_read"] += 1
        err = (reading.board_angle_deg - truth.board_angle_deg + 180.0) % 360.0 - 180.0
        out["angle_wrong"] += abs(err) > 3.0
    covered = set(truth.hidden) | set(truth.out_of_frame)
    for name, want in truth.slots.items():
        s = reading.slots.get(name)
        got = s.to_json() if s is not None else "unknown"
        key = slot_verdict(got, want)
        out[f"slot_covered_{key}" if name in covered else f"slot_{key}"] += 1
    return out


def slot_verdict(got: Any, want: Any) -> str:
    """One slot's reading against the truth (both in the reader's form): ``"right"`` (equal),
    ``"abstain"`` (``"unknown"``), ``"partial"`` (a tile read with its animal ``"unknown"``, its
    colour and its standee the truth's: a standee over its letter) or ``"wrong"`` (anything else,
    a partial reading of another colour or standee included)."""
    if got == want:
        return "right"
    if got == "unknown":
        return "abstain"
    if (isinstance(got, dict) and got.get("animal") == "unknown" and isinstance(want, dict)
            and got.get("colour") == want["colour"] and got.get("standee") == want["standee"]):
        return "partial"
    return "wrong"


def _cell_ups(g: CarrosselGeometry, board_angle_deg: float) -> np.ndarray:
    """The cells' "up" (``48 x 2``): towards the centre along the sector's middle (README: cell
    edges along the sector's u and v, text up towards the centre)."""
    n = len(g.cell_names) // len(g.middle_deg)
    a = np.radians(np.repeat(np.asarray(g.middle_deg, dtype=np.float64), n) + board_angle_deg)
    return -np.stack([np.cos(a), np.sin(a)], axis=1)


def _over(img: np.ndarray, layer_bgra: np.ndarray, shade: float = 1.0) -> np.ndarray:
    """``img`` (float32 BGR) with a warped BGRA layer over it (its colour times ``shade``)."""
    a = layer_bgra[..., 3:4].astype(np.float32) * np.float32(1 / 255.0)
    return img * (1 - a) + layer_bgra[..., :3].astype(np.float32) * (a * np.float32(shade))


class CarrosselRenderer:
    """Renders frames of the Carrossel table.

    Args:
        geometry: the table (default ``calibration/carrossel-board.toml``).
        letters: the animal letters' shapes (default ``calibration/carrossel-letters.json``).
        size: (width, height) of the frames, pixels.
        hfov_deg: the camera's horizontal field of view (degrees; the photographs' 60).
        px_per_mm: resolution of the internal top views.

    Example::

        r = CarrosselRenderer()
        image, truth = r.render(92.0, {"A7": ("red", "fish", False)}, CarrosselConditions(), rng)
    """

    def __init__(self, geometry: CarrosselGeometry | None = None, letters: LetterTemplates | None = None,
                 size: tuple[int, int] = (640, 480), hfov_deg: float = 60.0, px_per_mm: float = 3.0):
        self.geometry = g = geometry if geometry is not None else CarrosselGeometry.load()
        self.letters = letters if letters is not None else LetterTemplates.load()
        self.size = size
        w, h = size
        f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
        self.K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
        self.s = px_per_mm
        white = (PAPER, PAPER, PAPER)
        refs = g.tile_references()
        self.tile_bgr = {n: _lab_to_bgr8(lab, white) for n, lab in zip(refs.names, refs.lab)}
        self._dict = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, g.dictionary))
        self._glyphs = self._letter_glyphs()
        self._numbers: dict[int, np.ndarray] = {}
        self._tile_images: dict[tuple[str, str], np.ndarray] = {}
        self._base: dict[str, np.ndarray] = {}
        board, board_mask = self._draw_board()
        self._board_bgra = np.dstack([board, np.clip(board_mask * 255.0 + 0.5, 0, 255).astype(np.uint8)])
        self._tiles_key: Any = None
        self._grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._tiles_tex: tuple[np.ndarray, np.ndarray] | None = None

    # ---------------------------------------------------------------- top views
    def _tex(self, pts_mm: np.ndarray, half: float) -> np.ndarray:
        p = np.asarray(pts_mm, float).reshape(-1, 2)
        return np.stack([(p[:, 0] + half) * self.s, (half - p[:, 1]) * self.s], axis=1)

    def _tex_to_mm(self, half: float) -> np.ndarray:
        return np.array([[1 / self.s, 0, -half], [0, -1 / self.s, half], [0, 0, 1]])

    def _paste(self, tex: np.ndarray, src: np.ndarray, src_to_mm: np.ndarray, half: float,
               mask: np.ndarray | None = None) -> None:
        """Draw ``src`` (an image whose pixels map to mm by the affine ``src_to_mm``, ``2 x 3``)
        into the top view ``tex`` (``mask``: where it is opaque, 0-1)."""
        mm_to_tex = np.array([[self.s, 0, half * self.s], [0, -self.s, half * self.s]])
        a = mm_to_tex @ np.vstack([src_to_mm, [0, 0, 1]])
        h, w = src.shape[:2]
        box = cv2.transform(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), a)[0]
        x0, y0 = np.floor(box.min(axis=0)).astype(int) - 1
        x1, y1 = np.ceil(box.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, tex.shape[1]), min(y1, tex.shape[0])
        if x1 <= x0 or y1 <= y0:
            return
        a_roi = a.copy()
        a_roi[:, 2] -= (x0, y0)
        size = (x1 - x0, y1 - y0)
        warped = cv2.warpAffine(src, a_roi, size, flags=cv2.INTER_LINEAR)
        m = np.ones(src.shape[:2], np.float32) if mask is None else mask.astype(np.float32)
        alpha = cv2.warpAffine(m, a_roi, size, flags=cv2.INTER_LINEAR)[..., None]
        roi = tex[y0:y1, x0:x1]
        roi[:] = (roi * (1 - alpha) + warped * alpha).astype(tex.dtype)

    def _marker(self, tex: np.ndarray, mid: int, corners: np.ndarray, paper_scale: float, half: float) -> None:
        """A marker's black square at ``corners`` (TL, TR, BR, BL, mm) on its paper."""
        centre = corners.mean(axis=0)
        paper = self._tex(centre + (corners - centre) * paper_scale, half).astype(np.int32)
        cv2.fillConvexPoly(tex, paper, (PAPER, PAPER, PAPER), cv2.LINE_AA)
        n = 120
        img = cv2.cvtColor(cv2.aruco.generateImageMarker(self._dict, int(mid), n), cv2.COLOR_GRAY2BGR)
        img = np.where(img < 128, 14, PAPER).astype(np.uint8)
        tl, tr, bl = corners[0], corners[1], corners[3]
        to_mm = np.column_stack([(tr - tl) / n, (bl - tl) / n, tl])
        self._paste(tex, img, to_mm, half)

    def _draw_base(self, surface_bgr: tuple[int, int, int]) -> np.ndarray:
        g = self.geometry
        half = 300.0
        n = int(2 * half * self.s)
        img = np.empty((n, n, 3), np.uint8)
        img[:] = surface_bgr
        rng = np.random.default_rng(11)
        grain = (rng.normal(0, 5, (n, 1, 1)) * np.ones((1, n, 1))).astype(np.int16)
        img = np.clip(img.astype(np.int16) + grain, 0, 255).astype(np.uint8)
        board = self._tex(np.array([[-210, 210], [210, 210], [210, -210], [-210, -210]]), half).astype(np.int32)
        cv2.fillConvexPoly(img, board, BASE_BOARD, cv2.LINE_AA)
        for mid, corners in g.markers.items():
            self._marker(img, mid, corners, g.marker_paper_mm / g.marker_size_mm, half)
        return cv2.GaussianBlur(img, (0, 0), 0.8)

    def _number(self, n: int) -> np.ndarray:
        """A slot number's glyph, ``M x M`` float 0-1 (1 = ink), 0.1 mm per pixel, text up."""
        if n not in self._numbers:
            img = np.zeros((80, 80), np.uint8)
            text = str(n)
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 1.6, 4)
            cv2.putText(img, text, ((80 - tw) // 2, (80 + th) // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.6, 255, 4, cv2.LINE_AA)
            self._numbers[n] = img.astype(np.float32) / 255.0
        return self._numbers[n]

    def _letter_glyphs(self) -> dict[str, np.ndarray]:
        """Each animal's letter as ink (``M x M`` float 0-1, 0.1 mm per pixel, ±14.25 mm),
        shaped as the letters measured on photographs of the table (the disc's dark part)."""
        out = {}
        t = self.letters.images
        n = t.shape[1]
        step = 2 * 14.25 / (n - 1)
        m = int(round(2 * 14.25 / 0.1)) + 1
        yy, xx = np.mgrid[0:n, 0:n]
        r = np.hypot((xx - (n - 1) / 2) * step, (yy - (n - 1) / 2) * step)
        for animal, im in zip(self.letters.animals, t):
            inside = (r <= self.geometry.disc_diameter_mm / 2 - 1.2).astype(np.float32)
            big = cv2.resize(np.where(inside > 0, im, 1.0).astype(np.float32), (m, m), interpolation=cv2.INTER_CUBIC)
            # the measured letter is the print seen through a lens: its middle level is its edge
            out[animal] = np.clip((0.6 - big) / 0.08 + 0.5, 0, 1)
        return out

    def _draw_board(self) -> tuple[np.ndarray, np.ndarray]:
        """The round board's top in its own frame (angle 0): BGR and its opaque mask."""
        g = self.geometry
        half = g.radius_mm + 2
        n = int(2 * half * self.s)
        img = np.zeros((n, n, 3), np.uint8)
        ctr = self._tex(np.zeros(2), half)[0]
        R = g.radius_mm * self.s
        for k, m in enumerate(g.middle_deg):
            a0, a1 = m - g.half_width_deg, m + g.half_width_deg
            # texture y runs down: a CCW angle is drawn at minus that angle
            cv2.ellipse(img, (int(ctr[0]), int(ctr[1])), (int(R), int(R)), 0, -a1, -a0,
                        SECTOR_TINTS[k % 4], -1, cv2.LINE_AA)
        for k, m in enumerate(g.middle_deg):
            b = math.radians(m + g.half_width_deg)
            p = self._tex(np.array([[0, 0], [g.radius_mm * math.cos(b), g.radius_mm * math.sin(b)]]), half)
            cv2.line(img, tuple(int(v) for v in p[0]), tuple(int(v) for v in p[1]), LINE, max(1, int(self.s)), cv2.LINE_AA)
        cv2.circle(img, (int(ctr[0]), int(ctr[1])), int(R), LINE, max(1, int(self.s)), cv2.LINE_AA)
        # the zero mark: a dark triangle at the rim, board angle 0
        tri = self._tex(np.array([[g.radius_mm - 2, 0], [g.radius_mm - 14, 7], [g.radius_mm - 14, -7]]), half)
        cv2.fillConvexPoly(img, tri.astype(np.int32), INK, cv2.LINE_AA)
        # sector letters at 50 mm
        for k, (label, m) in enumerate(zip(g.labels, g.middle_deg)):
            a = math.radians(m)
            c = np.array([50 * math.cos(a), 50 * math.sin(a)])
            glyph8 = np.zeros((120, 120), np.uint8)
            (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_DUPLEX, 3.0, 6)
            cv2.putText(glyph8, label, ((120 - tw) // 2, (120 + th) // 2), cv2.FONT_HERSHEY_DUPLEX, 3.0, 255, 6, cv2.LINE_AA)
            glyph = glyph8.astype(np.float32) / 255.0
            up = -c / np.linalg.norm(c)
            self._ink(img, glyph, c, up, 0.12, (90, 90, 100), half)
        # the cells: white squares with a thin outline and the slot number
        h = g.cell_size_mm / 2
        for name, c, up in zip(g.cell_names, g.cell_centres_board_mm, _cell_ups(g, 0.0)):
            right = np.array([up[1], -up[0]])
            sq = np.stack([c + h * (up - right), c + h * (up + right), c + h * (-up + right), c + h * (-up - right)])
            p = self._tex(sq, half).astype(np.int32)
            cv2.fillConvexPoly(img, p, (PAPER, PAPER, PAPER), cv2.LINE_AA)
            cv2.polylines(img, [p], True, (150, 150, 155), 1, cv2.LINE_AA)
            self._ink(img, self._number(int(name[1:])), c, up, 0.0625, (110, 110, 115), half)
        # the centre marker (top edge along the zero mark)
        cm = np.array([[15, 15], [15, -15], [-15, -15], [-15, 15]], float) * (g.centre_marker_size_mm / 30.0)
        self._marker(img, g.centre_marker_id, cm, g.centre_marker_paper_mm / g.centre_marker_size_mm, half)
        img = cv2.GaussianBlur(img, (0, 0), 0.8)
        mask = np.zeros((n, n), np.float32)
        cv2.circle(mask, (int(ctr[0]), int(ctr[1])), int(R), 1.0, -1, cv2.LINE_AA)
        return img, mask

    def _ink(self, tex: np.ndarray, glyph: np.ndarray, centre: np.ndarray, up: np.ndarray, mm_per_px: float,
             colour: tuple[int, int, int], half: float) -> None:
        """Print ``glyph`` (float ink 0-1, text up = row 0) centred at ``centre`` (mm), its up ``up``."""
        right = np.array([up[1], -up[0]])
        m = glyph.shape[0]
        tl = centre - right * (m / 2) * mm_per_px + up * (m / 2) * mm_per_px
        to_mm = np.column_stack([right * mm_per_px, -up * mm_per_px, tl])
        src = np.empty((m, m, 3), np.uint8)
        src[:] = colour
        self._paste(tex, src, to_mm, half, mask=glyph)

    def _draw_tiles(self, tiles: Mapping[str, tuple[str, str, bool]], layout_seed: int) -> tuple[np.ndarray, dict]:
        """The tiles' tops in the board frame (BGRA, alpha = the tiles) and each tile's
        (centre, up) in mm."""
        key = (tuple(sorted(tiles.items())), layout_seed)
        g = self.geometry
        half = g.radius_mm + 2
        if self._tiles_key == key and self._tiles_tex is not None:
            return self._tiles_tex  # type: ignore[return-value]
        n = int(2 * half * self.s)
        img = np.zeros((n, n, 3), np.uint8)
        mask = np.zeros((n, n), np.float32)
        m = int(round(g.tile_size_mm / 0.1))
        place = {}
        centres = dict(zip(g.cell_names, g.cell_centres_board_mm))
        ups = dict(zip(g.cell_names, _cell_ups(g, 0.0)))
        for name, (colour, animal, _standee) in tiles.items():
            still = np.random.default_rng([layout_seed, g.cell_names.index(name)])
            c = centres[name] + still.uniform(-0.8, 0.8, 2)
            up0 = ups[name]
            yaw = math.radians(still.uniform(-3, 3))
            up = np.array([up0[0] * math.cos(yaw) - up0[1] * math.sin(yaw), up0[0] * math.sin(yaw) + up0[1] * math.cos(yaw)])
            right = np.array([up[1], -up[0]])
            src = self._tile_image(colour, animal)
            tl = c - right * (m / 2) * 0.1 + up * (m / 2) * 0.1
            to_mm = np.column_stack([right * 0.1, -up * 0.1, tl])
            self._paste(img, src, to_mm, half)
            self._paste_mask(mask, np.ones((m, m), np.float32), to_mm, half)
            place[name] = (c, up)
        alpha = np.clip(mask * 255.0 + 0.5, 0, 255).astype(np.uint8)
        out = (np.dstack([img, alpha]), place)
        self._tiles_key, self._tiles_tex = key, out  # type: ignore[assignment]
        return out

    def _tile_image(self, colour: str, animal: str) -> np.ndarray:
        """A tile's print (``M x M x 3 uint8``, 0.1 mm per pixel, letter up): the player colour,
        the cream disc, the letter."""
        key = (colour, animal)
        if key not in self._tile_images:
            g = self.geometry
            m = int(round(g.tile_size_mm / 0.1))
            src = np.empty((m, m, 3), np.float32)
            src[:] = self.tile_bgr[colour]
            yy, xx = np.mgrid[0:m, 0:m]
            rr = np.hypot(xx - (m - 1) / 2, yy - (m - 1) / 2) * 0.1
            disc = np.clip((g.disc_diameter_mm / 2 - rr) / 0.15 + 0.5, 0, 1)[..., None]
            src = src * (1 - disc) + np.array(CREAM, np.float32) * disc
            glyph = self._glyphs[animal]
            off = (glyph.shape[0] - m) // 2
            ink = glyph[off:off + m, off:off + m][..., None]
            self._tile_images[key] = (src * (1 - ink) + np.array(INK, np.float32) * ink).astype(np.uint8)
        return self._tile_images[key]

    def _paste_mask(self, tex: np.ndarray, src: np.ndarray, src_to_mm: np.ndarray, half: float) -> None:
        mm_to_tex = np.array([[self.s, 0, half * self.s], [0, -self.s, half * self.s]])
        a = mm_to_tex @ np.vstack([src_to_mm, [0, 0, 1]])
        h, w = src.shape[:2]
        box = cv2.transform(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), a)[0]
        x0, y0 = np.floor(box.min(axis=0)).astype(int) - 1
        x1, y1 = np.ceil(box.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, tex.shape[1]), min(y1, tex.shape[0])
        a[:, 2] -= (x0, y0)
        warped = cv2.warpAffine(src, a, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
        np.maximum(tex[y0:y1, x0:x1], warped, out=tex[y0:y1, x0:x1])

    # ---------------------------------------------------------------- camera
    def pose(self, cond: CarrosselConditions) -> tuple[np.ndarray, np.ndarray]:
        """Rotation ``3 x 3`` and translation ``3`` (mm), world (board mm, z up) to camera."""
        tilt, az = math.radians(cond.tilt_deg), math.radians(cond.azimuth_deg)
        look = np.array([cond.look_mm[0], cond.look_mm[1], self.geometry.board_top_z_mm])
        dist = cond.height_mm / max(math.cos(tilt), 0.3)
        cam = look + dist * np.array([math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)])
        z = look - cam
        z /= np.linalg.norm(z)
        roll = math.radians(cond.roll_deg)
        # image "up" is +y of the board turned by the roll
        up = np.array([-math.sin(roll), math.cos(roll), 0.0])
        x = np.cross(z, up)
        if np.linalg.norm(x) < 1e-6:
            x = np.array([1.0, 0.0, 0.0])
        x /= np.linalg.norm(x)
        y = np.cross(z, x)
        R = np.stack([x, y, z])
        return R, -R @ cam

    def project(self, R: np.ndarray, t: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """World points ``N x 3`` (mm) to pixels ``N x 2``."""
        pc = np.asarray(pts, float) @ R.T + t
        uv = pc @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    def plane(self, R: np.ndarray, t: np.ndarray, z_mm: float) -> np.ndarray:
        """The ``3 x 3`` homography of the horizontal plane at height ``z_mm``, world mm -> pixels."""
        return self.K @ np.column_stack([R[:, 0], R[:, 1], R[:, 2] * z_mm + t])

    # ---------------------------------------------------------------- render
    def render(self, board_angle_deg: float, tiles: Mapping[str, tuple[str, str, bool]],
               cond: CarrosselConditions, rng: np.random.Generator, layout_seed: int = 0
               ) -> tuple[np.ndarray, CarrosselTruth]:
        """One frame (``H x W x 3 uint8`` BGR) and its :class:`CarrosselTruth`.

        Args:
            board_angle_deg: the round board's angle (degrees CCW from +x; the zero mark's direction).
            tiles: slot name -> (player colour, animal, standee on it).
            cond: the frame's conditions.
            rng: the generator for the remaining random choices (light direction, noise).
            layout_seed: where exactly each tile lies on its cell (kept while it stays there).

        Raises:
            ValueError: an unknown slot, colour or animal.
        """
        g = self.geometry
        for name, (colour, animal, _s) in tiles.items():
            if name not in g.cell_names or colour not in self.tile_bgr or animal not in self._glyphs:
                raise ValueError(f"tile {name}: {colour} {animal}: expected a slot of {g.cell_names[0]}..{g.cell_names[-1]}, "
                                 f"a colour of {', '.join(self.tile_bgr)} and an animal of {', '.join(self._glyphs)}")
        w, h = self.size
        R, t = self.pose(cond)
        b = math.radians(board_angle_deg)
        rot = np.array([[math.cos(b), -math.sin(b), 0], [math.sin(b), math.cos(b), 0], [0, 0, 1]])
        surface = cond.surface if cond.surface in SURFACES else "oak"
        if surface not in self._base:
            self._base[surface] = self._draw_base(SURFACES[surface])
        base = self._base[surface]
        half_base = 300.0
        H0 = self.plane(R, t, g.marker_z_mm)
        img = cv2.warpPerspective(base, H0 @ self._tex_to_mm(half_base), (w, h), flags=cv2.INTER_LINEAR,
                                  borderValue=SURFACES.get(cond.surface, (96, 150, 196))).astype(np.float32)
        half = g.radius_mm + 2
        A = rot @ self._tex_to_mm(half)
        light_dir = np.array([rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4)])
        # the round board's rim (its side, z 0-4) then its top; each layer is BGR + alpha, one warp
        board = self._board_bgra
        Hb0 = self.plane(R, t, 0.0) @ A
        rim = cv2.warpPerspective(board[..., 3], Hb0, (w, h), flags=cv2.INTER_LINEAR)[..., None].astype(np.float32) / 255
        img = img * (1 - rim) + np.array((60, 70, 80), np.float32) * rim
        Hb = self.plane(R, t, g.board_top_z_mm) @ A
        img = _over(img, cv2.warpPerspective(board, Hb, (w, h), flags=cv2.INTER_LINEAR))
        # tiles: their sides (darker, from the board's top) then their tops
        place: dict = {}
        if tiles:
            tiles_bgra, place = self._draw_tiles(tiles, layout_seed)
            Ht4 = self.plane(R, t, g.board_top_z_mm) @ A
            img = _over(img, cv2.warpPerspective(tiles_bgra, Ht4, (w, h), flags=cv2.INTER_LINEAR), 0.55)
            Ht7 = self.plane(R, t, g.tile_top_z_mm) @ A
            img = _over(img, cv2.warpPerspective(tiles_bgra, Ht7, (w, h), flags=cv2.INTER_LINEAR))
        # the lamp's glossy reflection lies on the flat print only (the boards, the tiles'
        # tops): the matte, upright standees, booths and hands over it keep their colours, as
        # in the photographs' bright-glare light
        if cond.glare > 0:
            self._glare(img, R, t, cond.glare, rng)
        # the solids, with soft shadows cast on what lies under them
        solids = []
        for name, (colour, _animal, standee) in tiles.items():
            if standee:
                c, _up = place[name]
                cw = rot[:2, :2] @ c
                solids.append(("standee", cw, STANDEE_BGR[int(np.random.default_rng([layout_seed, 7, g.cell_names.index(name)]).integers(len(STANDEE_BGR)))]))
        for name, (c, _a) in g.booths.items():
            solids.append(("booth", np.asarray(c, float), BOOTH_RGB[name][::-1]))
        shade = np.ones((h, w), np.float32)
        for kind, c, _col in solids:
            top_z = 37.0 if kind == "standee" else 55.0
            foot = c + (self._circle2(6.0) if kind == "standee" else self._box2(c, 23.0, 16.0) - c)
            base_z = g.tile_top_z_mm if kind == "standee" else 0.0
            pts = np.vstack([np.column_stack([foot, np.full(len(foot), base_z)]),
                             np.column_stack([foot + light_dir * (top_z - base_z) * 0.8, np.full(len(foot), base_z)])])
            hull = cv2.convexHull(self.project(R, t, pts).astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(shade, hull, 0.7, cv2.LINE_AA)
        img *= cv2.GaussianBlur(shade, (0, 0), 2.5)[..., None]
        cam = -R.T @ t
        solids.sort(key=lambda s: -float(np.linalg.norm(np.append(s[1], 20.0) - cam)))
        for kind, c, col in solids:
            if kind == "standee":
                self._standee(img, R, t, c, col, -light_dir)
            else:
                self._booth(img, R, t, c, col)
        hidden: tuple[str, ...] = ()
        hand_mask = np.zeros((h, w), np.uint8)
        if cond.hands:
            hidden = self._hands(img, R, t, cond.hands, board_angle_deg, rng, hand_mask, tiles, place, rot)
        img = self._camera(img, cond, rng)
        # the truth
        facing = {k: (g.labels[self._nearest(board_angle_deg, a)], self._margin(board_angle_deg, a))
                  for k, (_c, a) in g.booths.items()}
        slots = {n: EMPTY for n in g.cell_names}
        for name, (colour, animal, standee) in tiles.items():
            slots[name] = {"animal": animal, "colour": colour, "standee": bool(standee)}
        out = []
        centres = g.cell_centres_mm(board_angle_deg)
        hs = g.tile_size_mm / 2
        for name, c in zip(g.cell_names, centres):
            sq = np.array([c + [dx, dy] for dx in (-hs, hs) for dy in (-hs, hs)])
            p = self.project(R, t, np.column_stack([sq, np.full(4, g.tile_top_z_mm)]))
            if not np.all((p >= 1) & (p < [w - 1, h - 1])):
                out.append(name)
        visible = []
        marks = dict(g.markers)
        cm = np.array([[15, 15], [15, -15], [-15, -15], [-15, 15]], float) * (g.centre_marker_size_mm / 30.0)
        marks[g.centre_marker_id] = cm @ rot[:2, :2].T
        for mid, corners in marks.items():
            z = g.centre_marker_z_mm if mid == g.centre_marker_id else g.marker_z_mm
            p = self.project(R, t, np.column_stack([corners, np.full(4, z)]))
            inside = np.all((p >= 0) & (p < [w, h]))
            if inside:
                poly = np.zeros((h, w), np.uint8)
                cv2.fillConvexPoly(poly, p.astype(np.int32), 1)
                if not np.any(poly & hand_mask):
                    visible.append(int(mid))
        return img, CarrosselTruth(board_angle_deg % 360.0, facing, slots, hidden, tuple(out), tuple(sorted(visible)),
                                   cond, self.plane(R, t, g.marker_z_mm))

    def _camera(self, img: np.ndarray, cond: CarrosselConditions, rng: np.random.Generator) -> np.ndarray:
        """The camera (the model of :mod:`companion.vision.sim`, in float32): linear light,
        vignetting, a light gradient, the light's level and colour, motion blur, sensor noise, JPEG."""
        h, w = img.shape[:2]
        lin = cv2.pow(np.clip(img, 0, 255) * np.float32(1 / 255.0), 2.2)
        if self._grid is None or self._grid[0].shape != (h, w):
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            f = np.float32(self.K[0, 0])
            self._grid = (1 + ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / (f * f), (xx / w - 0.5) * 2, (yy / h - 0.5) * 2)
        r2p1, gx, gy = self._grid
        vig = cv2.pow(r2p1, -2.0 * cond.vignetting)
        ang = rng.uniform(0, 2 * np.pi)
        grad = 1 - np.float32(cond.gradient) * (0.5 + 0.5 * (np.float32(np.cos(ang)) * gx + np.float32(np.sin(ang)) * gy) / 2)
        gains = (kelvin_to_bgr(cond.kelvin) * cond.light * 0.95).astype(np.float32)
        lin = lin * (vig * grad)[..., None] * gains
        out = cv2.pow(np.clip(lin, 0, 1), 1 / 2.2) * np.float32(255)
        if cond.blur_px >= 1:
            n = int(round(cond.blur_px)) | 1
            k = np.zeros((n, n), np.float32)
            k[n // 2, :] = 1.0 / n
            k = cv2.warpAffine(k, cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), rng.uniform(0, 180), 1.0), (n, n))
            out = cv2.filter2D(out, -1, k / max(float(k.sum()), 1e-6))
        out = out + rng.standard_normal(out.shape, dtype=np.float32) * np.float32(cond.noise_sigma)
        out8 = np.clip(out, 0, 255).astype(np.uint8)
        if cond.jpeg_quality:
            ok, buf = cv2.imencode(".jpg", out8, [cv2.IMWRITE_JPEG_QUALITY, int(cond.jpeg_quality)])
            out8 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return out8

    def _nearest(self, b: float, booth_deg: float) -> int:
        offs = [abs(((b + m - booth_deg + 180.0) % 360.0) - 180.0) for m in self.geometry.middle_deg]
        return int(np.argmin(offs))

    def _margin(self, b: float, booth_deg: float) -> float:
        offs = [abs(((b + m - booth_deg + 180.0) % 360.0) - 180.0) for m in self.geometry.middle_deg]
        return float(self.geometry.half_width_deg - min(offs))

    @staticmethod
    def _circle2(r: float, n: int = 20) -> np.ndarray:
        a = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.stack([r * np.cos(a), r * np.sin(a)], axis=1)

    @staticmethod
    def _box2(c: np.ndarray, half_along: float, half_deep: float) -> np.ndarray:
        """A booth's footprint: ``4 x 2`` mm, its long side along the board's edge."""
        radial = c / max(np.linalg.norm(c), 1e-6)
        along = np.array([-radial[1], radial[0]])
        return np.array([c + along * sa * half_along + radial * sd * half_deep
                         for sa, sd in ((-1, -1), (1, -1), (1, 1), (-1, 1))])

    def _standee(self, img: np.ndarray, R, t, c: np.ndarray, bgr, towards_light: np.ndarray | None = None) -> None:
        """A client standee on the tile centred at ``c`` (world mm) as the photographs show it
        (README: a cylinder of radius 6 -> 5.5 mm from z 7 to 29, a head of radius 5 at z 32):
        a dark contact shadow around its foot on the tile, the body shaded across (its side
        towards the light lighter), the head a shaded sphere with a soft highlight; drawn on its
        own layer, smoothed by half a pixel (the lens) and laid over the frame."""
        g = self.geometry
        body_r, z0, z1, head_r, head_z = g.standee
        base = np.array(bgr, np.float32)
        lt = np.zeros(2) if towards_light is None else np.asarray(towards_light, float)
        lt = lt / max(float(np.linalg.norm(lt)), 1e-6) if np.linalg.norm(lt) > 1e-6 else np.array([0.6, 0.8])
        h, w = img.shape[:2]
        ring = self._circle2(1.0, 32)
        foot = self.project(R, t, np.column_stack([c + ring * (body_r + 1.5), np.full(len(ring), z0)]))
        x0, y0 = np.floor(foot.min(axis=0)).astype(int) - 40
        x1, y1 = np.ceil(foot.max(axis=0)).astype(int) + 40
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return
        off = np.array([x0, y0], np.float32)
        # the contact shadow: the tile darkens around the foot
        occl = np.ones((y1 - y0, x1 - x0), np.float32)
        cv2.fillConvexPoly(occl, np.rint(foot - off).astype(np.int32), 0.55, cv2.LINE_AA)
        img[y0:y1, x0:x1] *= cv2.GaussianBlur(occl, (0, 0), 1.2)[..., None]
        layer = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
        alpha = np.zeros((y1 - y0, x1 - x0), np.float32)

        def poly(pts_mm: np.ndarray, shade: float) -> None:
            q = cv2.convexHull((self.project(R, t, pts_mm) - off).astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(layer, q, tuple(float(v) for v in np.clip(base * shade, 0, 255)), cv2.LINE_AA)
            cv2.fillConvexPoly(alpha, q, 1.0, cv2.LINE_AA)

        # the body: its dark side, then the half towards the light, then a lit band
        poly(np.vstack([np.column_stack([c + ring * body_r, np.full(len(ring), z0)]),
                        np.column_stack([c + ring * (body_r - 0.5), np.full(len(ring), z1)])]), 0.55)
        lit = ring[(ring @ lt) > -0.1]
        poly(np.vstack([np.column_stack([c + lit * body_r, np.full(len(lit), z0)]),
                        np.column_stack([c + lit * (body_r - 0.5), np.full(len(lit), z1)])]), 0.7)
        band = ring[(ring @ lt) > 0.6]
        poly(np.vstack([np.column_stack([c + band * body_r, np.full(len(band), z0 + 3)]),
                        np.column_stack([c + band * (body_r - 0.5), np.full(len(band), z1)])]), 0.85)
        # the head: a sphere, darker at its rim, lit towards the light, a soft highlight
        hc = self.project(R, t, np.array([[c[0], c[1], head_z]]))[0] - off
        edge = self.project(R, t, np.array([[c[0] + head_r, c[1], head_z]]))[0] - off
        r_px = max(1.0, float(np.linalg.norm(edge - hc)))
        lit_px = self.project(R, t, np.array([[c[0] + lt[0] * head_r * 0.35, c[1] + lt[1] * head_r * 0.35,
                                               head_z + head_r * 0.5]]))[0] - off
        sh = 16  # drawn at 1/16 pixel
        for centre_px, rad, shade in ((hc, r_px, 0.75), ((hc + lit_px) / 2, r_px * 0.75, 0.9),
                                      (lit_px, r_px * 0.35, 1.0)):
            cc = (int(round(centre_px[0] * sh)), int(round(centre_px[1] * sh)))
            col = tuple(float(min(255.0, v * shade)) for v in base)
            cv2.circle(layer, cc, max(1, int(round(rad * sh))), col, -1, cv2.LINE_AA, 4)
            cv2.circle(alpha, cc, max(1, int(round(rad * sh))), 1.0, -1, cv2.LINE_AA, 4)
        layer = cv2.GaussianBlur(layer, (0, 0), 0.6)
        alpha = cv2.GaussianBlur(alpha, (0, 0), 0.6)[..., None]
        img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * (1 - alpha) + layer * alpha

    def _booth(self, img: np.ndarray, R, t, c: np.ndarray, bgr) -> None:
        base = np.array(bgr, np.float32)
        box = self._box2(c, 20.0, 13.0)
        roof = self._box2(c, 23.0, 16.0)
        pts = np.vstack([np.column_stack([box, np.zeros(4)]), np.column_stack([box, np.full(4, 50.0)])])
        hull = cv2.convexHull(self.project(R, t, pts).astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(img, hull, tuple(float(v) for v in base * 0.6), cv2.LINE_AA)
        # the dark ticket window facing the board
        radial = c / np.linalg.norm(c)
        along = np.array([-radial[1], radial[0]])
        win = np.array([c - radial * 13.0 + along * s for s in (-9, 9)])
        wpts = np.vstack([np.column_stack([win, np.full(2, 18.0)]), np.column_stack([win[::-1], np.full(2, 38.0)])])
        cv2.fillConvexPoly(img, self.project(R, t, wpts).astype(np.int32), (30.0, 30.0, 35.0), cv2.LINE_AA)
        rp = np.vstack([np.column_stack([roof, np.full(4, 50.0)]), np.column_stack([roof, np.full(4, 55.0)])])
        hull = cv2.convexHull(self.project(R, t, rp).astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(img, hull, tuple(float(v) for v in base * 0.8), cv2.LINE_AA)
        topf = self.project(R, t, np.column_stack([roof, np.full(4, 55.0)])).astype(np.int32)
        cv2.fillConvexPoly(img, topf, tuple(float(v) for v in base), cv2.LINE_AA)

    def _hands(self, img: np.ndarray, R, t, cells: Sequence[str], board_angle_deg: float, rng, mask: np.ndarray,
               tiles: Mapping[str, Any], place: Mapping[str, Any], rot: np.ndarray) -> tuple[str, ...]:
        g = self.geometry
        centres = dict(zip(g.cell_names, g.cell_centres_mm(board_angle_deg)))
        targets = np.array([centres[c] for c in cells if c in centres])
        if not len(targets):
            return ()
        tip = targets.mean(axis=0)
        out = tip / max(np.linalg.norm(tip), 1e-6)
        # above every standee and booth it passes over
        z = rng.uniform(45, 90)
        palm_c = tip + out * 40
        ang = math.atan2(out[1], out[0])
        ell = TableRenderer._ellipse(palm_c, ang, 42, 36 if len(cells) > 1 else 28)
        palm = np.column_stack([ell, np.full(len(ell), z)])
        perp = np.array([-out[1], out[0]])
        wrist = np.array([tip + out * 75 + perp * -26, tip + out * 75 + perp * 26,
                          tip + out * 420 + perp * 34, tip + out * 420 + perp * -34])
        sleeve = np.column_stack([wrist, np.full(4, z + 12)])
        shadow = np.zeros(img.shape[:2], np.uint8)
        k = int(rng.integers(len(SKIN)))
        for poly3d, value in ((palm, 1), (sleeve, 2)):
            p = self.project(R, t, poly3d).astype(np.int32)
            flat = poly3d.copy()
            flat[:, :2] += rng.uniform(8, 22, 2)
            flat[:, 2] = 0
            cv2.fillConvexPoly(shadow, self.project(R, t, flat).astype(np.int32), 1)
            cv2.fillConvexPoly(mask, p, value)
        sh = cv2.GaussianBlur(shadow.astype(np.float32), (0, 0), 6)
        img *= (1 - 0.45 * sh)[..., None]
        img[mask == 1] = SKIN[k]
        img[mask == 2] = SLEEVE[k]
        hidden = []
        hs = g.tile_size_mm / 2
        h, w = mask.shape
        grid = np.array([[x, y] for x in np.linspace(-hs, hs, 5) for y in np.linspace(-hs, hs, 5)])
        for name, c in centres.items():
            pts = []
            for z_mm in (g.tile_top_z_mm, 37.0):  # the tile's top, and a standee's head
                p = self.project(R, t, np.column_stack([c + grid, np.full(len(grid), z_mm)])).astype(int)
                pts.append(p)
            p = np.vstack(pts)
            ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
            if np.any(mask[p[ok, 1], p[ok, 0]]):
                hidden.append(name)
        return tuple(sorted(hidden))

    def _glare(self, img: np.ndarray, R, t, strength: float, rng) -> None:
        """A lamp's glossy reflection: a soft spot of near-white light on the round board's print
        (drawn before the solids and hands, which do not mirror it)."""
        g = self.geometry
        r = rng.uniform(0, g.radius_mm * 0.8)
        a = rng.uniform(0, 2 * np.pi)
        c = self.project(R, t, np.array([[r * math.cos(a), r * math.sin(a), g.board_top_z_mm]]))[0]
        h, w = img.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        sigma = rng.uniform(18, 40)
        spot = np.exp(-((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / (2 * sigma ** 2)) * strength
        img += (255.0 - img) * spot[..., None] * 0.85


class SimulatedCarrosselCamera:
    """A frame source (see :mod:`companion.vision.frames`) showing the simulated Carrossel table.

    What the table shows is set by the caller (the simulated game) with :meth:`set_table`; every
    :meth:`read` renders it under the camera's conditions (fixed, or drawn afresh per frame with
    ``jitter``). Each frame's ``truth`` is its :class:`CarrosselTruth`.

    Args:
        seed: seeds the generator (same seed, same frames).
        kind: the kind of conditions (:func:`random_carrossel_conditions`; default ``"normal"``).
        conditions: fixed conditions for every frame (overrides ``kind``).
        clock: seconds for the frames' timestamps (default ``time.monotonic``).
        renderer: a :class:`CarrosselRenderer` to share.
        jitter: draw new conditions every frame (True) or keep one camera (False).

    Example::

        cam = SimulatedCarrosselCamera(seed=3)
        cam.set_table(board_angle_deg=270.0, tiles={"A4": ("red", "tiger", False)})
        frame = cam.read()   # frame.image, frame.truth
    """

    def __init__(self, seed: int = 0, kind: str = "normal", conditions: CarrosselConditions | None = None,
                 clock: Callable[[], float] = time.monotonic, renderer: CarrosselRenderer | None = None,
                 jitter: bool = False):
        self.name = f"sim:{seed}"
        self.rng = np.random.default_rng(seed)
        self.renderer = renderer or CarrosselRenderer()
        self.kind, self.clock, self.jitter = kind, clock, jitter
        cells = self.renderer.geometry.cell_names
        self.conditions = conditions or random_carrossel_conditions(self.rng, kind, cells)
        self._layout_seed = int(self.rng.integers(1 << 31))
        self.board_angle_deg = 0.0
        self.tiles: dict[str, tuple[str, str, bool]] = {}
        self.blur_px = 0.0
        self._index = 0
        self._key: Any = None
        self._still: tuple[np.ndarray, CarrosselTruth] | None = None

    def set_table(self, board_angle_deg: float | None = None, tiles: Mapping[str, tuple[str, str, bool]] | None = None,
                  hands: Sequence[str] | None = None, moving: bool | None = None) -> None:
        """Change what the table shows from the next frame on (``None`` keeps it).

        Args:
            board_angle_deg: the round board's angle (degrees CCW from +x).
            tiles: slot name -> (colour, animal, standee).
            hands: the cells a hand hovers over (empty: no hand).
            moving: the board is turning (frames get motion blur) or not.
        """
        if board_angle_deg is not None:
            self.board_angle_deg = float(board_angle_deg) % 360.0
        if tiles is not None:
            self.tiles = {k: (str(v[0]), str(v[1]), bool(v[2])) for k, v in tiles.items()}
        if hands is not None:
            self.conditions = dataclasses.replace(self.conditions, hands=tuple(hands))
        if moving is not None:
            self.blur_px = 6.0 if moving else 0.0

    def read(self) -> Frame:
        """Render the next frame."""
        if self.jitter:
            self.conditions = random_carrossel_conditions(self.rng, self.kind, self.renderer.geometry.cell_names)
        cond = self.conditions
        if self.blur_px > cond.blur_px:
            cond = dataclasses.replace(cond, blur_px=self.blur_px)
        key = (self.board_angle_deg, tuple(sorted(self.tiles.items())), cond)
        if self.jitter or key != self._key or self._still is None:
            self._still = self.renderer.render(self.board_angle_deg, self.tiles, cond, self.rng, self._layout_seed)
            self._key = key
            image, truth = self._still
        else:
            # the same scene: only the sensor's noise is new (rendering it again would give the
            # same picture under other noise, at 30 times the cost)
            still, truth = self._still
            noise = self.rng.normal(0.0, 1.0, still.shape)
            image = np.clip(still + noise, 0, 255).astype(np.uint8)
        frame = Frame(image, self.clock(), self._index, name=self.name, truth=truth)
        self._index += 1
        return frame

    def close(self) -> None:
        """Nothing to release."""
