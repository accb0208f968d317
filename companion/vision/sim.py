"""The simulated camera: rendered frames of a Carrousel table, each with its ground truth.

The board (mat, printed disc, the 7 spaces with their outlines, the ArUco markers, the players'
cards) is drawn from the geometry file as a top view in millimetres and carried into the image
by the pinhole camera's plane homography; the horses are shaded solids (an elliptical body 36 mm
tall on its space, in perspective, with a cast shadow and a highlight); a hand may hover over
one or two spaces. Then the camera: light level, colour temperature, a light gradient,
vignetting, motion blur, sensor noise and JPEG compression.

Every random choice comes from one seeded generator: the same seed gives the same frames.
Horse and card colours are the reference colours of ``calibration/carrousel-colours.json``
turned back into sRGB under a neutral light, so the simulated table is the calibrated table.

Camera model: R. Hartley and A. Zisserman, Multiple View Geometry, 2nd ed., 6.1 (pinhole) and
8.1 (the homography of a plane, H = K [r1 r2 t]). Colour temperature: the sRGB white point of a
black body (CIE 15:2004 Planckian locus, tabulated at 500 K steps and interpolated).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np

from companion.vision.carrousel import CarrouselGeometry, load_references
from companion.vision.frames import Frame

__all__ = ["Conditions", "Truth", "TableRenderer", "SimulatedCamera", "random_conditions", "kelvin_to_bgr"]

COLOURS = ("black", "yellow", "blue", "green", "red")
BOARD_FILL = (214, 238, 246)  # BGR, the printed space fill
BOARD_BG = (200, 228, 238)
OUTLINE = (44, 62, 92)
CARD_WHITE = (250, 250, 250)
SKIN = (165, 190, 232)
SLEEVE = (90, 50, 40)
#: skin tones of the small palms (BGR): pale, light, dark (the photographs' hands are
#: (232, 190, 165) sRGB; pale and dark ends of human skin's reflectance)
SKINS = ((180, 200, 236), (132, 166, 214), (60, 82, 120))

# black-body white points, linear sRGB (R, G, B) normalised to G = 1 (CIE 1931 2-degree, Planckian locus)
_KELVIN = np.array([2500, 3000, 3500, 4000, 4500, 5000, 5500, 6000, 6500, 7000], float)
_WHITE_RGB = np.array([
    [1.00, 0.55, 0.17], [1.00, 0.64, 0.30], [1.00, 0.72, 0.42], [1.00, 0.79, 0.54], [1.00, 0.85, 0.65],
    [1.00, 0.90, 0.76], [1.00, 0.94, 0.86], [1.00, 0.97, 0.94], [1.00, 1.00, 1.00], [0.94, 0.96, 1.00],
], float)


def kelvin_to_bgr(kelvin: float) -> np.ndarray:
    """Linear BGR gains (``3 float64``, green = 1) of a light of colour temperature ``kelvin``
    (2500-7000 K), relative to D65 (6500 K = (1, 1, 1))."""
    rgb = np.array([np.interp(kelvin, _KELVIN, _WHITE_RGB[:, i]) for i in range(3)])
    rgb = rgb / rgb[1]
    return rgb[::-1].copy()


@dataclasses.dataclass(frozen=True)
class Conditions:
    """How one frame is taken.

    Attributes:
        height_mm: camera height above the mat centre (mm).
        tilt_deg: angle between the optical axis and the vertical (0-35 degrees).
        azimuth_deg: direction the tilt leans towards (degrees).
        roll_deg: rotation of the image about the optical axis (degrees).
        light: light level (0.3 = dim, 1.0 = normal, 1.5 = bright).
        kelvin: colour temperature of the light (2700-6500 K).
        gradient: light falls off by this fraction across the mat (0-0.4).
        vignetting: strength of the cos^4-like fall-off towards the corners (0-1).
        noise_sigma: sensor noise, standard deviation in 8-bit levels.
        blur_px: motion blur length (pixels, 0 = none).
        jpeg_quality: 30-100, or 0 for no JPEG compression.
        hands: spaces a hand hovers over (0, 1 or 2 of them).
        palms: spaces a small hand lies over, low (a palm 10-16 mm across over the space's
            centre, fingers and an arm to the frame's edge), as (space, skin) pairs; skin 0
            pale, 1 light, 2 dark (``SKINS``), shaded across the palm.
        shadows: soft shadows over spaces (something above the lamp's path), as (space, light
            share under it, 0.15-0.6) pairs.
    """

    height_mm: float = 550.0
    tilt_deg: float = 10.0
    azimuth_deg: float = 0.0
    roll_deg: float = 0.0
    light: float = 1.0
    kelvin: float = 5000.0
    gradient: float = 0.1
    vignetting: float = 0.3
    noise_sigma: float = 2.0
    blur_px: float = 0.0
    jpeg_quality: int = 90
    hands: tuple[int, ...] = ()
    palms: tuple[tuple[int, int], ...] = ()
    shadows: tuple[tuple[int, float], ...] = ()


@dataclasses.dataclass(frozen=True)
class Truth:
    """What a rendered frame shows.

    Attributes:
        spaces: 7 labels, spaces 0-6 (a colour or ``"empty"``).
        hidden: spaces a hand covers (any part of the space disc under the hand), sorted.
        cards: seat -> its three colours in reading order.
        markers_visible: ids of the markers wholly inside the frame.
        conditions: the :class:`Conditions` used.
        board_to_image: ``3 x 3`` homography of the mat plane, board mm -> pixels.
    """

    spaces: tuple[str, ...]
    hidden: tuple[int, ...]
    cards: dict[str, tuple[str, str, str]]
    markers_visible: tuple[int, ...]
    conditions: Conditions
    board_to_image: np.ndarray


def random_conditions(rng: np.random.Generator, kind: str = "any") -> Conditions:
    """Draw frame conditions.

    Args:
        rng: the generator.
        kind: ``"normal"`` (normal light, little blur, no hands), ``"dim"``, ``"bright"``,
            ``"warm"``, ``"cool"``, ``"tilted"``, ``"blur"``, ``"hands"``, ``"any"`` (everything
            in range: tilt up to 35 degrees, light 0.3-1.5x, 2700-6500 K, a hand one time in four)
            or ``"covers"`` (one or two small shaded palms low over single spaces, a soft shadow
            of 0.15-0.6x over another, sensor noise up to 8 levels, JPEG 30-95).
    """
    c = dict(
        height_mm=rng.uniform(520, 700), tilt_deg=rng.uniform(0, 20), azimuth_deg=rng.uniform(0, 360),
        roll_deg=rng.uniform(-180, 180), light=rng.uniform(0.8, 1.2), kelvin=rng.uniform(4000, 6000),
        gradient=rng.uniform(0, 0.2), vignetting=rng.uniform(0.1, 0.4), noise_sigma=rng.uniform(1, 3),
        blur_px=0.0, jpeg_quality=int(rng.integers(80, 96)), hands=(),
    )
    if kind == "any":
        c.update(tilt_deg=rng.uniform(0, 35), light=rng.uniform(0.3, 1.5), kelvin=rng.uniform(2700, 6500),
                 gradient=rng.uniform(0, 0.4), vignetting=rng.uniform(0, 0.8), noise_sigma=rng.uniform(1, 6),
                 blur_px=float(rng.choice([0, 0, 0, rng.uniform(1, 6)])), jpeg_quality=int(rng.integers(50, 96)),
                 hands=_random_hands(rng) if rng.random() < 0.25 else ())
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
    elif kind == "hands":
        c.update(hands=_random_hands(rng))
    elif kind == "covers":  # small palms and soft shadows over single spaces, a noisy sensor
        picks = [int(v) for v in rng.permutation(7)[:3]]
        palms = tuple((k, int(rng.integers(0, 3))) for k in picks[:int(rng.integers(1, 3))])
        c.update(tilt_deg=rng.uniform(0, 30), light=rng.uniform(0.5, 1.4), kelvin=rng.uniform(2700, 6500),
                 noise_sigma=rng.uniform(1, 8), jpeg_quality=int(rng.integers(30, 96)), palms=palms,
                 shadows=((picks[2], float(rng.uniform(0.15, 0.6))),))
    elif kind != "normal":
        raise ValueError(f"unknown condition kind {kind!r}")
    return Conditions(**c)


def _random_hands(rng: np.random.Generator) -> tuple[int, ...]:
    first = int(rng.integers(0, 7))
    return (first,) if rng.random() < 0.6 else tuple(sorted({first, (first + 1) % 7}))


def _lab_to_bgr8(lab: Sequence[float], white_bgr8: Sequence[int]) -> tuple[int, int, int]:
    """sRGB (BGR, 8-bit) of a colour whose Lab against ``white_bgr8`` is ``lab``."""
    rel = cv2.cvtColor(np.array(lab, np.float32).reshape(1, 1, 3), cv2.COLOR_Lab2BGR).reshape(3)
    rel = np.clip(rel, 0, 1)
    lin_rel = np.where(rel <= 0.04045, rel / 12.92, ((rel + 0.055) / 1.055) ** 2.4)
    w = np.array(white_bgr8, float) / 255
    w_lin = np.where(w <= 0.04045, w / 12.92, ((w + 0.055) / 1.055) ** 2.4)
    lin = np.clip(lin_rel * w_lin, 0, 1)
    s = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return tuple(int(round(v * 255)) for v in s)  # type: ignore[return-value]


class TableRenderer:
    """Renders frames of the Carrousel table.

    Args:
        geometry: the table (default ``calibration/carrousel-board.json``).
        size: (width, height) of the frames, pixels.
        hfov_deg: the camera's horizontal field of view (degrees).
        px_per_mm: resolution of the internal top-view texture.
    """

    def __init__(self, geometry: CarrouselGeometry | None = None, size: tuple[int, int] = (640, 480),
                 hfov_deg: float = 60.0, px_per_mm: float = 2.0):
        self.geometry = geometry or CarrouselGeometry.load()
        self.size = size
        w, h = size
        f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
        self.K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
        self.s = px_per_mm
        self.half = 260.0  # texture half-size, mm (mat 420 mm plus table around it)
        horses, cards = load_references()
        self.horse_bgr = {n: _lab_to_bgr8(lab, BOARD_FILL) for n, lab in zip(horses.names, horses.lab)}
        self.card_bgr = {n: _lab_to_bgr8(lab, CARD_WHITE) for n, lab in zip(cards.names, cards.lab)}
        self._base = self._draw_base()

    # ---------------------------------------------------------------- top view
    def _tex(self, pts_mm: np.ndarray) -> np.ndarray:
        p = np.asarray(pts_mm, float).reshape(-1, 2)
        return np.stack([(p[:, 0] + self.half) * self.s, (self.half - p[:, 1]) * self.s], axis=1)

    def _circle(self, img: np.ndarray, c: Sequence[float], r_mm: float, colour, thickness_mm: float = -1) -> None:
        ctr = self._tex(np.array(c))[0]
        sh = 4
        t = -1 if thickness_mm < 0 else max(1, int(round(thickness_mm * self.s)))
        cv2.circle(img, (int(round(ctr[0] * 16)), int(round(ctr[1] * 16))), int(round(r_mm * self.s * 16)),
                   colour, t, cv2.LINE_AA, sh)

    def _draw_base(self) -> np.ndarray:
        g = self.geometry
        n = int(2 * self.half * self.s)
        img = np.empty((n, n, 3), np.uint8)
        img[:] = (120, 140, 150)  # table
        rng = np.random.default_rng(7)
        mat = self._tex(np.array([[-210, 210], [210, 210], [210, -210], [-210, -210]])).astype(np.int32)
        cv2.fillConvexPoly(img, mat, (140, 185, 222))
        grain = (rng.normal(0, 6, (n, 1, 1)) * np.ones((1, n, 1))).astype(np.int16)
        inside = np.zeros((n, n), np.uint8)
        cv2.fillConvexPoly(inside, mat, 1)
        img = np.where(inside[..., None] == 1, np.clip(img.astype(np.int16) + grain, 0, 255), img).astype(np.uint8)
        self._circle(img, (0, 0), 140, BOARD_BG)
        self._circle(img, (0, 0), 138, OUTLINE, 1.0)
        r = g.space_diameter_mm / 2
        for c in g.space_centres_mm:
            self._circle(img, c, r, BOARD_FILL)
            self._circle(img, c, r - 1.5, OUTLINE, 3.0)
        self._circle(img, (0, 0), 35, OUTLINE, 0.8)
        for a in np.linspace(0, 2 * np.pi, 16, endpoint=False):
            p0, p1 = self._tex(np.array([[0, 0], [35 * math.cos(a), 35 * math.sin(a)]])).astype(int)
            cv2.line(img, tuple(p0), tuple(p1), OUTLINE, 1, cv2.LINE_AA)
        d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, g.dictionary))
        for mid, corners in g.markers.items():
            tl, tr, br, bl = corners
            centre = corners.mean(axis=0)
            paper = self._tex(np.array([centre + (np.array(v) - centre) * 1.25 for v in corners])).astype(np.int32)
            cv2.fillConvexPoly(img, paper, (245, 245, 245))
            side = int(round(np.linalg.norm(tr - tl) * self.s))
            marker = cv2.cvtColor(cv2.aruco.generateImageMarker(d, int(mid), side), cv2.COLOR_GRAY2BGR)
            x0, y0 = self._tex(tl)[0].round().astype(int)
            img[y0:y0 + side, x0:x0 + side] = marker
        return img

    def _draw_cards(self, img: np.ndarray, cards: dict[str, tuple[str, str, str]]) -> None:
        for slot in self.geometry.cards:
            if slot.seat not in cards:
                continue
            o, rd = slot.outward, slot.reading_direction
            c = slot.centre_mm
            corners = [c + rd * x + o * y for x, y in ((-44, -31.5), (44, -31.5), (44, 31.5), (-44, 31.5))]
            cv2.fillConvexPoly(img, self._tex(np.array(corners)).round().astype(np.int32), CARD_WHITE, cv2.LINE_AA)
            for colour, dc in zip(cards[slot.seat], slot.disc_centres_mm):
                self._circle(img, dc, slot.disc_diameter_mm / 2, self.card_bgr[colour])

    # ---------------------------------------------------------------- camera
    def pose(self, cond: Conditions, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Rotation ``3 x 3`` and translation ``3`` (mm), world (board mm, z up) to camera."""
        tilt, az = math.radians(cond.tilt_deg), math.radians(cond.azimuth_deg)
        look = np.array([rng.uniform(-15, 15), rng.uniform(-15, 15), 0.0])
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
        R = np.stack([x, y, z])
        return R, -R @ cam

    def project(self, R: np.ndarray, t: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """World points ``N x 3`` (mm) to pixels ``N x 2``."""
        pc = np.asarray(pts, float) @ R.T + t
        uv = pc @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    # ---------------------------------------------------------------- render
    def render(self, spaces: Sequence[str], cards: dict[str, tuple[str, str, str]], cond: Conditions,
               rng: np.random.Generator, layout_seed: int = 0) -> tuple[np.ndarray, Truth]:
        """One frame (``H x W x 3 uint8`` BGR) and its :class:`Truth`.

        Args:
            spaces: 7 labels (colour or ``"empty"``).
            cards: seat -> three colours.
            cond: the frame's conditions.
            rng: the generator for the remaining random choices (pose jitter, light, noise).
            layout_seed: where exactly each horse stands on its space and its heading.
        """
        w, h = self.size
        R, t = self.pose(cond, rng)
        H = self.K @ np.column_stack([R[:, 0], R[:, 1], t])
        tex = self._base.copy()
        self._draw_cards(tex, cards)
        A = np.array([[1 / self.s, 0, -self.half], [0, -1 / self.s, self.half], [0, 0, 1]])  # tex px -> mm
        img = cv2.warpPerspective(tex, H @ A, (w, h), flags=cv2.INTER_LINEAR, borderValue=(110, 130, 140))
        img = img.astype(np.float32)
        g = self.geometry
        light_dir = np.array([rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5)])
        # cast shadows on the board, then the horses
        shade = np.ones((h, w), np.float32)
        order = sorted(range(7), key=lambda k: -float((g.space_centres_mm[k] @ R[:2, 2])))
        horses = []
        for k in order:
            if spaces[k] == "empty":
                continue
            # a horse keeps its place and heading while it stays on its space
            still = np.random.default_rng([layout_seed, k, COLOURS.index(spaces[k])])
            c = g.space_centres_mm[k] + still.normal(0, 1.0, 2)
            yaw = still.uniform(0, 2 * np.pi)
            foot = self._ellipse(c, yaw, 16, 7)
            sh = np.vstack([np.column_stack([foot, np.zeros(len(foot))]),
                            np.column_stack([foot + light_dir * 36, np.zeros(len(foot))])])
            hull = cv2.convexHull(self.project(R, t, sh).astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(shade, hull, 0.6, cv2.LINE_AA)
            horses.append((c, yaw, self.horse_bgr[spaces[k]]))
        img *= cv2.GaussianBlur(shade, (0, 0), 2.0)[..., None]  # cast shadows on the board first
        for c, yaw, bgr in horses:
            self._horse(img, R, t, c, yaw, bgr)
        hidden = self._hands(img, R, t, cond.hands, rng) if cond.hands else ()
        for k, share in cond.shadows:
            self._shadow(img, R, t, k, share, rng)
        if cond.palms:
            hidden = tuple(sorted(set(hidden) | set(self._palms(img, R, t, cond.palms, rng))))
        img = self._camera(img, cond, rng)
        visible = tuple(sorted(
            mid for mid, corners in g.markers.items()
            if np.all((self.project(R, t, np.column_stack([corners, np.zeros(4)])) >= 0)
                      & (self.project(R, t, np.column_stack([corners, np.zeros(4)])) < [w, h]))))
        return img, Truth(tuple(spaces), hidden, dict(cards), visible, cond, H)

    @staticmethod
    def _ellipse(c: np.ndarray, yaw: float, a: float, b: float, n: int = 24) -> np.ndarray:
        th = np.linspace(0, 2 * np.pi, n, endpoint=False)
        e = np.stack([a * np.cos(th), b * np.sin(th)], axis=1)
        rot = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
        return c + e @ rot.T

    def _horse(self, img: np.ndarray, R, t, c, yaw, bgr) -> None:
        base = np.array(bgr, np.float32)
        layers = [(0.0, 1.0), (12.0, 0.95), (24.0, 0.85), (36.0, 0.6)]
        pts = [np.column_stack([self._ellipse(c, yaw, 16 * s, 7 * s), np.full(24, z)]) for z, s in layers]
        hull = cv2.convexHull(self.project(R, t, np.vstack(pts)).astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(img, hull, tuple(float(v) for v in base * 0.8), cv2.LINE_AA)
        top = self.project(R, t, pts[-1]).astype(np.int32)
        cv2.fillConvexPoly(img, top, tuple(float(v) for v in base), cv2.LINE_AA)
        mid = self.project(R, t, np.column_stack([self._ellipse(c, yaw, 9, 3), np.full(24, 30.0)])).astype(np.int32)
        cv2.fillConvexPoly(img, mid, tuple(float(min(255, v * 1.08 + 12)) for v in base), cv2.LINE_AA)
        hl = self.project(R, t, np.array([[c[0] + 3, c[1] + 2, 37.0]]))[0]
        cv2.circle(img, (int(hl[0]), int(hl[1])), 1, (240, 240, 240), -1, cv2.LINE_AA)

    def _hands(self, img: np.ndarray, R, t, spaces: Sequence[int], rng) -> tuple[int, ...]:
        g = self.geometry
        targets = np.array([g.space_centres_mm[k] for k in spaces])
        tip = targets.mean(axis=0)
        out = tip / max(np.linalg.norm(tip), 1e-6)
        z = rng.uniform(40, 90)
        palm_c = tip + out * 45
        ang = math.atan2(out[1], out[0])
        palm = np.column_stack([self._ellipse(palm_c, ang, 45, 40 if len(spaces) > 1 else 33), np.full(24, z)])
        wrist = np.array([tip + out * 80 + np.array([-out[1], out[0]]) * s for s in (-28, 28)] +
                         [tip + out * 400 + np.array([-out[1], out[0]]) * s for s in (35, -35)])
        sleeve = np.column_stack([wrist, np.full(4, z + 10)])
        mask = np.zeros(img.shape[:2], np.uint8)
        shadow = np.zeros(img.shape[:2], np.uint8)
        for poly3d, value in ((palm, 1), (sleeve, 2)):
            p = self.project(R, t, poly3d).astype(np.int32)
            flat = poly3d.copy()
            flat[:, :2] += rng.uniform(10, 25, 2)
            flat[:, 2] = 0
            cv2.fillConvexPoly(shadow, self.project(R, t, flat).astype(np.int32), 1)
            cv2.fillConvexPoly(mask, p, value)
        sh = cv2.GaussianBlur(shadow.astype(np.float32), (0, 0), 6)
        img *= (1 - 0.45 * sh)[..., None]
        img[mask == 1] = SKIN
        img[mask == 2] = SLEEVE
        hidden = []
        r = g.space_diameter_mm / 2
        for k, c in enumerate(g.space_centres_mm):
            ring = self.project(R, t, np.column_stack([self._ellipse(c, 0, r, r, 16), np.zeros(16)])).astype(int)
            inside = [(0 <= x < mask.shape[1] and 0 <= y < mask.shape[0] and mask[y, x]) for x, y in ring]
            if any(inside):
                hidden.append(k)
        return tuple(hidden)

    def _shadow(self, img: np.ndarray, R, t, k: int, share: float, rng) -> None:
        """A soft shadow (an ellipse 25-40 mm across, blurred) over space ``k``: the light
        under its middle is ``share`` of the rest (in linear light; ``img`` holds 2.2-power
        codes)."""
        h, w = img.shape[:2]
        c = self.geometry.space_centres_mm[k] + rng.normal(0, 4.0, 2)
        a = rng.uniform(25, 40)
        poly = self.project(R, t, np.column_stack([self._ellipse(c, rng.uniform(0, np.pi), a, a * 0.7), np.zeros(24)]))
        m = np.zeros((h, w), np.float32)
        cv2.fillConvexPoly(m, poly.astype(np.int32), 1.0, cv2.LINE_AA)
        px_mm = float(np.linalg.norm(poly[0] - poly[12])) / (2 * a)
        m = cv2.GaussianBlur(m, (0, 0), max(1.0, a * px_mm / 3))
        img *= (1.0 - (1.0 - share ** (1 / 2.2)) * m)[..., None]

    def _palms(self, img: np.ndarray, R, t, palms: Sequence[tuple[int, int]], rng) -> tuple[int, ...]:
        """Small hands low over single spaces (the palm 10-16 mm in radius over the space's
        centre, 5-15 mm up; four fingers; the arm to the nearest frame edge), their skin shaded
        across the palm (0.75-1.0) with a little texture. Returns the spaces they cover."""
        h, w = img.shape[:2]
        g = self.geometry
        mask = np.zeros((h, w), np.uint8)
        for k, skin in palms:
            c = g.space_centres_mm[k] + rng.normal(0, 2.0, 2)
            r = rng.uniform(10, 16)
            z = rng.uniform(5, 15)
            one = np.zeros((h, w), np.uint8)
            palm = self.project(R, t, np.column_stack([self._ellipse(c, rng.uniform(0, np.pi), r, 0.8 * r), np.full(24, z)]))
            cv2.fillConvexPoly(one, palm.astype(np.int32), 1)
            centre = self.project(R, t, np.array([[c[0], c[1], z]]))[0]
            cx, cy = int(centre[0]), int(centre[1])
            px_mm = float(np.linalg.norm(palm[0] - palm[12])) / (2 * r)
            ends = {(0, cy): cx, (w - 1, cy): w - cx, (cx, 0): cy, (cx, h - 1): h - cy}
            cv2.line(one, (cx, cy), min(ends, key=ends.get), 1, max(2, int(1.2 * r * px_mm)))
            for _ in range(4):
                a = rng.uniform(0, 2 * np.pi)
                tip = (int(cx + 1.8 * r * px_mm * np.cos(a)), int(cy + 1.8 * r * px_mm * np.sin(a)))
                cv2.line(one, (cx, cy), tip, 1, max(2, int(0.25 * r * px_mm)))
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            shade = 0.75 + 0.25 * np.cos((xx - cx) / (3 * r * px_mm)) * np.cos((yy - cy) / (3 * r * px_mm))
            colour = np.array(SKINS[skin], np.float32)[None, None, :] * shade[..., None]
            colour += rng.normal(0, 3.0, colour.shape).astype(np.float32)
            sel = one > 0
            img[sel] = colour[sel]
            mask |= one
        hidden = []
        r = g.space_diameter_mm / 2
        for k, c in enumerate(g.space_centres_mm):
            ring = self.project(R, t, np.column_stack([self._ellipse(c, 0, r, r, 16), np.zeros(16)])).astype(int)
            disc = self.project(R, t, np.column_stack([c[None, :], np.zeros(1)])).astype(int)
            pts = np.vstack([ring, disc])
            if any(0 <= x < w and 0 <= y < h and mask[y, x] for x, y in pts):
                hidden.append(k)
        return tuple(hidden)

    def _camera(self, img: np.ndarray, cond: Conditions, rng: np.random.Generator) -> np.ndarray:
        h, w = img.shape[:2]
        lin = (img / 255.0) ** 2.2
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        f = self.K[0, 0]
        r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / f ** 2
        vig = (1 + r2) ** (-2.0 * cond.vignetting)
        ang = rng.uniform(0, 2 * np.pi)
        grad = 1 - cond.gradient * (0.5 + 0.5 * (np.cos(ang) * (xx / w - 0.5) * 2 + np.sin(ang) * (yy / h - 0.5) * 2) / 2)
        gains = kelvin_to_bgr(cond.kelvin) * cond.light * 0.95
        lin = lin * (vig * grad)[..., None] * gains.astype(np.float32)
        out = np.clip(lin, 0, 1) ** (1 / 2.2) * 255
        if cond.blur_px >= 1:
            n = int(round(cond.blur_px)) | 1
            k = np.zeros((n, n), np.float32)
            k[n // 2, :] = 1.0 / n
            k = cv2.warpAffine(k, cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), rng.uniform(0, 180), 1.0), (n, n))
            out = cv2.filter2D(out, -1, k / max(k.sum(), 1e-6))
        out = out + rng.normal(0, cond.noise_sigma, out.shape)
        out8 = np.clip(out, 0, 255).astype(np.uint8)
        if cond.jpeg_quality:
            ok, buf = cv2.imencode(".jpg", out8, [cv2.IMWRITE_JPEG_QUALITY, int(cond.jpeg_quality)])
            out8 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return out8


class SimulatedCamera:
    """A frame source (see :mod:`companion.vision.frames`) showing a simulated table.

    The table's contents are set by the caller (the simulated game) with :meth:`set_table`;
    every :meth:`read` renders them under fresh conditions of ``kind`` (see
    :func:`random_conditions`), or under fixed ``conditions``. Each frame's ``truth`` is its
    :class:`Truth`.

    Args:
        seed: seeds the generator (same seed, same frames).
        kind: the kind of conditions drawn per frame (default ``"normal"``).
        conditions: fixed conditions for every frame (overrides ``kind``).
        clock: seconds for timestamps (default ``time.monotonic``).
        renderer: a :class:`TableRenderer` to share.
        jitter: redraw the conditions every frame (True) or once (False: a still camera).
    """

    def __init__(self, seed: int = 0, kind: str = "normal", conditions: Conditions | None = None,
                 clock: Callable[[], float] = time.monotonic, renderer: TableRenderer | None = None,
                 jitter: bool = False):
        self.name = f"sim:{seed}"
        self.rng = np.random.default_rng(seed)
        self.renderer = renderer or TableRenderer()
        self.kind, self.clock, self.jitter = kind, clock, jitter
        self.conditions = conditions or random_conditions(self.rng, kind)
        self._pose_seed = int(self.rng.integers(1 << 31))
        self.spaces: tuple[str, ...] = ("empty", "empty", "black", "yellow", "blue", "green", "red")
        self.cards: dict[str, tuple[str, str, str]] = {}
        self._index = 0

    def set_table(self, spaces: Sequence[str] | None = None,
                  cards: dict[str, tuple[str, str, str]] | None = None,
                  hands: tuple[int, ...] | None = None) -> None:
        """Change what the table shows from the next frame on (``None`` keeps it)."""
        if spaces is not None:
            if len(spaces) != 7:
                raise ValueError(f"expected 7 space labels, got {len(spaces)}")
            self.spaces = tuple(spaces)
        if cards is not None:
            self.cards = {k: tuple(v) for k, v in cards.items()}  # type: ignore[misc]
        if hands is not None:
            self.conditions = dataclasses.replace(self.conditions, hands=tuple(hands))

    def read(self) -> Frame:
        """Render the next frame."""
        if self.jitter:
            self.conditions = random_conditions(self.rng, self.kind)
            self._pose_seed = int(self.rng.integers(1 << 31))
        pose_rng = np.random.default_rng(self._pose_seed)  # a still camera keeps its pose
        image, truth = self.renderer.render(self.spaces, self.cards, self.conditions, _Split(pose_rng, self.rng),
                                            layout_seed=self._pose_seed)
        frame = Frame(image, self.clock(), self._index, name=self.name, truth=truth)
        self._index += 1
        return frame

    def close(self) -> None:
        """Nothing to release."""


class _Split:
    """A generator whose first draws (the camera pose) come from one stream and the rest
    (noise, horses' yaw) from another, so a still camera keeps its pose frame after frame."""

    def __init__(self, pose: np.random.Generator, rest: np.random.Generator):
        self._pose, self._rest, self._n = pose, rest, 0

    def uniform(self, *a: Any, **k: Any) -> Any:
        """``numpy.random.Generator.uniform`` from the pose stream for the first two draws, else the rest."""
        self._n += 1
        return (self._pose if self._n <= 2 else self._rest).uniform(*a, **k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rest, name)
