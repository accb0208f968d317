"""Rendered dice trays: 16 mm dice lying in a felt-lined tray, seen by a camera above, with truth.

A scene (:func:`random_scene`, every choice from one seeded generator) is drawn by
:class:`TrayRenderer` into a ``640 x 480`` BGR frame (rendered at twice that and averaged down,
so edges are anti-aliased) with a label image and the truth of each die. What is modelled:

* **Camera**: a pinhole (OpenCV convention, :class:`~companion.readers.dice_tray.TrayGeometry`)
  350-600 mm above the felt, tilted 0-30 degrees, any azimuth and roll, a horizontal field of
  view of 55-70 degrees; dice boxes then span about 14-38 px.
* **Table and tray**: a wood or laminate table (z = -4 mm); a rounded-rectangle (220 x 160 mm)
  or round (200 mm) tray, walls 25 mm high and 10 mm thick, felt floor in dark green, burgundy,
  navy or grey with fibre mottle, the inner wall face in the felt's colour, the rim black, brown
  or walnut. Walls occlude the floor and the dice in oblique views (painter's order).
* **Dice**: 16 mm cubes with rounded edges (a shaded bevel), the colours of real dice (white,
  ivory, red, black, green, blue, yellow; pips black or white), pips as discs 2.9 mm across on a
  4.3 mm grid (a larger single pip on the one), a drilled look (the paint darker towards the
  rim), faces in the standard arrangement (opposite faces sum to 7, right-handed), the rotation
  of the 2, 3 and 6 at random; flat dice at any yaw, touching pairs (face to face or edge to
  face), cocked dice leaning 20-38 degrees against the wall.
* **Light**: a key light (warm lamp 2700 K, daylight 6500 K, dim 0.3 x, bright with glare, mixed
  warm and cool), Lambertian shading of each face from its normal, ambient light, a glossy
  highlight (a bright spot on faces near the mirror direction), soft cast shadows on the felt.
* **Hands**: a hand (palm and arm, skin and sleeve colours) hovering 34-80 mm above the felt,
  coming in from outside the tray, with its soft shadow; it may cover part of a die.
* **Sensor**: white balance that corrects the light's colour only in part, exposure, vignetting,
  defocus and motion blur, noise, JPEG compression.

Sources: the dice-tray photographs' README (../shared/data/dice-tray, the scene's dimensions and
colours), R. Hartley and A. Zisserman, Multiple View Geometry, 2nd ed., 6.1 (pinhole camera),
8.1 (the homography of a plane). The light's colour: :func:`companion.vision.sim.kelvin_to_bgr`.

Public surface: :class:`DieTruth`, :class:`TrayScene`, :func:`random_scene`,
:class:`TrayRenderer` (``render(scene) -> (frame, labels, truths)``), :data:`DIE_COLOURS`,
:data:`FELTS`, :func:`face_layout`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import cv2
import numpy as np

from companion.readers.dice_tray import DIE_MM, TrayGeometry
from companion.vision.sim import kelvin_to_bgr

__all__ = ["DIE_COLOURS", "FELTS", "HAND_LABEL", "LIGHTINGS", "RIMS", "DieTruth", "TrayRenderer", "TrayScene",
           "face_layout", "random_scene"]

#: Dice body and pip colours (sRGB): the README's seven schemes.
DIE_COLOURS = {
    "white": ((236, 236, 230), (22, 22, 24)),
    "ivory": ((234, 222, 188), (22, 22, 24)),
    "red": ((186, 26, 30), (238, 236, 230)),
    "black": ((24, 24, 26), (238, 236, 230)),
    "green": ((24, 128, 58), (238, 236, 230)),
    "blue": ((28, 64, 170), (238, 236, 230)),
    "yellow": ((240, 196, 28), (22, 22, 24)),
}
#: Felt colours (sRGB).
FELTS = {"dark_green": (36, 84, 52), "burgundy": (104, 28, 40), "navy": (30, 40, 82), "grey": (92, 92, 96)}
#: Rim colours (sRGB).
RIMS = {"black_faux_leather": (30, 28, 28), "brown_faux_leather": (88, 52, 32), "walnut_wood": (92, 60, 38)}
#: The lighting kinds of the dice-tray photographs.
LIGHTINGS = ("warm", "daylight", "dim", "glare", "mixed")
#: The label of the hand in the label image (a die k is 10 + k, the felt 1, the walls 2, the table 0).
HAND_LABEL = 255

PIP_MM = 1.45
ONE_PIP_MM = 1.75
GRID_MM = 4.3
WALL_MM = 25.0
WALL_THICK_MM = 10.0
TABLE_Z = -4.0

# Die frame: +z 1, -z 6, +x 2, -x 5, +y 3, -y 4; face axes (a, b) with a x b = normal (README).
_FACES = (
    (1, (0, 0, 1), (1, 0, 0), (0, 1, 0)),
    (6, (0, 0, -1), (1, 0, 0), (0, -1, 0)),
    (2, (1, 0, 0), (0, 1, 0), (0, 0, 1)),
    (5, (-1, 0, 0), (0, -1, 0), (0, 0, 1)),
    (3, (0, 1, 0), (-1, 0, 0), (0, 0, 1)),
    (4, (0, -1, 0), (1, 0, 0), (0, 0, 1)),
)


def face_layout(value: int, turn: int = 0) -> list[tuple[int, int]]:
    """Pip places (a, b in -1, 0, 1: units of 4.3 mm) of a face; ``turn`` 1 gives the other
    diagonal of a 2 or 3 and the rows instead of the columns of a 6.

    Raises:
        ValueError: ``value`` not 1-6.
    """
    if value not in range(1, 7):
        raise ValueError(f"value: expected 1-6, got {value!r}")
    lay = {
        1: [(0, 0)],
        2: [(-1, -1), (1, 1)],
        3: [(-1, -1), (0, 0), (1, 1)],
        4: [(-1, -1), (-1, 1), (1, -1), (1, 1)],
        5: [(-1, -1), (-1, 1), (1, -1), (1, 1), (0, 0)],
        6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
    }[value]
    if turn and value in (2, 3, 6):
        lay = [(-b, a) if value == 6 else (a, -b) for a, b in lay]
    return lay


@dataclasses.dataclass
class DieTruth:
    """One die of a rendered scene.

    Attributes:
        value: 1-6 for a flat die, None for a cocked one.
        state: ``"flat"`` or ``"cocked"``.
        colour: a key of :data:`DIE_COLOURS`.
        centre_mm: ``3 float`` the cube's centre (mm, tray frame).
        R: ``3 x 3`` die frame to world rotation.
        top_value: the value of the face nearest to up (the one a cocked die shows most).
        top_centre_px: ``(x, y)`` px of the top face's centre (in the delivered frame).
        top_quad_px: ``4 x 2`` px of the top face's corners.
        top_pips_px: ``n x 2`` px of the top face's pip centres.
        box: ``(x0, y0, x1, y1)`` px, the die's visible pixels (label image), or None when unseen.
        visible_fraction: share of the top face's area that shows (not under the hand, another die, a wall).
        touching: indices of the dice it touches.
    """

    value: int | None
    state: str
    colour: str
    centre_mm: np.ndarray
    R: np.ndarray
    top_value: int
    top_centre_px: tuple[float, float] = (0.0, 0.0)
    top_quad_px: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((4, 2)))
    top_pips_px: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2)))
    box: tuple[float, float, float, float] | None = None
    visible_fraction: float = 0.0
    touching: tuple[int, ...] = ()
    turns: tuple[int, ...] = (0, 0, 0, 0, 0, 0)


@dataclasses.dataclass
class TrayScene:
    """Everything one frame shows, in millimetres (tray frame: origin on the felt's centre, z up).

    Attributes:
        geometry: the camera (``TrayGeometry``, its ``floor_mm`` the tray's inner outline).
        shape: ``"rect"`` or ``"round"``.
        felt, rim: keys of :data:`FELTS` and :data:`RIMS` (``felt_gain`` scales the felt).
        table: ``"dark_wood"``, ``"oak"`` or ``"laminate"``.
        lighting: one of :data:`LIGHTINGS`; ``light_mm`` the key light's position.
        dice: the dice (:class:`DieTruth`; the pixel fields are filled by the renderer).
        hand: None or ``(x, y, z, yaw_rad, palm_len_mm, palm_w_mm)``; ``skin``, ``sleeve`` sRGB.
        sensor: noise sigma (8-bit), blur sigma (px), motion (px), JPEG quality, vignetting.
        seed: the generator's seed for the textures.
    """

    geometry: TrayGeometry
    shape: str
    felt: str
    felt_gain: float
    rim: str
    table: str
    lighting: str
    light_mm: np.ndarray
    dice: list[DieTruth]
    hand: tuple[float, ...] | None
    skin: tuple[int, int, int]
    sleeve: tuple[int, int, int]
    noise: float
    blur: float
    motion: float
    jpeg: int
    vignetting: float
    seed: int
    glare_gain: float = 0.0


# ----------------------------------------------------------------------------------- geometry
def _tray_outline(shape: str, inset: float = 0.0, n: int = 96) -> np.ndarray:
    """``n x 2`` mm: the tray's inner outline grown by ``inset`` mm (negative: shrunk), CCW."""
    if shape == "round":
        r = 100.0 + inset
        a = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.column_stack([r * np.cos(a), r * np.sin(a)])
    hx, hy, rc = 110.0 + inset, 80.0 + inset, max(1.0, 22.0 + inset)
    pts = []
    per = n // 4
    for k, (cx, cy) in enumerate(((hx - rc, hy - rc), (-hx + rc, hy - rc), (-hx + rc, -hy + rc), (hx - rc, -hy + rc))):
        for a in np.linspace(k * np.pi / 2, (k + 1) * np.pi / 2, per, endpoint=False):
            pts.append((cx + rc * math.cos(a), cy + rc * math.sin(a)))
    return np.array(pts, float)


def _rot(axis: Sequence[float], angle: float) -> np.ndarray:
    return cv2.Rodrigues(np.asarray(axis, float).reshape(3, 1) / np.linalg.norm(axis) * angle)[0]


def _camera(rng: np.random.Generator, size=(640, 480)) -> TrayGeometry:
    """A camera 350-600 mm above the felt, tilt 0-30 deg, any azimuth and roll, HFOV 55-70 deg."""
    w, h = size
    height = rng.uniform(350, 600)
    tilt = math.radians(rng.uniform(0, 30) if rng.random() < 0.8 else rng.uniform(0, 8))
    az = rng.uniform(0, 2 * np.pi)
    look = np.array([rng.uniform(-15, 15), rng.uniform(-11, 11), 0.0])
    dist = height / math.cos(tilt)
    c = look + dist * np.array([math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)])
    fwd = (look - c) / np.linalg.norm(look - c)
    up = np.array([0.0, 0.0, 1.0]) if abs(fwd[2]) < 0.999 else np.array([0.0, 1.0, 0.0])
    right = np.cross(fwd, up)
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    roll = rng.uniform(0, 2 * np.pi)
    cr, sr = math.cos(roll), math.sin(roll)
    x_axis, y_axis = cr * right + sr * down, -sr * right + cr * down
    R = np.vstack([x_axis, y_axis, fwd])
    hfov = math.radians(rng.uniform(55, 70))
    f = (w / 2) / math.tan(hfov / 2)
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
    return TrayGeometry.from_camera(K, R, -R @ c, size, _tray_outline("rect"))


def _squares_overlap(c1, yaw1, c2, yaw2, half: float) -> bool:
    """Separating-axis test of two squares (side ``2 half`` mm) on the floor."""
    def corners(c, yaw):
        co, si = math.cos(yaw), math.sin(yaw)
        loc = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        return c + loc @ np.array([[co, si], [-si, co]])

    a, b = corners(np.asarray(c1), yaw1), corners(np.asarray(c2), yaw2)
    for yaw in (yaw1, yaw2):
        for ax in ((math.cos(yaw), math.sin(yaw)), (-math.sin(yaw), math.cos(yaw))):
            pa, pb = a @ ax, b @ ax
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return False
    return True


def _inside(shape: str, xy, margin: float) -> bool:
    poly = _tray_outline(shape, -margin).astype(np.float32)
    return cv2.pointPolygonTest(poly, (float(xy[0]), float(xy[1])), False) > 0


def random_scene(rng: np.random.Generator, n_dice: int | None = None, size=(640, 480)) -> TrayScene:
    """A random scene: 1-6 dice (three half the time), a third with two dice touching, one in
    eight with a cocked die, one in six with a hand; camera, tray, colours and light at random.

    Args:
        rng: the generator (the same seed gives the same scene).
        n_dice: the number of dice, or None for the mix above.
        size: ``(width, height)`` px of the frame.
    """
    geo = _camera(rng, size)
    shape = "round" if rng.random() < 0.3 else "rect"
    geo = dataclasses.replace(geo, floor_mm=_tray_outline(shape))
    n = int(n_dice) if n_dice is not None else (3 if rng.random() < 0.5 else int(rng.integers(1, 7)))
    colours = list(DIE_COLOURS)
    dice: list[DieTruth] = []
    placed: list[tuple[np.ndarray, float]] = []
    touch = n >= 2 and rng.random() < 0.33
    cocked = rng.random() < 0.15
    h = DIE_MM / 2
    for k in range(n):
        for _ in range(200):
            yaw = rng.uniform(0, 2 * np.pi)
            if touch and k == 1:
                c0, y0 = placed[0]
                ang = rng.uniform(0, 2 * np.pi)
                if rng.random() < 0.6:
                    yaw = y0 + rng.normal(0, 0.05)
                    side = int(rng.integers(0, 4))
                    ang = y0 + side * np.pi / 2
                    u = np.array([math.cos(ang), math.sin(ang)])
                    v = np.array([-u[1], u[0]])
                    xy = c0 + u * (DIE_MM + 0.04) + v * rng.uniform(-6, 6)
                else:
                    u = np.array([math.cos(ang), math.sin(ang)])
                    lo, hi = 0.0, 40.0
                    for _ in range(30):
                        mid = (lo + hi) / 2
                        if _squares_overlap(c0, y0, c0 + u * mid, yaw, h):
                            lo = mid
                        else:
                            hi = mid
                    xy = c0 + u * (hi + 0.04)
            else:
                xy = rng.uniform([-95, -65], [95, 65]) if shape == "rect" else rng.uniform(-85, 85, 2)
            if not _inside(shape, xy, 0.75 * DIE_MM):
                continue
            gap_ok = all(not _squares_overlap(xy, yaw, c, y, h + (0 if (touch and k == 1 and j == 0) else 1.2))
                         for j, (c, y) in enumerate(placed))
            if touch and k == 1 and not gap_ok:
                # the touching partner was placed just clear of die 0; other dice must keep apart
                gap_ok = all(not _squares_overlap(xy, yaw, c, y, h + 1.2) for c, y in placed[1:]) and \
                    not _squares_overlap(xy, yaw, placed[0][0], placed[0][1], h - 0.01)
            if gap_ok:
                break
        else:
            break
        top = int(rng.integers(0, 6))
        value, normal, _, _ = _FACES[top]
        # die frame -> world: the chosen face up, then the yaw about z
        up = np.array(normal, float)
        R_up = _align(up, np.array([0.0, 0.0, 1.0]))
        R = _rot((0, 0, 1), yaw) @ R_up
        centre = np.array([xy[0], xy[1], h])
        state = "flat"
        if cocked and k == n - 1 and not (touch and k == 1):
            # lean against the wall: tilt about a horizontal axis; the lowest corner on the felt
            tilt = math.radians(rng.uniform(20, 38))
            ang = math.atan2(xy[1], xy[0])
            if shape == "rect":
                ang = 0.0 if abs(xy[0]) / 110 > abs(xy[1]) / 80 else np.pi / 2
                if (ang == 0.0 and xy[0] < 0) or (ang == np.pi / 2 and xy[1] < 0):
                    ang += np.pi
            out = np.array([math.cos(ang), math.sin(ang), 0.0])
            axis = np.cross(np.array([0.0, 0.0, 1.0]), out)
            R = _rot(axis, tilt) @ _rot((0, 0, 1), float(np.round((yaw - ang) / (np.pi / 2)) * np.pi / 2 + ang - yaw)) @ R
            corners = (np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)]) @ R.T)
            # push it out to the wall: its outermost corner at the inner wall face
            reach = float((corners[:, :2] @ out[:2]).max())
            wall = 100.0 if shape == "round" else (110.0 if ang % np.pi == 0 else 80.0)
            d = wall - 0.3 - reach
            xy = out[:2] * d + (xy - out[:2] * float(xy @ out[:2])) * (0.0 if shape == "round" else 1.0)
            if shape == "rect":
                lim = 80.0 - 25 if ang % np.pi == 0 else 110.0 - 25
                perp = xy - out[:2] * float(xy @ out[:2])
                if np.linalg.norm(perp) > lim:
                    perp = perp / np.linalg.norm(perp) * lim
                xy = out[:2] * d + perp
            centre = np.array([xy[0], xy[1], -float(corners[:, 2].min())])
            state = "cocked"
        ups = [(float((R @ np.array(nv, float))[2]), v) for v, nv, _, _ in _FACES]
        top_value = max(ups)[1]
        turns = tuple(int(rng.integers(0, 2)) for _ in range(6))
        dice.append(DieTruth(None if state == "cocked" else value, state, str(rng.choice(colours)), centre, R,
                             top_value, turns=turns))
        placed.append((np.asarray(xy, float), yaw))
    if touch and len(dice) >= 2:
        dice[0].touching, dice[1].touching = (1,), (0,)
    light_kind = LIGHTINGS[int(rng.integers(0, len(LIGHTINGS)))]
    az, el = rng.uniform(0, 2 * np.pi), math.radians(rng.uniform(35, 80))
    dist = rng.uniform(700, 1300)
    light = np.array([dist * math.cos(el) * math.cos(az), dist * math.cos(el) * math.sin(az), dist * math.sin(el)])
    hand = None
    if rng.random() < 0.17:
        a = rng.uniform(0, 2 * np.pi)
        r = rng.uniform(40, 90)
        target = dice[int(rng.integers(0, len(dice)))].centre_mm[:2] if dice and rng.random() < 0.6 else \
            np.array([r * math.cos(a), r * math.sin(a)])
        hand = (float(target[0] + rng.normal(0, 12)), float(target[1] + rng.normal(0, 12)), float(rng.uniform(34, 80)),
                float(math.atan2(target[1], target[0]) + rng.normal(0, 0.4)), float(rng.uniform(85, 105)),
                float(rng.uniform(70, 90)))
    skin = tuple(int(v) for v in rng.choice([(224, 172, 140), (198, 134, 100), (141, 85, 60), (241, 194, 167)]))
    sleeve = tuple(int(v) for v in rng.integers(20, 200, 3))
    return TrayScene(
        geometry=geo, shape=shape, felt=str(rng.choice(list(FELTS))), felt_gain=float(rng.uniform(0.92, 1.08)),
        rim=str(rng.choice(list(RIMS))), table=str(rng.choice(["dark_wood", "oak", "laminate"])),
        lighting=light_kind, light_mm=light, dice=dice, hand=hand, skin=skin, sleeve=sleeve,
        noise=float(rng.uniform(1.0, 4.0) * (1.8 if light_kind == "dim" else 1.0)),
        blur=float(rng.choice([0.0, rng.uniform(0.3, 0.8), rng.uniform(0.6, 1.3)])),
        motion=float(rng.uniform(0, 2.5) if rng.random() < 0.1 else 0.0),
        jpeg=int(rng.integers(70, 96)), vignetting=float(rng.uniform(0.1, 0.5)), seed=int(rng.integers(0, 2**31)),
        glare_gain=float(rng.uniform(1.5, 4.0) if light_kind == "glare" else rng.uniform(0.0, 0.8)),
    )


def _align(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rotation taking unit vector ``a`` to ``b`` (a half turn about x when opposite)."""
    v = np.cross(a, b)
    c = float(a @ b)
    if np.linalg.norm(v) < 1e-9:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    return _rot(v, math.acos(max(-1.0, min(1.0, c))))


# ----------------------------------------------------------------------------------- drawing
def _srgb_to_lin(c) -> np.ndarray:
    c = np.asarray(c, np.float32) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _lin_to_srgb8(img: np.ndarray) -> np.ndarray:
    img = np.clip(img, 0, 1)
    out = np.where(img <= 0.0031308, img * 12.92, 1.055 * np.power(img, 1 / 2.4) - 0.055)
    return np.clip(out * 255 + 0.5, 0, 255).astype(np.uint8)


def _bgr(srgb) -> np.ndarray:
    """sRGB (R, G, B) 0-255 -> linear BGR float32."""
    return _srgb_to_lin(srgb)[::-1].copy()


class TrayRenderer:
    """Draws :class:`TrayScene` s.

    Args:
        supersample: the scene is drawn this many times larger and averaged down (anti-aliasing).
        face_px: side (px) of a die face's texture.
    """

    def __init__(self, supersample: int = 2, face_px: int = 64):
        self.ss = int(supersample)
        self.face_px = int(face_px)

    # --------------------------------------------------------------- helpers
    def _proj(self, geo: TrayGeometry, pts: np.ndarray) -> np.ndarray:
        """World mm -> supersampled px (pixel centres kept: (u + 0.5) s - 0.5)."""
        uv = geo.project(np.asarray(pts, float).reshape(-1, 3))
        return (uv + 0.5) * self.ss - 0.5

    def _depth(self, geo: TrayGeometry, pts: np.ndarray) -> np.ndarray:
        return (np.asarray(pts, float).reshape(-1, 3) @ geo.R.T + geo.t)[:, 2]

    @staticmethod
    def _fill(img, labels, poly, colour, label=None, alpha=None):
        pts = np.round(np.asarray(poly) * 16).astype(np.int32).reshape(-1, 1, 2)
        if alpha is None:
            cv2.fillPoly(img, [pts], tuple(float(v) for v in colour), cv2.LINE_8, 4)
        if label is not None:
            cv2.fillPoly(labels, [pts], int(label), cv2.LINE_8, 4)

    def _warp_tex(self, img, labels, tex, alpha, quad_px, label=None):
        """Warp a square texture (``T x T x 3`` float32 linear, alpha ``T x T`` float32) onto the
        quad (``4 x 2`` supersampled px; the texture's corners (0,0), (T,0), (T,T), (0,T))."""
        H, W = img.shape[:2]
        x0, y0 = np.floor(quad_px.min(0)).astype(int) - 1
        x1, y1 = np.ceil(quad_px.max(0)).astype(int) + 2
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(W, x1), min(H, y1)
        if x1 <= x0 or y1 <= y0:
            return
        t = tex.shape[0]
        src = np.float32([[0, 0], [t, 0], [t, t], [0, t]]) - 0.5
        M = cv2.getPerspectiveTransform(src, (quad_px - [x0, y0]).astype(np.float32))
        size = (x1 - x0, y1 - y0)
        warped = cv2.warpPerspective(tex, M, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        a = cv2.warpPerspective(alpha, M, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        roi = img[y0:y1, x0:x1]
        roi[:] = roi * (1 - a[..., None]) + warped * a[..., None]
        if label is not None:
            lab = labels[y0:y1, x0:x1]
            lab[a > 0.5] = label

    def _face_texture(self, rng, body, pip, value, turn, edge_mm, shade_edge):
        """The face's albedo (``T x T x 3`` linear BGR) and its alpha (rounded corners)."""
        t = self.face_px
        s = t / DIE_MM
        tex = np.empty((t, t, 3), np.float32)
        tex[:] = body
        yy, xx = np.mgrid[0:t, 0:t].astype(np.float32)
        u, v = (xx + 0.5) / s - DIE_MM / 2, (yy + 0.5) / s - DIE_MM / 2
        # rounded edge: the bevel turns away from the face's normal: darker (or lighter) towards the border
        d_edge = np.minimum(DIE_MM / 2 - np.abs(u), DIE_MM / 2 - np.abs(v))
        bevel = np.clip(1 - d_edge / edge_mm, 0, 1)
        tex *= (1 + shade_edge * bevel ** 1.5)[..., None]
        for a, b in face_layout(value, turn):
            r = ONE_PIP_MM if value == 1 else PIP_MM
            pa, pb = a * GRID_MM, -b * GRID_MM  # image rows grow downwards: b up is -v
            d = np.hypot(u - pa, v - pb)
            inside = np.clip((r - d) * s + 0.5, 0, 1)
            rim = np.clip(d / r, 0, 1) ** 2
            colour = pip * (1 - 0.45 * rim[..., None]) if pip.mean() > 0.3 else pip * (1 + 0.3 * rim[..., None])
            tex = tex * (1 - inside[..., None]) + colour * inside[..., None]
            if pip.mean() > 0.3:  # light pips: a thin shadow ring
                ring = np.clip(1 - np.abs(d - r - 0.15) * s / 1.2, 0, 1) * 0.35
                tex *= (1 - ring)[..., None]
        rc = edge_mm * 0.9
        cu, cv = np.maximum(np.abs(u) - (DIE_MM / 2 - rc), 0), np.maximum(np.abs(v) - (DIE_MM / 2 - rc), 0)
        alpha = np.clip((rc - np.hypot(cu, cv)) * s + 0.5, 0, 1).astype(np.float32)
        return tex.astype(np.float32), alpha

    # --------------------------------------------------------------- the frame
    def render(self, scene: TrayScene, window: Sequence[int] | None = None
               ) -> tuple[np.ndarray, np.ndarray, list[DieTruth]]:
        """Draw one scene.

        Args:
            scene: what to draw.
            window: ``(x0, y0, x1, y1)`` px of the frame to draw (a crop, faster: the training
                data's dice), or None for the whole frame. The pixel fields of the truth are
                then in the window's pixels.

        Returns:
            ``(frame H x W x 3 uint8 BGR, labels H x W uint8, dice)``: labels 0 table, 1 felt,
            2 tray walls, 10 + k die k, :data:`HAND_LABEL` the hand; ``dice`` the scene's
            :class:`DieTruth` with their pixel fields filled.
        """
        rng = np.random.default_rng(scene.seed)
        geo = scene.geometry
        full = geo.image_size
        offset = (0, 0)
        if window is not None:
            wx0, wy0, wx1, wy1 = (int(v) for v in window)
            K = geo.K.copy()
            K[0, 2] -= wx0
            K[1, 2] -= wy0
            geo = dataclasses.replace(geo, K=K, image_size=(wx1 - wx0, wy1 - wy0))
            offset = (wx0, wy0)
        w, h = geo.image_size
        S = self.ss
        W, H = w * S, h * S
        img = np.zeros((H, W, 3), np.float32)
        labels = np.zeros((H, W), np.uint8)
        cam = geo.camera_centre_mm
        L = scene.light_mm / np.linalg.norm(scene.light_mm)
        kelvin = {"warm": 2700, "daylight": 6500, "dim": rng.uniform(3000, 5000), "glare": rng.uniform(4000, 6000),
                  "mixed": rng.uniform(3200, 5500)}[scene.lighting]
        light_rgb = kelvin_to_bgr(kelvin).astype(np.float32)
        ambient_rgb = kelvin_to_bgr(rng.uniform(5000, 7000) if scene.lighting == "mixed" else kelvin).astype(np.float32)
        key, amb = rng.uniform(0.55, 0.8), rng.uniform(0.25, 0.45)

        def shade(normal) -> np.ndarray:
            n = np.asarray(normal, float)
            return (key * max(0.0, float(n @ L)) * light_rgb + amb * (0.6 + 0.4 * max(0.0, n[2])) * ambient_rgb)

        # table (z = -4): a procedural texture in mm carried by the plane's homography
        self._draw_table(img, labels, geo, scene, rng, shade((0, 0, 1)))
        inner = _tray_outline(scene.shape)
        outer = _tray_outline(scene.shape, WALL_THICK_MM)
        rim = _bgr(RIMS[scene.rim])
        felt = _bgr(FELTS[scene.felt]) * scene.felt_gain
        # outer wall faces that face the camera (the near side), then the floor, the inner walls
        self._walls(img, labels, geo, outer, TABLE_Z, WALL_MM, rim, shade, cam, outward=True)
        self._draw_floor(img, labels, geo, inner, felt, rng, shade((0, 0, 1)))
        # shadows of the dice on the felt
        shadow = np.ones((H, W), np.float32)
        for d in scene.dice:
            corners = d.centre_mm + np.array([[x, y, z] for x in (-8, 8) for y in (-8, 8) for z in (-8, 8)]) @ d.R.T
            s = corners[:, 2:3] / max(1e-3, L[2])
            flat = corners - s * L[None, :]
            hull = cv2.convexHull(self._proj(geo, flat).astype(np.float32))
            cv2.fillPoly(shadow, [np.round(hull * 16).astype(np.int32)], rng.uniform(0.35, 0.6), cv2.LINE_8, 4)
        if scene.hand is not None:
            hp = self._hand_polys(scene.hand)
            for poly, z in hp:
                s = z / max(1e-3, L[2])
                flat = np.column_stack([poly, np.full(len(poly), z)]) - s * L[None, :]
                pts = self._proj(geo, flat)
                cv2.fillPoly(shadow, [np.round(pts * 16).astype(np.int32)], 0.55, cv2.LINE_8, 4)
        k = int(S * 6) | 1
        shadow = cv2.GaussianBlur(shadow, (k, k), S * 2)
        on_floor = (labels == 1)[..., None]
        img = np.where(on_floor, img * shadow[..., None], img)
        self._walls(img, labels, geo, inner, 0.0, WALL_MM, felt * 0.92, shade, cam, outward=False)
        # dice, far to near
        order = sorted(range(len(scene.dice)), key=lambda i: -float(self._depth(geo, scene.dice[i].centre_mm)[0]))
        for i in order:
            self._draw_die(img, labels, geo, scene, scene.dice[i], 10 + i, rng, shade, cam, L, light_rgb)
        # rim top (z = 25), drawn after the dice: near the camera it hides the floor and the dice behind it
        top = np.vstack([np.column_stack([outer, np.full(len(outer), WALL_MM)]),
                         np.column_stack([inner[::-1], np.full(len(inner), WALL_MM)])])
        ring = self._proj(geo, top)
        n = len(outer)
        rim_col = rim * shade((0, 0, 1)) * 1.1
        for j in range(n):
            a, b = j, (j + 1) % n
            quad = np.array([ring[a], ring[b], ring[n + (n - 1 - b)], ring[n + (n - 1 - a)]])
            self._fill(img, labels, quad, rim_col, 2)
        self._walls(img, labels, geo, outer, TABLE_Z, WALL_MM, rim, shade, cam, outward=True)
        if scene.hand is not None:
            self._draw_hand(img, labels, geo, scene, shade)
        frame, labels = self._sensor(img, labels, scene, rng, light_rgb, offset, full)
        self._truth(scene, geo, labels)
        return frame, labels, scene.dice

    def _draw_table(self, img, labels, geo, scene, rng, light):
        H, W = img.shape[:2]
        size = 1000
        mm_per_px = 1.5
        base = {"dark_wood": (80, 52, 36), "oak": (170, 128, 84), "laminate": (228, 226, 220)}[scene.table]
        base = _bgr(base) * rng.uniform(0.85, 1.15)
        tex = np.empty((size // 2, size // 2, 3), np.float32)
        tex[:] = base
        if scene.table != "laminate":
            yy, xx = np.mgrid[0 : size // 2, 0 : size // 2].astype(np.float32)
            plank = np.floor(yy / rng.uniform(60, 120))
            grain = 1 + 0.08 * np.sin(xx / rng.uniform(3, 9) + 3 * np.sin(yy / 17) + plank * 7)
            tone = 1 + 0.12 * np.sin(plank * 12.9898)
            seam = np.where((yy % 90) < 1.5, 0.6, 1.0)
            tex *= (grain * tone * seam)[..., None]
        tex *= (1 + rng.normal(0, 0.03, tex.shape[:2]).astype(np.float32))[..., None]
        tex *= light
        # texture px (i, j) -> world mm (x, y, -4): x = (i - size/4) * 2 mm
        sc = 2 * mm_per_px
        A = np.array([[sc, 0, -size / 4 * sc], [0, sc, -size / 4 * sc], [0, 0, 1.0]])
        Hm = self._plane_h(geo, TABLE_Z) @ A
        cv2.warpPerspective(tex, Hm, (W, H), dst=img, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        labels[:] = 0

    def _plane_h(self, geo, z):
        """Homography of the plane ``z`` (x, y mm) to supersampled px."""
        P = geo.K @ np.column_stack([geo.R[:, 0], geo.R[:, 1], geo.R[:, 2] * z + geo.t])
        Sm = np.array([[self.ss, 0, 0.5 * self.ss - 0.5], [0, self.ss, 0.5 * self.ss - 0.5], [0, 0, 1.0]])
        return Sm @ P

    def _draw_floor(self, img, labels, geo, inner, felt, rng, light):
        H, W = img.shape[:2]
        size = 512  # 0.5 mm a texel over 256 mm
        noise = rng.normal(0, 1, (size // 8, size // 8)).astype(np.float32)
        mottle = cv2.resize(noise, (size, size), interpolation=cv2.INTER_CUBIC) * 0.05
        fibre = rng.normal(0, 0.06, (size, size)).astype(np.float32)
        tex = felt[None, None, :] * (1 + mottle + fibre)[..., None] * light
        A = np.array([[0.5, 0, -128], [0, 0.5, -128], [0, 0, 1.0]])
        Hm = self._plane_h(geo, 0.0) @ A
        warped = cv2.warpPerspective(tex.astype(np.float32), Hm, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        mask = np.zeros((H, W), np.uint8)
        pts = self._proj(geo, np.column_stack([inner, np.zeros(len(inner))]))
        cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
        img[mask > 0] = warped[mask > 0]
        labels[mask > 0] = 1

    def _walls(self, img, labels, geo, outline, z0, z1, colour, shade, cam, outward):
        n = len(outline)
        for j in range(n):
            a, b = outline[j], outline[(j + 1) % n]
            mid = (a + b) / 2
            edge = b - a
            nrm = np.array([edge[1], -edge[0], 0.0])  # outward for a CCW outline
            nrm /= np.linalg.norm(nrm) + 1e-12
            if not outward:
                nrm = -nrm
            if (cam - np.array([mid[0], mid[1], (z0 + z1) / 2])) @ nrm <= 0:
                continue
            quad = np.array([[a[0], a[1], z0], [b[0], b[1], z0], [b[0], b[1], z1], [a[0], a[1], z1]])
            self._fill(img, labels, self._proj(geo, quad), colour * shade(nrm), 2)

    def _draw_die(self, img, labels, geo, scene, d, label, rng, shade, cam, L, light_rgb):
        body_s, pip_s = DIE_COLOURS[d.colour]
        body, pip = _bgr(body_s), _bgr(pip_s)
        edge = float(rng.choice([1.5, 1.75, 2.0]))
        for value, nrm, fa, fb in _FACES:
            n = d.R @ np.array(nrm, float)
            a, b = d.R @ np.array(fa, float), d.R @ np.array(fb, float)
            fc = d.centre_mm + n * DIE_MM / 2
            view = cam - fc
            if view @ n <= 0:
                continue
            hh = DIE_MM / 2
            # texture corners (0,0) (T,0) (T,T) (0,T): (-a,+b) (+a,+b) (+a,-b) (-a,-b)
            corners = np.array([fc - a * hh + b * hh, fc + a * hh + b * hh, fc + a * hh - b * hh, fc - a * hh - b * hh])
            quad = self._proj(geo, corners)
            lit = shade(n).astype(np.float32)
            tex, alpha = self._face_texture(rng, body, pip, value, d.turns[value - 1], edge, -0.35)
            tex = tex * lit
            # glossy highlight: strongest where the mirror direction of the light meets the camera
            v = view / np.linalg.norm(view)
            hv = (L + v) / np.linalg.norm(L + v)
            spec = max(0.0, float(n @ hv)) ** rng.uniform(20, 60)
            t = tex.shape[0]
            gain = 0.25 + scene.glare_gain
            if spec > 0.02:
                yy, xx = np.mgrid[0:t, 0:t].astype(np.float32)
                # where the spot sits on the face: the half vector's offset along the face's axes
                off = np.array([float(hv @ a), -float(hv @ b)]) * t * 0.8 + t / 2
                sig = t * rng.uniform(0.08, 0.22)
                blob = np.exp(-((xx - off[0]) ** 2 + (yy - off[1]) ** 2) / (2 * sig * sig))
                tex = tex + (gain * spec * blob)[..., None] * light_rgb
            tex = tex + 0.02 * gain * light_rgb  # a faint sheen everywhere
            self._warp_tex(img, labels, tex.astype(np.float32), alpha, quad, label)

    def _hand_polys(self, hand):
        x, y, z, yaw, plen, pw = hand
        c, s = math.cos(yaw), math.sin(yaw)
        R2 = np.array([[c, -s], [s, c]])
        a = np.linspace(0, 2 * np.pi, 40, endpoint=False)
        palm = np.column_stack([plen / 2 * np.cos(a), pw / 2 * np.sin(a)]) @ R2.T + [x, y]
        # the arm: from the palm outwards (away from the tray's centre), 300 mm
        arm = np.array([[plen * 0.3, -pw * 0.4], [plen * 0.3 + 300, -pw * 0.45], [plen * 0.3 + 300, pw * 0.45],
                        [plen * 0.3, pw * 0.4]]) @ R2.T + [x, y]
        fingers = []
        for k in range(4):
            off = (k - 1.5) * pw * 0.22
            fingers.append(np.array([[-plen * 0.35, off - 7], [-plen * 0.35 - 55, off - 6], [-plen * 0.35 - 58, off],
                                     [-plen * 0.35 - 55, off + 6], [-plen * 0.35, off + 7]]) @ R2.T + [x, y])
        return [(arm, z + 25), (palm, z)] + [(f, z + 3) for f in fingers]

    def _draw_hand(self, img, labels, geo, scene, shade):
        skin, sleeve = _bgr(scene.skin), _bgr(scene.sleeve)
        polys = self._hand_polys(scene.hand)
        for k, (poly, z) in enumerate(polys):
            col = (sleeve if k == 0 else skin) * shade((0.0, 0.0, 1.0)) * (1.0 if k != 1 else 1.05)
            pts = self._proj(geo, np.column_stack([poly, np.full(len(poly), z)]))
            self._fill(img, labels, pts, col, HAND_LABEL)

    def _sensor(self, img, labels, scene, rng, light_rgb, offset=(0, 0), full=None):
        S = self.ss
        H, W = img.shape[:2]
        # white balance that corrects the light's colour in part
        part = rng.uniform(0.4, 0.9)
        img = img / (light_rgb ** part)[None, None, :]
        expo = rng.uniform(0.8, 1.3) * (rng.uniform(0.25, 0.4) if scene.lighting == "dim" else 1.0)
        gain = 1.0 / max(expo, 0.35) if scene.lighting == "dim" else 1.0
        img = img * expo * gain * rng.uniform(0.85, 1.05)
        FW, FH = (full[0] * S, full[1] * S) if full is not None else (W, H)
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        xx += offset[0] * S
        yy += offset[1] * S
        r2 = ((xx - FW / 2) ** 2 + (yy - FH / 2) ** 2) / (0.8 * FW) ** 2
        img = img * (1 / (1 + r2) ** (scene.vignetting * 2))[..., None]
        if scene.blur > 0:
            k = int(scene.blur * S * 3) * 2 + 1
            img = cv2.GaussianBlur(img, (k, k), scene.blur * S)
        if scene.motion > 0:
            k = max(3, int(scene.motion * S) | 1)
            ker = np.zeros((k, k), np.float32)
            ker[k // 2, :] = 1 / k
            M = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
            ker = cv2.warpAffine(ker, M, (k, k))
            img = cv2.filter2D(img, -1, ker / max(1e-6, ker.sum()))
        w, h = W // S, H // S
        small = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
        lab = cv2.resize(labels, (w, h), interpolation=cv2.INTER_NEAREST)
        out = _lin_to_srgb8(small).astype(np.float32)
        out += rng.normal(0, scene.noise, out.shape).astype(np.float32)
        out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
        _, enc = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg])
        return cv2.imdecode(enc, cv2.IMREAD_COLOR), lab

    def _truth(self, scene: TrayScene, geo: TrayGeometry, labels: np.ndarray) -> None:
        for k, d in enumerate(scene.dice):
            ups = [(float((d.R @ np.array(nv, float))[2]), v, nv, fa, fb) for v, nv, fa, fb in _FACES]
            _, value, nv, fa, fb = max(ups)
            n, a, b = (d.R @ np.array(x, float) for x in (nv, fa, fb))
            fc = d.centre_mm + n * DIE_MM / 2
            hh = DIE_MM / 2
            corners = np.array([fc - a * hh + b * hh, fc + a * hh + b * hh, fc + a * hh - b * hh, fc - a * hh - b * hh])
            d.top_quad_px = geo.project(corners)
            d.top_centre_px = tuple(float(v) for v in geo.project(fc[None])[0])
            pips = [fc + a * (pa * GRID_MM) + b * (pb * GRID_MM) for pa, pb in face_layout(value, d.turns[value - 1])]
            d.top_pips_px = geo.project(np.array(pips))
            ys, xs = np.nonzero(labels == 10 + k)
            d.box = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)) if len(xs) else None
            # the flat part of the top face (12 mm): which of its pixels show this die
            inner = np.array([fc + (a * sa + b * sb) * 6.0 for sa, sb in ((-1, 1), (1, 1), (1, -1), (-1, -1))])
            q = geo.project(inner)
            m = np.zeros(labels.shape, np.uint8)
            cv2.fillPoly(m, [np.round(q * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
            total = int(m.sum())
            d.visible_fraction = float(((labels == 10 + k) & (m > 0)).sum() / total) if total else 0.0
