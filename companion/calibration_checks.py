"""Physical range checks shared by the calibration files' loaders.

Every loader (``monsieur-board.toml``, ``carrossel-board.toml``, ``carrousel-board.json``,
``dice-tray.toml``, ``camera.json``) first checks each field's type (a finite number, a list of
two, ...); these helpers then check what the value means on a real table: a size is above zero,
a radius lies within the board, an angle is within a turn, a camera matrix is one a lens can
have. A value outside is one line ``FILE: FIELD: expected WHAT, got VALUE`` (a
:class:`ValueError`, or the ``error`` class the loader documents), so a wrong value can never
reach a reader and give a wrong reading with ``"status": "ok"``.

Example::

    from companion.calibration_checks import positive, between
    r = positive(path, "seats.ring_radius_mm", 85.0, at_most=110.0, limit="carousel.disc_radius_mm")
    between(path, "sectors.half_width_deg", 45.0, 0.0, 180.0, unit="deg", low_open=True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["between", "check_camera_matrix", "check_distortion", "expect", "positive", "within_turn"]

#: The horizontal field of view a camera matrix may imply, degrees (a long telephoto to a fisheye).
HFOV_RANGE_DEG = (3.0, 170.0)
#: Largest fx / fy (or fy / fx) of a plausible lens: square pixels give 1.
MAX_ASPECT = 2.0
#: How far a lens's distortion may move a point of the frame, as the ratio of its distance from
#: the principal point with the distortion to that without: a strong barrel lens (a wide angle
#: made rectilinear) halves it at the frame's corners, a pincushion (a telephoto) adds a few
#: percent. Outside: not a lens the OpenCV model was fitted to, but a mistyped coefficient.
DISTORTION_RATIO_RANGE = (0.5, 1.25)


def expect(where: str | Path, field: str, ok: bool, expected: str, got: Any, error: type[ValueError] = ValueError) -> None:
    """Raise ``error("WHERE: FIELD: expected EXPECTED, got GOT")`` unless ``ok``.

    Args:
        where: the file (its path as the user gave it).
        field: the field's dotted name in that file (``seats.ring_radius_mm``).
        ok: whether the value is right.
        expected: what a right value is, in the user's words (units included).
        got: the value found (shown with ``repr``).
        error: the exception class (a :class:`ValueError` subclass) the loader documents.

    Raises:
        ValueError: (or ``error``) when not ``ok``.
    """
    if not ok:
        if isinstance(got, (np.ndarray, np.generic)):  # its repr spans lines: one line always
            got = got.tolist()
        raise error(f"{where}: {field}: expected {expected}, got {got!r}")


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) and math.isfinite(float(v))


def positive(where: str | Path, field: str, v: Any, *, at_most: float | None = None, limit: str = "",
             unit: str = "mm", error: type[ValueError] = ValueError) -> float:
    """``v`` as a float, checked finite and > 0 (and <= ``at_most`` when given).

    Args:
        at_most: the largest right value (e.g. the board's radius for a radius on it).
        limit: what ``at_most`` is, named in the message (a field of the same file).
        unit: the unit, named in the message.

    Raises:
        ValueError: (or ``error``) one line naming the file, the field and the range.
    """
    ok = _finite(v) and float(v) > 0 and (at_most is None or float(v) <= at_most)
    if at_most is None:
        what = f"a size above 0 {unit}"
    else:
        what = f"above 0 and at most {at_most:g} {unit}" + (f" ({limit})" if limit else "")
    expect(where, field, ok, what, v, error)
    return float(v)


def between(where: str | Path, field: str, v: Any, lo: float, hi: float, *, unit: str = "mm", why: str = "",
            low_open: bool = False, high_open: bool = False, error: type[ValueError] = ValueError) -> float:
    """``v`` as a float, checked finite and within ``[lo, hi]`` (an open end when asked).

    Args:
        why: what the range is, named in the message ("the roof's top and bottom").

    Raises:
        ValueError: (or ``error``) one line naming the file, the field and the range.
    """
    ok = _finite(v) and (float(v) > lo if low_open else float(v) >= lo) and (float(v) < hi if high_open else float(v) <= hi)
    what = f"{'above' if low_open else 'from'} {lo:g}"
    if math.isinf(hi):
        what = f"{'above' if low_open else 'at least'} {lo:g} {unit}"
    else:
        what += f" {'and below' if high_open else 'and at most' if low_open else 'to'} {hi:g} {unit}"
    expect(where, field, ok, what + (f" ({why})" if why else ""), v, error)
    return float(v)


def within_turn(where: str | Path, field: str, v: Any, error: type[ValueError] = ValueError) -> float:
    """An angle in degrees within one turn either way (-360 to 360).

    Raises:
        ValueError: (or ``error``) one line naming the file and the field.
    """
    return between(where, field, v, -360.0, 360.0, unit="deg", why="one turn either way", error=error)


def check_camera_matrix(where: str | Path, field: str, k: Any, image_size: Sequence[int] | None,
                        error: type[ValueError] = ValueError) -> np.ndarray:
    """A pinhole camera matrix a real lens can have, for frames of ``image_size`` (w, h) px.

    Checked: ``3 x 3`` finite; last row ``[0, 0, 1]``; focal lengths ``fx``, ``fy`` above 0
    with a horizontal field of view within :data:`HFOV_RANGE_DEG` and ``fx / fy`` within
    :data:`MAX_ASPECT`; skew below a tenth of ``fx``; the principal point inside the frame.
    (Hartley and Zisserman, Multiple View Geometry, 2nd ed., section 6.1: ``K`` is upper
    triangular with positive focal lengths, hence invertible.)

    Args:
        k: the matrix as read (nested lists or an array).
        image_size: (width, height) px of the frames it is for; None: the frame checks are skipped.

    Returns:
        ``3 x 3 float64``.

    Raises:
        ValueError: (or ``error``) one line naming the file, the field and what is wrong.
    """
    try:
        m = np.asarray(k, dtype=np.float64)
    except (TypeError, ValueError):
        m = np.zeros(0)
    expect(where, field, m.shape == (3, 3) and bool(np.isfinite(m).all()), "a 3 x 3 matrix of finite numbers", k, error)
    expect(where, field, bool(np.allclose(m[2], [0.0, 0.0, 1.0], atol=1e-6) and abs(m[1, 0]) < 1e-6),
           "a camera matrix [[fx, s, cx], [0, fy, cy], [0, 0, 1]]", k, error)
    fx, fy, cx, cy = m[0, 0], m[1, 1], m[0, 2], m[1, 2]
    expect(where, field, fx > 0 and fy > 0, "focal lengths fx and fy above 0 px (a singular or mirrored matrix is not a lens)",
           k, error)
    expect(where, field, 1 / MAX_ASPECT <= fx / fy <= MAX_ASPECT, f"fx / fy within {1 / MAX_ASPECT:g}-{MAX_ASPECT:g}",
           k, error)
    expect(where, field, abs(m[0, 1]) < 0.1 * fx, "a skew below a tenth of fx", k, error)
    if image_size is not None:
        w, h = float(image_size[0]), float(image_size[1])
        hfov = math.degrees(2 * math.atan(w / (2 * fx)))
        lo, hi = HFOV_RANGE_DEG
        expect(where, field, lo <= hfov <= hi,
               f"a focal length giving a field of view of {lo:g}-{hi:g} deg on {w:g} px (fx {fx:g} px gives {hfov:.3g} deg)",
               k, error)
        expect(where, field, 0 <= cx <= w and 0 <= cy <= h,
               f"the principal point (cx, cy) inside the {w:g} x {h:g} px frame", k, error)
    return m


def check_distortion(where: str | Path, field: str, k: np.ndarray, dist: Any, image_size: Sequence[int],
                     error: type[ValueError] = ValueError) -> np.ndarray:
    """OpenCV distortion coefficients a real lens can have over frames of ``image_size`` (w, h).

    Checked on a 17 x 13 grid over the frame: the coefficients are finite; the readers' own
    distortion can be undone there (``cv2.undistortPoints`` iterated to convergence, then
    :func:`companion.vision.registration.distort`, gives the pixel back within 0.5 px);
    along every ray from the principal point to the grid's points the distorted radius grows
    with the undistorted one (the image does not fold); and no point moves by more than
    :data:`DISTORTION_RATIO_RANGE` of its distance from the principal point. (OpenCV's camera
    model, docs.opencv.org "Camera Calibration and 3D Reconstruction".)

    Args:
        k: ``3 x 3`` camera matrix (already checked by :func:`check_camera_matrix`).
        dist: the coefficients as read (k1, k2, p1, p2[, k3[, k4, k5, k6[, ...]]]).

    Returns:
        the coefficients, ``float64`` flat.

    Raises:
        ValueError: (or ``error``) one line naming the file, the field and what is wrong.
    """
    import cv2

    from companion.vision.registration import distort

    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-9)

    def undistort(points: np.ndarray, m: np.ndarray, c: np.ndarray) -> np.ndarray:
        """The exact inverse (iterated to convergence; OpenCV 4's Python name is undistortPointsIter)."""
        pts = points.reshape(-1, 1, 2)
        if hasattr(cv2, "undistortPointsIter"):
            return cv2.undistortPointsIter(pts, m, c, None, m, crit).reshape(-1, 2)
        return cv2.undistortPoints(pts, m, c, R=None, P=m, criteria=crit).reshape(-1, 2)

    try:
        d = np.asarray(dist, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        d = np.zeros(0)
    expect(where, field, d.size in (4, 5, 8, 12, 14) and bool(np.isfinite(d).all()),
           "OpenCV's 4, 5, 8, 12 or 14 finite distortion coefficients (k1, k2, p1, p2[, k3, ...])", dist, error)
    if not d.any():
        return d
    w, h = float(image_size[0]), float(image_size[1])
    gx, gy = np.meshgrid(np.linspace(0, w - 1, 17), np.linspace(0, h - 1, 13))
    px = np.stack([gx.ravel(), gy.ravel()], axis=1)
    shown = [float(v) for v in d]
    with np.errstate(all="ignore"):
        ideal = undistort(px, k, d)
        back = distort(ideal, k, d)
    ok = bool(np.isfinite(back).all() and np.abs(back - px).max() < 0.5)
    expect(where, field, ok, f"a distortion that can be undone over the {w:g} x {h:g} px frame", shown, error)
    centre = np.array([k[0, 2], k[1, 2]])
    far = np.linalg.norm(ideal - centre, axis=1) > 0.05 * min(w, h)
    ratio = np.linalg.norm(px - centre, axis=1)[far] / np.linalg.norm(ideal - centre, axis=1)[far]
    lo, hi = DISTORTION_RATIO_RANGE
    expect(where, field, bool(ratio.min() >= lo and ratio.max() <= hi),
           f"a distortion that moves the frame's points to {lo:g}-{hi:g} times their distance from the principal "
           f"point (these move them {ratio.min():.2f}-{ratio.max():.2f} times)", shown, error)
    steps = np.linspace(0.0, 1.0, 64)[:, None, None]
    rays = (centre + steps * (ideal - centre)[None]).reshape(-1, 2)
    with np.errstate(all="ignore"):
        radii = np.linalg.norm(distort(rays, k, d) - centre, axis=1).reshape(len(steps), -1)
    expect(where, field, bool(np.all(np.diff(radii, axis=0) > -1e-6)),
           "a distortion that does not fold the frame (the distorted radius growing outwards)", shown, error)
    return d
