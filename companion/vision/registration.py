"""Registration: ArUco markers at known places on the table give the homography from the image
to board millimetres.

Every visible marker corner takes part (4 per marker, least squares; a marker whose corners do
not agree with the others is dropped by RANSAC), so the board is registered with some markers
covered or cut off by the frame. Detection is not repeated on every frame: :class:`Registrar`
keeps the last homography and samples the markers' cells at their expected places (a few dozen
pixel reads); when the cells no longer match what was seen at registration (the camera or the
table moved, a hand came over a marker) or after ``redetect_every`` frames, it detects again.
When fewer than ``min_markers`` markers are found, the board is "not visible". A full detection
(:class:`MarkerFinder`) searches a half-size frame for candidates, then runs OpenCV's detector at
full resolution in windows around them and around the layout's markers placed from them: the
one-pass detector's markers and corners at about half its cost (docs/BENCHMARKS.md, issue 15).

Sources: S. Garrido-Jurado et al., "Automatic generation and detection of highly reliable
fiducial markers under occlusion", Pattern Recognition 47 (2014) (ArUco); OpenCV
``cv2.aruco.ArucoDetector`` (OpenCV 4.7 and later) and ``cv2.findHomography``; R. Hartley and
A. Zisserman, Multiple View Geometry, 2nd ed., section 4.1 (the DLT homography).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import cv2
import numpy as np

__all__ = [
    "DICTIONARIES",
    "MarkerFinder",
    "Registrar",
    "Registration",
    "RegistrationError",
    "detect_markers",
    "dictionary",
    "distort",
    "project",
    "undistort",
]

#: Marker dictionaries by their OpenCV names.
DICTIONARIES: dict[str, int] = {
    name: getattr(cv2.aruco, name)
    for name in (
        "DICT_4X4_50", "DICT_4X4_100", "DICT_4X4_250", "DICT_5X5_50", "DICT_5X5_100",
        "DICT_6X6_50", "DICT_6X6_250", "DICT_7X7_50", "DICT_ARUCO_ORIGINAL",
    )
}


class RegistrationError(ValueError):
    """A marker layout or dictionary that cannot be used (the message names it)."""


def dictionary(name: str) -> cv2.aruco.Dictionary:
    """The predefined OpenCV ArUco dictionary called ``name`` (e.g. ``"DICT_4X4_50"``).

    Raises:
        RegistrationError: an unknown name, listing the known ones.
    """
    if name not in DICTIONARIES:
        raise RegistrationError(f"unknown marker dictionary {name!r} (known: {', '.join(DICTIONARIES)})")
    return cv2.aruco.getPredefinedDictionary(DICTIONARIES[name])


def _grey(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    raise ValueError(f"expected an H x W x 3 uint8 BGR or H x W grey image, got shape {image.shape}")


def _detector(name: str, window: bool = False) -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    # Sub-pixel corners: the homography is only as good as its corners.
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    # no candidate with a perimeter under 5% of the image's larger side (32 px at 640 x 480,
    # 8 px a side: too small to decode a 4x4 marker): the cheapest setting found that keeps
    # every detection, corners identical, on the 20 photographs and 150 rendered tilted, blurred
    # and dim frames, whose smallest marker was 12% (docs/BENCHMARKS.md, issue 15)
    params.minMarkerPerimeterRate = 0.05
    if window:
        # a window around one marker's last place: the marker is large in it, so small
        # candidates (noise, texture) are not even considered
        params.minMarkerPerimeterRate = 0.5
    return cv2.aruco.ArucoDetector(dictionary(name), params)


#: the largest marker perimeter the table's geometry allows, as a fraction of the frame's larger
#: side: a 40 mm marker 450 mm under the camera (the closest the mounting allows), or the roof's
#: 30 mm marker 122 mm above the board, is under 52 px a side at 640 px across through a 60 degree
#: lens (README "mount the camera 450-700 mm above the mat"); 0.6 (96 px a side, 384 px around)
#: leaves room for a narrower lens. Larger candidates of the half-size pass (the board's outline,
#: a card) are not looked at again.
MAX_MARKER_PERIMETER_RATE = 0.6

#: :meth:`Registrar.register_near` first looks this far (pixels) around a marker's last place: a
#: marker taken from there lies 12 px inside, so it may have moved 8 px (a still camera's: 0-1)
_NEAR_TIGHT_PX = 20


class MarkerFinder:
    """ArUco detection in the whole frame at the cost of a half-size pass and a few windows, with
    the one-pass detector's markers and corners.

    The full-resolution detector (:func:`_detector`: three adaptive-threshold windows 3, 13 and
    23 px, sub-pixel corners) spends its time thresholding and tracing the contours of the whole
    frame three times, for four or five markers. Here:

    1. a **half-size pass** (the frame averaged 2 x 2, one threshold window of 3 px, no corner
       refinement) finds where square candidates are, decoded or not (OpenCV's rejected
       candidates count too); candidates larger than :data:`MAX_MARKER_PERIMETER_RATE` are
       dropped;
    2. the **full-resolution detector runs in a window around each candidate**, and around
       every marker of the layout the half-size pass did not decode, placed through the
       homography of the decoded ones (then again from the full-resolution corners, for a
       marker still missing; not when placed out of the frame). A window reaches 14 px and an
       eighth of the candidate's side beyond it (a placed marker: 16 px and half its side): the
       23 px threshold window then sees the same pixels around the marker as in the whole
       frame, so the marker's contour, its bits and its sub-pixel corners are the whole-frame
       detection's (on the 60 table photographs: every marker, corners within 0.002 px, 1e-4
       px for all but one of 252: floating point at other coordinates;
       ``tests/test_marker_detection.py``). A marker is taken from a window only when it lies
       12 px inside it (or at the frame's edge). On blurred rendered frames a few markers in a
       thousand get another candidate of their smeared border (up to 0.8 px away), and a marker
       that is not on the layout (the Monsieur Carrousel roof's) is found only where the
       half-size pass saw a candidate (missed in 1 of 150 rendered frames, docs/BENCHMARKS.md);
    3. when fewer than ``min_markers`` markers of the layout are found that way (a blurred or
       unusual frame), the full-resolution detector runs on the whole frame; and
       :meth:`Registrar.register` runs it too when the markers found in windows do not register
       (two left on one edge when a smeared third was missed): a frame is never "board not
       visible" because of the shortcut.

    Args:
        dictionary_name: an OpenCV predefined dictionary name (:data:`DICTIONARIES`).
        layout: marker id -> ``4 x 2`` corners in board mm (OpenCV's order), the markers placed
            from the others when the half-size pass misses them; None for none (then every
            marker must be seen by the half-size pass, else the whole frame is searched).
        min_markers: fewer markers of the layout than this (or none at all without a layout)
            and the whole frame is searched.
        layout_only: only the layout's markers are wanted (the caller reads no other marker
            from the detection): when the half-size pass decodes ``min_markers`` of them, no
            window is searched around its other candidates (the layout's markers it missed are
            still placed and searched). False: every candidate is looked at.

    Raises:
        RegistrationError: an unknown dictionary name.

    Sources: OpenCV ``cv2.aruco.ArucoDetector`` and ``DetectorParameters`` (adaptive threshold
    windows, perimeter rates, ``CORNER_REFINE_SUBPIX``); S. Garrido-Jurado et al. (2014).
    """

    def __init__(self, dictionary_name: str = "DICT_4X4_50", layout: Mapping[int, np.ndarray] | None = None,
                 min_markers: int = 2, layout_only: bool = False):
        self.full = _detector(dictionary_name)
        self.layout_only = bool(layout_only)
        self._dictionary = self.full.getDictionary()
        params = cv2.aruco.DetectorParameters()
        params.adaptiveThreshWinSizeMin = params.adaptiveThreshWinSizeMax = 3
        params.minMarkerPerimeterRate = self.full.getDetectorParameters().minMarkerPerimeterRate
        params.maxMarkerPerimeterRate = MAX_MARKER_PERIMETER_RATE
        self._coarse = cv2.aruco.ArucoDetector(self._dictionary, params)
        self.layout = {int(i): np.asarray(c, np.float64).reshape(4, 2) for i, c in (layout or {}).items()}
        self.min_markers = max(1, int(min_markers))
        self._windows: dict[tuple[int, int], cv2.aruco.ArucoDetector] = {}
        #: how the last frame was searched: "windows" or "whole frame"
        self.last = ""
        self._result: dict[int, np.ndarray] | None = None

    def getDictionary(self) -> cv2.aruco.Dictionary:
        """The markers' dictionary (as ``cv2.aruco.ArucoDetector.getDictionary``)."""
        return self._dictionary

    def detectMarkers(self, image: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray | None, tuple]:
        """As ``cv2.aruco.ArucoDetector.detectMarkers``: (corners, each ``1 x 4 x 2 float32``;
        ids ``N x 1 int32`` or None; no rejected candidates). ``image``: ``H x W uint8`` grey."""
        found = self.find(image)
        if not found:
            return (), None, ()
        ids = np.array(list(found), np.int32).reshape(-1, 1)
        return tuple(c.reshape(1, 4, 2) for c in found.values()), ids, ()

    def _window_detector(self, shape: tuple[int, int], frame_side: int) -> cv2.aruco.ArucoDetector:
        """The full detector for a window: its perimeter bounds in pixels are the whole frame's."""
        key = (max(shape), frame_side)
        det = self._windows.get(key)
        if det is None:
            params = self.full.getDetectorParameters()
            n = float(key[0])
            # OpenCV truncates rate * side to whole pixels: the same pixels as in the whole frame
            params.minMarkerPerimeterRate = (int(params.minMarkerPerimeterRate * frame_side) + 0.5) / n
            params.maxMarkerPerimeterRate = (int(params.maxMarkerPerimeterRate * frame_side) + 0.5) / n
            det = self._windows[key] = cv2.aruco.ArucoDetector(self._dictionary, params)
        return det

    def _predicted(self, found: Mapping[int, np.ndarray], missing: Sequence[int]) -> np.ndarray:
        """The ``len(missing) x 4 x 2`` pixel corners of layout markers placed through the
        homography of the ``found`` ones (empty when fewer than two, or a degenerate fit)."""
        known = [i for i in found if i in self.layout]
        if len(known) < 2 or not missing:
            return np.zeros((0, 4, 2))
        h, _ = cv2.findHomography(np.concatenate([self.layout[i] for i in known]),
                                  np.concatenate([np.asarray(found[i], np.float64) for i in known]), 0)
        if h is None or not np.all(np.isfinite(h)):
            return np.zeros((0, 4, 2))
        return project(h, np.concatenate([self.layout[i] for i in missing])).reshape(-1, 4, 2)

    @staticmethod
    def _boxes(quads: np.ndarray, margins: np.ndarray, w: int, h: int) -> np.ndarray:
        """Windows ``N x 4`` (x0, y0, x1, y1; whole pixels, inside the frame) around ``N x 4 x 2``
        pixel quads with their margins (``N`` pixels); overlapping windows are merged while the
        merged one is no larger than the two (fewer, larger windows cost less than many)."""
        lo = np.floor(quads.min(axis=1) - margins[:, None])
        hi = np.ceil(quads.max(axis=1) + margins[:, None]) + 1
        box = np.concatenate([np.maximum(lo, 0), np.minimum(hi, [w, h])], axis=1)
        while len(box) > 1:
            x0 = np.minimum.outer(box[:, 0], box[:, 0])
            y0 = np.minimum.outer(box[:, 1], box[:, 1])
            x1 = np.maximum.outer(box[:, 2], box[:, 2])
            y1 = np.maximum.outer(box[:, 3], box[:, 3])
            area = (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])
            gain = np.add.outer(area, area) - (x1 - x0) * (y1 - y0)
            np.fill_diagonal(gain, -1.0)
            a, b = divmod(int(np.argmax(gain)), len(box))
            if gain[a, b] < 0:
                break
            box[a] = (x0[a, b], y0[a, b], x1[a, b], y1[a, b])
            box = np.delete(box, b, axis=0)
        return box.astype(int)

    def _search(self, grey: np.ndarray, quads: np.ndarray, margins: np.ndarray, found: dict[int, np.ndarray],
                done: list[tuple[int, int, int, int]]) -> None:
        """Run the full detector in windows around the quads (``N x 4 x 2`` pixels) with their
        margins (``N`` pixels), skipping a window inside one already searched; adds to ``found``."""
        if not len(quads):
            return
        h, w = grey.shape[:2]
        side = max(h, w)
        for x0, y0, x1, y1 in self._boxes(quads, margins, w, h).tolist():
            if x1 - x0 < 16 or y1 - y0 < 16:
                continue
            if any(a <= x0 and b <= y0 and x1 <= c and y1 <= d for a, b, c, d in done):
                continue
            done.append((x0, y0, x1, y1))
            crop = grey[y0:y1, x0:x1]
            corners, ids, _ = self._window_detector(crop.shape, side).detectMarkers(crop)
            if ids is None:
                continue
            for c, i in zip(corners, ids.reshape(-1).tolist()):
                if i in found:
                    continue
                c = c.reshape(4, 2)
                cx0, cy0 = c.min(axis=0).tolist()
                cx1, cy1 = c.max(axis=0).tolist()
                # inside by the 23 px threshold window's half and a pixel, unless at the frame's edge
                if ((x0 > 0 and cx0 < 12) or (y0 > 0 and cy0 < 12) or (x1 < w and cx1 > x1 - x0 - 13)
                        or (y1 < h and cy1 > y1 - y0 - 13)):
                    continue
                found[i] = c + np.array([x0, y0], dtype=np.float32)

    def find(self, grey: np.ndarray) -> dict[int, np.ndarray]:
        """Every marker in a grey frame, as :func:`detect_markers` with the full detector gives
        them: marker id -> ``4 x 2 float32`` pixel corners (OpenCV's order).

        Args:
            grey: ``H x W uint8``.

        Raises:
            ValueError: an image that is not 2-D grey.
        """
        if grey.ndim != 2:
            raise ValueError(f"expected an H x W grey image, got shape {grey.shape}")
        h, w = grey.shape
        found: dict[int, np.ndarray] = {}
        if min(h, w) >= 64:
            small = cv2.resize(grey, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
            sx, sy = w / (w // 2), h / (h // 2)
            corners, ids, rejected = self._coarse.detectMarkers(small)
            every = list(corners) + list(rejected)
            done: list[tuple[int, int, int, int]] = []
            decoded: dict[int, np.ndarray] = {}
            if every:
                # a half-size pixel averages two full ones: its centre is at 2 x + 0.5
                quads = np.concatenate([np.asarray(q, np.float64).reshape(-1, 4, 2) for q in every])
                quads = quads * [sx, sy] + [0.5 * (sx - 1), 0.5 * (sy - 1)]
                if ids is not None:
                    decoded = {i: q for i, q in zip(ids.reshape(-1).tolist(), quads[:len(corners)])}
                perimeter = np.linalg.norm(quads - np.roll(quads, 1, axis=1), axis=2).sum(axis=1)
                keep = perimeter <= MAX_MARKER_PERIMETER_RATE * max(h, w)
                if self.layout_only and sum(i in self.layout for i in decoded) >= self.min_markers:
                    keep[len(corners):] = False  # no window around the undecoded candidates
                    keep[:len(corners)] &= np.isin(ids.reshape(-1), list(self.layout))
                self._search(grey, quads[keep], 14.0 + perimeter[keep] / 32.0, found, done)
            for source in (decoded, found):
                # the missing markers of the layout placed from the half-size pass's markers, then
                # those still missing from the full-resolution ones (better corners)
                missing = [i for i in self.layout if i not in found]
                placed = self._predicted(source, missing)
                if not len(placed):
                    continue
                side = np.linalg.norm(placed - np.roll(placed, 1, axis=1), axis=2).max(axis=1)
                # a marker placed out of the frame (beyond what the placing can be off by) cannot
                # be detected: OpenCV keeps only corners 3 px or more inside the frame
                slack = (4.0 + side / 4.0)[:, None]
                inside = ((placed[..., 0] >= -slack) & (placed[..., 1] >= -slack)
                          & (placed[..., 0] <= w - 1 + slack) & (placed[..., 1] <= h - 1 + slack)).all(axis=1)
                self._search(grey, placed[inside], 16.0 + side[inside] / 2.0, found, done)
        enough = (sum(i in found for i in self.layout) >= self.min_markers) if self.layout else bool(found)
        if enough:
            self.last, self._result = "windows", found
            return found
        return self.whole_frame(grey)

    def whole_frame(self, grey: np.ndarray) -> dict[int, np.ndarray]:
        """The one-pass detector in the whole grey frame (as :func:`detect_markers`)."""
        self.last, self._result = "whole frame", None
        return detect_markers(grey, detector=self.full)

    def from_windows(self, found: Mapping[int, np.ndarray]) -> bool:
        """Whether ``found`` is the last :meth:`find`'s result from windows (not the whole frame)."""
        last = self._result
        return (self.last == "windows" and last is not None and sorted(found) == sorted(last)
                and all(np.array_equal(found[i], last[i]) for i in last))


def detect_markers(image: np.ndarray, dictionary_name: str = "DICT_4X4_50",
                   detector: cv2.aruco.ArucoDetector | None = None) -> dict[int, np.ndarray]:
    """Find the ArUco markers of one dictionary in an image.

    Args:
        image: ``H x W x 3 uint8`` BGR, or ``H x W uint8`` grey.
        dictionary_name: an OpenCV predefined dictionary name (:data:`DICTIONARIES`).
        detector: a ready ``cv2.aruco.ArucoDetector`` to reuse (its dictionary wins).

    Returns:
        marker id -> its 4 corners as a ``4 x 2 float32`` array of pixel coordinates in
        OpenCV's order (top-left, top-right, bottom-right, bottom-left of the marker). A marker
        seen twice keeps its first detection.

    Raises:
        RegistrationError: an unknown dictionary name.
        ValueError: an image that is not 2-D grey or 3-channel.
    """
    det = detector if detector is not None else _detector(dictionary_name)
    corners, ids, _rejected = det.detectMarkers(_grey(image))
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.reshape(-1)):
        found.setdefault(int(i), np.asarray(c, dtype=np.float32).reshape(4, 2))
    return found


def project(homography: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 3 x 3 homography to ``N x 2`` points; returns ``N x 2 float64``."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    h = np.asarray(homography, dtype=np.float64)
    xy = pts @ h[:, :2].T + h[:, 2]
    return xy[:, :2] / xy[:, 2:3]


def undistort(points_px: np.ndarray, camera_matrix: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Remove the lens distortion from ``N x 2`` pixel points (result in pixels of the ideal
    pinhole camera with the same camera matrix), ``N x 2 float64``."""
    pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.undistortPoints(pts, camera_matrix, dist, P=camera_matrix).reshape(-1, 2)


def distort(points_px: np.ndarray, camera_matrix: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Apply the lens distortion to ideal pinhole pixel points (``N x 2``), ``N x 2 float64``."""
    pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    k = np.asarray(camera_matrix, dtype=np.float64)
    norm = np.column_stack([(pts[:, 0] - k[0, 2]) / k[0, 0], (pts[:, 1] - k[1, 2]) / k[1, 1], np.ones(len(pts))])
    out, _ = cv2.projectPoints(norm.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), k, np.asarray(dist, np.float64))
    return out.reshape(-1, 2)


@dataclasses.dataclass(frozen=True)
class Registration:
    """Where the board is in one frame.

    Attributes:
        board_to_image: ``3 x 3 float64`` homography from board mm to image pixels.
        image_to_board: its inverse, image pixels to board mm.
        marker_ids: the markers whose corners were used, sorted.
        residual_px: RMS distance (pixels) between the detected corners and the board corners
            projected through ``board_to_image``.
        image_corners: marker id -> detected ``4 x 2`` pixel corners (those used).
        frame_index: the frame (counted by the :class:`Registrar`) where it was detected.
        lens: (camera matrix ``3 x 3``, distortion coefficients) when the camera's intrinsics
            are known: the homography then lives in undistorted pixels and :meth:`to_image` /
            :meth:`to_board` apply and remove the lens distortion (Brown-Conrady, OpenCV's
            model); None for a lens treated as distortion-free.
    """

    board_to_image: np.ndarray
    image_to_board: np.ndarray
    marker_ids: tuple[int, ...]
    residual_px: float
    image_corners: Mapping[int, np.ndarray]
    frame_index: int = 0
    lens: tuple[np.ndarray, np.ndarray] | None = None

    def to_image(self, points_mm: np.ndarray) -> np.ndarray:
        """Board mm (``N x 2``) to image pixels (``N x 2 float64``)."""
        und = project(self.board_to_image, points_mm)
        return und if self.lens is None else distort(und, *self.lens)

    def to_board(self, points_px: np.ndarray) -> np.ndarray:
        """Image pixels (``N x 2``) to board mm (``N x 2 float64``)."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        if self.lens is not None:
            pts = undistort(pts, *self.lens)
        return project(self.image_to_board, pts)

    def mm_per_px(self, at_mm: tuple[float, float] = (0.0, 0.0)) -> float:
        """The board's scale near ``at_mm``: millimetres per image pixel (geometric mean)."""
        x, y = at_mm
        p = self.to_image(np.array([[x, y], [x + 1.0, y], [x, y + 1.0]]))
        area = abs(np.cross(p[1] - p[0], p[2] - p[0]))
        return float(1.0 / np.sqrt(max(area, 1e-12)))


class Registrar:
    """Registers frames against a marker layout, re-detecting only when needed.

    Args:
        marker_corners_mm: marker id -> its 4 corners in board mm, in OpenCV's corner order
            (top-left, top-right, bottom-right, bottom-left of the printed marker).
        dictionary_name: the markers' dictionary (``"DICT_4X4_50"`` for our tables).
        min_markers: markers needed to register (2 = 8 corners; one marker alone gives a
            homography that is exact on its corners and poor everywhere else).
        max_residual_px: a registration whose RMS corner residual (pixels) is larger is refused.
        redetect_every: detect again after this many frames even when nothing moved.
        max_cell_mismatch: fraction (0-1) of marker cells that may differ from the
            registration frame before the markers are detected again.
        min_spread: the markers used must span this fraction (0-1) of the layout's extent in
            x and in y (two markers on the same edge are not enough; two diagonal ones are).
        lens: (camera matrix, distortion coefficients) from ``companion calibrate intrinsics``,
            or None to treat the lens as distortion-free.
        layout_only: the full detection looks only for the layout's markers
            (:class:`MarkerFinder`'s ``layout_only``; :attr:`found` may then lack other markers).

    Raises:
        RegistrationError: an unknown dictionary, or a layout that is not 4 x 2 per marker.
    """

    def __init__(self, marker_corners_mm: Mapping[int, np.ndarray], dictionary_name: str = "DICT_4X4_50",
                 min_markers: int = 2, max_residual_px: float = 3.0, redetect_every: int = 30,
                 max_cell_mismatch: float = 0.2, min_spread: float = 0.6,
                 lens: tuple[np.ndarray, np.ndarray] | None = None, layout_only: bool = False):
        self.layout: dict[int, np.ndarray] = {}
        for mid, corners in marker_corners_mm.items():
            arr = np.asarray(corners, dtype=np.float64)
            if arr.shape != (4, 2):
                raise RegistrationError(f"marker {mid}: expected 4 corners (x, y) in mm, got shape {arr.shape}")
            self.layout[int(mid)] = arr
        if not self.layout:
            raise RegistrationError("the marker layout is empty")
        every = np.concatenate(list(self.layout.values()))
        self._extent = np.maximum(np.ptp(every, axis=0), 1e-9)
        self._boards: dict[tuple[int, ...], np.ndarray] = {}
        self.dictionary_name = dictionary_name
        self.min_markers = max(1, int(min_markers))
        #: the full detection (:class:`MarkerFinder`: a half-size pass, then the full detector in
        #: windows; the same markers and corners as one pass over the whole frame)
        self._detector = MarkerFinder(dictionary_name, self.layout, self.min_markers, layout_only)
        self._window_detector = _detector(dictionary_name, window=True)
        self.max_residual_px = float(max_residual_px)
        self.redetect_every = max(1, int(redetect_every))
        self.max_cell_mismatch = float(max_cell_mismatch)
        self.min_spread = float(min_spread)
        self.lens = None if lens is None else (np.asarray(lens[0], np.float64), np.asarray(lens[1], np.float64))
        self.current: Registration | None = None
        #: why the last frame could not be registered ("" when it was).
        self.status = "not yet registered"
        self.detections = 0
        #: every marker of the last full detection (id -> ``4 x 2`` pixel corners), board or not
        self.found: dict[int, np.ndarray] = {}
        self._frames = 0
        #: at registration: the markers inside the frame, their cells' black / white pattern
        #: (``markers x cells bool``) and each marker's threshold (``markers x 1``)
        self._cells: tuple[tuple[int, ...], np.ndarray, np.ndarray] | None = None
        self._cell_mm: dict[int, np.ndarray] = {}
        self._cell_mm_all: dict[tuple[int, ...], np.ndarray] = {}
        self._cell_px: tuple | None = None

    # ------------------------------------------------------------------ full detection
    def register(self, frame: np.ndarray, found: Mapping[int, np.ndarray] | None = None) -> Registration | None:
        """Detect the markers in ``frame`` and fit the homography from every visible corner.

        Args:
            frame: ``H x W x 3 uint8`` BGR (or grey ``H x W uint8``).
            found: the frame's markers when the caller has detected them already
                (:func:`detect_markers` of this frame, e.g. to read a marker that is not on the
                board from the same detection); None to detect here. Every marker detected is
                kept in :attr:`found` either way.

        Returns:
            The registration, or None when the board is not visible (fewer than
            ``min_markers`` known markers, or a residual above ``max_residual_px``); then
            :attr:`status` says why.
        """
        grey = _grey(frame)
        if found is None:
            self.detections += 1
            found = detect_markers(grey, detector=self._detector)
        reg = self._register_found(grey, found)
        if reg is None and self._detector.from_windows(found):
            # the finder's windows missed a marker the whole frame shows (a smeared border):
            # never "board not visible" because of the shortcut
            whole = self._detector.whole_frame(grey)
            if sorted(whole) != sorted(found):
                reg = self._register_found(grey, whole)
        return reg

    def _register_found(self, grey: np.ndarray, found: Mapping[int, np.ndarray]) -> Registration | None:
        """:meth:`register` with the frame's markers detected (grey ``H x W uint8``)."""
        self.found = dict(found)
        known = {i: c for i, c in found.items() if i in self.layout}
        if len(known) < self.min_markers:
            extra = f" (saw ids {sorted(found)} that are not on this board)" if found and not known else ""
            self.status = f"board not visible: {len(known)} of {len(self.layout)} markers found, need {self.min_markers}{extra}"
            self.current = None
            return None
        reg = self._fit(known)
        if reg is None or reg.residual_px > self.max_residual_px:
            self.status = ("board not visible: the markers found do not agree with the board layout "
                           "or lie along one edge only") + (f" (residual {reg.residual_px:.1f} px)" if reg is not None else "")
            self.current = None
            return None
        self.status = ""
        self.current = reg
        self._remember_cells(grey, reg)
        return reg

    def _spread_ok(self, ids: Sequence[int]) -> bool:
        """The markers used must span at least ``min_spread`` of the layout in x and in y: two
        markers on one edge fit their own corners well and the far side of the board badly."""
        used = np.concatenate([self.layout[i] for i in ids])
        span = np.ptp(used, axis=0) / self._extent
        return bool(np.all(span >= self.min_spread))

    def _fit(self, known: Mapping[int, np.ndarray]) -> Registration | None:
        ids = sorted(known)
        detected = known
        if self.lens is not None:
            known = {i: undistort(c, *self.lens) for i, c in known.items()}
        key = tuple(ids)
        board = self._boards.get(key)
        if board is None:
            board = self._boards[key] = np.concatenate([self.layout[i] for i in ids]).astype(np.float64)
        image = np.concatenate([known[i] for i in ids]).astype(np.float64)
        if len(ids) >= 3:
            h, mask = cv2.findHomography(board, image, cv2.RANSAC, 4.0)
            if h is not None and mask is not None:
                keep = mask.reshape(-1, 4).all(axis=1)
                if not keep.all():
                    ids = [i for i, k in zip(ids, keep) if k]
                    if len(ids) < self.min_markers:
                        return None
                    board, image = board[np.repeat(keep, 4)], image[np.repeat(keep, 4)]
        if not self._spread_ok(ids):
            return None
        h, _ = cv2.findHomography(board, image, 0)
        if h is None or not np.all(np.isfinite(h)) or abs(np.linalg.det(h)) < 1e-12:
            return None
        residual = float(np.sqrt(np.mean(np.sum((project(h, board) - image) ** 2, axis=1))))
        return Registration(
            board_to_image=h, image_to_board=np.linalg.inv(h), marker_ids=tuple(ids),
            residual_px=residual, image_corners={i: detected[i] for i in ids}, frame_index=self._frames,
            lens=self.lens,
        )

    # ------------------------------------------------------------------ tracking
    def _cell_points(self, mid: int) -> np.ndarray:
        """Centres of the marker's cells (bits and black border), board mm, ``36 x 2`` for 4x4."""
        pts = self._cell_mm.get(mid)
        if pts is None:
            bits = int(self._detector.getDictionary().markerSize)
            n = bits + 2
            tl, tr, _br, bl = self.layout[mid]
            u = (np.arange(n) + 0.5) / n
            uu, vv = np.meshgrid(u, u)
            pts = self._cell_mm[mid] = tl + uu.reshape(-1, 1) * (tr - tl) + vv.reshape(-1, 1) * (bl - tl)
        return pts

    def _cell_pixels(self, reg: Registration, shape: tuple[int, ...]) -> dict[int, np.ndarray | None]:
        """Per marker of ``reg``, the flat pixel indices of its cells in a frame of ``shape``
        (None when a cell falls outside it); computed once per registration, every marker's
        cells projected at once (also kept as the markers inside and a ``markers x cells``
        index matrix)."""
        cached = self._cell_px
        if cached is not None and cached[0] is reg and cached[1] == shape[:2]:
            return cached[2]
        h, w = shape[:2]
        ids = reg.marker_ids
        out: dict[int, np.ndarray | None] = {}
        inside_ids: tuple[int, ...] = ()
        index = np.zeros((0, 0), dtype=int)
        if ids:
            mm = self._cell_mm_all.get(ids)
            if mm is None:
                mm = self._cell_mm_all[ids] = np.concatenate([self._cell_points(mid) for mid in ids])
            pts = np.rint(reg.to_image(mm)).astype(int).reshape(len(ids), -1, 2)
            inside = ((pts[..., 0] >= 0) & (pts[..., 1] >= 0) & (pts[..., 0] < w) & (pts[..., 1] < h)).all(axis=1)
            flat = pts[..., 1] * w + pts[..., 0]
            out = {mid: (flat[j] if inside[j] else None) for j, mid in enumerate(ids)}
            keep = np.flatnonzero(inside)
            inside_ids, index = tuple(ids[j] for j in keep.tolist()), flat[keep]
        self._cell_px = (reg, shape[:2], out, inside_ids, index)
        return out

    def _cells_matrix(self, frame: np.ndarray, reg: Registration) -> tuple[tuple[int, ...], np.ndarray]:
        """The markers of ``reg`` whose cells are all in the frame, and the grey level
        (``markers x cells int16``, OpenCV's BGR to grey of each pixel) at their cells: only
        those pixels are converted, not the frame."""
        self._cell_pixels(reg, frame.shape)
        ids, index = self._cell_px[3], self._cell_px[4]  # type: ignore[index]
        if not ids:
            return ids, np.zeros((0, 0), np.int16)
        idx = index.reshape(-1)
        if frame.ndim == 2:
            grey = np.take(frame.reshape(-1), idx)
        else:
            px = np.take(frame.reshape(-1, 3), idx, axis=0)
            grey = cv2.cvtColor(px.reshape(-1, 1, 3), cv2.COLOR_BGR2GRAY).reshape(-1)
        return ids, grey.astype(np.int16).reshape(len(ids), -1)

    def _cells_grey(self, frame: np.ndarray, reg: Registration) -> dict[int, np.ndarray | None]:
        """The grey level (``int16``, OpenCV's BGR to grey of each pixel) at every cell of the
        markers of ``reg`` (None for a marker with a cell outside the frame)."""
        out: dict[int, np.ndarray | None] = dict.fromkeys(self._cell_pixels(reg, frame.shape))
        ids, grey = self._cells_matrix(frame, reg)
        for j, mid in enumerate(ids):
            out[mid] = grey[j]
        return out

    def _remember_cells(self, grey: np.ndarray, reg: Registration) -> None:
        ids, s = self._cells_matrix(grey, reg)
        if not ids:
            self._cells = None
            return
        # each marker's threshold halfway between its darkest and its lightest cell
        threshold = (s.min(axis=1).astype(np.float64) + s.max(axis=1)) / 2.0
        self._cells = (ids, s >= threshold[:, None], threshold[:, None])

    def cell_mismatch(self, frame: np.ndarray) -> float:
        """The tracking residual: the largest fraction (0-1) of a marker's cells whose black or
        white differs from the registration frame (1.0 when nothing is registered).

        Args:
            frame: ``H x W x 3 uint8`` BGR or ``H x W uint8`` grey; only the cells' pixels
                are read (a few hundred), through the registration's cached pixel places.
        """
        if self.current is None or self._cells is None:
            return 1.0
        if not (frame.ndim == 2 or (frame.ndim == 3 and frame.shape[2] == 3)):
            raise ValueError(f"expected an H x W x 3 uint8 BGR or H x W grey image, got shape {frame.shape}")
        ids, pattern, threshold = self._cells
        now, s = self._cells_matrix(frame, self.current)
        if now != ids:
            return 1.0  # a remembered marker's cells are no longer all in the frame
        return float(np.max(np.mean((s >= threshold) != pattern, axis=1)))

    def update(self, frame: np.ndarray) -> Registration | None:
        """Register one frame of a stream: keep the last homography while the markers' cells
        still match, detect again when they do not or every ``redetect_every`` frames.

        Args:
            frame: ``H x W x 3 uint8`` BGR.

        Returns:
            The registration in force, or None when the board is not visible (see :attr:`status`).
        """
        self._frames += 1
        cur = self.current
        if cur is None:
            return self.register(frame)
        if self._frames - cur.frame_index < self.redetect_every and self.cell_mismatch(frame) <= self.max_cell_mismatch:
            return cur
        near = self.register_near(frame, cur)
        return near if near is not None else self.register(frame)

    def register_near(self, frame: np.ndarray, previous: Registration, margin_px: int = 40) -> Registration | None:
        """Detect the markers only in windows around where ``previous`` puts them (a few small
        crops instead of the whole frame); the full detection is the fallback.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            previous: the last registration.
            margin_px: how far (pixels) a marker may have moved.

        Returns:
            The new registration, or None when too few markers were found near their places
            (the caller then detects in the whole frame); :attr:`current` is updated on success.
        """
        h, w = frame.shape[:2]
        found: dict[int, np.ndarray] = {}
        ids = list(self.layout)
        # every marker's corners projected at once; each window's bounds in whole pixels
        corners = previous.to_image(np.concatenate([self.layout[i] for i in ids])).reshape(-1, 4, 2)
        lo = np.floor(corners.min(axis=1)).astype(int)
        hi = np.ceil(corners.max(axis=1)).astype(int)
        # first a tight window (a still camera's markers have not moved: a third of the pixels),
        # a marker taken from it only 12 px inside it (the 23 px threshold window's half and a
        # pixel: the pixels around it are then the wide window's); then the wide window
        tight = min(int(margin_px), _NEAR_TIGHT_PX)
        for margin in dict.fromkeys((tight, int(margin_px))):
            for k, mid in enumerate(ids):
                if mid in found:
                    continue
                x0, y0 = max(lo[k, 0] - margin, 0), max(lo[k, 1] - margin, 0)
                x1, y1 = min(hi[k, 0] + margin, w), min(hi[k, 1] + margin, h)
                if x1 - x0 < 16 or y1 - y0 < 16:
                    continue
                crop = _grey(frame[y0:y1, x0:x1])  # only the window is converted (a view, no copy)
                c = detect_markers(crop, detector=self._window_detector).get(mid)
                if c is None:
                    continue
                if margin < margin_px:
                    (cx0, cy0), (cx1, cy1) = c.min(axis=0).tolist(), c.max(axis=0).tolist()
                    if ((x0 > 0 and cx0 < 12) or (y0 > 0 and cy0 < 12) or (x1 < w and cx1 > x1 - x0 - 13)
                            or (y1 < h and cy1 > y1 - y0 - 13)):
                        continue
                found[mid] = c + np.array([x0, y0], dtype=np.float32)
        self.detections += 1
        if len(found) < self.min_markers:
            return None
        reg = self._fit(found)
        if reg is None or reg.residual_px > self.max_residual_px:
            return None
        self.status = ""
        self.current = reg
        self.found = found  # this detection's markers (the board's only): never an older frame's
        self._remember_cells(frame, reg)
        return reg
