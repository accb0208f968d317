"""The dice tray's geometry: where the tray's floor is in the camera frame, and the size and
shape in pixels of a die lying anywhere on it.

``companion calibrate tray`` measures the tray once (the four corners of a rectangle of known
size on the tray's floor - the floor itself, or a card laid on it - clicked on a photo from the
camera at its place) and writes it in ``dice-tray.toml``. From the four corners this module
finds the plane's homography (floor millimetres to frame pixels), the camera's focal length
(from the homography, or from the lens's field of view when the camera looks straight down), and
the camera's pose (rotation and translation), so that any point above the floor can be projected:
the top face of a flat die is a 16 mm square **16 mm above the felt** (the die's height), seen
larger than the floor under it and shifted away from the image centre under tilt.

The camera model is OpenCV's pinhole (pixel centres at integers, principal point at the image
centre, square pixels, no distortion: the Pi camera modules' lenses distort by under 1 % of the
tray's size at the distances of a dice tray). World frame as the dice-tray photographs'
README: origin on the floor, x and y on it, z up towards the camera, millimetres.

Public surface: :class:`TrayGeometry` (``from_corners``, ``from_camera``, ``project``,
``die_side_px``, ``flat_die_box_px``, ``face_side_px``, ``die_px_range``, ``roi``, ``floor_mask``, ``wall_band_mask``, ``for_size``,
``too_small``, ``to_toml``, ``from_toml``), :func:`speck_faces` (dice seen only by their pips,
for the reader's finder), :func:`fit_face` (a flat die's pips read on the plane of its top face,
perspective removed, against the six layouts on the standard grid) and :func:`with_face_fit`
(its reading joined to the reader's pips), :data:`DIE_MM`, :data:`MIN_FACE_PX`.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from companion.calibration_checks import check_camera_matrix

__all__ = ["DIE_MM", "MIN_FACE_PX", "SPECK_FACE_SHARE", "FaceFit", "TrayGeometry", "TrayGeometryError",
           "face_centre_in_box", "fit_face", "speck_faces", "with_face_fit"]

#: A standard die's edge (mm): the dice of Carnival and the dice-tray photographs.
DIE_MM = 16.0
#: A die whose top face is narrower than this in the frame (px) is too small to read: its pips
#: are then under about 3 px across (issue 16's readable dice are at least 18 px across).
MIN_FACE_PX = 18.0
#: Below this tilt of the camera (degrees from straight down) its focal length cannot be found
#: from the floor's corners (the two constraints vanish): the lens's field of view is needed.
MIN_TILT_FOR_FOCAL_DEG = 8.0


class TrayGeometryError(ValueError):
    """A tray calibration that cannot be used; the message is one line naming the field and the fix."""


def _rot_ok(r: np.ndarray) -> np.ndarray:
    u, _, vt = np.linalg.svd(r)
    out = u @ vt
    if np.linalg.det(out) < 0:
        u[:, -1] *= -1
        out = u @ vt
    return out


@dataclasses.dataclass(frozen=True)
class TrayGeometry:
    """The camera over the dice tray, as a pinhole camera posed over the tray's floor.

    Attributes:
        K: ``3 x 3 float64`` camera matrix (px).
        R: ``3 x 3 float64`` world-to-camera rotation.
        t: ``3 float64`` world-to-camera translation (mm): ``Xc = R X + t``.
        image_size: ``(width, height)`` px of the frames it holds for.
        floor_mm: ``N x 2 float64`` the floor's outline on z = 0 (mm), where dice can lie.
        die_mm: the dice's edge (mm), default :data:`DIE_MM`.
        focal_from: how the focal length was found (``"homography"``, ``"hfov 62.2 deg"``, ``"given"``).
    """

    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    image_size: tuple[int, int]
    floor_mm: np.ndarray
    die_mm: float = DIE_MM
    focal_from: str = "given"

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_camera(cls, K: Sequence[Sequence[float]], R: Sequence[Sequence[float]], t: Sequence[float],
                    image_size: Sequence[int], floor_mm: Sequence[Sequence[float]], die_mm: float = DIE_MM) -> "TrayGeometry":
        """A geometry from a known camera (``K``, world-to-camera ``R``, ``t`` in mm), e.g. the
        dice-tray photographs' ``truth.json`` ``camera`` record, and the floor's outline (mm)."""
        return cls(np.asarray(K, float), np.asarray(R, float), np.asarray(t, float).reshape(3),
                   (int(image_size[0]), int(image_size[1])), np.asarray(floor_mm, float).reshape(-1, 2),
                   float(die_mm), "given")

    @classmethod
    def from_corners(cls, corners_px: Sequence[Sequence[float]], size_mm: Sequence[float], image_size: Sequence[int],
                     hfov_deg: float | None = None, floor_mm: Sequence[Sequence[float]] | None = None,
                     die_mm: float = DIE_MM) -> "TrayGeometry":
        """The geometry from the four corners of a rectangle on the tray's floor.

        Args:
            corners_px: ``4 x 2`` px, the rectangle's corners in turn around it (either sense;
                the first one any corner). For a tray with rounded corners: where its straight
                edges would meet.
            size_mm: ``(a, b)`` mm, the rectangle's sides: ``a`` from the first corner to the
                second, ``b`` from the second to the third.
            image_size: ``(width, height)`` px of the photo.
            hfov_deg: the lens's horizontal field of view (degrees) at this frame size; None =
                found from the corners (possible only when the camera is tilted at least
                :data:`MIN_TILT_FOR_FOCAL_DEG`).
            floor_mm: the floor's outline (mm, in the rectangle's frame: origin at its centre, x
                along its first side); default the rectangle itself.
            die_mm: the dice's edge (mm).

        Raises:
            TrayGeometryError: corners not four distinct points of a convex quadrilateral, sizes
                not positive, the focal length not found (one line: give ``--hfov-deg``), or no
                camera above the floor that maps the rectangle onto the corners within 2 % of their
                spread (sides swapped, corners mistyped, a degenerate focal length: one line naming
                ``--size-mm`` and ``--hfov-deg``). Corners in either turning sense give the same
                camera; in one of the two senses the frame (and ``floor_mm``) is mirrored, y to -y.
        """
        import cv2

        pts = np.asarray(corners_px, float)
        if pts.shape != (4, 2) or not np.isfinite(pts).all():
            raise TrayGeometryError(f"corners: expected four x,y points in pixels, got {corners_px!r}")
        a, b = (float(v) for v in size_mm)
        if not (a > 0 and b > 0):
            raise TrayGeometryError(f"size: expected two sides in mm > 0, got {size_mm!r}")
        w, h = (int(v) for v in image_size)
        def turn(i: int) -> float:
            u, v = pts[(i + 1) % 4] - pts[i], pts[(i + 2) % 4] - pts[(i + 1) % 4]
            return float(u[0] * v[1] - u[1] * v[0])

        cross = [turn(i) for i in range(4)]
        if not (all(c > 0 for c in cross) or all(c < 0 for c in cross)):
            raise TrayGeometryError("corners: the four points are not the corners of a convex quadrilateral "
                                    "in turn around it (give them clockwise or counter-clockwise)")
        world = np.float64([[-a / 2, -b / 2], [a / 2, -b / 2], [a / 2, b / 2], [-a / 2, b / 2]])
        H = cv2.getPerspectiveTransform(world.astype(np.float32), pts.astype(np.float32)).astype(np.float64)
        cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
        Hc = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], float) @ H
        if hfov_deg is not None:
            if not 10 <= hfov_deg <= 170:
                raise TrayGeometryError(f"hfov: expected degrees from 10 to 170, got {hfov_deg}")
            f = (w / 2.0) / math.tan(math.radians(hfov_deg) / 2)
            how = f"hfov {hfov_deg:g} deg"
        else:
            f = _focal_from_homography(Hc)
            how = "homography"
            if f is None:
                raise TrayGeometryError(
                    "the camera looks almost straight down on the tray: its focal length cannot be found from "
                    "the corners; give the lens's field of view (--hfov-deg; Pi Camera Module 3: 66, v2: 62.2, "
                    "HQ with the 6 mm lens: 63)")
        K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]], float)
        R, t = _pose(H, K)
        # The camera must be above the floor (z up towards it). Corners given in the other
        # turning sense describe the floor's frame seen from below: mirror the frame (y to -y,
        # the rectangle's corners and the outline with it) and find the pose again. (Mirroring
        # the rotation alone leaves a pose that does not map the corners where they were clicked.)
        mirrored = (-R.T @ t)[2] < 0
        if mirrored:
            world = world * np.array([1.0, -1.0])
            H = cv2.getPerspectiveTransform(world.astype(np.float32), pts.astype(np.float32)).astype(np.float64)
            R, t = _pose(H, K)
        # refine R, t on the four corners (the SVD's orthogonalisation moved them a little)
        ok, rvec, tvec = cv2.solvePnP(np.column_stack([world, np.zeros(4)]), pts, K, None,
                                      cv2.Rodrigues(R)[0], t.reshape(3, 1), True, cv2.SOLVEPNP_ITERATIVE)
        if ok:
            R2, t2 = cv2.Rodrigues(rvec)[0], tvec.reshape(3)
            if (-R2.T @ t2)[2] > 0:
                R, t = R2, t2
        height = float((-R.T @ t)[2])
        back = _project(K, R, t, np.column_stack([world, np.zeros(4)]))
        err = float(np.max(np.hypot(*(back - pts).T)))
        if not (height > die_mm and err < max(2.0, 0.02 * float(np.ptp(pts, 0).max()))):
            raise TrayGeometryError(
                f"corners: no camera above the floor sees this {a:g} x {b:g} mm rectangle there (focal length from "
                f"the {how}): check the corners and --size-mm (first side first), or give the lens's field of "
                f"view (--hfov-deg; Pi Camera Module 3: 66, v2: 62.2)")
        outline = np.asarray(floor_mm, float).reshape(-1, 2) if floor_mm is not None else world
        if mirrored and floor_mm is not None:
            outline = outline * np.array([1.0, -1.0])
        return cls(K, R, np.asarray(t, float).reshape(3), (w, h), outline, float(die_mm), how)

    # ------------------------------------------------------------------ projection
    @property
    def camera_centre_mm(self) -> np.ndarray:
        """``3 float64``: the camera's centre in the tray's frame (mm); z is its height over the floor."""
        return -self.R.T @ self.t

    @property
    def tilt_deg(self) -> float:
        """The camera's tilt from straight down (degrees)."""
        axis = self.R.T @ np.array([0.0, 0.0, 1.0])  # the optical axis in the world
        return float(math.degrees(math.acos(max(-1.0, min(1.0, -axis[2])))))

    def project(self, points_mm: np.ndarray) -> np.ndarray:
        """``N x 3`` world points (mm) to ``N x 2`` frame pixels (float64)."""
        p = np.asarray(points_mm, float).reshape(-1, 3)
        c = p @ self.R.T + self.t
        uv = c @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    def to_plane(self, px: np.ndarray, z_mm: float) -> np.ndarray:
        """``N x 2`` frame pixels to ``N x 2`` (x, y) mm on the plane ``z = z_mm`` they see."""
        uv = np.column_stack([np.asarray(px, float).reshape(-1, 2), np.ones(len(np.asarray(px).reshape(-1, 2)))])
        rays = (np.linalg.inv(self.K) @ uv.T).T @ self.R  # directions in the world
        c = self.camera_centre_mm
        s = (z_mm - c[2]) / rays[:, 2]
        return (c + rays * s[:, None])[:, :2]

    def _cube(self, xy_mm: np.ndarray, yaw_rad: float) -> np.ndarray:
        """``N x 8 x 3``: corners of flat dice centred at ``xy_mm`` (N x 2), turned by ``yaw``."""
        h = self.die_mm / 2
        c, s = math.cos(yaw_rad), math.sin(yaw_rad)
        local = np.array([[x, y] for x in (-h, h) for y in (-h, h)])
        turned = local @ np.array([[c, s], [-s, c]])
        out = np.zeros((len(xy_mm), 8, 3))
        for k, z in enumerate((0.0, self.die_mm)):
            out[:, 4 * k : 4 * k + 4, :2] = xy_mm[:, None, :] + turned[None]
            out[:, 4 * k : 4 * k + 4, 2] = z
        return out

    def die_side_px(self, centre_px: Sequence[float], yaw_deg: float = 45.0) -> float:
        """The larger side (px) of the bounding box of a flat die whose top face is centred at
        ``centre_px`` (its whole body, side faces included), turned by ``yaw_deg`` (45 = the largest box)."""
        xy = self.to_plane(np.asarray(centre_px, float)[None], self.die_mm)
        uv = self.project(self._cube(xy, math.radians(yaw_deg)).reshape(-1, 3))
        return float(max(np.ptp(uv[:, 0]), np.ptp(uv[:, 1])))

    def flat_die_box_px(self, centre_px: Sequence[float]) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` px: the box holding a flat die whose top face is centred at
        ``centre_px`` at any yaw (its whole body, side faces included; the union over yaws 0-90
        degrees in 15 degree steps)."""
        xy = self.to_plane(np.asarray(centre_px, float)[None], self.die_mm)
        uv = np.vstack([self.project(self._cube(xy, math.radians(a)).reshape(-1, 3)) for a in range(0, 90, 15)])
        return float(uv[:, 0].min()), float(uv[:, 1].min()), float(uv[:, 0].max()), float(uv[:, 1].max())

    def face_side_px(self, centre_px: Sequence[float]) -> float:
        """The top face's side (px, the square root of its projected area) of a flat die whose
        top face is centred at ``centre_px``."""
        xy = self.to_plane(np.asarray(centre_px, float)[None], self.die_mm)
        top = self._cube(xy, 0.0)[0, 4:][[0, 1, 3, 2]]
        uv = self.project(top)
        x, y = uv[:, 0], uv[:, 1]
        area = 0.5 * abs(float(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))))
        return math.sqrt(area)

    def face_quad_px(self, centre_px: Sequence[float], yaw_deg: float) -> np.ndarray:
        """``4 x 2`` px: the top face's corners of a flat die centred (top face) at ``centre_px``,
        turned by ``yaw_deg``, in turn around it."""
        xy = self.to_plane(np.asarray(centre_px, float)[None], self.die_mm)
        return self.project(self._cube(xy, math.radians(yaw_deg))[0, 4:][[0, 1, 3, 2]])

    def _floor_samples(self, step_mm: float = 10.0) -> np.ndarray:
        """Points (mm) on the floor where a die's centre can lie (inside the outline, half a die in)."""
        import cv2

        poly = self.floor_mm.astype(np.float32)
        lo, hi = poly.min(0), poly.max(0)
        xs = np.arange(lo[0], hi[0] + 1e-9, step_mm)
        ys = np.arange(lo[1], hi[1] + 1e-9, step_mm)
        pts = np.array([(x, y) for x in xs for y in ys], float)
        keep = [cv2.pointPolygonTest(poly, (float(x), float(y)), True) >= self.die_mm / 2 for x, y in pts]
        pts = pts[np.array(keep, bool)] if any(keep) else poly.mean(0)[None].astype(float)
        return pts

    def _in_frame(self, uv: np.ndarray) -> np.ndarray:
        w, h = self.image_size
        return (uv[:, 0] >= 0) & (uv[:, 0] <= w - 1) & (uv[:, 1] >= 0) & (uv[:, 1] <= h - 1)

    def die_px_range(self) -> tuple[float, float]:
        """``(smallest, largest)`` px: from a flat die's top face side (:meth:`face_px_range`) at
        the farthest place to its whole body's bounding box (side faces included, at the worst
        turn) at the nearest, over the floor (in the frame)."""
        xy = self._floor_samples()
        top_c = self.project(np.column_stack([xy, np.full(len(xy), self.die_mm)]))
        inside = self._in_frame(top_c)
        xy = xy[inside] if inside.any() else xy
        hi = 0.0
        for yaw in np.radians([0.0, 22.5, 45.0, 67.5]):
            box = self.project(self._cube(xy, float(yaw)).reshape(-1, 3)).reshape(-1, 8, 2)
            hi = max(hi, float(np.max(np.maximum(np.ptp(box[..., 0], 1), np.ptp(box[..., 1], 1)))))
        return self.face_px_range()[0], hi

    def face_px_range(self) -> tuple[float, float]:
        """``(smallest, largest)`` px: a flat die's top face side (:meth:`face_side_px`) over the floor."""
        xy = self._floor_samples()
        uv = self.project(np.column_stack([xy, np.full(len(xy), self.die_mm)]))
        inside = self._in_frame(uv)
        uv = uv[inside] if inside.any() else uv
        sides = [self.face_side_px(p) for p in uv]
        return float(min(sides)), float(max(sides))

    def too_small(self, min_face_px: float = MIN_FACE_PX) -> str:
        """``""`` when a flat die's top face is at least ``min_face_px`` across everywhere on the
        floor, else one line saying where it is not and what gives more pixels."""
        lo, hi = self.face_px_range()
        if lo >= min_face_px:
            return ""
        w, h = self.image_size
        k = min_face_px / lo
        need = f"{int(math.ceil(w * k / 32) * 32)} x {int(math.ceil(h * k / 32) * 32)}"
        where = "anywhere in the tray" if hi < min_face_px else "in part of the tray"
        return (f"the dice are too small to read {where}: a die's top face is {lo:.0f}-{hi:.0f} px across in "
                f"{w} x {h} px frames and the reader needs {min_face_px:.0f} px; lower the camera, or give more "
                f"pixels ([camera] width/height about {need}, the same aspect; the calibration scales with it)")

    def roi(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` whole px: the frame's box around the floor and a die's height
        above it (where a die on the floor can be seen), inside the frame."""
        pts = self._outline(0.0)
        pts = np.vstack([pts, self._outline(self.die_mm)])
        w, h = self.image_size
        margin = 0.5 * self.die_px_range()[1]
        x0 = int(max(0, math.floor(pts[:, 0].min() - margin)))
        y0 = int(max(0, math.floor(pts[:, 1].min() - margin)))
        x1 = int(min(w, math.ceil(pts[:, 0].max() + margin) + 1))
        y1 = int(min(h, math.ceil(pts[:, 1].max() + margin) + 1))
        if x1 <= x0 or y1 <= y0:
            raise TrayGeometryError(f"the tray's floor does not lie in the {w} x {h} px frame: calibrate it again "
                                    "(companion calibrate tray)")
        return x0, y0, x1, y1

    def _outline(self, z_mm: float) -> np.ndarray:
        poly = self.floor_mm
        return self.project(np.column_stack([poly, np.full(len(poly), z_mm)]))

    def floor_mask(self, roi: Sequence[int] | None = None) -> np.ndarray:
        """``h x w uint8`` 0/1 over ``roi`` (default :meth:`roi`): where a die lying on the floor
        can show (the floor's outline and its copy a die's height up, joined, grown by a third
        of a die)."""
        import cv2

        x0, y0, x1, y1 = roi if roi is not None else self.roi()
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        pts = np.vstack([self._outline(0.0), self._outline(self.die_mm)]) - [x0, y0]
        hull = cv2.convexHull(np.round(pts).astype(np.int32))
        cv2.fillConvexPoly(mask, hull, 1)
        grow = int(round(self.die_px_range()[1] / 3)) | 1
        return cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grow, grow)))

    def wall_band_mask(self, roi: Sequence[int], width_mm: float) -> np.ndarray:
        """``h x w uint8`` 0/1 over ``roi`` ``(x0, y0, x1, y1)`` px: where the frame shows no
        floor at least ``width_mm`` inside the tray's wall (the floor's outline inset by that
        much on the floor plane, z = 0, projected; everything outside it is 1): the band along
        the wall where the wall's shading and its foot lie.

        Raises:
            ValueError: ``width_mm`` is negative.
        """
        import cv2

        if not width_mm >= 0:
            raise ValueError(f"width_mm: expected >= 0 mm, got {width_mm!r}")
        x0, y0, x1, y1 = (int(v) for v in roi)
        scale = 2.0  # px a mm of the floor's raster
        lo = self.floor_mm.min(0) - 1.0
        size = np.ceil((self.floor_mm.max(0) + 1.0 - lo) * scale).astype(int) + 1
        floor = np.zeros((size[1], size[0]), np.uint8)
        cv2.fillPoly(floor, [np.round((self.floor_mm - lo) * scale).astype(np.int32)], 1)
        inner = (cv2.distanceTransform(floor, cv2.DIST_L2, 5) > width_mm * scale).astype(np.uint8)
        out = np.ones((y1 - y0, x1 - x0), np.uint8)
        contours, _ = cv2.findContours(inner, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for c in contours:
            mm = c.reshape(-1, 2) / scale + lo
            px = self.project(np.column_stack([mm, np.zeros(len(mm))])) - [x0, y0]
            cv2.fillPoly(out, [np.round(px).astype(np.int32)], 0)
        return out

    def for_size(self, image_size: Sequence[int]) -> "TrayGeometry":
        """The same camera giving frames of another size with the same aspect (the sensor mode
        scaled: a higher resolution for more pixels per die).

        Raises:
            TrayGeometryError: the aspect ratio differs (a crop, not a scale: calibrate again).
        """
        w, h = (int(v) for v in image_size)
        w0, h0 = self.image_size
        if (w, h) == (w0, h0):
            return self
        if abs(w / h - w0 / h0) > 0.01:
            raise TrayGeometryError(
                f"the tray was calibrated on {w0} x {h0} px frames and the camera gives {w} x {h} (another shape): "
                "calibrate it again on a frame of this camera (companion calibrate tray)")
        s = w / w0
        K = self.K.copy()
        K[0, 0] *= s
        K[1, 1] *= s
        K[0, 2] = (K[0, 2] + 0.5) * s - 0.5
        K[1, 2] = (K[1, 2] + 0.5) * s - 0.5
        return dataclasses.replace(self, K=K, image_size=(w, h))

    # ------------------------------------------------------------------ the file
    def to_toml(self, image: str = "", corners_px: Sequence[Sequence[float]] | None = None,
                size_mm: Sequence[float] | None = None) -> str:
        """The ``[geometry]`` part of ``dice-tray.toml`` (read back by :meth:`from_toml`), with
        the ``box`` and ``image_size`` keys that older readers of the file use."""
        x0, y0, x1, y1 = self.roi()
        w, h = self.image_size
        name = str(image).replace("\\", "\\\\").replace('"', '\\"')

        def row(v: Sequence[float]) -> str:
            return "[" + ", ".join(f"{float(x):.6g}" for x in v) + "]"

        lines = [
            "# The dice tray seen by the dice camera (companion calibrate tray).",
            "# box: the frame's region the reader reads (around the floor); the [geometry] gives a die's",
            "# size and shape in pixels anywhere on the floor. A frame of another shape needs a new calibration.",
            f"box = [{x0}, {y0}, {x1}, {y1}]    # x0, y0, x1, y1: pixels",
            f"image_size = [{w}, {h}]    # width, height: pixels of the frame it was made on",
            f'image = "{name}"',
            "",
            "[geometry]",
            f"die_mm = {self.die_mm:g}    # the dice's edge",
            f'focal_from = "{self.focal_from}"',
            f"K = [{row(self.K[0])}, {row(self.K[1])}, {row(self.K[2])}]    # camera matrix, px",
            f"R = [{row(self.R[0])}, {row(self.R[1])}, {row(self.R[2])}]    # world (tray, mm) to camera",
            f"t = {row(self.t)}    # mm",
            "floor_mm = [" + ", ".join(row(p) for p in self.floor_mm) + "]    # the floor's outline, z = 0",
        ]
        if corners_px is not None:
            lines.append("corners_px = [" + ", ".join(row(p) for p in corners_px) + "]    # as clicked")
        if size_mm is not None:
            lines.append(f"size_mm = {row(size_mm)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_toml(cls, path: str | Path) -> "TrayGeometry | None":
        """The geometry of a ``dice-tray.toml``; None when the file has no ``[geometry]`` (a box only).

        Raises:
            TrayGeometryError: unreadable, not TOML, or a field of ``[geometry]`` ill-formed
                (one line naming the file, the field and the fix).
        """
        p = Path(path)
        try:
            doc = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise TrayGeometryError(f"{p}: cannot read the tray calibration ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise TrayGeometryError(f"{p}: not valid TOML ({exc}); write it again with companion calibrate tray") from None
        g = doc.get("geometry")
        if g is None:
            return None
        fix = "write it again with companion calibrate tray IMAGE --corners ... --size-mm ..."

        def arr(key: str, shape: tuple[int, ...] | None) -> np.ndarray:
            try:
                v = np.asarray(g[key], float)
            except KeyError:
                raise TrayGeometryError(f"{p}: [geometry] {key} is missing; {fix}") from None
            except (TypeError, ValueError):
                raise TrayGeometryError(f"{p}: [geometry] {key}: expected numbers; {fix}") from None
            if (shape is not None and v.shape != shape) or not np.isfinite(v).all():
                raise TrayGeometryError(f"{p}: [geometry] {key}: expected a {' x '.join(map(str, shape or ()))} array of "
                                        f"numbers; {fix}")
            return v

        K, R, t = arr("K", (3, 3)), arr("R", (3, 3)), arr("t", (3,))
        floor = arr("floor_mm", None)
        if floor.ndim != 2 or floor.shape[1] != 2 or len(floor) < 3:
            raise TrayGeometryError(f"{p}: [geometry] floor_mm: expected at least three [x, y] points (mm); {fix}")
        size = doc.get("image_size")
        if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
            raise TrayGeometryError(f"{p}: image_size: expected [width, height] in pixels; {fix}")
        check_camera_matrix(p, "[geometry] K", K, size, error=TrayGeometryError)
        die = g.get("die_mm", DIE_MM)
        if not (isinstance(die, (int, float)) and 4 <= die <= 60):
            raise TrayGeometryError(f"{p}: [geometry] die_mm: expected the dice's edge in mm (4-60), got {die!r}")
        if abs(np.linalg.det(R) - 1) > 1e-3 or not np.allclose(R @ R.T, np.eye(3), atol=1e-3):
            raise TrayGeometryError(f"{p}: [geometry] R: not a rotation; {fix}")
        x, y = floor[:, 0], floor[:, 1]
        if not 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))) > 0:
            raise TrayGeometryError(f"{p}: [geometry] floor_mm: expected an outline of area above 0 mm2, got "
                                    f"{floor.tolist()!r}; {fix}")
        geo = cls(K, R, t, (size[0], size[1]), floor, float(die), str(g.get("focal_from", "given")))
        if geo.camera_centre_mm[2] <= geo.die_mm:
            raise TrayGeometryError(f"{p}: [geometry]: the camera is not above the tray; {fix}")
        return geo


#: A group of foreground specks no wider than this share of a die's top face there (its pips,
#: joined) is one die's face: the pips of a die coloured like the felt (red on burgundy, black
#: or blue on navy) that show no die region around them.
SPECK_FACE_SHARE = 1.1
#: Dice are at least this many die sides apart, centre to centre (as the reader's search keeps them).
SPECK_SPACING = 0.7


def speck_faces(raw_at, groups: Sequence[Sequence[float]], taken: Sequence[Sequence[float]],
                geometry: TrayGeometry) -> list[tuple[float, float, float, float]]:
    """Boxes of dice seen only by their pips: for each group of foreground specks (``groups``,
    frame px boxes around the specks joined by a dilation, as the reader's leftovers) whose
    specks span no more than :data:`SPECK_FACE_SHARE` of a die's top face there, a square of
    the die's side at that place (the mean of its box at yaws 0 and 45 degrees) centred on the
    specks' centroid (the pips of every face are centred on it), unless a die already found
    (``taken``) lies within :data:`SPECK_SPACING` dice.

    The boxes go to the reader's two readers like any other: a value still needs the pips read
    on a flat face and the classifier's vote for the same value, and a box that neither sees as
    a die is dropped.

    Args:
        raw_at: ``(mask h x w uint8 0/1, x0, y0)``: the raw foreground of the region of interest
            and its origin in the frame.
        groups: ``(x0, y0, x1, y1)`` frame px per group of specks.
        taken: boxes of the dice already found.
        geometry: the tray's geometry (a die's size anywhere on the floor).

    Returns:
        ``(x0, y0, x1, y1)`` frame px per die found this way.
    """
    raw, ox, oy = raw_at
    h, w = raw.shape
    out: list[tuple[float, float, float, float]] = []
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in taken]
    for gx0, gy0, gx1, gy1 in groups:
        ax0, ay0 = max(0, int(gx0 - ox)), max(0, int(gy0 - oy))
        ax1, ay1 = min(w, int(math.ceil(gx1 - ox))), min(h, int(math.ceil(gy1 - oy)))
        if ax1 <= ax0 or ay1 <= ay0:
            continue
        ys, xs = np.nonzero(raw[ay0:ay1, ax0:ax1])
        if len(xs) < 3:
            continue
        cx, cy = float(xs.mean() + ax0 + ox), float(ys.mean() + ay0 + oy)
        face = geometry.face_side_px((cx, cy))
        if max(np.ptp(xs), np.ptp(ys)) + 1 > SPECK_FACE_SHARE * face:
            continue  # wider than one face: two dice, a hand's edge, texture
        side = 0.5 * (geometry.die_side_px((cx, cy), 0.0) + geometry.die_side_px((cx, cy), 45.0))
        if any(math.hypot(cx - px, cy - py) < SPECK_SPACING * side for px, py in centres):
            continue
        out.append((cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2))
        centres.append((cx, cy))
    return out


#: A pip's centre as the pip readers find it is within this many px of the true one (pips 3-6 px
#: across on the 14-38 px dice of a tray seen from 350-600 mm: the flat faces of the dice-tray
#: photographs' pips lie within 0.3 mm, about 0.4 px, of their layout's spread).
PIP_PX_ERR = 0.5


def pips_fit_flat_face(geometry: TrayGeometry, pips_px: Sequence[np.ndarray], px_err: float = PIP_PX_ERR) -> bool:
    """Could the pips be pips of a flat die, some of them unseen? Each crop's pip centres
    (``n x 2`` float, frame px), taken to the plane of a flat die's top face (a die's height
    above the floor), must lie, each within ``2 px_err`` px (in mm there: the frame's scale at
    the pips) of its own place, on the 3 x 3 grid of pip places of a ``die_mm`` square
    (places :data:`~companion.readers.dice.PIP_GRID_SHARE` of the edge from the centre) at some
    turn (1 degree steps) and shift. Pips that fit are no evidence the die is cocked, whatever
    their count (two of a five's pips, a one and a spot of glare on its face); pips that fit
    nowhere (their spacing not the grid's: a face foreshortened by a tilt, pips of two faces, a
    pattern wider than the face) are. A crop with fewer than two pips fits. Returns True when
    every crop fits.
    """
    from companion.readers.dice import PIP_GRID_SHARE

    u = PIP_GRID_SHARE * geometry.die_mm
    g = np.array([(x, y) for y in (-1, 0, 1) for x in (-1, 0, 1)], float) * u  # 9 x 2 places, mm
    th = np.deg2rad(np.arange(90.0))
    c, s = np.cos(th), np.sin(th)
    rot = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # T x 2 x 2
    for pts in pips_px:
        pts = np.asarray(pts, float).reshape(-1, 2)
        n = len(pts)
        if n < 2:
            continue
        if n > 9:
            return False
        centre = pts.mean(0)
        mm = geometry.to_plane(np.vstack([pts, centre + [1.0, 0.0], centre - [1.0, 0.0]]), geometry.die_mm)
        mm_per_px = float(np.linalg.norm(mm[n] - mm[n + 1])) / 2.0
        tol = 2 * px_err * mm_per_px
        p = mm[:n] - mm[:n].mean(0)
        q = np.einsum("tij,nj->tni", rot, p)  # T x n x 2: the pips turned
        # each turn and each place for the first pip: the others' nearest places
        shifted = q[:, None] + (g[None, :, None] - q[:, None, :1])  # T x 9 x n x 2
        d = np.linalg.norm(shifted[..., None, :] - g, axis=-1)  # T x 9 x n x 9
        near = d.argmin(-1)
        ref = g[near] - q[:, None]  # the shift that puts each pip on its place
        shift = ref.mean(2, keepdims=True)
        res = np.linalg.norm(q[:, None] + shift - g[near], axis=-1).max(-1)  # T x 9
        ordered = np.sort(near, axis=-1)
        distinct = np.all(ordered[..., 1:] != ordered[..., :-1], axis=-1)  # no two pips on one place
        if not np.any((res <= tol) & distinct):
            return False
    return True


#: The face fitter's view: the plane of a flat die's top face resampled at this many px a mm,
#: over a square this many mm wide around the face's centre.
FIT_PX_PER_MM = 3.0
FIT_SPAN_MM = 26.0
#: The pips' grid (mm from the face's centre) and their diameter (mm): standard 16 mm dice
#: (the dice-tray photographs' README: 4.3 mm, 2.9 mm; most real dice 4-4.5 mm, 2.5-3.2 mm).
PIP_GRID_MM = 4.3
PIP_MM = 2.9
#: A value is read when its pips' weakest evidence exceeds the strongest empty place's by this
#: share of the pips' median evidence, and the next-best value's margin is below this share of it.
FIT_MARGIN = 0.3
FIT_SECOND = 0.5
#: The face's centre is searched this far (mm) around the one given, and its yaw over 90 degrees
#: in this many steps.
FIT_SHIFT_MM = 3.0
FIT_YAWS = 30
#: The dense check: the face's flat part (mm, a square), the disc (mm, radius) around each pip
#: left out of it, and the least evidence (OpenCV 8-bit Lab units) a pip must show.
FIT_FLAT_MM = 11.0
FIT_CLEAR_MM = 2.3
FIT_MIN_EVIDENCE = 6.0
#: Each pip's place is then refined to its evidence's centroid within this radius (mm).
FIT_REFINE_MM = 1.8

_LAYOUTS = {
    1: [((0, 0),)],
    2: [((-1, -1), (1, 1)), ((-1, 1), (1, -1))],
    3: [((-1, -1), (0, 0), (1, 1)), ((-1, 1), (0, 0), (1, -1))],
    4: [((-1, -1), (-1, 1), (1, -1), (1, 1))],
    5: [((-1, -1), (-1, 1), (1, -1), (1, 1), (0, 0))],
    6: [((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)), ((-1, -1), (0, -1), (1, -1), (-1, 1), (0, 1), (1, 1))],
}
_PLACES = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]


@dataclasses.dataclass(frozen=True)
class FaceFit:
    """The pips of a flat die's top face fitted on the plane of that face.

    Attributes:
        value: 1-6, or None when no value stands out.
        reason: why not (empty with a value).
        centre_px: ``(x, y)`` frame px of the fitted face's centre.
        pips_px: ``n x 2`` frame px of the value's pips, each where its evidence is (the
            centroid near its place on the fitted grid); ``0 x 2`` without a value.
        margin: the value's margin (its weakest pip's evidence less the strongest empty place's,
            as a share of its pips' median evidence); ``second`` the same for the best other value.
    """

    value: int | None
    reason: str
    centre_px: tuple[float, float]
    pips_px: np.ndarray
    margin: float
    second: float


def _dense_margin(ev: np.ndarray, cen: np.ndarray, rot: np.ndarray, lay, g: float, scale_ab, s: float):
    """A layout's margin at one pose of the fitter's patch: its pips' weakest evidence less the
    strongest anywhere else on the face's flat part (:data:`FIT_FLAT_MM` square, discs of
    :data:`FIT_CLEAR_MM` around the pips left out), over the pips' median evidence; the grid
    scaled by ``scale_ab`` along the face's axes. Returns ``(margin, pips n x 2 patch px)``."""
    import cv2

    n = ev.shape[0]
    sab = np.asarray(scale_ab, float)
    pips = cen + (np.array(lay, float) * sab) @ rot.T * g
    xi = np.clip(np.round(pips[:, 0]).astype(int), 0, n - 1)
    yi = np.clip(np.round(pips[:, 1]).astype(int), 0, n - 1)
    on_e = ev[yi, xi]
    half = FIT_FLAT_MM / 2 * s
    sq = cen + (np.array([[-half, -half], [half, -half], [half, half], [-half, half]]) * sab) @ rot.T
    mask = np.zeros((n, n), np.uint8)
    cv2.fillConvexPoly(mask, np.round(sq).astype(np.int32), 1)
    for x, y in pips:
        cv2.circle(mask, (int(round(x)), int(round(y))), int(round(FIT_CLEAR_MM * s)), 0, -1)
    rest = float(ev[mask > 0].max()) if mask.any() else 0.0
    med = float(np.median(on_e))
    if med < FIT_MIN_EVIDENCE:
        return -1.0, pips
    return (float(on_e.min()) - rest) / max(med, 1e-6), pips


def fit_face(frame: np.ndarray, geometry: TrayGeometry, centre_px: Sequence[float]) -> FaceFit:
    """Read a flat die's top face by its pips, on the plane of that face.

    The frame around ``centre_px`` is resampled onto the plane a die's height above the floor
    (``FIT_PX_PER_MM`` px a mm: perspective removed, the face a 16 mm square at any place in the
    tray); the pip evidence is each pixel's CIE Lab distance from the median of its 8 mm
    neighbourhood (pips of any colour), averaged over a pip's disc. Over face centres within
    :data:`FIT_SHIFT_MM` of the given one and yaws over 90 degrees, the evidence at the nine
    places of the pips' grid (:data:`PIP_GRID_MM` apart) is compared with each face's layout
    (the two turns of a 2, 3 and 6): a face's margin is its weakest pip less the strongest of
    the places it leaves empty. The best value is read when its margin is at least
    :data:`FIT_MARGIN` of its pips' median evidence and no other value comes within
    :data:`FIT_SECOND` of that (else ``None``: "two faces fit", "no face stands out").

    A die that does not lie flat shows its pips off this plane's grid: it rarely fits (its
    value is then None; the reader's flatness test calls it cocked).

    Args:
        frame: ``H x W x 3 uint8`` BGR.
        geometry: the tray's geometry (the frame's size).
        centre_px: ``(x, y)`` frame px, about the top face's centre (within a few mm).

    Returns:
        :class:`FaceFit`.
    """
    import cv2

    s = FIT_PX_PER_MM
    n = int(round(FIT_SPAN_MM * s))
    c_mm = geometry.to_plane(np.asarray(centre_px, float)[None], geometry.die_mm)[0]
    # plane (mm, z = die height) -> frame px, and the patch's px -> plane mm
    P = geometry.K @ np.column_stack([geometry.R[:, 0], geometry.R[:, 1], geometry.R[:, 2] * geometry.die_mm + geometry.t])
    A = np.array([[1 / s, 0, c_mm[0] - (n - 1) / (2 * s)], [0, -1 / s, c_mm[1] + (n - 1) / (2 * s)], [0, 0, 1.0]])
    H = P @ A  # patch px -> frame px (patch rows go down = plane y up: not mirrored)
    patch = cv2.warpPerspective(frame, H, (n, n), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB)
    k = int(round(8 * s)) | 1
    body = cv2.medianBlur(lab, k)
    ev = np.linalg.norm(lab.astype(np.float32) - body.astype(np.float32), axis=2)
    r = max(1, int(round(0.35 * PIP_MM * s)))
    ev = cv2.blur(ev, (2 * r + 1, 2 * r + 1))
    g = PIP_GRID_MM * s
    mid = (n - 1) / 2
    shifts = np.arange(-FIT_SHIFT_MM, FIT_SHIFT_MM + 1e-9, 0.5) * s
    yaws = np.arange(FIT_YAWS) * (np.pi / 2 / FIT_YAWS)
    places = np.array(_PLACES, float)  # 9 x 2 (a, b)
    # every pose: 9 places' coordinates in the patch
    cs, sn = np.cos(yaws), np.sin(yaws)
    rot = np.stack([np.stack([cs, -sn], -1), np.stack([sn, cs], -1)], -2)  # Y x 2 x 2
    offs = places @ rot.transpose(0, 2, 1) * g  # Y x 9 x 2
    dx, dy = np.meshgrid(shifts, shifts, indexing="ij")
    centres = np.column_stack([dx.ravel(), dy.ravel()]) + mid  # C x 2
    pts = centres[:, None, None, :] + offs[None]  # C x Y x 9 x 2
    xi = np.clip(np.round(pts[..., 0]).astype(int), 0, n - 1)
    yi = np.clip(np.round(pts[..., 1]).astype(int), 0, n - 1)
    e = ev[yi, xi].reshape(-1, 9)  # poses x 9
    best: dict[tuple, tuple[float, int]] = {}
    for value, layouts in _LAYOUTS.items():
        for lay in layouts:
            on = np.array([_PLACES.index(p) for p in lay])
            off = np.array([j for j in range(9) if j not in on])
            e_on, e_off = e[:, on], e[:, off]
            med = e_on.mean(axis=1)  # (the pose search: the mean, quicker than the median)
            m = (e_on.min(axis=1) - e_off.max(axis=1)) / np.maximum(med, 1e-6)
            j = int(np.argmax(m))
            best[(value, lay)] = (float(m[j]), j)
    # Each layout at its best pose, checked densely: its pips against the strongest evidence
    # anywhere else on the face's flat part (a one fits any face with a centre pip when only
    # the nine places are looked at: turned by 45 degrees, its empty places fall between pips).
    scored = []
    for (value, lay), (_, j) in best.items():
        ci, yj = divmod(j, len(yaws))
        cen = centres[ci]
        margin, pips = _dense_margin(ev, cen, rot[yj], lay, g, (1.0, 1.0), s)
        scored.append((margin, value, cen, pips, rot[yj], lay))
    scored.sort(key=lambda v: -v[0])
    m1, v1, cen, pips_patch, _, _ = scored[0]
    m2 = max((m for m, v, *_ in scored if v != v1), default=-1.0)
    # The pips where they are (the evidence's centroid near each fitted place), not where the
    # flat face's grid puts them: the reader's flatness test reads a tilted face from them.
    rr = FIT_REFINE_MM * s
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    found = []
    for x, y in pips_patch:
        w = np.clip(ev - 0.5 * ev[int(np.clip(round(y), 0, n - 1)), int(np.clip(round(x), 0, n - 1))], 0, None)
        w = w * (((xx - x) ** 2 + (yy - y) ** 2) <= rr * rr)
        tot = float(w.sum())
        found.append((float((w * xx).sum() / tot), float((w * yy).sum() / tot)) if tot > 0 else (float(x), float(y)))
    pips_patch = np.array(found, float)

    def to_frame(p):
        q = np.column_stack([p, np.ones(len(p))]) @ H.T
        return q[:, :2] / q[:, 2:3]

    centre_f = tuple(float(v) for v in to_frame(cen[None])[0])
    if m1 < FIT_MARGIN:
        return FaceFit(None, "no face stands out", centre_f, np.zeros((0, 2)), m1, m2)
    if m2 > FIT_SECOND * m1:
        return FaceFit(None, "two faces fit", centre_f, np.zeros((0, 2)), m1, m2)
    return FaceFit(v1, "", centre_f, to_frame(pips_patch), m1, m2)


def face_centre_in_box(geometry: TrayGeometry, box: Sequence[float]) -> tuple[float, float]:
    """Where the top face's centre is (frame px) of a flat die whose whole visible body has the
    box ``box`` (``x0, y0, x1, y1`` px): the box's centre moved by the offset, at that place,
    between the centre of a flat die's projected body (the mean over yaws 0 and 45 degrees) and
    the centre of its top face (under tilt the side faces show on the side away from the
    image's centre, and the top face lies off the box's centre)."""
    c = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2], float)
    xy = geometry.to_plane(c[None], geometry.die_mm / 2)
    top = geometry.project(np.array([[xy[0, 0], xy[0, 1], geometry.die_mm]]))[0]
    mids = []
    for yaw in (0.0, 45.0):
        uv = geometry.project(geometry._cube(xy, math.radians(yaw)).reshape(-1, 3))
        mids.append((uv.min(0) + uv.max(0)) / 2)
    off = top - np.mean(mids, axis=0)
    return float(c[0] + off[0]), float(c[1] + off[1])


def with_face_fit(frame: np.ndarray, geometry: TrayGeometry, box: Sequence[float], evidence: tuple) -> tuple:
    """The reader's pip evidence of the die in ``box`` with :func:`fit_face`'s reading joined in.

    ``evidence`` is the reader's ``(value, reason, crop values, crop pips)``
    (:meth:`companion.readers.dice.DiceReader.pip_evidence`). The face is fitted where the
    crops' pips show it (the centroid of every crop's pips that gave a value: the centre of
    the face they read, where the classifier also looks), else, or when nothing fits there,
    where a flat die's top face lies in the box (:func:`face_centre_in_box`).

    * The crops read a value (two of three agree, none another) and the fitted face another:
      the two disagree, no value (``"the pips read 3, the face's grid 2"``).
    * The crops read no value (none, one crop alone, or crops disagreeing) and the fitted face
      reads one: the fitted face's value and pips are the pips' evidence. The fit sees the
      whole face on its own plane at the die's size, where a crop sees a box the finder drew;
      the classifier must still vote for the same value on the same face, and the die's
      flatness is still tested on the fitted pips.
    * A one read so and by no crop: no value (a one shows no flatness, and a cocked die's
      upper face may show one), its pip kept as the evidence that a die is there (``(None,
      reason, (), [pip])``: pips found, no crop's value; the reader keeps such a die).
    * Otherwise the evidence is unchanged.

    Args:
        frame: ``H x W x 3 uint8`` BGR.
        geometry: the tray's geometry.
        box: ``(x0, y0, x1, y1)`` frame px, the finder's box.
        evidence: as above.

    Returns:
        The evidence in the same form.
    """
    value, _, given, found = evidence
    seen = [np.asarray(p, float) for p in found if len(p)]
    fit = None
    if seen:
        fit = fit_face(frame, geometry, np.mean([p.mean(0) for p in seen], axis=0))
    if fit is None or fit.value is None:
        fit = fit_face(frame, geometry, face_centre_in_box(geometry, box))
    if value is not None:
        if fit.value is not None and fit.value != value:
            if _crops_are_fit_and_off_face(geometry, fit, seen):
                # The crops saw the fitted face's pips and blobs off that face (the felt in a
                # corner of the box, a neighbour's pip): the crops read the fitted face.
                return fit.value, "", (fit.value,) * len(seen), [fit.pips_px] * len(seen)
            return None, f"the pips read {value}, the face's grid {fit.value}", tuple(given) + (fit.value,), found
        return evidence
    if fit.value is None:
        return evidence
    if fit.value == 1 and 1 not in given:
        # The pip may be a corner pip of a larger face whose centre lies off the box's.
        around = _face_around_pip(frame, geometry, fit.pips_px[0])
        if around is None:
            # A one shows no flatness (it may be a cocked die's upper face): a crop must read
            # it too. The die is still seen (its face's pip): no value, the pip as the evidence.
            return None, "a one on its face's plane alone (its flatness not seen)", (), [fit.pips_px]
        fit = around
    return fit.value, "", (fit.value,), [fit.pips_px]


#: A pip's centre on a flat top face lies at most a corner pip's distance from the face's centre
#: (PIP_GRID_MM * sqrt 2, 6.1 mm); a blob farther than that and a pip reader's error beyond (2 x
#: PIP_PX_ERR, in mm there) is not one of that face's pips.
OFF_FACE_PX_ERR = 2 * PIP_PX_ERR


def _crops_are_fit_and_off_face(geometry: TrayGeometry, fit: FaceFit, crops: Sequence[np.ndarray]) -> bool:
    """Whether every crop's pips (frame px, ``n x 2`` each) are the fitted face's pips (each of
    ``fit.pips_px`` within :data:`FIT_REFINE_MM` of one of the crop's) and blobs that lie off
    that face: farther from its centre, on the plane of a flat die's top face, than any pip of
    a flat face can (:data:`PIP_GRID_MM` x sqrt 2, plus :data:`OFF_FACE_PX_ERR` px in mm there).
    Such blobs are no pips of this die's top face: the felt showing in a corner of the box of a
    turned die, a neighbour's pip. False when ``crops`` is empty or the fit has no pips."""
    if not crops or fit.value is None or not len(fit.pips_px):
        return False
    z = geometry.die_mm
    c = geometry.to_plane(np.asarray(fit.centre_px, float)[None], z)[0]
    mm_per_px = geometry.die_mm / max(geometry.face_side_px(fit.centre_px), 1e-6)
    reach = math.hypot(PIP_GRID_MM, PIP_GRID_MM) + OFF_FACE_PX_ERR * mm_per_px
    fit_mm = geometry.to_plane(np.asarray(fit.pips_px, float), z)
    for pts in crops:
        mm = geometry.to_plane(np.asarray(pts, float), z)
        d = np.linalg.norm(mm[:, None, :] - fit_mm[None, :, :], axis=2)
        if (d.min(axis=0) > FIT_REFINE_MM).any():
            return False  # a pip of the fitted face that this crop did not see
        others = mm[d.min(axis=1) > FIT_REFINE_MM]
        if not len(others) or (np.linalg.norm(others - c, axis=1) <= reach).any():
            return False  # no other blob, or one that may be a pip of this face
    return True


def _face_around_pip(frame: np.ndarray, geometry: TrayGeometry, pip_px: Sequence[float]) -> FaceFit | None:
    """A face of two pips or more that has the pip at ``pip_px`` (frame px) as one of its own,
    or None: :func:`fit_face` started at the eight places a face's centre lies from a corner
    pip (the grid's diagonal, :data:`PIP_GRID_MM` along each axis, turned every 45 degrees); a
    fit counts when its value is 2-6, one of its pips lies within :data:`FIT_REFINE_MM` of the
    pip, and its centre within a corner pip's distance (and the fit's shift) of it. All that
    count must read one value (else None); the best margin's is returned."""
    p = geometry.to_plane(np.asarray(pip_px, float)[None], geometry.die_mm)[0]
    reach = math.hypot(PIP_GRID_MM, PIP_GRID_MM)
    got = []
    for k in range(8):
        a = math.radians(45.0 * k)
        c = p + reach * np.array([math.cos(a), math.sin(a)])
        fit = fit_face(frame, geometry, geometry.project(np.array([[c[0], c[1], geometry.die_mm]]))[0])
        if fit.value is None or fit.value < 2:
            continue
        pips = geometry.to_plane(fit.pips_px, geometry.die_mm)
        centre = geometry.to_plane(np.asarray(fit.centre_px, float)[None], geometry.die_mm)[0]
        if (np.linalg.norm(pips - p, axis=1).min() <= FIT_REFINE_MM
                and np.linalg.norm(centre - p) <= reach + FIT_SHIFT_MM):
            got.append(fit)
    if not got or len({f.value for f in got}) > 1:
        return None
    return max(got, key=lambda f: f.margin)


def _project(K: np.ndarray, R: np.ndarray, t: np.ndarray, points_mm: np.ndarray) -> np.ndarray:
    """``N x 3`` world points (mm) to ``N x 2`` px through the pinhole ``K [R | t]``."""
    uv = (points_mm @ R.T + t) @ K.T
    return uv[:, :2] / uv[:, 2:3]


def _pose(H: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The world-to-camera ``(R 3 x 3, t 3 mm)`` of the plane z = 0 from its homography ``H``
    (``3 x 3``, plane mm to px) and the camera matrix ``K``
    (Zhang 2000, section 3.1), the plane in front of the camera. The camera may come out below
    the plane (z < 0) when the corners turn the other way; the caller mirrors the frame."""
    M = np.linalg.inv(K) @ H
    M = M * (2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1])))
    if M[2, 2] < 0:  # the floor must lie in front of the camera
        M = -M
    r1, r2 = M[:, 0], M[:, 1]
    return _rot_ok(np.column_stack([r1, r2, np.cross(r1, r2)])), M[:, 2].copy()


def _focal_from_homography(Hc: np.ndarray) -> float | None:
    """The focal length (px) of a camera whose principal point is at the origin of ``Hc``'s
    image coordinates, from the plane's homography ``Hc`` (Zhang 2000: the first two columns of
    ``K^-1 H`` are orthogonal and of equal length); None when the view is too close to
    fronto-parallel for it to be found."""
    h = Hc / np.linalg.norm(Hc)
    h11, h21, h31 = h[:, 0]
    h12, h22, h32 = h[:, 1]
    cands = []
    den1 = h31 * h32
    if abs(den1) > 1e-12:
        f2 = -(h11 * h12 + h21 * h22) / den1
        if f2 > 0:
            cands.append((abs(den1), f2))
    den2 = h32 ** 2 - h31 ** 2
    if abs(den2) > 1e-12:
        f2 = (h11 ** 2 + h21 ** 2 - h12 ** 2 - h22 ** 2) / den2
        if f2 > 0:
            cands.append((abs(den2), f2))
    if not cands:
        return None
    # weight each estimate by the size of its denominator (its conditioning)
    f2 = sum(wt * v for wt, v in cands) / sum(wt for wt, _ in cands)
    f = math.sqrt(f2)
    # tilt of the floor seen with this f: too little and the estimate is noise
    K = np.diag([f, f, 1.0])
    M = np.linalg.inv(K) @ Hc
    r1, r2 = M[:, 0] / np.linalg.norm(M[:, 0]), M[:, 1] / np.linalg.norm(M[:, 1])
    normal = np.cross(r1, r2)
    tilt = math.degrees(math.acos(min(1.0, abs(normal[2]) / np.linalg.norm(normal))))
    if tilt < MIN_TILT_FOR_FOCAL_DEG:
        return None
    return f
