"""Calibration: camera intrinsics from chessboard views, the printable marker sheet, the board
geometry fitted from a photo, and (in :mod:`companion.vision.carrousel`) the reference colours.

Everything is written as human-readable JSON (or PDF/PNG for the sheet) under ``calibration/``.

Sources: Z. Zhang, "A flexible new technique for camera calibration", IEEE TPAMI 22(11), 2000
(the method behind ``cv2.calibrateCamera``); OpenCV ``cv2.findChessboardCorners`` and
``cv2.cornerSubPix`` (``winSize`` is the *half* side: ``(5, 5)`` is an 11 x 11 px window);
OpenCV's own calibration test ``modules/python/test/test_calibration.py`` (half-window 5 on its
640 x 480 ``left*.jpg`` views, where neighbouring corners are 22-45 px apart); PDF 1.4 reference
(Adobe, 2001) for the vector sheet; PNG specification (ISO/IEC 15948), ``pHYs`` chunk for the
print resolution.

The sub-pixel window is chosen per view from the detected corners' spacing
(:func:`subpixel_half_window`), not fixed: a window reaching towards the neighbouring corners
pulls each corner off the true saddle point (on OpenCV's 640 x 480 views a fixed half-window of
11 px doubles the RMS reprojection error, 0.49 px against 0.19 px).
"""

from __future__ import annotations

import dataclasses
import json
import struct
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.calibration_checks import check_camera_matrix, check_distortion, expect
from companion.vision.registration import Registrar, dictionary

__all__ = [
    "Intrinsics",
    "find_chessboard",
    "corner_spacing_px",
    "subpixel_half_window",
    "calibrate_intrinsics",
    "marker_sheet_pdf",
    "marker_sheet_png",
    "fit_space_centres",
    "load_lens",
    "ClosePair",
    "min_separation",
    "reference_distance",
    "close_reference_pairs",
    "missing_colours",
]

SUBPIX_CRITERIA = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.001)
#: Half-window of the sub-pixel search as a fraction of the smallest corner spacing: the
#: window's side (2 h + 1) then stays under half the distance to the nearest corner.
SUBPIX_WINDOW_FRACTION = 0.2
#: Smallest half-window, px (below it the refinement sees too few gradient pixels).
SUBPIX_MIN_HALF_WINDOW = 2


@dataclasses.dataclass(frozen=True)
class Intrinsics:
    """A calibrated camera.

    Attributes:
        camera_matrix: ``3 x 3`` (fx, fy, cx, cy in pixels).
        dist_coeffs: OpenCV's distortion coefficients (k1, k2, p1, p2, k3).
        image_size: (width, height), pixels.
        rms_px: RMS reprojection error over all corners, pixels.
        views: the image files used.
        half_windows_px: per view, the sub-pixel half-window used (``cv2.cornerSubPix``
            ``winSize``, px).
    """

    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    image_size: tuple[int, int]
    rms_px: float
    views: tuple[str, ...] = ()
    half_windows_px: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        k = self.camera_matrix
        return {
            "_comment": "Camera intrinsics from chessboard views (companion calibrate intrinsics); "
                        "pixels; OpenCV distortion model (k1, k2, p1, p2, k3).",
            "image_size": list(self.image_size),
            "fx": float(k[0, 0]), "fy": float(k[1, 1]), "cx": float(k[0, 2]), "cy": float(k[1, 2]),
            "camera_matrix": [[float(v) for v in row] for row in k],
            "dist_coeffs": [float(v) for v in np.asarray(self.dist_coeffs).reshape(-1)],
            "rms_px": float(self.rms_px),
            "views": list(self.views),
            "subpixel_half_windows_px": list(self.half_windows_px),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = "camera.json") -> Intrinsics:
        """Read back :meth:`to_json`'s dict.

        Raises:
            ValueError: a missing or ill-shaped field, or a camera matrix no lens has (singular,
                focal lengths not above 0, the principal point outside the frame:
                :func:`~companion.calibration_checks.check_camera_matrix`), or distortion
                coefficients no lens has over the frame (that cannot be undone, fold the image or
                move its points too far: :func:`~companion.calibration_checks.check_distortion`),
                naming ``where`` and the field.
        """
        if not isinstance(d, Mapping):
            raise ValueError(f"{where}: expected a JSON object with camera_matrix, dist_coeffs and image_size")
        missing = [name for name in ("camera_matrix", "dist_coeffs", "image_size") if name not in d]
        if missing:
            named = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
            raise ValueError(f"{where}: expected camera_matrix, dist_coeffs and image_size; {named} "
                             f"{'is' if len(missing) == 1 else 'are'} missing (is this a camera.json from "
                             "`companion calibrate intrinsics`?)")
        for name in ("camera_matrix", "dist_coeffs", "image_size"):
            try:
                np.asarray(d[name], float) if name != "image_size" else tuple(int(v) for v in d[name])
            except (TypeError, ValueError):
                raise ValueError(f"{where}: {name}: expected numbers"
                                 f"{' ([width, height] in pixels)' if name == 'image_size' else ''}") from None
        k = np.asarray(d["camera_matrix"], float)
        dist = np.asarray(d["dist_coeffs"], float)
        size = tuple(int(v) for v in d["image_size"])
        if k.shape != (3, 3) or len(size) != 2:
            raise ValueError(f"{where}: camera_matrix must be 3 x 3 and image_size [width, height]")
        expect(where, "image_size", all(v > 0 for v in size), "[width, height] in pixels, both above 0", list(size))
        check_camera_matrix(where, "camera_matrix", k, size)
        expect(where, "dist_coeffs", dist.ndim <= 2, "a list of OpenCV's distortion coefficients", d["dist_coeffs"])
        check_distortion(where, "dist_coeffs", k, d["dist_coeffs"], size)
        return cls(k, dist, size, float(d.get("rms_px", 0.0)), tuple(d.get("views", ())),  # type: ignore[arg-type]
                   tuple(int(v) for v in d.get("subpixel_half_windows_px", ())))


def load_lens(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(camera matrix, distortion coefficients) from a ``camera.json`` written by
    ``companion calibrate intrinsics``.

    Raises:
        ValueError: a missing or malformed file, naming it.
    """
    p = Path(path)
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{p}: no such file") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    intr = Intrinsics.from_json(d, str(p))
    return intr.camera_matrix, intr.dist_coeffs


def corner_spacing_px(corners: np.ndarray, pattern: tuple[int, int]) -> float:
    """The smallest distance between neighbouring corners (along a row or a column) of a
    detected chessboard, pixels.

    Args:
        corners: ``N x 1 x 2`` (or ``N x 2``) float corners in OpenCV's order (row by row,
            ``pattern[0]`` per row), as ``cv2.findChessboardCorners`` returns them.
        pattern: inner corners per row and per column, e.g. (9, 6).

    Raises:
        ValueError: ``corners`` does not hold ``pattern[0] * pattern[1]`` points.
    """
    cols, rows = pattern
    pts = np.asarray(corners, np.float64).reshape(-1, 2)
    if len(pts) != cols * rows or cols < 2 or rows < 2:
        raise ValueError(f"expected {cols} x {rows} corners, got {len(pts)}")
    grid = pts.reshape(rows, cols, 2)
    along_rows = np.linalg.norm(np.diff(grid, axis=1), axis=2)
    along_cols = np.linalg.norm(np.diff(grid, axis=0), axis=2)
    return float(min(along_rows.min(), along_cols.min()))


def subpixel_half_window(spacing_px: float) -> int:
    """``cv2.cornerSubPix``'s half-window (its ``winSize``) for corners ``spacing_px`` apart.

    ``floor(SUBPIX_WINDOW_FRACTION * spacing)``, at least :data:`SUBPIX_MIN_HALF_WINDOW`: on
    OpenCV's 640 x 480 views (spacing 22-37 px) this gives 4-7 px, around the 5 px of OpenCV's
    own calibration test; a 1920 x 1080 view of the same board gets a proportionally larger one.

    Args:
        spacing_px: the smallest corner spacing (:func:`corner_spacing_px`), pixels, > 0.

    Returns:
        The half side in pixels (the window is ``2 h + 1`` pixels square).
    """
    return max(SUBPIX_MIN_HALF_WINDOW, int(SUBPIX_WINDOW_FRACTION * float(spacing_px)))


def find_chessboard(image: np.ndarray, pattern: tuple[int, int]) -> np.ndarray | None:
    """The inner corners of a chessboard, refined to sub-pixel with a window sized from the
    detected corners' spacing (:func:`subpixel_half_window`).

    Args:
        image: ``H x W x 3 uint8`` BGR or ``H x W uint8`` grey.
        pattern: inner corners per row and per column, e.g. (9, 6).

    Returns:
        ``N x 1 x 2 float32`` corners in OpenCV's order, or None when the board is not found.
    """
    found = _find_refined(image, pattern)
    return None if found is None else found[0]


def _find_refined(image: np.ndarray, pattern: tuple[int, int]) -> tuple[np.ndarray, int] | None:
    """(refined corners, half-window used in px) or None: :func:`find_chessboard`'s work."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    found, corners = cv2.findChessboardCorners(grey, pattern, None)
    if not found:
        return None
    half = subpixel_half_window(corner_spacing_px(corners, pattern))
    # OpenCV 4 returns N x 1 x 2 corners, OpenCV 5 N x 2: one shape for every caller
    corners = np.ascontiguousarray(corners, np.float32).reshape(-1, 1, 2)
    return cv2.cornerSubPix(grey, corners, (half, half), (-1, -1), SUBPIX_CRITERIA).reshape(-1, 1, 2), half


def calibrate_intrinsics(paths: Sequence[str | Path], pattern: tuple[int, int], square_mm: float,
                         progress: Callable[[str], None] | None = None) -> Intrinsics:
    """Camera intrinsics from photos of a chessboard (Zhang's method through OpenCV).

    Args:
        paths: image files.
        pattern: inner corners (per row, per column).
        square_mm: the side of a square, mm (sets the scale of the extrinsics only).
        progress: called with one line per image and for the result.

    Returns:
        The :class:`Intrinsics` (RMS reprojection error in pixels).

    Raises:
        ValueError: an unreadable image (naming it), images of different sizes, or fewer than 3
            views where the board was found.
    """
    say = progress or (lambda s: None)
    objp = np.zeros((pattern[0] * pattern[1], 3), np.float32)
    objp[:, :2] = np.mgrid[0:pattern[0], 0:pattern[1]].T.reshape(-1, 2) * square_mm
    obj_points, img_points, used, windows = [], [], [], []
    size: tuple[int, int] | None = None
    for i, p in enumerate(paths, start=1):
        from companion.vision.images import read_image

        image = read_image(p, cv2.IMREAD_GRAYSCALE)  # ImageError is a ValueError; a pixel limit first
        this = (image.shape[1], image.shape[0])
        if size is not None and this != size:
            raise ValueError(f"{p}: {this[0]} x {this[1]} pixels, the other views are {size[0]} x {size[1]}")
        size = this
        found = _find_refined(image, pattern)
        if found is None:
            say(f"[{i}/{len(paths)}] {Path(p).name}: no {pattern[0]} x {pattern[1]} chessboard found; skipped")
            continue
        corners, half = found
        obj_points.append(objp)
        img_points.append(corners)
        used.append(str(p))
        windows.append(half)
        say(f"[{i}/{len(paths)}] {Path(p).name}: {len(corners)} corners, sub-pixel window "
            f"{2 * half + 1} x {2 * half + 1} px")
    if len(used) < 3:
        raise ValueError(f"the chessboard was found in {len(used)} view(s); at least 3 are needed")
    assert size is not None
    rms, k, dist, _r, _t = cv2.calibrateCamera(obj_points, img_points, size, None, None)
    say(f"RMS reprojection error {rms:.4f} px over {len(used)} views; fx {k[0, 0]:.1f} fy {k[1, 1]:.1f} "
        f"cx {k[0, 2]:.1f} cy {k[1, 2]:.1f}")
    return Intrinsics(k, dist.reshape(-1), size, float(rms), tuple(Path(u).name for u in used), tuple(windows))


# --------------------------------------------------------------------------- reference colours
@dataclasses.dataclass(frozen=True)
class ClosePair:
    """Two reference colours nearer than the reader can safely tell apart.

    Attributes:
        first, second: the colour names.
        distance: their distance, CIE76 Delta E weighted as the reader weighs it.
        threshold: the smallest safe distance (:func:`min_separation`), same units.
    """

    first: str
    second: str
    distance: float
    threshold: float

    def __str__(self) -> str:
        return (f"{self.first} and {self.second} are {self.distance:.1f} apart (Delta E), under the "
                f"{self.threshold:.1f} the reader needs to tell them apart safely")


def min_separation(classifier: Any) -> float:
    """The smallest distance between two reference colours that the reader's own abstention
    margin makes safe: ``near x (1 + ratio)`` of its
    :class:`~companion.vision.colour.RegionClassifier`.

    Why: a pixel of colour A moved by ``d`` towards B (the light, noise) is read as B once
    ``D - d < ratio x d``, i.e. ``d > D / (1 + ratio)``, where ``D`` is the distance A-B; it is
    still inside the reader's tolerance of A (``near``) while ``d < near``. So with
    ``D < near x (1 + ratio)`` a pixel the reader should accept as A can be read as B; above it
    the pixel abstains ("other") before it can be misread. Horses (near 24, ratio 0.6): 38.4;
    card discs (near 30): 48.

    Args:
        classifier: a ``RegionClassifier`` (its ``near`` and ``ratio``, Delta E and a fraction).
    """
    return float(classifier.near) * (1.0 + float(classifier.ratio))


def reference_distance(a: Sequence[float], b: Sequence[float], l_weight: float) -> float:
    """Distance between two Lab colours as the reader measures a pixel's distance to a
    reference (CIE76 Delta E with L* weighted by ``l_weight`` for a chromatic reference, fully
    for an achromatic one, chroma below 10, as in ``RegionClassifier.pixel_classes``); the
    smaller of the two ways round, Delta E."""
    pa, pb = np.asarray(a, float), np.asarray(b, float)

    def towards(ref: np.ndarray, px: np.ndarray) -> float:
        lw = 1.0 if np.hypot(ref[1], ref[2]) < 10.0 else l_weight
        d = px - ref
        return float(np.sqrt((lw * d[0]) ** 2 + d[1] ** 2 + d[2] ** 2))

    return min(towards(pa, pb), towards(pb, pa))


def close_reference_pairs(references: Mapping[str, Sequence[float]], classifier: Any) -> list[ClosePair]:
    """Every pair of reference colours nearer than :func:`min_separation` for ``classifier``.

    Args:
        references: colour -> ``[L*, a*, b*]`` (as in ``carrousel-colours.json``).
        classifier: the ``RegionClassifier`` that will read them (its ``near``, ``ratio`` and
            ``l_weight``).

    Returns:
        The close pairs, nearest first (empty when every pair is safe).
    """
    threshold = min_separation(classifier)
    names = sorted(references)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = reference_distance(references[a], references[b], float(classifier.l_weight))
            if d < threshold:
                out.append(ClosePair(a, b, d, threshold))
    return sorted(out, key=lambda p: p.distance)


def missing_colours(found: Mapping[str, Any], wanted: Sequence[str]) -> list[str]:
    """The colours of ``wanted`` (in its order) that have no reference in ``found``."""
    return [c for c in wanted if c not in found]


# --------------------------------------------------------------------------- marker sheet
_PT_PER_MM = 72.0 / 25.4


def _sheet_layout(marker_ids: Sequence[int], marker_mm: float) -> list[tuple[int, float, float]]:
    """(id, x, y) of each marker's top-left corner on an A4 page, mm from the top-left."""
    out = []
    for n, mid in enumerate(marker_ids):
        col, row = n % 2, n // 2
        out.append((int(mid), 30.0 + col * (marker_mm + 45.0), 40.0 + row * (marker_mm + 40.0)))
    return out


def marker_sheet_pdf(marker_ids: Sequence[int], dictionary_name: str, marker_mm: float, title: str = "",
                     places: Mapping[int, str] | None = None) -> bytes:
    """A one-page A4 PDF with the markers at true size (vector: exact when printed at 100 %),
    each labelled with its id, and a 150 mm ruler with millimetre ticks to check the scale.

    Args:
        marker_ids: marker ids to print.
        dictionary_name: their ArUco dictionary (``"DICT_4X4_50"``).
        marker_mm: side of the black square, mm.
        title: a line printed at the top.
        places: marker id -> where it goes (:func:`companion.vision.mat.marker_places`),
            printed under the ruler.

    Raises:
        RegistrationError: an unknown dictionary.
    """
    d = dictionary(dictionary_name)
    bits = int(d.markerSize)
    page_w, page_h = 210.0, 297.0
    ops: list[str] = ["0 g"]

    def rect(x_mm: float, y_mm: float, w_mm: float, h_mm: float) -> None:
        # PDF origin is bottom-left; our layout is from the top-left
        ops.append(f"{x_mm * _PT_PER_MM:.3f} {(page_h - y_mm - h_mm) * _PT_PER_MM:.3f} "
                   f"{w_mm * _PT_PER_MM:.3f} {h_mm * _PT_PER_MM:.3f} re f")

    def text(x_mm: float, y_mm: float, size_pt: float, s: str) -> None:
        s = s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"BT /F1 {size_pt} Tf {x_mm * _PT_PER_MM:.2f} {(page_h - y_mm) * _PT_PER_MM:.2f} Td ({s}) Tj ET")

    if title:
        text(20, 20, 12, title)
    cell = marker_mm / (bits + 2)
    for mid, x, y in _sheet_layout(marker_ids, marker_mm):
        img = cv2.aruco.generateImageMarker(d, mid, bits + 2)  # one pixel per cell
        for r in range(bits + 2):
            for c in range(bits + 2):
                if img[r, c] < 128:
                    rect(x + c * cell, y + r * cell, cell, cell)
        text(x, y + marker_mm + 7, 10, f"id {mid}  ({dictionary_name}, {marker_mm:g} mm)  top edge towards +y")
    # the ruler: 150 mm with 1 mm ticks, 5 mm and 10 mm longer
    rx, ry = 30.0, 40.0 + ((len(marker_ids) + 1) // 2) * (marker_mm + 40.0) + 10.0
    rect(rx, ry, 150.0, 0.3)
    for mm in range(151):
        length = 6.0 if mm % 10 == 0 else (4.0 if mm % 5 == 0 else 2.5)
        rect(rx + mm - 0.1, ry, 0.2, length)
        if mm % 10 == 0:
            text(rx + mm - 1.5, ry + 10, 7, str(mm))
    text(rx, ry + 16, 9, "ruler: 150 mm. Print at 100 % (no fit-to-page) and check it with a real ruler.")
    if places:
        import textwrap

        y = ry + 26
        text(rx, y, 9, "Where each marker goes (cut it out with a white border of at least 5 mm):")
        for mid in marker_ids:
            for line in textwrap.wrap(f"id {mid}: {places.get(int(mid), 'not in the geometry file')}", 100):
                y += 4.5
                text(rx, y, 8, line)
    content = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page_w * _PT_PER_MM:.2f} {page_h * _PT_PER_MM:.2f}] "
        f"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>".encode(),
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def marker_sheet_png(marker_ids: Sequence[int], dictionary_name: str, marker_mm: float, dpi: int = 300) -> bytes:
    """The same sheet as :func:`marker_sheet_pdf` as a PNG at ``dpi`` (the print resolution is
    stored in the file's ``pHYs`` chunk, so printing at that resolution gives true size)."""
    d = dictionary(dictionary_name)
    bits = int(d.markerSize)
    px = dpi / 25.4
    w, h = int(round(210 * px)), int(round(297 * px))
    page = np.full((h, w), 255, np.uint8)
    for mid, x, y in _sheet_layout(marker_ids, marker_mm):
        side = int(round(marker_mm * px))
        marker = cv2.resize(cv2.aruco.generateImageMarker(d, mid, bits + 2), (side, side), interpolation=cv2.INTER_NEAREST)
        x0, y0 = int(round(x * px)), int(round(y * px))
        page[y0:y0 + side, x0:x0 + side] = marker
        cv2.putText(page, f"id {mid} ({dictionary_name}, {marker_mm:g} mm)", (x0, int(round((y + marker_mm + 7) * px))),
                    cv2.FONT_HERSHEY_SIMPLEX, dpi / 300 * 0.9, 0, max(1, dpi // 150), cv2.LINE_AA)
    rx, ry = 30.0, 40.0 + ((len(marker_ids) + 1) // 2) * (marker_mm + 40.0) + 10.0
    for mm in range(151):
        length = 6.0 if mm % 10 == 0 else (4.0 if mm % 5 == 0 else 2.5)
        x = int(round((rx + mm) * px))
        cv2.line(page, (x, int(round(ry * px))), (x, int(round((ry + length) * px))), 0, max(1, dpi // 150))
        if mm % 10 == 0:
            cv2.putText(page, str(mm), (x - int(2 * px), int(round((ry + 10) * px))), cv2.FONT_HERSHEY_SIMPLEX,
                        dpi / 300 * 0.7, 0, max(1, dpi // 150), cv2.LINE_AA)
    cv2.line(page, (int(round(rx * px)), int(round(ry * px))), (int(round((rx + 150) * px)), int(round(ry * px))), 0,
             max(1, dpi // 150))
    ok, buf = cv2.imencode(".png", page)
    if not ok:
        raise ValueError("cannot encode the marker sheet as PNG")
    data = buf.tobytes()
    ppm = int(round(dpi / 0.0254))
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_ihdr = 8 + 4 + 4 + 13 + 4  # signature, IHDR length/type/data/crc
    return data[:end_ihdr] + chunk + data[end_ihdr:]


# --------------------------------------------------------------------------- board geometry
def fit_space_centres(image: np.ndarray, registrar: Registrar, centres_mm: np.ndarray, outline_radius_mm: float,
                      search_mm: float = 8.0, step_mm: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """Where the printed space outlines really are: for each nominal centre, the centre (board
    mm) within ``search_mm`` whose circle of ``outline_radius_mm`` is darkest in the photo.

    Args:
        image: ``H x W x 3 uint8`` BGR photo of the board.
        registrar: registers the photo (the markers' layout).
        centres_mm: ``N x 2`` nominal centres.
        outline_radius_mm: radius of the printed outline's middle.
        search_mm, step_mm: the search window and its step.

    Returns:
        (fitted centres ``N x 2``, contrast per space: mean lightness around the circle minus
        on it, 0-255 grey levels; a low contrast means the outline was not seen).

    Raises:
        ValueError: the board is not visible in the photo.
    """
    reg = registrar.register(image)
    if reg is None:
        raise ValueError(registrar.status)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    ang = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    unit = np.stack([np.cos(ang), np.sin(ang)], axis=1)

    def mean_on(pts_mm: np.ndarray) -> np.ndarray:
        p = reg.to_image(pts_mm).astype(np.float32)
        return cv2.remap(grey, p[:, 0].reshape(1, -1), p[:, 1].reshape(1, -1), cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE).reshape(-1)

    def darkest(c0: np.ndarray, half: float, step: float) -> tuple[np.ndarray, float]:
        best, best_v = c0, np.inf
        for dx in np.arange(-half, half + 1e-9, step):
            for dy in np.arange(-half, half + 1e-9, step):
                v = float(mean_on(c0 + [dx, dy] + unit * outline_radius_mm).mean())
                if v < best_v:
                    best, best_v = c0 + [dx, dy], v
        return best, best_v

    fitted, contrast = [], []
    for c in np.asarray(centres_mm, float):
        coarse, _ = darkest(c, search_mm, 1.0)  # coarse to fine
        best, best_v = darkest(coarse, 1.0, step_mm)
        around = 0.5 * (mean_on(best + unit * (outline_radius_mm - 4)).mean() + mean_on(best + unit * (outline_radius_mm + 4)).mean())
        fitted.append(best)
        contrast.append(float(around - best_v))
    return np.array(fitted), np.array(contrast)


def write_json(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (creating the folder); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(obj, indent=1) + "\n", encoding="utf-8")
    return p
