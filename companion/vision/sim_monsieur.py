"""The simulated camera of the Monsieur Carrousel table: rendered frames with their exact truth.

Everything is drawn from the geometry file (``calibration/monsieur-board.toml``, see
:mod:`companion.vision.monsieur_geometry`), in millimetres, and carried into a 640 x 480
pinhole camera:

* the fixed board (sun half yellowish, rain half bluish, the dashed zone line, the printed suns
  where the geometry has them (``board.printed_suns_mm``), clouds)
  with its four ArUco markers on their white paper, as a top view warped by the homography of
  the plane z = 0;
* the wooden seating disc (its rim as a shaded cylinder z 0-10; its top at z = 10 with the 12
  seats in their print colours, each seat's dark glyph, the zero mark and the boundary ticks)
  turned to the carousel's angle;
* the pole, the roof (a shaded skirt cylinder, a cone, a flat white top at z = 122) and the
  roof marker at its own height (z = 122.12), so a tilted camera sees it displaced from the
  axis as the real one is;
* kid tokens (base cylinder, head sphere) on seats, Monsieur Carrousel (body, head, hat, the
  arm and finger), the die (a 16 mm cube with its six coloured faces, lying flat, or cocked on
  an edge);
* light: one lamp above the table (Lambert shading of every solid, soft cast shadows on the
  board and the disc), a light gradient, vignetting, colour temperature 2700-6500 K, a dim or
  bright level, a glare spot (the glossy print's reflection of a lamp), the camera's tone curve
  (a gamma of 2.2, or sRGB's) and a gain on its codes after it, sensor noise, JPEG;
* hands hovering over seats, the roof or the die (lifted above every obstacle they pass over,
  as in the photographs), with their shadow;
* motion: :class:`SimulatedMonsieurCamera` turns the carousel over time as a hand spin does
  (constant deceleration, then the pivot's elastic return carries it 0.7-1.5 degrees back
  within 0.3 s before it rests, ``companion/rotation/spin.py``), and a frame taken while it
  turns is the mean of sub-frames over the exposure (the roof marker smears, and is lost when
  the carousel turns fast).

Truth per frame (:class:`MonsieurTruth`): the carousel's angle, the pointed seat (as the data
README numbers it) with its offset, each seat's kid or empty, the seats a hand covers, whether
the roof marker and the die's top are visible, the die's top colour.

Every random choice comes from seeded generators: the same seed gives the same frames.
Camera model: R. Hartley and A. Zisserman, Multiple View Geometry, 2nd ed., 6.1 (pinhole) and
8.1 (the homography of a plane at height h: ``H = K [r1 r2 h r3 + t]``). Colour temperature:
:func:`companion.vision.sim.kelvin_to_bgr`. The table: ``shared/data/monsieur-table/README.md``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np

from companion.vision.frames import Frame
from companion.vision.monsieur_geometry import MonsieurGeometry
from companion.vision.sim import kelvin_to_bgr

__all__ = [
    "CONDITION_KINDS",
    "EXTRA_KINDS",
    "MonsieurConditions",
    "MonsieurRenderer",
    "MonsieurScene",
    "MonsieurTruth",
    "SimulatedMonsieurCamera",
    "angle_error",
    "compare",
    "die_place",
    "random_hands",
    "random_monsieur_conditions",
    "random_scene",
    "truth_pointed",
]

#: The kinds of conditions :func:`random_monsieur_conditions` draws.
CONDITION_KINDS = ("normal", "dim", "bright", "warm", "cool", "tilted", "blur", "noise", "hands", "glare", "any")
#: Kinds :func:`random_monsieur_conditions` also draws, outside :data:`CONDITION_KINDS` (whose
#: frames, seed by seed, the tests and benchmarks keep): ``exposure``, a gain on the codes
#: after an sRGB tone curve.
EXTRA_KINDS = ("exposure", "cast")

TABLE_BGR = (92, 118, 140)        # the table under the board (oak-like), BGR
SUN_BGR = (176, 234, 250)         # the sun half's light print
SUN_PRINT_BGR = (40, 150, 240)    # the printed suns' orange
RAIN_BGR = (246, 224, 196)        # the rain half's light print
WOOD_BGR = (112, 160, 206)        # the seating disc
GLYPH_BGR = (40, 34, 34)          # the seats' dark glyphs, the zero mark
ROOF_BGR = (70, 150, 48)          # the roof's green
COAT_BGR = (150, 62, 40)          # Monsieur Carrousel's coat
SKIN_BGR = (150, 178, 224)
HAT_BGR = (30, 30, 34)
SKINS = ((150, 178, 224), (120, 150, 200), (90, 120, 170), (60, 80, 120))
SLEEVES = ((90, 50, 40), (40, 40, 120), (60, 110, 60), (130, 130, 130))
DIE_FACES = {  # die frame: outward normal -> colour (README: +x red, -x green, +y orange, -y blue, +z yellow, -z purple)
    "red": (1, 0, 0), "green": (-1, 0, 0), "orange": (0, 1, 0), "blue": (0, -1, 0),
    "yellow": (0, 0, 1), "purple": (0, 0, -1),
}


@dataclasses.dataclass(frozen=True)
class MonsieurConditions:
    """How one frame is taken.

    Attributes:
        height_mm: camera height above the board (mm).
        tilt_deg: angle between the optical axis and the vertical (degrees, 0-35).
        azimuth_deg: direction the camera leans from (degrees).
        roll_deg: rotation of the image about the optical axis (degrees).
        look_mm: the point of the board the camera looks at (x, y mm).
        light: light level (0.3 dim - 1.5 bright).
        kelvin: colour temperature of the light (K).
        gradient: fraction the light falls off across the frame (0-0.4).
        vignetting: strength of the corners' fall-off (0-1).
        noise_sigma: sensor noise, standard deviation in 8-bit levels.
        blur_px: camera shake blur length (pixels; 0 = none).
        jpeg_quality: 30-100, or 0 for none.
        lamp_xy: the lamp's horizontal offset per mm of height (shadows fall along minus it).
        glare: strength of the glare spot (0 = none, 1 = white at its centre).
        glare_xy_mm: where the glare spot lies on the table (x, y mm).
        gradient_deg: the direction the light falls off towards, in the image (degrees).
        hands: what hands hover over: ``"seat:K"`` (board seat slot K at the current angle),
            ``"roof"`` or ``"die"``.
        exposure_s: the exposure time (seconds; motion smears over it).
        fill_kelvin: the colour temperature of the light that still reaches a cast shadow (a
            second lamp, daylight from a window: the photographs' mixed warm and cool light
            leaves shadows of the other light's colour), or None for the lamp's own.
        tone: the camera's tone curve from linear light to 8-bit codes: ``"power"`` (a pure
            gamma of 2.2, the default) or ``"srgb"`` (IEC 61966-2-1: a straight line and an
            offset in the shadows, as the photographs are coded).
        code_gain: a gain applied to the codes after the tone curve (a camera's digital gain
            or exposure compensation on its output: 1 = none), before the sensor's noise, the
            rounding to 8 bits (clipped at 255) and JPEG. Under the sRGB curve it lifts the
            shadows against the lights (a power law keeps their ratios).
        focus_sigma_px: the lens's blur (a Gaussian's sigma, pixels, on the linear light; 0 =
            none): the photographs' glyphs read L* 24-35 through it and JPEG, not their printed 4.
        channel_gains: gains on the codes per channel (B, G, R) after the tone curve and
            ``code_gain``: a white balance gone wrong (1, 1, 1 = none); a strong one clips one
            channel of the markers' paper.
    """

    height_mm: float = 560.0
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
    lamp_xy: tuple[float, float] = (0.15, 0.1)
    glare: float = 0.0
    glare_xy_mm: tuple[float, float] = (0.0, 0.0)
    hands: tuple[str, ...] = ()
    exposure_s: float = 1 / 60
    gradient_deg: float = 30.0
    fill_kelvin: float | None = None
    tone: str = "power"
    code_gain: float = 1.0
    focus_sigma_px: float = 0.0
    channel_gains: tuple[float, float, float] = (1.0, 1.0, 1.0)


def random_monsieur_conditions(rng: np.random.Generator, kind: str = "normal") -> MonsieurConditions:
    """Draw frame conditions of one of :data:`CONDITION_KINDS` or :data:`EXTRA_KINDS`.

    ``normal``: 500-700 mm up, tilt up to 20 degrees, light 0.8-1.2, 4000-6000 K. The others
    change one thing (``dim`` 0.3-0.5x with more noise, ``bright`` 1.3-1.5x, ``warm``
    2700-3200 K, ``cool`` 6000-6500 K, ``tilted`` 25-35 degrees, ``blur`` camera shake 2-5 px,
    ``noise`` sigma 5-8, ``hands`` one or two hands, ``glare`` a lamp's reflection), ``any``
    everything in range at once (a hand one time in four, glare one in five); ``exposure``
    the sRGB tone curve with a gain on its codes (x0.25-0.7 three times in four, else
    x1.2-1.5, clipping the lights), light 0.5-1.2, a lens blur of sigma 0.6-1.2 px, noise
    sigma 0-5 and JPEG 60-95 three times in four: a dim, noisy, quantised frame whose shadows
    are lifted against its lights, or an overexposed one; ``cast`` a colour cast on the codes
    (each channel x0.7-1.35), a lens blur of sigma 0.8-2.0 px half the time, an exposure of
    x0.5 or x1.4 a third of the time each.

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in CONDITION_KINDS + EXTRA_KINDS:
        raise ValueError(f"unknown condition kind {kind!r} (known: {', '.join(CONDITION_KINDS + EXTRA_KINDS)})")
    c: dict[str, Any] = dict(
        height_mm=rng.uniform(500, 700), tilt_deg=rng.uniform(0, 20), azimuth_deg=rng.uniform(0, 360),
        roll_deg=rng.uniform(-15, 15) + float(rng.choice([0.0, 90.0, 180.0, 270.0])),
        look_mm=(float(rng.uniform(-20, 20)), float(rng.uniform(-20, 20))),
        light=rng.uniform(0.8, 1.2), kelvin=rng.uniform(4000, 6000), gradient=rng.uniform(0, 0.2),
        vignetting=rng.uniform(0.1, 0.4), noise_sigma=rng.uniform(1, 3), blur_px=0.0,
        jpeg_quality=int(rng.integers(80, 96)), gradient_deg=float(rng.uniform(0, 360)),
        lamp_xy=(float(rng.uniform(-0.35, 0.35)), float(rng.uniform(-0.35, 0.35))), hands=(),
    )
    glare = (rng.uniform(0.3, 0.7), (float(rng.uniform(-110, 110)), float(rng.uniform(-110, 110))))
    if kind == "any":
        c.update(tilt_deg=rng.uniform(0, 35), light=rng.uniform(0.3, 1.5), kelvin=rng.uniform(2700, 6500),
                 gradient=rng.uniform(0, 0.4), vignetting=rng.uniform(0, 0.7), noise_sigma=rng.uniform(1, 6),
                 blur_px=float(rng.choice([0, 0, 0, rng.uniform(1, 4)])), jpeg_quality=int(rng.integers(50, 96)),
                 hands=random_hands(rng) if rng.random() < 0.25 else ())
        if rng.random() < 0.2:
            c.update(glare=glare[0], glare_xy_mm=glare[1])
        # a second light at the other end of the range fills the shadows (no draw: the frames
        # of every kind stay those of the same seed)
        c.update(fill_kelvin=9200.0 - c["kelvin"])
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
        c.update(blur_px=rng.uniform(2, 5), jpeg_quality=int(rng.integers(50, 75)))
    elif kind == "noise":
        c.update(noise_sigma=rng.uniform(5, 8))
    elif kind == "hands":
        c.update(hands=random_hands(rng))
    elif kind == "glare":
        c.update(glare=glare[0], glare_xy_mm=glare[1])
    elif kind == "exposure":
        gain = rng.uniform(0.25, 0.7) if rng.random() < 0.75 else rng.uniform(1.2, 1.5)
        c.update(tone="srgb", code_gain=float(gain), light=rng.uniform(0.5, 1.2), noise_sigma=rng.uniform(0, 5),
                 jpeg_quality=int(rng.integers(60, 96)) if rng.random() < 0.75 else 0,
                 focus_sigma_px=rng.uniform(0.6, 1.2))
    elif kind == "cast":
        c.update(tone="srgb", channel_gains=tuple(float(v) for v in rng.uniform(0.7, 1.35, 3)),
                 focus_sigma_px=float(rng.uniform(0.8, 2.0)) if rng.random() < 0.5 else 0.0,
                 code_gain=float(rng.choice([1.0, 0.5, 1.4])))
    return MonsieurConditions(**c)


def _shadow_tint(cond: MonsieurConditions) -> np.ndarray | None:
    """The fill light's colour over the lamp's (``3`` linear BGR, luminance 1), or None when
    the shadows are lit by the lamp's own colour."""
    if cond.fill_kelvin is None or cond.fill_kelvin == cond.kelvin:
        return None
    r = kelvin_to_bgr(cond.fill_kelvin) / kelvin_to_bgr(cond.kelvin)
    return (r / (0.114 * r[0] + 0.587 * r[1] + 0.299 * r[2])).astype(np.float32)


def random_hands(rng: np.random.Generator) -> tuple[str, ...]:
    """One or two hands: over a seat slot (three times in five), the roof or the die."""
    out = []
    for _ in range(1 if rng.random() < 0.7 else 2):
        r = rng.random()
        out.append(f"seat:{int(rng.integers(0, 12))}" if r < 0.6 else ("roof" if r < 0.8 else "die"))
    return tuple(dict.fromkeys(out))


@dataclasses.dataclass(frozen=True)
class MonsieurScene:
    """What stands on the table.

    Attributes:
        angle_deg: the carousel's angle (degrees, the disc zero mark CCW from +x).
        kids: 12 entries, seat by seat: a kid token's colour (a key of the geometry's
            ``kids.srgb``) or None for an empty seat.
        die: the die's top colour, ``"edge"`` (cocked on an edge: no top face), or None (no die
            on the board: in a hand, rolling).
        die_xy_mm: the die's centre on the board (x, y mm).
        die_yaw_deg: the die's turn about the vertical (degrees).
    """

    angle_deg: float = 0.0
    kids: tuple[str | None, ...] = (None,) * 12
    die: str | None = "yellow"
    die_xy_mm: tuple[float, float] = (150.0, -100.0)
    die_yaw_deg: float = 20.0


@dataclasses.dataclass(frozen=True)
class MonsieurTruth:
    """What a rendered frame shows.

    Attributes:
        carousel_angle_deg: the carousel's angle at the middle of the exposure (degrees 0-360).
        pointed_seat: the seat whose centre is angularly nearest the finger (0-11).
        pointed_offset_deg: signed degrees from the finger to that seat's centre (-15..15).
        boundary_distance_deg: degrees from the finger to the nearest seat boundary.
        seats: 12 of ``"kid"`` / ``"empty"``.
        hidden_seats: seats a hand covers (any part of the seat circle under it), sorted.
        roof_visible: the roof marker wholly in the frame and under no hand.
        die: the die's top colour, ``"unknown"`` (cocked on an edge) or None (no die).
        die_visible: the die's top face in the frame and under no hand.
        markers_visible: ids of the fixed markers wholly inside the frame.
        speed_dps: the carousel's angular speed during the exposure (degrees per second).
        conditions: the :class:`MonsieurConditions` used.
        board_to_image: ``3 x 3`` homography of the board plane z = 0, mm -> pixels.
    """

    carousel_angle_deg: float
    pointed_seat: int
    pointed_offset_deg: float
    boundary_distance_deg: float
    seats: tuple[str, ...]
    hidden_seats: tuple[int, ...]
    roof_visible: bool
    die: str | None
    die_visible: bool
    markers_visible: tuple[int, ...]
    speed_dps: float
    conditions: MonsieurConditions
    board_to_image: np.ndarray


def truth_pointed(geometry: MonsieurGeometry, angle_deg: float) -> tuple[int, float, float]:
    """The pointed seat of the carousel at ``angle_deg`` as the data README defines it: (seat
    0-11 nearest the finger's board angle, its signed offset in degrees, the finger's distance
    to the nearest seat boundary in degrees)."""
    g = geometry
    k = int(round((g.finger_deg - angle_deg - g.seat_first_deg) / g.seat_pitch_deg)) % g.n_seats
    offset = ((angle_deg + g.seat_disc_angle(k) - g.finger_deg + 180.0) % 360.0) - 180.0
    return k, offset, g.seat_pitch_deg / 2.0 - abs(offset)


def random_scene(rng: np.random.Generator, geometry: MonsieurGeometry) -> MonsieurScene:
    """A random table: any angle, kids on a random subset of seats, the die (one time in
    twenty cocked on an edge) somewhere on the board outside the carousel."""
    kid_colours = tuple(geometry.kid_srgb)
    n = int(rng.integers(0, geometry.n_seats + 1))
    occupied = set(rng.choice(geometry.n_seats, size=n, replace=False).tolist()) if n else set()
    kids = tuple(str(rng.choice(kid_colours)) if k in occupied else None for k in range(geometry.n_seats))
    return MonsieurScene(float(rng.uniform(0, 360)), kids,
                         "edge" if rng.random() < 0.05 else str(rng.choice(geometry.die_colours)),
                         die_place(rng, geometry), float(rng.uniform(0, 360)))


def die_place(rng: np.random.Generator, geometry: MonsieurGeometry) -> tuple[float, float]:
    """A place for the die on the board: inside the die area, clear of the carousel, the fixed
    markers and Monsieur Carrousel (mm)."""
    x0, y0, x1, y1 = geometry.die_area_mm
    for _ in range(200):
        p = np.array([rng.uniform(x0 + 12, x1 - 12), rng.uniform(y0 + 12, y1 - 12)])
        if np.hypot(*(p - geometry.axis_mm)) < geometry.disc_radius_mm + 18:
            continue
        if np.hypot(*(p - geometry.figure_mm)) < geometry.figure_radius_mm + 30:
            continue
        if any(np.abs(p - m.mean(axis=0)).max() < geometry.marker_paper_mm / 2 + 14 for m in geometry.markers.values()):
            continue
        return float(p[0]), float(p[1])
    return (x1 - 20.0, y0 + 40.0)


def _lin(bgr: Sequence[float]) -> np.ndarray:
    return (np.asarray(bgr, np.float32) / 255.0) ** 2.2


#: 8-bit sRGB -> linear (gamma 2.2), and 12-bit linear -> sRGB levels 0-255 (float32)
_TO_LIN = ((np.arange(256, dtype=np.float32) / 255.0) ** 2.2).astype(np.float32)
_TO_SRGB = ((np.arange(4096, dtype=np.float32) / 4095.0) ** (1 / 2.2) * 255.0).astype(np.float32)
#: 12-bit linear -> 8-bit levels through the IEC 61966-2-1 sRGB curve (its straight line under
#: 0.0031308, then the offset power law), float32
_X = np.arange(4096, dtype=np.float64) / 4095.0
_TO_SRGB_IEC = (255.0 * np.where(_X <= 0.0031308, 12.92 * _X, 1.055 * _X ** (1 / 2.4) - 0.055)).astype(np.float32)
del _X
#: unit Gaussian sensor noise, one bank larger than a frame; each frame takes a window of it
_NOISE = np.random.default_rng(2026).standard_normal((480 + 64, 640 + 64, 3), dtype=np.float32)


class MonsieurRenderer:
    """Renders frames of the Monsieur Carrousel table.

    Args:
        geometry: the table (default ``monsieur-board.toml`` of the calibration folder); its
            ``seat_colours`` are the colours printed on the disc side in play.
        size: (width, height) of the frames, pixels.
        hfov_deg: the camera's horizontal field of view (degrees).
    """

    def __init__(self, geometry: MonsieurGeometry | None = None, size: tuple[int, int] = (640, 480),
                 hfov_deg: float = 58.0):
        self.geometry = g = geometry if geometry is not None else MonsieurGeometry.load()
        self.size = size
        w, h = size
        f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
        self.K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
        self._dict = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, g.dictionary))
        self.print_bgr = {n: (rgb[2], rgb[1], rgb[0]) for n, rgb in g.print_srgb.items()}
        self.kid_bgr = {n: (rgb[2], rgb[1], rgb[0]) for n, rgb in g.kid_srgb.items()}
        self.paper = (g.paper_srgb,) * 3
        self._board_s = 2.0
        self._board = self._draw_board()
        self._disc_s = 3.0
        self._disc, self._disc_mask = self._draw_disc()
        side = 120
        m = cv2.aruco.generateImageMarker(self._dict, int(g.roof_marker_id), side)
        pad = int(round(side * (g.marker_paper_mm - g.marker_size_mm) / 2 / g.marker_size_mm))
        self._roof_marker = cv2.copyMakeBorder(cv2.cvtColor(m, cv2.COLOR_GRAY2BGR), pad, pad, pad, pad,
                                               cv2.BORDER_CONSTANT, value=self.paper)
        self._roof_marker_pad = pad / side
        self._field_key: tuple[Any, ...] | None = None
        self._still: tuple[Any, np.ndarray, MonsieurTruth] | None = None
        self._field_map = np.ones((1, 1), np.float32)

    # ---------------------------------------------------------------- the flat prints
    def _draw_board(self) -> np.ndarray:
        g, s = self.geometry, self._board_s
        w, h = int(400 * s), int(300 * s)
        img = np.empty((h, w, 3), np.uint8)
        img[: h // 2] = SUN_BGR
        img[h // 2:] = RAIN_BGR

        def px(x: float, y: float) -> tuple[int, int]:
            return int(round((x + 200) * s)), int(round((150 - y) * s))

        for x in np.arange(-200, 200, 12):  # the dashed zone line outside the carousel
            if abs(x) > g.disc_radius_mm + 4 and abs(x + 6) > g.disc_radius_mm + 4:
                cv2.line(img, px(x, 0), px(x + 6, 0), (120, 120, 120), 2, cv2.LINE_AA)
        # the printed suns where the geometry has them (board.printed_suns_mm): an orange disc
        # of 0.86 sun_radius_mm and 12 rays from 1.07 to 1.5 of it, one every 30 degrees from 15
        # (photographs monsieur_030, monsieur_045 seen from above: disc 12 mm, rays 15-21 mm of
        # the 14 mm radius); a sun near the board's edge is printed smaller, its rays 4 mm short
        # of the edge (the top sun of the photographs: disc 7 mm, rays to 15 mm)
        for cx, cy in g.suns_mm:
            reach = 1.5 * g.sun_radius_mm
            room = min(200.0 - abs(cx), 150.0 - abs(cy)) - 4.0
            r = g.sun_radius_mm * min(1.0, max(room, 0.0) / reach)
            cv2.circle(img, px(cx, cy), round(0.86 * r * s), SUN_PRINT_BGR, -1, cv2.LINE_AA)
            for a in np.radians(15.0 + 30.0 * np.arange(12)):
                cv2.line(img, px(cx + 1.07 * r * math.cos(a), cy + 1.07 * r * math.sin(a)),
                         px(cx + 1.5 * r * math.cos(a), cy + 1.5 * r * math.sin(a)), SUN_PRINT_BGR,
                         max(1, round(1.5 * s)), cv2.LINE_AA)
        for cx, cy in ((-120, -60), (0, -135), (120, -60), (60, -125)):
            for dx, r in ((-7, 7), (0, 9), (8, 6)):
                cv2.circle(img, px(cx + dx, cy), int(r * s), (150, 150, 150), -1, cv2.LINE_AA)
            for dx in (-6, 0, 6):
                cv2.circle(img, px(cx + dx, cy - 14), int(2 * s), (200, 120, 40), -1, cv2.LINE_AA)
        for mid, corners in g.markers.items():
            c = corners.mean(axis=0)
            hp = g.marker_paper_mm / 2
            cv2.rectangle(img, px(c[0] - hp, c[1] + hp), px(c[0] + hp, c[1] - hp), self.paper, -1)
            side = int(round(g.marker_size_mm * s))
            marker = cv2.cvtColor(cv2.aruco.generateImageMarker(self._dict, int(mid), side), cv2.COLOR_GRAY2BGR)
            marker = np.maximum(marker, 14)  # the print's black is 14/255 (README)
            x0, y0 = px(corners[0][0], corners[0][1])
            img[y0:y0 + side, x0:x0 + side] = marker
        return img

    def _glyph(self, img: np.ndarray, k: int, c: np.ndarray, out: np.ndarray, s: float) -> None:
        """Seat ``k``'s dark glyph (about 14 mm, its up radially outward) centred at texture ``c``."""
        r = 7.0 * s
        up = out * r
        right = np.array([up[1], -up[0]])
        pts = lambda vs: np.array([c + a * right + b * up for a, b in vs]).round().astype(np.int32)
        kind = k % 12
        ci = tuple(int(v) for v in c.round())
        if kind == 0:
            cv2.circle(img, ci, int(r * 0.5), GLYPH_BGR, -1, cv2.LINE_AA)
        elif kind == 1:
            cv2.fillConvexPoly(img, pts([(0, 1), (0.9, -0.7), (-0.9, -0.7)]), GLYPH_BGR, cv2.LINE_AA)
        elif kind == 2:
            cv2.fillConvexPoly(img, pts([(-0.7, 0.7), (0.7, 0.7), (0.7, -0.7), (-0.7, -0.7)]), GLYPH_BGR, cv2.LINE_AA)
        elif kind == 3:
            cv2.fillConvexPoly(img, pts([(0, 1), (0.8, 0), (0, -1), (-0.8, 0)]), GLYPH_BGR, cv2.LINE_AA)
        elif kind in (4, 7):
            a = 0.0 if kind == 4 else 0.7
            for d in ((1, a), (-a, 1)) if kind == 7 else ((1, 0), (0, 1)):
                p0, p1 = c + d[0] * right + d[1] * up, c - d[0] * right - d[1] * up
                cv2.line(img, tuple(p0.round().astype(int)), tuple(p1.round().astype(int)), GLYPH_BGR, int(0.35 * r), cv2.LINE_AA)
        elif kind == 5:
            star = [(math.sin(a) * (1 if i % 2 == 0 else 0.45), math.cos(a) * (1 if i % 2 == 0 else 0.45))
                    for i, a in enumerate(np.linspace(0, 2 * np.pi, 10, endpoint=False))]
            cv2.fillPoly(img, [pts(star)], GLYPH_BGR, cv2.LINE_AA)
        elif kind == 6:
            cv2.circle(img, ci, int(r * 0.75), GLYPH_BGR, max(1, int(0.3 * r)), cv2.LINE_AA)
        elif kind == 8:
            cv2.fillPoly(img, [pts([(0, 1), (0.8, 0.1), (0.3, 0.1), (0.3, -1), (-0.3, -1), (-0.3, 0.1), (-0.8, 0.1)])],
                         GLYPH_BGR, cv2.LINE_AA)
        elif kind == 9:
            cv2.circle(img, ci, int(r * 0.8), GLYPH_BGR, -1, cv2.LINE_AA)
            off = tuple(int(v) for v in (c + 0.4 * right).round())
            cv2.circle(img, off, int(r * 0.7), self._seat_colour_at(img, c + 0.95 * right), -1, cv2.LINE_AA)
        elif kind == 10:
            for a in (-0.45, 0.45):
                cv2.circle(img, tuple(int(v) for v in (c + a * right).round()), int(r * 0.3), GLYPH_BGR, -1, cv2.LINE_AA)
        else:
            hexa = [(math.sin(a) * 0.85, math.cos(a) * 0.85) for a in np.linspace(0, 2 * np.pi, 6, endpoint=False)]
            cv2.fillConvexPoly(img, pts(hexa), GLYPH_BGR, cv2.LINE_AA)

    @staticmethod
    def _seat_colour_at(img: np.ndarray, p: np.ndarray) -> tuple[int, int, int]:
        x, y = (int(v) for v in p.round())
        return tuple(int(v) for v in img[y, x])  # type: ignore[return-value]

    def _draw_disc(self) -> tuple[np.ndarray, np.ndarray]:
        """The disc's top as seen from above with the carousel at 0 degrees (texture, mask)."""
        g, s = self.geometry, self._disc_s
        rad = g.disc_radius_mm
        n = int(2 * rad * s) + 1
        img = np.empty((n, n, 3), np.uint8)
        img[:] = WOOD_BGR
        rng = np.random.default_rng(11)
        grain = rng.normal(0, 5, (1, n, 1)) * np.ones((n, 1, 1))
        img = np.clip(img + grain, 0, 255).astype(np.uint8)

        def px(x: float, y: float) -> np.ndarray:
            return np.array([(x + rad) * s, (rad - y) * s])

        def ipx(x: float, y: float) -> tuple[int, int]:
            return tuple(int(v) for v in px(x, y).round())  # type: ignore[return-value]

        cv2.circle(img, ipx(0, 0), int(g.roof_radius_mm * s * 0.9), (96, 140, 186), 1, cv2.LINE_AA)
        for k in range(12):  # boundary ticks at the rim
            a = math.radians(g.seat_pitch_deg * k + g.seat_first_deg - g.seat_pitch_deg / 2)
            cv2.line(img, ipx(103 * math.cos(a), 103 * math.sin(a)), ipx(rad * math.cos(a), rad * math.sin(a)),
                     GLYPH_BGR, 2, cv2.LINE_AA)
        # the zero mark: a dark triangle at the rim and a radial line
        cv2.fillConvexPoly(img, np.array([px(rad - 1, 0), px(rad - 11, 5), px(rad - 11, -5)]).round().astype(np.int32),
                           GLYPH_BGR, cv2.LINE_AA)
        cv2.line(img, ipx(g.roof_radius_mm * 0.9, 0), ipx(rad - 11, 0), GLYPH_BGR, 2, cv2.LINE_AA)
        for k in range(g.n_seats):
            a = math.radians(g.seat_disc_angle(k))
            c = px(g.seat_ring_radius_mm * math.cos(a), g.seat_ring_radius_mm * math.sin(a))
            cv2.circle(img, tuple(int(v) for v in c.round()), int(round(g.seat_diameter_mm / 2 * s)),
                       self.print_bgr[g.seat_colours[k]], -1, cv2.LINE_AA)
            self._glyph(img, k, c, np.array([math.cos(a), -math.sin(a)]), s)
        mask = np.zeros((n, n), np.uint8)
        cv2.circle(mask, ipx(0, 0), int(rad * s), 255, -1, cv2.LINE_AA)
        return img, mask

    # ---------------------------------------------------------------- camera
    def pose(self, cond: MonsieurConditions) -> tuple[np.ndarray, np.ndarray]:
        """Rotation ``3 x 3`` and translation ``3`` (mm), world (board mm, z up) to camera."""
        tilt, az = math.radians(cond.tilt_deg), math.radians(cond.azimuth_deg)
        look = np.array([cond.look_mm[0], cond.look_mm[1], 0.0])
        dist = cond.height_mm / max(math.cos(tilt), 0.3)
        cam = look + dist * np.array([math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)])
        z = look - cam
        z /= np.linalg.norm(z)
        roll = math.radians(cond.roll_deg)
        up = np.array([math.cos(roll), math.sin(roll), 0.0])
        x = np.cross(z, up)
        if np.linalg.norm(x) < 1e-6:
            x = np.cross(z, [0.0, 1.0, 0.0])
        x /= np.linalg.norm(x)
        y = np.cross(z, x)
        rot = np.stack([x, y, z])
        return rot, -rot @ cam

    def plane(self, rot: np.ndarray, t: np.ndarray, z_mm: float) -> np.ndarray:
        """``3 x 3`` homography of the horizontal plane at ``z_mm``: (x, y mm) -> pixels."""
        return self.K @ np.column_stack([rot[:, 0], rot[:, 1], rot[:, 2] * z_mm + t])

    def project(self, rot: np.ndarray, t: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """World points ``N x 3`` (mm) to pixels ``N x 2``."""
        pc = np.asarray(pts, float).reshape(-1, 3) @ rot.T + t
        uv = pc @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    # ---------------------------------------------------------------- render
    def render(self, scene: MonsieurScene, cond: MonsieurConditions, rng: np.random.Generator,
               angles: Sequence[float] | None = None, speed_dps: float = 0.0) -> tuple[np.ndarray, MonsieurTruth]:
        """One frame (``H x W x 3 uint8`` BGR) and its :class:`MonsieurTruth`.

        Args:
            scene: what stands on the table.
            cond: how the frame is taken.
            rng: the generator of the frame's noise and small choices.
            angles: carousel angles over the exposure (degrees; their mean image is the frame:
                motion smear); default ``(scene.angle_deg,)``.
            speed_dps: the carousel's angular speed, for the truth (degrees per second).
        """
        w, h = self.size
        rot, t = self.pose(cond)
        cam_c = -rot.T @ t
        lamp = np.array([-cond.lamp_xy[0], -cond.lamp_xy[1], 1.0])
        lamp /= np.linalg.norm(lamp)
        angles = list(angles) if angles else [scene.angle_deg]
        mid = float(np.mean(angles))
        key = (scene, tuple(angles), dataclasses.replace(cond, noise_sigma=0.0, jpeg_quality=0))
        if self._still is not None and self._still[0] == key:
            exposed, truth = self._still[1], self._still[2]  # the same table, the same camera: only noise differs
        else:
            s = self._board_s
            A = np.array([[1 / s, 0, -200.0], [0, -1 / s, 150.0], [0, 0, 1]])
            board = cv2.warpPerspective(self._board, self.plane(rot, t, 0.0) @ A, (w, h), flags=cv2.INTER_LINEAR,
                                        borderValue=TABLE_BGR)
            base = _TO_LIN[board]
            acc = np.zeros((h, w, 3), np.float32)
            for a in angles:
                img = base.copy()
                self._shadows(img, rot, t, scene, a, lamp, _shadow_tint(cond))
                self._carousel(img, rot, t, cam_c, scene, a, lamp, _shadow_tint(cond))
                acc += img
            img = acc / len(angles)
            hand_mask = np.zeros((h, w), np.uint8)
            if cond.hands:
                self._hands(img, hand_mask, rot, t, cond.hands, scene, mid, rng)
            exposed = self._expose(img, cond, rot, t)
            truth = self._truth(scene, cond, rot, t, hand_mask, mid, speed_dps)
            self._still = (key, exposed, truth)
        return self._sensor(exposed, cond, rng), dataclasses.replace(truth, speed_dps=float(speed_dps))

    # solids ----------------------------------------------------------------------------
    def _shade(self, normal: np.ndarray, lamp: np.ndarray) -> float:
        return 0.45 + 0.6 * max(0.0, float(np.dot(normal, lamp)))

    def _cylinder(self, img: np.ndarray, rot, t, cam_c, c: Sequence[float], r0: float, r1: float, z0: float,
                  z1: float, bgr: Sequence[float], lamp: np.ndarray, top: Sequence[float] | None = None,
                  n: int = 28) -> None:
        """A shaded (truncated-cone) cylinder about a vertical axis at ``c``: its sides facing
        the camera in strips, then its top cap (``top`` colour, default ``bgr``)."""
        col = _lin(bgr)
        th = np.linspace(0, 2 * np.pi, n + 1)
        cos, sin = np.cos(th), np.sin(th)
        ring0 = np.column_stack([c[0] + r0 * cos, c[1] + r0 * sin, np.full(n + 1, z0)])
        ring1 = np.column_stack([c[0] + r1 * cos, c[1] + r1 * sin, np.full(n + 1, z1)])
        p = np.round(self.project(rot, t, np.vstack([ring0, ring1])) * 16).astype(np.int32)
        p0, p1 = p[: n + 1], p[n + 1:]
        slope = (r0 - r1) / max(z1 - z0, 1e-6)
        m = 0.5 * (th[:-1] + th[1:])
        nrm = np.column_stack([np.cos(m), np.sin(m), np.full(n, slope)])
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        rm = 0.5 * (r0 + r1)
        mid = np.column_stack([c[0] + rm * np.cos(m), c[1] + rm * np.sin(m), np.full(n, 0.5 * (z0 + z1))])
        facing = np.einsum("ij,ij->i", nrm, cam_c - mid) > 0
        shade = 0.45 + 0.6 * np.maximum(0.0, nrm @ lamp)
        for i in np.flatnonzero(facing):
            quad = np.array([p0[i], p0[i + 1], p1[i + 1], p1[i]])
            cv2.fillConvexPoly(img, quad, tuple(float(v) for v in col * shade[i]), cv2.LINE_AA, 4)
        p1 = p1.astype(np.float64) / 16
        topc = _lin(top if top is not None else bgr) * self._shade(np.array([0, 0, 1.0]), lamp)
        cv2.fillConvexPoly(img, np.round(p1[:-1] * 16).astype(np.int32), tuple(float(v) for v in topc), cv2.LINE_AA, 4)

    def _sphere(self, img: np.ndarray, rot, t, c: Sequence[float], r: float, bgr: Sequence[float], lamp) -> None:
        centre = np.asarray(c, float)
        pc = centre @ rot.T + t
        rad_px = self.K[0, 0] * r / pc[2]
        uv = self.project(rot, t, centre[None])[0]
        col = _lin(bgr)
        cv2.circle(img, tuple(int(v) for v in np.round(uv * 16)), int(round(rad_px * 16)),
                   tuple(float(v) for v in col * 0.55), -1, cv2.LINE_AA, 4)
        hl = self.project(rot, t, (centre + lamp * r * 0.35)[None])[0]
        cv2.circle(img, tuple(int(v) for v in np.round(hl * 16)), int(round(rad_px * 0.7 * 16)),
                   tuple(float(v) for v in col * 0.85), -1, cv2.LINE_AA, 4)
        hl2 = self.project(rot, t, (centre + lamp * r * 0.6)[None])[0]
        cv2.circle(img, tuple(int(v) for v in np.round(hl2 * 16)), int(round(rad_px * 0.3 * 16)),
                   tuple(float(v) for v in np.minimum(col * 1.15, 1.0)), -1, cv2.LINE_AA, 4)

    def _warp_onto(self, img: np.ndarray, tex: np.ndarray, mask: np.ndarray, M: np.ndarray, shade: float) -> None:
        """Composite a texture (uint8 BGR with a uint8 mask) carried by ``M`` (texture px ->
        image px) into the linear image, within the bounding box of its corners."""
        h, w = img.shape[:2]
        th, tw = tex.shape[:2]
        corners = cv2.perspectiveTransform(np.array([[[0, 0], [tw, 0], [tw, th], [0, th]]], np.float32), M)[0]
        x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 1
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return
        T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]]) @ M
        size = (x1 - x0, y1 - y0)
        part = cv2.warpPerspective(tex, T, size, flags=cv2.INTER_LINEAR)
        alpha = cv2.warpPerspective(mask, T, size, flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255.0
        lin = _TO_LIN[part] * np.float32(shade)
        roi = img[y0:y1, x0:x1]
        roi *= 1 - alpha
        roi += alpha * lin

    def _shadows(self, img: np.ndarray, rot, t, scene: MonsieurScene, angle: float, lamp: np.ndarray,
                 tint: np.ndarray | None = None) -> None:
        """Soft cast shadows on the board and the disc: the roof, the tokens, the figure, the die
        (their outlines carried along the lamp's direction onto the surface below them). A
        shadow keeps 0.45 of the light, of the fill light's colour: ``tint`` (``3`` linear BGR,
        luminance 1, the fill's colour over the lamp's; None: neutral)."""
        g = self.geometry
        h, w = img.shape[:2]
        mask = np.zeros((h, w), np.float32)
        d = -lamp[:2] / lamp[2]  # ground displacement per mm of height

        def cast(c: Sequence[float], r: float, z_top: float, z_onto: float, z_bottom: float | None = None) -> None:
            th = np.linspace(0, 2 * np.pi, 24, endpoint=False)
            ring = np.column_stack([c[0] + r * np.cos(th), c[1] + r * np.sin(th)])
            pts = [ring + d * (z_top - z_onto), ring + d * ((z_bottom if z_bottom is not None else z_onto) - z_onto)]
            flat = np.column_stack([np.vstack(pts), np.full(48, z_onto)])
            hull = cv2.convexHull(self.project(rot, t, flat).astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(mask, hull, 1.0, cv2.LINE_AA)

        top = g.disc_top_z_mm
        cast(g.axis_mm, g.roof_radius_mm, g.roof_top_z_mm, top, g.roof_bottom_z_mm)
        cast(g.axis_mm, g.disc_radius_mm, top, 0.0)
        for k, kid in enumerate(scene.kids):
            if kid is not None:
                cast(g.seat_centre(k, angle), g.kid_base_radius_mm * 0.9, top + g.kid_height_mm, top)
        cast(g.figure_mm, g.figure_radius_mm, g.figure_top_z_mm, 0.0)
        if scene.die is not None:
            cast(scene.die_xy_mm, g.die_size_mm * 0.6, g.die_size_mm, 0.0)
        soft = np.clip(cv2.GaussianBlur(mask, (0, 0), 3.0), 0, 1)[..., None]
        if tint is None:
            img *= 1 - 0.55 * soft
        else:
            img *= 1 - soft + soft * (0.45 * np.asarray(tint, np.float32))

    def _disc_shadows(self, img: np.ndarray, rot, t, scene: MonsieurScene, angle: float, lamp: np.ndarray,
                      disc_to_plane: np.ndarray, tint: np.ndarray | None) -> None:
        """Soft shadows cast on the disc's top (z = 10) by the roof, the tokens and the figure,
        as :meth:`_shadows` casts them on the board (the path-traced photographs show the roof's
        and the tokens' shadows across the seats): only where the disc's top is drawn."""
        g = self.geometry
        h, w = img.shape[:2]
        top = g.disc_top_z_mm
        d = -lamp[:2] / lamp[2]
        mask = np.zeros((h, w), np.float32)

        def cast(c: Sequence[float], r: float, z_top: float, z_bottom: float) -> None:
            if z_top <= top:
                return
            th = np.linspace(0, 2 * np.pi, 24, endpoint=False)
            ring = np.column_stack([c[0] + r * np.cos(th), c[1] + r * np.sin(th)])
            pts = [ring + d * (z_top - top), ring + d * (max(z_bottom, top) - top)]
            flat = np.column_stack([np.vstack(pts), np.full(48, top)])
            hull = cv2.convexHull(self.project(rot, t, flat).astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(mask, hull, 1.0, cv2.LINE_AA)

        cast(g.axis_mm, g.roof_radius_mm, g.roof_top_z_mm, g.roof_bottom_z_mm)
        cast(g.axis_mm, 6.0, g.roof_bottom_z_mm, top)  # the pole
        for k, kid in enumerate(scene.kids):
            if kid is not None:
                cast(g.seat_centre(k, angle), g.kid_base_radius_mm * 0.9, top + g.kid_height_mm, top)
        cast(g.figure_mm, g.figure_radius_mm, g.figure_top_z_mm, 0.0)
        disc = cv2.warpPerspective(self._disc_mask, self.plane(rot, t, top) @ disc_to_plane, (w, h),
                                   flags=cv2.INTER_LINEAR).astype(np.float32) / 255.0
        soft = (np.clip(cv2.GaussianBlur(mask, (0, 0), 2.0), 0, 1) * disc)[..., None]
        if tint is None:
            img *= 1 - 0.55 * soft
        else:
            img *= 1 - soft + soft * (0.45 * np.asarray(tint, np.float32))

    def _carousel(self, img: np.ndarray, rot, t, cam_c, scene: MonsieurScene, angle: float, lamp: np.ndarray,
                  tint: np.ndarray | None = None) -> None:
        g = self.geometry
        ax = g.axis_mm
        top = g.disc_top_z_mm
        # the disc's rim, then its top carried by the plane z = disc top, turned to the angle
        self._cylinder(img, rot, t, cam_c, ax, g.disc_radius_mm, g.disc_radius_mm, 0.0, top,
                       tuple(v * 0.8 for v in WOOD_BGR), lamp, top=WOOD_BGR)
        s = self._disc_s
        rad = g.disc_radius_mm
        a = math.radians(angle)
        Ad = np.array([[1 / s, 0, -rad], [0, -1 / s, rad], [0, 0, 1]])
        Rz = np.array([[math.cos(a), -math.sin(a), ax[0]], [math.sin(a), math.cos(a), ax[1]], [0, 0, 1]])
        self._warp_onto(img, self._disc, self._disc_mask, self.plane(rot, t, top) @ Rz @ Ad,
                        self._shade(np.array([0, 0, 1.0]), lamp))
        self._disc_shadows(img, rot, t, scene, angle, lamp, Rz @ Ad, tint)
        # the solids, far from the camera first
        items: list[tuple[float, Callable[[], None]]] = []

        def depth(p: Sequence[float]) -> float:
            return float(np.linalg.norm(np.asarray(p, float) - cam_c))

        for k, kid in enumerate(scene.kids):
            if kid is None:
                continue
            off = np.random.default_rng([k, 7]).uniform(-1, 1, 2) * g.kid_max_offset_mm / 1.5
            c = g.seat_centre(k, angle) + off
            col = self.kid_bgr[kid]
            seat_col = self.print_bgr[g.seat_colours[k]]
            items.append((depth([c[0], c[1], top + 15]),
                          lambda c=c, col=col, sc=seat_col: self._kid(img, rot, t, cam_c, c, col, lamp, sc)))
        items.append((depth([ax[0], ax[1], 60.0]), lambda: self._roof(img, rot, t, cam_c, angle, lamp)))
        fig = g.figure_mm
        items.append((depth([fig[0], fig[1], 40.0]), lambda: self._figure(img, rot, t, cam_c, lamp)))
        if scene.die is not None:
            items.append((depth([*scene.die_xy_mm, 8.0]), lambda: self._die(img, rot, t, cam_c, scene, lamp)))
        for _, draw in sorted(items, key=lambda it: -it[0]):
            draw()

    def _kid(self, img, rot, t, cam_c, c, col, lamp, seat_bgr=None) -> None:
        """A kid token (base, head) at ``c`` on the disc; with ``seat_bgr`` (its seat's print,
        BGR) the light the print throws back tints the base's lower part (interreflection, as
        the path-traced photographs show: a pastel token on a seat of its own hue takes the
        print's colour near its foot): its linear colour times ``1 - b + b * print`` with b
        falling from 0.35 at the disc to 0 at 8 mm up."""
        g = self.geometry
        top = g.disc_top_z_mm
        r = g.kid_base_radius_mm
        r_top = r * 7.5 / 9.0
        low = 0.0
        if seat_bgr is not None:
            tok = _lin(col)
            pr = _lin(seat_bgr)
            for i, b in enumerate((0.35, 0.22, 0.1)):
                h0, h1 = 8.0 * i / 3.0, 8.0 * (i + 1) / 3.0  # mm above the disc
                tinted = tok * (1.0 - b + b * pr)
                bgr = tuple(float(v) for v in np.clip(tinted, 0.0, 1.0) ** (1 / 2.2) * 255.0)
                self._cylinder(img, rot, t, cam_c, c, r + (r_top - r) * h0 / 19.0, r + (r_top - r) * h1 / 19.0,
                               top + h0, top + h1, bgr, lamp, n=20)
            low = 8.0
        self._cylinder(img, rot, t, cam_c, c, r + (r_top - r) * low / 19.0, r_top, top + low, top + 19.0, col, lamp, n=20)
        self._sphere(img, rot, t, [c[0], c[1], top + 22.5], 7.5, col, lamp)

    def _roof(self, img, rot, t, cam_c, angle: float, lamp) -> None:
        g = self.geometry
        ax = g.axis_mm
        self._cylinder(img, rot, t, cam_c, ax, g.pole_radius_mm, g.pole_radius_mm, g.disc_top_z_mm,
                       g.pole_top_z_mm, (150, 170, 190), lamp, n=12)
        self._cylinder(img, rot, t, cam_c, ax, g.roof_radius_mm, g.roof_radius_mm, g.roof_bottom_z_mm,
                       g.roof_bottom_z_mm + 6.0, tuple(v * 0.8 for v in ROOF_BGR), lamp)
        self._cylinder(img, rot, t, cam_c, ax, g.roof_radius_mm, 30.0, g.roof_bottom_z_mm + 6.0, g.roof_top_z_mm,
                       ROOF_BGR, lamp, top=self.paper)
        # the roof marker at its own height, its top edge towards the disc's zero mark
        a = math.radians(angle + g.roof_marker_up_deg)
        up = np.array([math.cos(a), math.sin(a)])
        right = np.array([math.sin(a), -math.cos(a)])
        half = g.roof_marker_size_mm / 2 * (1 + 2 * self._roof_marker_pad)
        c = np.asarray(ax, float)
        world = np.array([c + half * up - half * right, c + half * up + half * right,
                          c - half * up + half * right, c - half * up - half * right])
        px = self.project(rot, t, np.column_stack([world, np.full(4, g.roof_marker_z_mm)]))
        n = self._roof_marker.shape[0]
        M = cv2.getPerspectiveTransform(np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float32), px.astype(np.float32))
        self._warp_onto(img, self._roof_marker, np.full((n, n), 255, np.uint8), M,
                        self._shade(np.array([0, 0, 1.0]), lamp))

    def _figure(self, img, rot, t, cam_c, lamp) -> None:
        g = self.geometry
        f = g.figure_mm
        self._cylinder(img, rot, t, cam_c, f, g.figure_radius_mm, g.figure_radius_mm * 13 / 15, 0.0, 60.0, COAT_BGR, lamp)
        self._sphere(img, rot, t, [f[0], f[1], 74.0], 13.0, SKIN_BGR, lamp)
        self._cylinder(img, rot, t, cam_c, f, 11.5, 11.5, 84.0, 86.0, HAT_BGR, lamp, n=16)
        self._cylinder(img, rot, t, cam_c, f, 8.0, 8.0, 86.0, g.figure_top_z_mm, HAT_BGR, lamp, n=16)
        fd = math.radians(g.finger_deg)
        tip_r = 103.0  # README: the finger tip at (103, 0, 42) for the figure at (168, 0)
        d = np.array([math.cos(fd), math.sin(fd)])
        shoulder = np.array([*(np.asarray(f) - d * 10.0), 52.0])
        tip = np.array([*(np.asarray(g.axis_mm) + d * tip_r), 42.0])
        p = self.project(rot, t, np.vstack([shoulder, tip]))
        width = max(2, int(round(self.K[0, 0] * 6.0 / float((shoulder @ rot.T + t)[2]))))
        cv2.line(img, tuple(int(v) for v in p[0].round()), tuple(int(v) for v in p[1].round()),
                 tuple(float(v) for v in _lin(COAT_BGR) * self._shade(np.array([0, 0, 1.0]), lamp)), width, cv2.LINE_AA)
        cv2.circle(img, tuple(int(v) for v in p[1].round()), max(1, width // 2),
                   tuple(float(v) for v in _lin(SKIN_BGR)), -1, cv2.LINE_AA)

    def _die_rotation(self, scene: MonsieurScene) -> np.ndarray:
        yaw = math.radians(scene.die_yaw_deg)
        rz = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
        if scene.die == "edge":  # cocked: 45 degrees about the die's x axis, yellow and orange up
            c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
            return rz @ np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
        n = np.array(DIE_FACES[scene.die], float)  # this face's normal must point up
        z = np.array([0, 0, 1.0])
        v = np.cross(n, z)
        if np.linalg.norm(v) < 1e-9:
            base = np.eye(3) if n[2] > 0 else np.diag([1.0, -1.0, -1.0])
        else:
            base, _ = cv2.Rodrigues(v / np.linalg.norm(v) * math.acos(float(np.clip(n @ z, -1, 1))))
        return rz @ base

    def _die(self, img, rot, t, cam_c, scene: MonsieurScene, lamp) -> None:
        g = self.geometry
        half = g.die_size_mm / 2
        Rd = self._die_rotation(scene)
        centre = np.array([*scene.die_xy_mm, half * (math.sqrt(2) if scene.die == "edge" else 1.0)])
        faces = []
        for colour, n in DIE_FACES.items():
            nd = np.array(n, float)
            nw = Rd @ nd
            fc = centre + nw * half
            if np.dot(nw, cam_c - fc) <= 0:
                continue
            u = np.array([nd[1], nd[2], nd[0]])
            v = np.cross(nd, u)
            quad = np.array([fc + Rd @ (half * (a * u + b * v)) for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
            faces.append((float(np.linalg.norm(fc - cam_c)), quad, colour, nw))
        for _, quad, colour, nw in sorted(faces, key=lambda f: -f[0]):
            col = _lin(self.print_bgr[colour]) * self._shade(nw, lamp)
            cv2.fillConvexPoly(img, np.round(self.project(rot, t, quad) * 16).astype(np.int32),
                               tuple(float(x) for x in col), cv2.LINE_AA, 4)

    # hands ------------------------------------------------------------------------------
    def _target(self, what: str, scene: MonsieurScene, angle: float) -> tuple[np.ndarray, float]:
        """Where a hand hovers (x, y mm) and how high (mm: above everything it passes over)."""
        g = self.geometry
        if what == "roof":
            return np.asarray(g.axis_mm, float), g.roof_top_z_mm + 25.0
        if what == "die":
            return np.asarray(scene.die_xy_mm, float), 45.0
        k = int(what.split(":")[1])
        a = math.radians(g.seat_first_deg + g.seat_pitch_deg * k)  # a board slot, not a disc seat
        c = np.asarray(g.axis_mm) + g.seat_ring_radius_mm * np.array([math.cos(a), math.sin(a)])
        return c, g.roof_top_z_mm + 15.0

    def _hands(self, img: np.ndarray, hand_mask: np.ndarray, rot, t, hands: Sequence[str], scene: MonsieurScene,
               angle: float, rng: np.random.Generator) -> None:
        for n, what in enumerate(hands):
            tip, z = self._target(what, scene, angle)
            out = tip - np.asarray(self.geometry.axis_mm)
            if np.linalg.norm(out) < 1e-6:
                out = np.array([math.cos(n * 2.1 + 0.5), math.sin(n * 2.1 + 0.5)])
            out = out / np.linalg.norm(out)
            side = np.array([-out[1], out[0]])
            ang = math.atan2(out[1], out[0])
            th = np.linspace(0, 2 * np.pi, 24, endpoint=False)
            palm_c = tip + out * 30
            e = np.stack([45 * np.cos(th), 30 * np.sin(th)], axis=1)
            rm = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
            palm = np.column_stack([palm_c + e @ rm.T, np.full(24, z)])
            sleeve = np.column_stack([np.array([tip + out * 70 + side * 26, tip + out * 70 - side * 26,
                                                tip + out * 420 - side * 36, tip + out * 420 + side * 36]),
                                      np.full(4, z + 10)])
            shadow = np.zeros(img.shape[:2], np.float32)
            shift = rng.uniform(10, 25, 2)
            skin, sleeve_c = SKINS[int(rng.integers(0, 4))], SLEEVES[int(rng.integers(0, 4))]
            for poly, colour, value in ((sleeve, sleeve_c, 2), (palm, skin, 1)):
                flat = poly.copy()
                flat[:, :2] += shift
                flat[:, 2] = 0
                cv2.fillConvexPoly(shadow, self.project(rot, t, flat).astype(np.int32), 1.0)
            img *= (1 - 0.45 * cv2.GaussianBlur(shadow, (0, 0), 6))[..., None]
            for poly, colour, value in ((sleeve, sleeve_c, 2), (palm, skin, 1)):
                p = self.project(rot, t, poly).astype(np.int32)
                cv2.fillConvexPoly(img, p, tuple(float(v) for v in _lin(colour)), cv2.LINE_AA)
                cv2.fillConvexPoly(hand_mask, p, value)

    # the camera -------------------------------------------------------------------------
    def _field(self, cond: MonsieurConditions, shape: tuple[int, int]) -> np.ndarray:
        """The light's fall-off over the frame (vignetting times the gradient), ``H x W float32``;
        kept for the conditions of a still camera."""
        key = (cond.vignetting, cond.gradient, cond.gradient_deg, shape)
        if self._field_key != key:
            h, w = shape
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            f = self.K[0, 0]
            r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / f ** 2
            ang = math.radians(cond.gradient_deg)
            grad = 1 - cond.gradient * (0.5 + 0.5 * (math.cos(ang) * (xx / w - 0.5) * 2
                                                     + math.sin(ang) * (yy / h - 0.5) * 2) / 2)
            self._field_map = ((1 + r2) ** (-2.0 * cond.vignetting) * grad).astype(np.float32)
            self._field_key = key
        return self._field_map

    def _expose(self, lin: np.ndarray, cond: MonsieurConditions, rot, t) -> np.ndarray:
        """Light level and colour, fall-off, glare and camera shake: the linear image to sRGB
        levels (``H x W x 3 float32``, 0-255) before the sensor's noise."""
        h, w = lin.shape[:2]
        gains = (kelvin_to_bgr(cond.kelvin) * cond.light * 0.95).astype(np.float32)
        lin = lin * self._field(cond, (h, w))[..., None]
        lin *= gains
        if cond.glare > 0:
            gx, gy = self.project(rot, t, np.array([[*cond.glare_xy_mm, 10.0]]))[0]
            yy, xx = np.ogrid[0:h, 0:w]
            spot = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2).astype(np.float32) / (2 * 22.0 ** 2)) * cond.glare
            lin += spot[..., None] * (gains / max(float(gains.max()), 1e-6))
        if cond.focus_sigma_px > 0:  # the lens's blur, on the light itself
            lin = cv2.GaussianBlur(lin, (0, 0), float(cond.focus_sigma_px))
        idx = (np.clip(lin, 0, 1) * 4095.0).astype(np.uint16)
        if cond.tone not in ("power", "srgb"):
            raise ValueError(f"MonsieurConditions.tone must be 'power' or 'srgb', not {cond.tone!r}")
        out = (_TO_SRGB_IEC if cond.tone == "srgb" else _TO_SRGB)[idx]
        if cond.blur_px >= 1:  # camera shake along the gradient's direction
            n = int(round(cond.blur_px)) | 1
            k = np.zeros((n, n), np.float32)
            k[n // 2, :] = 1.0 / n
            k = cv2.warpAffine(k, cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), cond.gradient_deg % 180.0, 1.0), (n, n))
            out = cv2.filter2D(out, -1, k / max(float(k.sum()), 1e-6))
        return out

    @staticmethod
    def _sensor(exposed: np.ndarray, cond: MonsieurConditions, rng: np.random.Generator) -> np.ndarray:
        """The codes' gain (``cond.code_gain``), sensor noise (a window of one Gaussian bank at a
        random place), 8-bit rounding and JPEG: the 8-bit frame."""
        h, w = exposed.shape[:2]
        oy, ox = int(rng.integers(0, 64)), int(rng.integers(0, 64))
        if cond.code_gain != 1.0:
            exposed = exposed * np.float32(cond.code_gain)
        if tuple(cond.channel_gains) != (1.0, 1.0, 1.0):  # a colour cast on the codes
            exposed = exposed * np.asarray(cond.channel_gains, dtype=np.float32)
        out = exposed + _NOISE[oy:oy + h, ox:ox + w] * np.float32(cond.noise_sigma)
        out8 = np.clip(out, 0, 255).astype(np.uint8)
        if cond.jpeg_quality:
            _, buf = cv2.imencode(".jpg", out8, [cv2.IMWRITE_JPEG_QUALITY, int(cond.jpeg_quality)])
            out8 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return out8

    # truth --------------------------------------------------------------------------------
    def _truth(self, scene: MonsieurScene, cond: MonsieurConditions, rot, t, hand_mask: np.ndarray, angle: float,
               speed_dps: float) -> MonsieurTruth:
        g = self.geometry
        h, w = hand_mask.shape

        def inside(px: np.ndarray) -> np.ndarray:
            return (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)

        def covered(px: np.ndarray) -> bool:
            p = np.round(px).astype(int)
            ok = inside(p)
            return bool((~ok).any() or hand_mask[p[ok, 1], p[ok, 0]].any())

        th = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        hidden = []
        for k in range(g.n_seats):
            c = g.seat_centre(k, angle)
            r = g.seat_diameter_mm / 2
            ring = np.column_stack([c[0] + r * np.cos(th), c[1] + r * np.sin(th), np.full(16, g.disc_top_z_mm)])
            pts = np.vstack([ring, [[c[0], c[1], g.disc_top_z_mm]]])
            if scene.kids[k] is not None:
                pts = np.vstack([pts, [[c[0], c[1], g.disc_top_z_mm + g.kid_height_mm]]])
            if covered(self.project(rot, t, pts)):
                hidden.append(k)
        half = g.roof_marker_size_mm / 2 * 1.3
        roof_pts = np.array([[x, y, g.roof_marker_z_mm] for x in (-half, 0, half) for y in (-half, 0, half)])
        roof_pts[:, :2] += np.asarray(g.axis_mm)
        roof_visible = not covered(self.project(rot, t, roof_pts))
        die_visible = False
        if scene.die is not None:
            dx, dy = scene.die_xy_mm
            hd = g.die_size_mm / 2
            top = np.array([[dx + a, dy + b, g.die_size_mm] for a in (-hd, 0, hd) for b in (-hd, 0, hd)])
            die_visible = not covered(self.project(rot, t, top))
        visible = tuple(sorted(mid for mid, corners in g.markers.items()
                               if inside(self.project(rot, t, np.column_stack([corners, np.full(4, g.marker_z_mm)]))).all()))
        k, offset, boundary = truth_pointed(g, angle)
        die = None if scene.die is None else ("unknown" if scene.die == "edge" else scene.die)
        return MonsieurTruth(angle % 360.0, k, offset, boundary,
                             tuple("kid" if kid is not None else "empty" for kid in scene.kids), tuple(hidden),
                             roof_visible, die, die_visible, visible, float(speed_dps), cond, self.plane(rot, t, 0.0))


class SimulatedMonsieurCamera:
    """A frame source (:mod:`companion.vision.frames`) showing a simulated Monsieur Carrousel
    table, with the carousel's motion over time.

    The table is set by the caller (the simulated game): :meth:`set_scene` for what stands on
    it, :meth:`spin` for a spin (the carousel turns from its angle by ``turn_deg`` with constant
    deceleration, then swings back ``rock_back_deg`` before it rests at the end angle), and
    :meth:`set_hands` for hands over it. Every :meth:`read` renders the table at the clock's
    time; each frame's ``truth`` is its :class:`MonsieurTruth`.

    Args:
        seed: seeds the generators (same seed, same frames).
        kind: the kind of conditions (:func:`random_monsieur_conditions`) of this camera,
            drawn once: a still camera.
        conditions: fixed conditions instead.
        clock: seconds for the frames' times and the motion (default ``time.monotonic``).
        renderer: a :class:`MonsieurRenderer` to use (its geometry is the table's).
        scene: the first scene (default: an empty carousel, the die on the board).
    """

    def __init__(self, seed: int = 0, kind: str = "normal", conditions: MonsieurConditions | None = None,
                 clock: Callable[[], float] = time.monotonic, renderer: MonsieurRenderer | None = None,
                 scene: MonsieurScene | None = None):
        self.name = f"sim:{seed}"
        self.rng = np.random.default_rng(seed)
        self.renderer = renderer or MonsieurRenderer()
        self.clock = clock
        self.conditions = conditions or random_monsieur_conditions(self.rng, kind)
        self.scene = scene or MonsieurScene(die_xy_mm=die_place(self.rng, self.renderer.geometry))
        self._spin: tuple[float, float, float, float, float] | None = None  # t0, a0, turn, t1, back
        self._index = 0

    def set_scene(self, **fields: Any) -> None:
        """Change what the table shows from the next frame on (fields of :class:`MonsieurScene`)."""
        self.scene = dataclasses.replace(self.scene, **fields)

    def set_hands(self, hands: Sequence[str]) -> None:
        """Hands over the table from the next frame on (see :class:`MonsieurConditions`)."""
        self.conditions = dataclasses.replace(self.conditions, hands=tuple(hands))

    def spin(self, t0: float, turn_deg: float, duration_s: float, rock_back_deg: float | None = None) -> float:
        """Start a spin at time ``t0`` (s) turning the carousel by ``turn_deg`` (signed, CCW
        positive) over ``duration_s``; it then swings back ``rock_back_deg`` (default 0.7-1.5,
        drawn) in 0.3 s, so that it rests at its angle + ``turn_deg``. Returns the time (s) it
        is at rest."""
        back = float(self.rng.uniform(0.7, 1.5)) if rock_back_deg is None else float(rock_back_deg)
        a0 = self.angle_at(t0)
        sign = 1.0 if turn_deg >= 0 else -1.0
        self._spin = (t0, a0, turn_deg + sign * back, t0 + max(duration_s, 0.05), back * sign)
        return t0 + max(duration_s, 0.05) + 0.3

    def angle_at(self, t: float) -> float:
        """The carousel's angle (degrees, unwrapped during a spin) at time ``t`` (s)."""
        if self._spin is None:
            return self.scene.angle_deg
        t0, a0, turn, t1, back = self._spin
        if t <= t0:
            return a0
        if t < t1:
            u = (t - t0) / (t1 - t0)
            return a0 + turn * (1 - (1 - u) ** 2)
        v = min((t - t1) / 0.3, 1.0)
        return a0 + turn - back * (1 - math.cos(math.pi * v)) / 2

    def read(self) -> Frame:
        """Render the frame of the clock's current time."""
        now = self.clock()
        cond = self.conditions
        exp = cond.exposure_s
        a_mid = self.angle_at(now)
        a0, a1 = self.angle_at(now - exp / 2), self.angle_at(now + exp / 2)
        speed = abs(a1 - a0) / max(exp, 1e-9)
        n = int(min(4, max(1, math.ceil(abs(a1 - a0) / 1.5))))
        angles = [a0 + (a1 - a0) * (i + 0.5) / n for i in range(n)] if n > 1 else [a_mid]
        if self._spin is not None and now >= self._spin[3] + 0.3:
            self.scene = dataclasses.replace(self.scene, angle_deg=self.angle_at(now) % 360.0)
            self._spin = None
        scene = dataclasses.replace(self.scene, angle_deg=a_mid % 360.0)
        image, truth = self.renderer.render(scene, cond, self.rng, angles=angles, speed_dps=speed)
        frame = Frame(image, now, self._index, name=self.name, truth=truth)
        self._index += 1
        return frame

    def close(self) -> None:
        """Nothing to release."""


def compare(reading: Any, truth: MonsieurTruth, seat_margin_deg: float) -> dict[str, tuple[int, int, int]]:
    """A reading of a rendered frame against its truth: per reading, ``(wrong, right,
    eligible)``.

    * ``pointed``: a seat index other than the truth's is wrong (``ambiguous``/``unknown`` are
      abstentions); eligible when the roof marker is visible, the carousel still (under 30
      degrees a second) and the finger more than
      ``seat_margin_deg`` from a seat boundary.
    * ``seats``: ``kid``/``empty`` other than the truth is wrong; eligible: seats under no hand.
    * ``die``: a colour other than the truth's top colour (or any colour for a cocked die, or
      no die) is wrong; eligible when the die lies flat with its top visible.
    * ``angle_err_deg`` is not a count: see :func:`angle_error`.

    Args:
        reading: a :class:`~companion.vision.monsieur.MonsieurReading`.
        truth: the frame's truth.
        seat_margin_deg: the reader's margin (degrees).
    """
    still = truth.speed_dps < 30.0
    p = reading.pointed_seat
    p_wrong = int(isinstance(p, int) and p != truth.pointed_seat)
    p_elig = int(truth.roof_visible and still and truth.boundary_distance_deg > seat_margin_deg)
    p_right = int(p_elig and isinstance(p, int) and p == truth.pointed_seat)
    s_wrong = s_right = 0
    for k, (r, tr) in enumerate(zip(reading.seats, truth.seats)):
        if r in ("kid", "empty"):
            s_wrong += int(r != tr)
            s_right += int(r == tr and k not in truth.hidden_seats)
    s_elig = len(truth.seats) - len(truth.hidden_seats)
    d = reading.die
    d_wrong = int(d != "unknown" and d != truth.die)
    d_elig = int(truth.die not in (None, "unknown") and truth.die_visible)
    d_right = int(d_elig and d == truth.die)
    return {"pointed": (p_wrong, p_right, p_elig), "seats": (s_wrong, s_right, s_elig), "die": (d_wrong, d_right, d_elig)}


def angle_error(reading: Any, truth: MonsieurTruth) -> float | None:
    """Degrees between the read and the true carousel angle, or None when no angle was read."""
    if reading.carousel_angle_deg is None:
        return None
    return abs((reading.carousel_angle_deg - truth.carousel_angle_deg + 180.0) % 360.0 - 180.0)
