"""The dice reader: the value of each standard six-sided die lying in the dice tray.

Input: a camera frame, ``H x W x 3 uint8, BGR``, looking down on the tray. Output: one
:class:`DieReading` per die found - its bounding box in pixels and its value 1-6, or
``"unknown"`` when the reader is not sure. The reader abstains rather than guess (DESIGN.md,
Vision): a die is given a value only when two readers that fail in different ways - a trained
face classifier and a geometric pip fitter - agree, or the classifier alone is sure.

How it works (OpenCV: image processing, and its DNN module for one small trained network):

1. **Finding the dice** (:meth:`DiceReader.find_dice`): inside the tray's region of interest,
   the floor's local colour is a wide median filter of the frame in CIE Lab; pixels far from it
   are foreground. After a morphological opening and closing, each connected component of a
   die's size and squareness is a die. The dice of one frame are of one size: a region much
   larger than the frame's typical die (``TYPICAL_SIZE_RATIO``) holds touching dice and is split
   by an erosion (a piece the erosion leaves that large is still dice touching, and searched;
   one of a die's shape that the search finds no die in is one die larger than the others);
   a region much smaller (``SMALL_SIZE_RATIO``) is a die seen in part, its box
   grown to the typical size.
2. **Searching** (:meth:`DiceReader.search`): a region the erosion cannot split, and a patch
   where pip-like specks gather with no die region around them (a white die on a light floor
   shows only its pips), are searched with the face classifier: die-sized squares on a fine
   grid, the most die-like kept. Without the classifier such a region is one ``unknown``
   reading ("dice touching").
3. **Face classifier** (:class:`FaceModel`, ``companion/data/dice_faces.onnx``): a small
   convolutional network trained on the train split of the real photos and on rendered dice
   trays (companion/sim/dice_render.py; tools/train_dice_model.py) gives, for the die's square patch seen in its eight turns and
   mirror images, the probabilities of "not one die" and of the six values.
4. **Pips** (:meth:`DiceReader.pip_reading`), a second reader that fails differently: the pip
   map (:func:`pip_map`: each pixel's Lab distance from its neighbourhood's median, high on
   pips of any colour) and the distance from the face's colour (:func:`face_map`) give round
   blobs (``cv2.SimpleBlobDetector``); every subset of 1 to 6 is tested against the layouts of
   the six faces (pairwise-distance signature, spacing and size against the die's size, centred
   pattern, even contrast, the empty places of the 3 x 3 grid empty, no other pip on the face)
   (:func:`read_patch`); of three crops, at least two must give the value and none another
   (the third is read only when the first two do not read one value, or the die then reads
   no value: a third crop reading another value vetoes only a value the pips alone would
   give; :meth:`DiceReader._read_singles`).
5. **Decision** (:func:`decide`): both readers agree (classifier probability at least
   ``MODEL_WITH_PIPS``), or the pips abstain and the classifier is sure (``MODEL_ALONE``; a one
   so read needs a blob of a one's pip size at the face's centre, not a glint:
   :func:`~companion.readers.dice_face_checks.one_pip_seen`, or that blob alone on the colour
   map, lightness left out: :func:`~companion.readers.dice_face_checks.one_colour_pip_seen`);
   anything else - a disagreement (any of the pips' crops reading another value), an unsure
   classifier - is ``unknown`` with its reason. The thresholds were chosen on train photos
   held out of the classifier's training.
6. **Never part of a die, never a colourless frame**: a box the die's foreground reaches well
   beyond (:func:`_partial`) is ``unknown``, unless its pip crops read one face that lies
   inside it (the first two, or when they do not read one value the crops that read one, at
   least two: a die touching another, :meth:`DiceReader._whole_face`); a frame that is
   grayscale, too dark or clipped
   (:meth:`DiceReader.colour_problem`) reads one ``unknown`` over the tray. With no tray
   given, the tray is the floor the frame is centred on (:meth:`DiceReader.floor_region`).

7. **With the tray's geometry** (``DiceReader(geometry=TrayGeometry)``, from ``companion
   calibrate tray --corners``; :mod:`companion.readers.dice_tray`): no die size to set (the
   sizes found are those of a 16 mm die anywhere on the floor); only what stands on the floor,
   no larger than a few dice, is read; a die whose top face there is under 18 px is ``unknown``
   ("too small to read here"); a die whose pips do not spread as a flat face's do on the plane
   of a flat die's top face (:meth:`DiceReader.flatness`) is ``cocked``, and one whose pips lie
   between :data:`FLAT_SURE` and that bound ``unknown``; and a value needs both readers (the
   pips found on a flat face and the classifier's vote for the same value). The face is also
   fitted on its own plane where the crops' pips are
   (:func:`~companion.readers.dice_tray.with_face_fit`); a one needs a crop's reading and a
   body no larger than a flat die's (:meth:`DiceReader._one_beyond`). The finder takes the
   floor's colour over :data:`FLOOR_MEDIAN_DICE` dice, finds the dice inside a region too
   large for dice (:meth:`DiceReader._dice_in_bands`), and does not count the wall's band as
   a die reaching beyond its box.

8. **Speed, the same readings** (issue 15): the pips are read first (two crops a die where they
   agree); the classifier then looks only at the dice whose reading needs it, all of a frame's
   in one batch of a first look of :data:`FIRST_VIEWS` views each (the patch and its mirror
   image turned), decided on those two when both give one class at :data:`VIEWS_AGREE` or
   more, and the eight views of the others (:func:`_decide_votes`); the search's squares of a frame go in one
   batch, in forward passes of :attr:`FaceModel.BATCH_ROWS` rows; the pip fitter rules out at
   once the subsets of every size whose geometry cannot fit a face, and takes each pair's
   distance once per crop; the finder's colour distance and the pip maps' are sums of squared
   8-bit differences, whole numbers (or quarters) exact in ``float32`` (:data:`_SQUARES`), the
   components labelled in ``uint16``; medians and percentiles from one partition or the
   values' counts. tests/test_dice_speed_equal.py and ``bench/dice_bench.py --equal``
   compare the readings with the reader as it was (tests/dice_reference.py).

Measured on real photos (nell-byler/dice_detection, BSD-3-Clause): ``bench/dice_bench.py``, and
on the path-traced dice-tray photographs: ``bench/dice_tray_bench.py``; figures in
docs/BENCHMARKS.md.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import threading
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from companion.readers.dice_tray import TrayGeometry

__all__ = [
    "UNKNOWN",
    "COCKED",
    "PATCH_PX",
    "DieReading",
    "DiceReader",
    "pip_map",
    "face_map",
    "read_patch",
    "roll_values",
    "RollSettler",
    "FaceModel",
    "MODEL_PATH",
    "die_patch",
    "decide",
    "draw_readings",
]

UNKNOWN = "unknown"
#: The value of a die that does not lie flat (leaning on the tray's wall or on another die).
COCKED = "cocked"
#: Side (px) of the square a die's bounding box is resampled to before reading.
PATCH_PX = 72
#: Largest difference allowed between the sorted, normalised pairwise pip distances of the
#: candidates and those of a face (0-1).
SIGNATURE_TOL = 0.12
#: Median filter aperture (px, on the resampled patch): wider than a pip, so that the filtered
#: image shows the die's body where the pips are.
BODY_KERNEL_PX = 25
#: At most this many pip candidates are fitted; more means texture or clutter: ``unknown``.
MAX_CANDIDATES = 12
#: Side (px) of the square patch the face classifier reads (tools/train_dice_model.py).
MODEL_INPUT_PX = 48
#: The classifier's patch is the die's box grown by this fraction of its side on each side.
MODEL_MARGIN = 0.15
#: A region whose side exceeds the frame's typical die side by this factor holds touching dice.
TYPICAL_SIZE_RATIO = 1.35
#: A region smaller than the typical die side by this factor is a die seen only in part.
SMALL_SIZE_RATIO = 0.75
#: With a tray geometry, the die sizes found are kept from this share of its smallest top face
#: to this multiple of its largest whole die (the calibration's error, a die's rounded edges).
GEOMETRY_MARGIN_LO = 0.8
GEOMETRY_MARGIN_HI = 1.15
#: With a tray geometry, a region that cannot be split whose centre (on the floor) lies nearer
#: the tray's wall than this many dice, and in which the classifier finds no die, is the wall's shading (the
#: inner corners of a tray), not dice; two dice touching against the wall may then be missed.
WALL_CLEAR = 1.0
#: With a tray geometry, the floor's local colour is the median over a square this many dice
#: wide (:meth:`DiceReader._floor_aperture`); without one, over 124 px.
FLOOR_MEDIAN_DICE = 3.0
#: With a tray geometry, the foreground this many dice from the tray's wall (its shading, its
#: foot) is not counted as a die reaching beyond its box (:func:`_partial`).
WALL_BAND = 0.5
#: With a tray geometry, a die read as a one may show at most this share of its flat die's box
#: in foreground beyond that box (:meth:`DiceReader._one_beyond`).
ONE_BODY_AREA = 0.03
#: With a tray geometry, a region of touching dice is at most this many die sides long.
CLUSTER_MAX_SIDES = 2.6
#: The pips' grid: each pip place this share of the die's edge from the face's centre along
#: each axis (4.3 mm on a 16 mm die: the dice-tray photographs' README; standard dice 0.25-0.3).
PIP_GRID_SHARE = 4.3 / 16
#: With a tray geometry, pips further than this share from a flat face's layout (:meth:`DiceReader.flatness`)
#: are a die that does not lie flat: ``cocked``.
FLAT_TOLERANCE = 0.12
#: With a tray geometry, a value needs its pips within this share of a flat face's layout: a
#: die 20-30 degrees off flat (leaning on another die) shows its face's pips 6-10 % short along
#: the tilt and may still fit a flat face's grid within the pip readers' error; flat faces read
#: lie within 0.07 of it (the dice-tray photographs: the pips' scatter, 0.3 mm). Between this
#: and :data:`FLAT_TOLERANCE` the die is ``unknown``, not ``cocked``.
FLAT_SURE = 0.08
#: An empty pip place of the fitted face must show less than this share of the pips' evidence.
EMPTY_PLACE_RATIO = 0.4

# Pip places of each face on a 3 x 3 grid (x, y in -1, 0, 1), as on every standard die.
_FACES: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (-1, 1), (1, -1), (1, 1)),
    5: ((-1, -1), (-1, 1), (1, -1), (1, 1), (0, 0)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}
_GRID = [(gx, gy) for gx in (-1, 0, 1) for gy in (-1, 0, 1)]


def _signature(points: np.ndarray) -> np.ndarray:
    """Sorted pairwise distances divided by the largest: invariant to shift, turn and scale."""
    d = np.sort([float(np.hypot(*(a - b))) for a, b in itertools.combinations(points, 2)])
    return d / d[-1]


_SIGNATURES = {n: _signature(np.array(_FACES[n], float)) for n in range(2, 7)}
# A six's two rows of three are spaced differently on different dice: a range of aspects.
_SIX_SIGNATURES = [
    _signature(np.array([(x * a, y) for x, y in _FACES[6]], float)) for a in np.arange(0.5, 1.15, 0.05)
]
_SIX_SIGNATURE_ROWS = np.array(_SIX_SIGNATURES)  # (the six's aspects) x 15
_SPAN = {
    n: max(float(np.hypot(*np.subtract(a, b))) for a, b in itertools.combinations(_FACES[n], 2))
    for n in range(2, 7)
}


@dataclasses.dataclass(frozen=True, slots=True)
class DieReading:
    """One die seen in the tray.

    Attributes:
        box: ``(x0, y0, x1, y1)`` in frame pixels (floats), the die's bounding box.
        value: 1-6, ``"cocked"`` (the die does not lie flat), or ``"unknown"``.
        reason: for ``unknown`` and ``cocked``, why (``"no face fits"``, ``"readings disagree"``,
            ``"dice touching"`` ...); empty otherwise.
    """

    box: tuple[float, float, float, float]
    value: int | Literal["unknown", "cocked"]
    reason: str = ""

    @property
    def centre(self) -> tuple[float, float]:
        """Centre of the box (px)."""
        x0, y0, x1, y1 = self.box
        return ((x0 + x1) / 2, (y0 + y1) / 2)


def _resample(frame: np.ndarray, box: Sequence[float], margin: float, size: int) -> np.ndarray:
    """The box grown by ``margin`` (fraction of its width) resampled to ``size`` px wide."""
    import cv2

    x0, y0, x1, y1 = (float(v) for v in box)
    w, h = x1 - x0, y1 - y0
    x0, x1, y0, y1 = x0 - w * margin, x1 + w * margin, y0 - h * margin, y1 + h * margin
    s = size / max(x1 - x0, 1e-6)
    m = np.float32([[s, 0, -x0 * s], [0, s, -y0 * s]])
    height = max(1, int(round((y1 - y0) * s)))
    return cv2.warpAffine(frame, m, (size, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def pip_map(patch: np.ndarray) -> np.ndarray:
    """Pip evidence of a die patch.

    Args:
        patch: ``h x w x 3 uint8, BGR``, one die about :data:`PATCH_PX` px wide.

    Returns:
        ``h x w float32``: each pixel's CIE Lab distance (OpenCV's 8-bit Lab units) from the
        median of its :data:`BODY_KERNEL_PX` neighbourhood; high on pips of any colour.
    """
    import cv2

    return _pip_map_lab(cv2.cvtColor(patch, cv2.COLOR_BGR2LAB))


#: The squares of the 8-bit differences 0-255, ``256 float32`` (exact): the maps' sums of
#: squares (:func:`_pip_map_lab`, :func:`_face_map_lab`) are whole numbers or quarters under
#: 2^20, exact in ``float32`` whatever the order of the sum, so the map is the float32 norm
#: ``np.linalg.norm`` gives, bit for bit (its square root correctly rounded), five times faster.
_SQUARES = np.arange(256, dtype=np.float32) ** 2


def _root_of_sum(squares: np.ndarray) -> np.ndarray:
    """``h x w float32``: the square root of the sum over the channels of ``h x w x 3 float32``
    squares (each channel's whole numbers or quarters: the sum exact)."""
    total = squares[..., 0] + squares[..., 1]
    total += squares[..., 2]
    return np.sqrt(total)


def _pip_map_lab(lab: np.ndarray) -> np.ndarray:
    """:func:`pip_map` of a patch already in OpenCV 8-bit Lab (``h x w x 3 uint8``)."""
    import cv2

    body = cv2.medianBlur(lab, BODY_KERNEL_PX)
    # (|lab - body| in uint8 is exact; its squares from a table; :data:`_SQUARES`)
    return _root_of_sum(cv2.LUT(cv2.absdiff(lab, body), _SQUARES))


def face_map(patch: np.ndarray) -> np.ndarray:
    """Distance of each pixel from the die face's colour.

    Args:
        patch: ``h x w x 3 uint8, BGR``, one die centred.

    Returns:
        ``h x w float32``: CIE Lab distance (OpenCV 8-bit units) from the median colour of the
        patch's central half (the face, pips being a minority there).
    """
    import cv2

    return _face_map_lab(cv2.cvtColor(patch, cv2.COLOR_BGR2LAB))


def _face_map_lab(lab8: np.ndarray) -> np.ndarray:
    """:func:`face_map` of a patch already in OpenCV 8-bit Lab (``h x w x 3 uint8``)."""
    import cv2

    h, w = lab8.shape[:2]
    core = lab8[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4].reshape(-1, 3)
    m = len(core)
    if m == 0:
        return np.linalg.norm(lab8.astype(np.float32) - np.median(core.astype(np.float32), axis=0), axis=2)
    # (each channel's median, np.median's value: the middle one, or the mean of the middle two)
    part = np.partition(core, ((m - 1) // 2, m // 2), axis=0) if m > 1 else core
    median = (part[(m - 1) // 2].astype(np.float32) + part[m // 2]) / np.float32(2)
    # each channel's squared distance from its median (a whole number or a half) from a table
    # of its 256 values: the float32 norm bit for bit (:data:`_SQUARES`)
    table = (np.arange(256, dtype=np.float32)[:, None] - median[None, :]) ** 2
    return _root_of_sum(cv2.LUT(lab8, table.reshape(1, 256, 3)))


_DETECTORS = threading.local()


def _blob_detector():
    """The pip blob detector, one per thread (made once: its parameters never change)."""
    det = getattr(_DETECTORS, "detector", None)
    if det is None:
        det = _DETECTORS.detector = _make_blob_detector()
    return det


def _make_blob_detector():
    import cv2

    prm = cv2.SimpleBlobDetector_Params()
    prm.filterByColor = True
    prm.blobColor = 255
    prm.minThreshold = 25
    prm.maxThreshold = 240
    prm.thresholdStep = 10
    prm.minRepeatability = 2
    prm.filterByArea = True
    prm.minArea = 8
    prm.maxArea = 200
    prm.filterByCircularity = True
    prm.minCircularity = 0.6
    prm.filterByConvexity = True
    prm.minConvexity = 0.8
    prm.filterByInertia = True
    prm.minInertiaRatio = 0.4
    prm.minDistBetweenBlobs = 4
    return cv2.SimpleBlobDetector_create(prm)


_NUMPY2 = int(np.__version__.split(".")[0]) >= 2


def _percentile_f32(values: np.ndarray, q: float) -> float:
    """``float(np.percentile(values, q))`` of a ``float32`` array (any shape), bit for bit on
    numpy 1.24+ and 2.x (its linear rule: the sorted values at ``(n - 1) q / 100``
    interpolated, in ``float32`` on numpy 2 and in ``float64`` before), from one partition
    instead of numpy's general machinery (four times faster on a pip map)."""
    flat = values.reshape(-1)
    n = flat.size
    pos = (n - 1) * (q / 100.0)
    i = int(np.floor(pos))
    j = min(i + 1, n - 1)
    part = np.partition(flat, (i, j) if j != i else i)
    lo, hi, t = part[i], part[j], pos - i
    d = hi - lo  # float32, as numpy's interpolation takes it
    if _NUMPY2:
        return float(hi - d * np.float32(1 - t)) if t >= 0.5 else float(lo + d * np.float32(t))
    d = np.float64(d)
    return float(np.float64(hi) - d * (1 - t)) if t >= 0.5 else float(np.float64(lo) + d * t)


def _pip_candidates(evidence: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """Round blobs of the contrast-normalised pip map: ``(centre xy px, diameter px)``."""
    scale = 230.0 / max(20.0, _percentile_f32(evidence, 99.0))
    img = np.clip(evidence * scale, 0, 255).astype(np.uint8)
    h, w = img.shape
    out = []
    for kp in _blob_detector().detect(img):
        x, y = kp.pt
        if abs(x - w / 2) < 0.45 * w and abs(y - h / 2) < 0.45 * w:
            out.append((np.array([x, y], float), float(kp.size)))
    return out


def _fits_face(points: np.ndarray, sizes: Sequence[float], width: int,
               pair: Sequence[float] | None = None) -> bool:
    """Geometry alone: do these pip centres (px) form a face of a die ``width`` px wide?
    ``pair``: their pairwise distances (px) in :func:`itertools.combinations` order, each
    ``float(np.hypot(*(a - b)))``, when already known (:func:`_pair_distances`)."""
    n = len(points)
    centre = points.mean(0)
    # The face's pattern is centred on the die (the box may include a side face).
    if np.hypot(*(centre - width / 2)) > 0.22 * width:
        return False
    # The pips of one face are of one size.
    if max(sizes) > (1.35 if n == 2 else 1.8) * min(sizes):
        return False  # (a two's pair is held to a tighter match: a die's corner looks like a pip)
    if n == 1:
        return True
    if pair is None:
        pair = [float(np.hypot(*(a - b))) for a, b in itertools.combinations(points, 2)]
    srt = np.sort(pair)
    sig = srt / srt[-1]  # (:func:`_signature`)
    if n < 6 and np.abs(sig - _SIGNATURES[n]).max() > SIGNATURE_TOL:
        return False
    if n == 6 and np.abs(sig - _SIX_SIGNATURE_ROWS).max(axis=1).min() > SIGNATURE_TOL:
        return False  # (the least over the six's aspects of the largest difference)
    unit = max(pair) / _SPAN[n] if n < 6 else float(np.mean(srt[:4]))
    # Pip spacing is a fixed share of the die's side, and about a pip's diameter or more.
    return 0.08 * width <= unit <= 0.24 * width and 0.45 <= unit / float(np.mean(sizes)) <= 2.3


def _response(evidence: np.ndarray, xy: Sequence[float], radius: float) -> float:
    x, y = int(round(xy[0])), int(round(xy[1]))
    r = max(1, int(round(radius)))
    h, w = evidence.shape
    if not (0 <= x < w and 0 <= y < h):
        return 0.0
    return float(evidence[max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1].max())


def _consistent(
    evidence: np.ndarray, cands: list[tuple[np.ndarray, float]], subset: tuple[int, ...], width: int,
    xy: np.ndarray | None = None, d: np.ndarray | None = None,
) -> bool:
    """Evidence beyond geometry: no other pip on the face, even contrast, empty places empty.
    ``xy`` (``k x 2 float``) and ``d`` (``k float``): the candidates' centres and diameters, as
    arrays (made from ``cands`` when not given)."""
    if xy is None or d is None:
        xy = np.array([c[0] for c in cands], float)
        d = np.array([c[1] for c in cands], float)
    pts = xy[list(subset)]
    size = float(np.mean(d[list(subset)]))
    centre = pts.mean(0)
    # The face: around the pattern, half a pip beyond its outer pips (a single pip: a third of
    # the die); pips of the side faces, seen in perspective, lie outside it.
    reach = 0.3 * width if len(subset) == 1 else float(np.hypot(*(pts - centre).T).max()) + 1.0 * size
    other = np.ones(len(cands), bool)
    other[list(subset)] = False
    if np.any(other & (d >= 0.6 * size) & (np.hypot(xy[:, 0] - centre[0], xy[:, 1] - centre[1]) < reach)):
        return False  # an unexplained pip-sized blob on the face
    on = [_response(evidence, p, size * 0.25) for p in pts]
    if min(on) < 0.55 * max(on):
        return False  # one "pip" much fainter than the others: glare or texture
    srt = sorted(on)
    ref = srt[len(srt) // 2] if len(srt) % 2 else (srt[len(srt) // 2 - 1] + srt[len(srt) // 2]) / 2  # (np.median's)
    if len(subset) == 1:
        # the ring around the pip, in the window that holds it (the pixels nearer than 0.24 width)
        h, w = evidence.shape
        r = 0.24 * width
        px, py = pts[0]
        wx0, wx1 = max(0, int(np.floor(px - r))), min(w, int(np.ceil(px + r)) + 1)
        wy0, wy1 = max(0, int(np.floor(py - r))), min(h, int(np.ceil(py + r)) + 1)
        yy, xx = np.mgrid[wy0:wy1, wx0:wx1]
        rr = np.hypot(xx - px, yy - py)
        ring = (rr > size * 0.9) & (rr < r)
        return bool(evidence[wy0:wy1, wx0:wx1][ring].max() < 0.5 * ref)
    if len(subset) == 6:
        return True
    z = pts[:, 0] + 1j * pts[:, 1]
    a, b = max(itertools.combinations(range(len(z)), 2), key=lambda ij: abs(z[ij[0]] - z[ij[1]]))
    # The farthest pair are opposite corners: that fixes the 3 x 3 grid of pip places.
    c, k = (z[a] + z[b]) / 2, (z[b] - z[a]) / (2 + 2j)
    grid = [c + k * (gx + 1j * gy) for gx, gy in _GRID]
    used = set()
    for p in z:
        dist = [abs(p - g) for g in grid]
        j = int(np.argmin(dist))
        if dist[j] > 0.35 * abs(k):
            return False
        used.add(j)
    for j, g in enumerate(grid):
        if j in used or min(abs(g - p) for p in z) < 1.3 * abs(k):
            continue
        if _response(evidence, (g.real, g.imag), size * 0.2) >= EMPTY_PLACE_RATIO * ref:
            return False  # a place that should be empty shows a pip
    return True


def read_patch(patch: np.ndarray) -> tuple[int | None, str]:
    """Read one die from a patch around it.

    Args:
        patch: ``h x w x 3 uint8, BGR``, the die's bounding box resampled about
            :data:`PATCH_PX` px wide.

    Returns:
        ``(value, reason)``: value 1-6, or None with the reason it is not sure.
    """
    value, reason, _ = read_patch_pips(patch)
    return value, reason


def read_patch_pips(patch: np.ndarray) -> tuple[int | None, str, np.ndarray]:
    """:func:`read_patch` and the centres of the pips it read: ``(value, reason, n x 2 float64
    patch px)`` (``0 x 2`` without a value).

    Args:
        patch: ``h x w x 3 uint8, BGR``, the die's bounding box resampled about
            :data:`PATCH_PX` px wide.

    Returns:
        ``(value, reason, pips)``: value 1-6, or None with the reason it is not sure.
    """
    import cv2

    none = np.zeros((0, 2))
    width = patch.shape[1]
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB)
    evidence = _pip_map_lab(lab)
    cands = _pip_candidates(evidence)
    # Dense pips (a six) fill the median's window and show as rings on the pip map: a second
    # map, the distance from the face's own colour, finds them whole.
    for xy, d in _pip_candidates(_face_map_lab(lab)):
        if all(np.hypot(*(xy - c[0])) > 0.5 * max(d, c[1]) for c in cands):
            cands.append((xy, d))
    if not cands:
        return None, "no pip seen", none
    if len(cands) > MAX_CANDIDATES:
        return None, "too many spots (texture or clutter)", none
    # Every subset of 1 to 6 candidates, the largest first: the first that fits a face (geometry,
    # then the evidence) is the face; any other that fits - of the same size, or smaller and not
    # part of it - is a second face ("two faces fit"). Smaller subsets of the face found cannot
    # change that and are not tried; a subset the vectorised geometry (:func:`_geometry_may_fit`)
    # rules out surely fails :func:`_fits_face` and is not tried either.
    best: tuple[int, ...] | None = None
    xy = np.array([c[0] for c in cands], float)
    size = np.array([c[1] for c in cands], float)
    known: dict[tuple[int, int], float] = {}
    for n, kept in _geometry_may_fit_all(xy, size, width):
        for subset in map(tuple, kept.tolist()):
            if best is not None and set(subset) <= set(best):
                continue
            pts = xy[list(subset)]
            sizes = [cands[i][1] for i in subset]
            if (_fits_face(pts, sizes, width, _pair_distances(xy, subset, known))
                    and _consistent(evidence, cands, subset, width, xy, size)):
                if best is not None:
                    return None, "two faces fit", none
                best = subset
    if best is None:
        return None, "no face fits the pips", none
    return len(best), "", np.array([cands[i][0] for i in best], float)


def _pair_distances(xy: np.ndarray, subset: tuple[int, ...], known: dict[tuple[int, int], float]) -> list[float]:
    """The pairwise distances (px) of the candidates ``subset`` (centres ``xy``, ``k x 2``), in
    :func:`itertools.combinations` order, each ``float(np.hypot(*(xy[i] - xy[j])))`` as
    :func:`_fits_face` takes it, kept in ``known`` for the crop's other subsets."""
    out = []
    for ij in itertools.combinations(subset, 2):
        d = known.get(ij)
        if d is None:
            d = known[ij] = float(np.hypot(*(xy[ij[0]] - xy[ij[1]])))
        out.append(d)
    return out


@functools.cache
def _subsets(k: int, n: int) -> np.ndarray:
    """Every subset of ``n`` of ``k`` candidates, in :func:`itertools.combinations` order:
    ``C(k, n) x n int``."""
    return np.array(list(itertools.combinations(range(k), n)), dtype=np.intp).reshape(-1, n)


@functools.cache
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``n`` points in :func:`itertools.combinations` order: two ``n(n-1)/2 int``."""
    ij = np.array(list(itertools.combinations(range(n), 2)), dtype=np.intp).reshape(-1, 2)
    return ij[:, 0], ij[:, 1]


#: Slack of the vectorised geometry test against :func:`_fits_face` (its sums and means are
#: taken in another order, so they may differ in the last bits): it only ever keeps more.
_SLACK = 1e-6


def _geometry_may_fit(xy: np.ndarray, size: np.ndarray, subsets: np.ndarray, width: int) -> np.ndarray:
    """For each subset (``m x n`` indices of the candidates: centres ``xy``, ``k x 2`` px, and
    diameters ``size``, ``k`` px), False when :func:`_fits_face` surely rejects it (the same
    tests, on every subset at once, with :data:`_SLACK`): ``m bool``."""
    n = subsets.shape[1]
    pts = xy[subsets]  # m x n x 2
    sz = size[subsets]  # m x n
    centre = pts.mean(axis=1)
    ok = np.hypot(centre[:, 0] - width / 2, centre[:, 1] - width / 2) <= 0.22 * width + _SLACK
    ratio = 1.35 if n == 2 else 1.8
    ok &= sz.max(axis=1) <= ratio * sz.min(axis=1) * (1 + _SLACK)
    if n == 1:
        return ok
    # the pairwise tests on the subsets left only (most are ruled out by their centre or sizes)
    keep = np.flatnonzero(ok)
    if len(keep):
        ok[keep] = _pairwise_may_fit(pts[keep], sz[keep], width)
    return ok


@functools.cache
def _all_subsets(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[tuple[int, int, int], ...]]:
    """Every subset of 1 to 6 of ``k`` candidates, the largest first, each size's in
    :func:`_subsets` order, as rows of ``S x 6`` indices padded with ``k`` (a candidate that
    is not there); each row's size (``S float``), its size test's ratio (``S float``: a two's
    pair 1.35, else 1.8, :func:`_fits_face`); and ``(n, first row, end row)`` of each size."""
    rows, ns, spans = [], [], []
    for n in range(min(6, k), 0, -1):
        sub = _subsets(k, n)
        spans.append((n, len(ns), len(ns) + len(sub)))
        rows.append(np.hstack([sub, np.full((len(sub), 6 - n), k, np.intp)]))
        ns += [n] * len(sub)
    counts = np.array(ns, float)
    return np.vstack(rows), counts, np.where(counts == 2, 1.35, 1.8), tuple(spans)


def _geometry_may_fit_all(xy: np.ndarray, size: np.ndarray, width: int) -> list[tuple[int, np.ndarray]]:
    """:func:`_geometry_may_fit` of every subset of 1 to 6 of the ``k`` candidates (centres
    ``xy``, ``k x 2`` px, diameters ``size``, ``k`` px; 1 <= ``k``), the centre and size tests
    of all sizes at once: ``(n, the subsets of n kept, C x n int in _subsets order)`` from the
    largest ``n`` down. It keeps what :func:`_geometry_may_fit` keeps but for its sums' last
    bits, within :data:`_SLACK` (a centre is a sum over the row divided by ``n``): only ever more
    than :func:`_fits_face`."""
    k = len(xy)
    rows, counts, ratio, spans = _all_subsets(k)
    gx = np.append(xy[:, 0], 0.0)[rows].sum(axis=1) / counts - width / 2
    gy = np.append(xy[:, 1], 0.0)[rows].sum(axis=1) / counts - width / 2
    ok = np.hypot(gx, gy) <= 0.22 * width + _SLACK
    ok &= np.append(size, -np.inf)[rows].max(axis=1) <= ratio * np.append(size, np.inf)[rows].min(axis=1) * (1 + _SLACK)
    out = []
    for n, lo, hi in spans:
        keep = np.flatnonzero(ok[lo:hi])
        if not len(keep):
            continue
        subsets = rows[lo:hi, :n][keep]
        if n > 1:
            subsets = subsets[_pairwise_may_fit(xy[subsets], size[subsets], width)]
        if len(subsets):
            out.append((n, subsets))
    return out


def _pairwise_may_fit(pts: np.ndarray, sz: np.ndarray, width: int) -> np.ndarray:
    """:func:`_geometry_may_fit`'s pairwise tests (signature, spacing, spacing against the
    pips' size) of ``m`` subsets of ``n`` >= 2 candidates (centres ``pts``, ``m x n x 2`` px,
    diameters ``sz``, ``m x n`` px), with :data:`_SLACK`: ``m bool``."""
    n = pts.shape[1]
    a, b = _pairs(n)
    d = np.hypot(pts[:, a, 0] - pts[:, b, 0], pts[:, a, 1] - pts[:, b, 1])  # m x pairs
    d.sort(axis=1)
    top = np.maximum(d[:, -1:], 1e-300)
    sig = d / top
    if n < 6:
        fit = np.abs(sig - _SIGNATURES[n]).max(axis=1) <= SIGNATURE_TOL + _SLACK
        unit = d[:, -1] / _SPAN[n]
    else:
        dev = np.abs(sig[:, None, :] - _SIX_SIGNATURE_ROWS[None]).max(axis=2).min(axis=1)
        fit = dev <= SIGNATURE_TOL + _SLACK
        unit = d[:, :4].mean(axis=1)
    mean_size = sz.mean(axis=1)
    fit &= (unit >= 0.08 * width - _SLACK) & (unit <= 0.24 * width + _SLACK)
    fit &= (unit >= (0.45 - _SLACK) * mean_size) & (unit <= (2.3 + _SLACK) * mean_size)
    return fit


def die_patch(frame: np.ndarray, box: Sequence[float]) -> np.ndarray:
    """The face classifier's view of one die.

    Args:
        frame: ``H x W x 3 uint8, BGR``.
        box: ``(x0, y0, x1, y1)`` px, the die's bounding box.

    Returns:
        ``MODEL_INPUT_PX x MODEL_INPUT_PX x 3 uint8, BGR``: a square around the box's centre,
        its side the box's longer side grown by :data:`MODEL_MARGIN` on each side (the frame's
        border repeated where the square leaves the frame).

    Raises:
        ValueError: the box is not four finite numbers with x0 < x1, y0 < y1, or the frame is
            not ``H x W x 3``.
    """
    import cv2

    x0, y0, x1, y1 = _check_box(box)
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"frame: expected H x W x 3 BGR, got shape {frame.shape}")
    side = max(x1 - x0, y1 - y0) * (1 + 2 * MODEL_MARGIN)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    s = MODEL_INPUT_PX / side
    m = np.float32([[s, 0, MODEL_INPUT_PX / 2 - cx * s], [0, s, MODEL_INPUT_PX / 2 - cy * s]])
    return cv2.warpAffine(
        frame, m, (MODEL_INPUT_PX, MODEL_INPUT_PX), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


#: The face classifier shipped with the package (trained by tools/train_dice_model.py).
MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "dice_faces.onnx"


def _load_net(path: Path, engine: str = "classic"):
    """The network of an ONNX file in OpenCV's DNN module.

    ``engine`` "classic": OpenCV's classic DNN engine, the only one of OpenCV 4 (the Pi's
    stack); OpenCV 5 also has a new engine, its default, which runs this classifier 1.6 times
    slower here and gives probabilities that differ from the classic engine's by at most about
    3e-5 (docs/BENCHMARKS.md). A network the classic engine cannot load is loaded with OpenCV's
    default. "default": OpenCV's default engine.

    Raises:
        cv2.error: OpenCV cannot load the file.
    """
    import cv2

    classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)
    if engine == "classic" and classic is not None:
        try:
            return cv2.dnn.readNetFromONNX(str(path), classic)
        except cv2.error:
            pass
    return cv2.dnn.readNetFromONNX(str(path))


class FaceModel:
    """The face classifier: a small convolutional network, run with OpenCV's DNN module.

    It was trained on the train split of nell-byler/dice_detection and on rendered dice trays
    (companion/sim/dice_render.py; tools/train_dice_model.py; the training record is
    ``dice_faces.json`` beside the model). Each die is seen in the eight
    turns and mirror images of its patch (a face's value does not change under them) and the
    class probabilities are averaged.

    Args:
        path: the ONNX model; default :data:`MODEL_PATH`.

    Raises:
        FileNotFoundError: the model file is missing.
        ValueError: OpenCV cannot load the file as a network.
    """

    #: Output classes: 0 = not one die (floor, part of a die, two dice), then the values 1-6.
    CLASSES = ("not one die", 1, 2, 3, 4, 5, 6)
    #: The most rows of one forward pass (:meth:`view_rows`): 0.8 ms a row here at 16-128
    #: rows, 1.3-2.0 ms at 384 (docs/BENCHMARKS.md).
    BATCH_ROWS = 64

    def __init__(self, path: str | Path | None = None):
        import cv2

        self.path = Path(path) if path is not None else MODEL_PATH
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: the dice face model is missing (tools/train_dice_model.py makes it)")
        self._lock = threading.Lock()  # one forward pass at a time (the net keeps its buffers)
        try:
            self._net = _load_net(self.path)
        except cv2.error as exc:
            raise ValueError(f"{self.path}: not a network OpenCV can load ({str(exc).strip()[:200]})") from None

    def probabilities(self, patches: np.ndarray, views: int = 8) -> np.ndarray:
        """Class probabilities of die patches.

        Args:
            patches: ``N x 48 x 48 x 3 uint8, BGR`` (:func:`die_patch`).
            views: 8 (the turns and mirror images, for reading) or 1 (the patch as it is, a
                quick look for searching).

        Returns:
            ``N x 7 float32``, rows summing to 1, columns in :attr:`CLASSES` order: the mean
            over the views of each patch of the softmax of the network's output.

        Raises:
            ValueError: ``patches`` is not ``N x 48 x 48 x 3 uint8``, or ``views`` not 1 or 8.
        """
        if views not in (1, 8):
            raise ValueError(f"views: expected 1 or 8, got {views}")
        shape = getattr(patches, "shape", None)
        if shape is None or len(shape) != 4 or shape[1:] != (MODEL_INPUT_PX, MODEL_INPUT_PX, 3) or patches.dtype != np.uint8:
            raise ValueError(
                f"patches: expected N x {MODEL_INPUT_PX} x {MODEL_INPUT_PX} x 3 uint8, got shape {shape} "
                f"dtype {getattr(patches, 'dtype', None)}"
            )
        if len(patches) == 0:
            return np.zeros((0, len(self.CLASSES)), np.float32)
        return self.view_probabilities(patches, range(views)).mean(axis=0).astype(np.float32)

    def view_probabilities(self, patches: np.ndarray, views: Sequence[int]) -> np.ndarray:
        """The probabilities of some of the views of each patch, in one forward pass.

        Args:
            patches: ``N x 48 x 48 x 3 uint8, BGR`` (:func:`die_patch`).
            views: which views, each 0-7 (:meth:`view_rows`).

        Returns:
            ``len(views) x N x 7 float64``; the mean over the eight views, cast to float32, is
            :meth:`probabilities`.
        """
        views = list(views)
        n = len(patches)
        rows = self.view_rows(np.concatenate([patches] * len(views)) if views else patches[:0],
                              [v for v in views for _ in range(n)])
        return rows.reshape(len(views), n, len(self.CLASSES))

    def view_rows(self, patches: np.ndarray, views: Sequence[int]) -> np.ndarray:
        """Row ``r``: the softmax of the network's output for view ``views[r]`` of
        ``patches[r]``, every row in one batch (one forward pass of the network).

        The views: 0-3 the patch turned by 0, 90, 180, 270 degrees (``np.rot90``), 4-7 its
        mirror image (left-right) turned the same. A row does not depend on the others in the
        batch (OpenCV's DNN computes each image of a batch alone), so views can be taken in
        any batches and give the probabilities one batch of all would.

        Args:
            patches: ``R x 48 x 48 x 3 uint8, BGR``.
            views: ``R`` view numbers 0-7.

        Returns:
            ``R x 7 float64``, rows summing to 1, columns in :attr:`CLASSES` order.

        Raises:
            ValueError: ``patches`` is not ``R x 48 x 48 x 3 uint8``, or ``views`` not ``R``
                numbers 0-7.
        """
        shape = getattr(patches, "shape", None)
        if shape is None or len(shape) != 4 or shape[1:] != (MODEL_INPUT_PX, MODEL_INPUT_PX, 3) or patches.dtype != np.uint8:
            raise ValueError(
                f"patches: expected R x {MODEL_INPUT_PX} x {MODEL_INPUT_PX} x 3 uint8, got shape {shape} "
                f"dtype {getattr(patches, 'dtype', None)}"
            )
        views = [int(v) for v in views]
        if len(views) != len(patches) or any(v not in range(8) for v in views):
            raise ValueError(f"views: expected {len(patches)} view numbers 0-7, got {views!r}")
        if not views:
            return np.zeros((0, len(self.CLASSES)))
        x = patches.astype(np.float32).transpose(0, 3, 1, 2) / 255.0  # R x 3 x H x W
        batch = np.ascontiguousarray(np.stack(
            [np.rot90(x[r, :, :, ::-1] if v >= 4 else x[r], v % 4, axes=(1, 2)) for r, v in enumerate(views)]))
        outs = []
        with self._lock:
            # (in forward passes of at most BATCH_ROWS rows: a batch of hundreds of rows takes
            # 1.6-2.5 times longer a row here; a row does not depend on its batch)
            for at in range(0, len(batch), self.BATCH_ROWS):
                self._net.setInput(batch[at:at + self.BATCH_ROWS])
                outs.append(self._net.forward().reshape(min(self.BATCH_ROWS, len(batch) - at), -1))
        logits = np.concatenate(outs).astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        return p


#: Views of a die the reader's first look takes (of the 8 :meth:`FaceModel.probabilities`
#: averages): the patch as it is and its mirror image turned a quarter turn
#: (:data:`VIEW_ORDER`). When both give the same class with at least :data:`VIEWS_AGREE`
#: each, the die is decided on their mean (:meth:`_Votes.agreed`); else on all eight.
FIRST_VIEWS = 2
#: The order in which a die's views are taken (:meth:`FaceModel.view_rows`' numbers): the
#: first look's two (:data:`FIRST_VIEWS`) as unlike as a turn and a mirror image make them.
VIEW_ORDER = (0, 5, 1, 2, 3, 4, 6, 7)
#: The first look decides alone when each of its views gives the same class at least this
#: probability: far above the thresholds the decision compares with (:data:`MODEL_ALONE`,
#: :data:`MODEL_WITH_PIPS`), so the views not taken would have to turn most of the mean.
VIEWS_AGREE = 0.9


class _Votes:
    """The face classifier's views of a frame's die patches, taken lazily and in batches.

    :meth:`take` runs the network once on the views asked of every patch that needs them; a
    die's decision is then made from the first look's views when they agree surely
    (:meth:`agreed`), or from the views taken when the rest cannot change it
    (:func:`_decide_votes`), else from all eight (the mean :meth:`FaceModel.probabilities`
    gives, bit for bit).

    Args:
        model: the face classifier.
        patches: ``N x 48 x 48 x 3 uint8`` (:func:`die_patch`).
    """

    VIEWS = 8

    def __init__(self, model: FaceModel, patches: np.ndarray):
        self.model = model
        self.patches = patches
        self.views: list[dict[int, np.ndarray]] = [{} for _ in range(len(patches))]
        self._full: dict[int, np.ndarray] = {}

    def take(self, wanted: dict[int, int]) -> None:
        """Take the first ``k`` views (:data:`VIEW_ORDER`) of patch ``i`` for each ``i: k`` of
        ``wanted`` that are not taken yet, all in one forward pass of the network. A model without
        :meth:`FaceModel.view_rows` (any object with ``probabilities(patches)``) gives each
        patch asked its eight-view probabilities at once."""
        if not hasattr(self.model, "view_rows"):
            todo = [i for i in wanted if i not in self._full]
            if todo:
                for i, p in zip(todo, self.model.probabilities(self.patches[todo])):
                    self._full[i] = np.asarray(p, np.float32)
            return
        items = [(i, v) for i, k in wanted.items() for v in VIEW_ORDER[:k] if v not in self.views[i]]
        if not items:
            return
        rows = self.model.view_rows(self.patches[[i for i, _ in items]], [v for _, v in items])
        for (i, v), row in zip(items, rows):
            self.views[i][v] = row

    def count(self, i: int) -> int:
        """How many of patch ``i``'s views are taken (its first ones in :data:`VIEW_ORDER`)."""
        return self.VIEWS if i in self._full else len(self.views[i])

    def sums(self, i: int) -> np.ndarray:
        """``7 float64``: the sum over patch ``i``'s views taken of their probabilities."""
        return np.sum([self.views[i][v] for v in sorted(self.views[i])], axis=0)

    def agreed(self, i: int) -> np.ndarray | None:
        """``7 float32``: the mean of patch ``i``'s first look (its :data:`FIRST_VIEWS` views,
        when exactly those are taken) when each of them gives the same class at least
        :data:`VIEWS_AGREE`, else None."""
        if i in self._full or len(self.views[i]) != FIRST_VIEWS:
            return None
        rows = np.stack([self.views[i][v] for v in sorted(self.views[i])])
        best = rows.argmax(axis=1)
        if (best != best[0]).any() or rows[:, best[0]].min() < VIEWS_AGREE:
            return None
        return rows.mean(axis=0).astype(np.float32)

    def full(self, i: int) -> np.ndarray:
        """``7 float32``: patch ``i``'s probabilities, the mean over its 8 views (taken now if
        missing), as :meth:`FaceModel.probabilities` gives them."""
        self.take({i: self.VIEWS})
        if i in self._full:
            return self._full[i]
        stack = np.stack([self.views[i][v] for v in range(self.VIEWS)])[:, None, :]
        return stack.mean(axis=0).astype(np.float32)[0]


#: Margin of the bounds on a mean over eight views when only some are taken (sums in another
#: order, the float32 cast): a value is taken early only beyond it.
_VOTE_SLACK = 1e-6
#: A die whose views taken so far do not decide its reading (:func:`_decide_votes`).
_UNDECIDED = object()


def _sure_best(votes: _Votes, i: int) -> int | None:
    """The class that is the largest of patch ``i``'s eight-view mean whatever its views not
    taken say (each view's probabilities lie in 0-1), or None."""
    k = votes.count(i)
    s = votes.sums(i) if k else np.zeros(len(FaceModel.CLASSES))
    lo, hi = s / _Votes.VIEWS, (s + (_Votes.VIEWS - k)) / _Votes.VIEWS
    b = int(np.argmax(lo))
    return b if lo[b] > np.delete(hi, b).max() + _VOTE_SLACK else None


def _lower(votes: _Votes, i: int, c: int) -> float:
    """The least the eight-view mean of class ``c`` of patch ``i`` can be (views not taken: 0)."""
    return float(votes.sums(i)[c]) / _Votes.VIEWS if votes.count(i) else 0.0


def _not_a_die(votes: _Votes, i: int, sure_only: bool):
    """Is "not one die" the classifier's best class for patch ``i`` (its eight-view mean)?
    ``_UNDECIDED`` when ``sure_only`` and the views taken cannot tell; the first look's mean
    when its views agree (:meth:`_Votes.agreed`)."""
    agreed = votes.agreed(i)
    if agreed is not None:
        return int(np.argmax(agreed)) == 0
    if votes.count(i) < _Votes.VIEWS:
        b = _sure_best(votes, i)
        if b is not None:
            return b == 0
        k = votes.count(i)
        s = votes.sums(i) if k else np.zeros(len(FaceModel.CLASSES))
        hi0 = (s[0] + (_Votes.VIEWS - k)) / _Votes.VIEWS
        if (s[1:] / _Votes.VIEWS).max() > hi0 + _VOTE_SLACK:
            return False  # another class surely beats it
        if sure_only:
            return _UNDECIDED
    return int(np.argmax(votes.full(i))) == 0


def _decide_votes(votes: _Votes | None, i: int, pip_value: int | None, pip_reason: str,
                  pip_values: Sequence[int], sure_only: bool):
    """:func:`decide` on patch ``i``'s probabilities: the first look's mean when its views
    agree (:meth:`_Votes.agreed`); else the eight-view mean, from the views taken when the
    others cannot change the result: the best class sure (:func:`_sure_best`), and the value
    given or refused without the probability in the reason. Else all eight views
    (``_UNDECIDED`` when ``sure_only``). Without a model (``votes`` None), the pips alone."""
    seen = sorted(set(pip_values) | ({pip_value} if pip_value is not None else set()))
    if votes is None or len(seen) > 1:
        return decide(None, pip_value, pip_reason, pip_values)  # (the probabilities not looked at)
    agreed = votes.agreed(i)
    if agreed is not None:
        return decide(agreed, pip_value, pip_reason, pip_values)
    if votes.count(i) < _Votes.VIEWS:
        b = _sure_best(votes, i)
        if b is not None and b != 0 and pip_value in (None, *range(1, 7)):
            if pip_value is None and seen and seen[0] != b:
                return None, f"pips read {seen[0]} in one crop, the face looks like {b}"
            if pip_value is not None and b != pip_value:
                return None, f"pips read {pip_value}, the face looks like {b}"
            if pip_value is not None and _lower(votes, i, b) >= MODEL_WITH_PIPS + _VOTE_SLACK:
                return pip_value, ""
            if pip_value is None and _lower(votes, i, b) >= MODEL_ALONE + _VOTE_SLACK:
                return b, ""
        if sure_only:
            return _UNDECIDED
    return decide(votes.full(i), pip_value, pip_reason, pip_values)


#: (margin as a fraction of the box width, resampled width px) of the three readings.
_VARIANTS = ((0.0, PATCH_PX), (0.08, PATCH_PX), (0.0, 64))


class DiceReader:
    """Finds the dice in the tray and reads each one, abstaining when unsure.

    Args:
        tray: region of interest ``(x0, y0, x1, y1)`` in frame pixels (the tray's floor); None
            = the whole frame.
        die_px: ``(smallest, largest)`` side of a die's bounding box in pixels at this camera
            distance (default ``(22, 70)``: the dice of the reference photos measure 21-69 px in a
            640 x 640 frame). Dice larger than ``largest`` are not found as dice, and their
            pips may be taken for small dice: set it for the camera's height.
        foreground_lab: Lab distance (OpenCV 8-bit units) from the tray floor's local colour
            above which a pixel belongs to a die.
        lightness_weight: weight of the lightness difference (L*) against the colour
            difference (a*, b*): below 1, shadows count less.
        model: the face classifier; ``"default"`` loads the packaged one
            (:data:`MODEL_PATH`), None reads by the pips alone.
        geometry: the tray's calibration (:class:`~companion.readers.dice_tray.TrayGeometry`,
            ``companion calibrate tray``); when given, ``die_px`` is ignored (a die's size
            comes from it), ``tray`` defaults to the frame's box around its floor, only the
            floor (and a die's height above it) is read, and a die whose top face there is
            under 18 px across is ``unknown`` ("too small to read here").

    Raises:
        ValueError: ``die_px`` is not ``0 < smallest < largest``, or the model cannot be loaded.
        FileNotFoundError: the packaged model is missing.

    Example::

        reader = DiceReader(tray=(60, 90, 600, 520))
        readings = reader.read(cv2.imread("tray.jpg"))   # [DieReading(box=..., value=5), ...]
        roll_values(readings)                           # (5, 2, "unknown") or None
    """

    def __init__(
        self,
        tray: tuple[int, int, int, int] | None = None,
        die_px: tuple[float, float] = (22.0, 70.0),
        foreground_lab: float = 28.0,
        lightness_weight: float = 0.5,
        model: FaceModel | None | Literal["default"] = "default",
        geometry: "TrayGeometry | None" = None,
    ):
        self.geometry = geometry
        if geometry is not None:
            # The die's size comes from the tray's calibration: from the smallest top face to
            # the largest whole die anywhere on the floor, with a margin for the calibration's error.
            glo, ghi = geometry.die_px_range()
            self._die_side_px = float(np.sqrt(glo * ghi))
            die_px = (max(4.0, GEOMETRY_MARGIN_LO * glo), GEOMETRY_MARGIN_HI * ghi)
            if tray is None:
                tray = geometry.roi()
        try:
            lo, hi = (float(v) for v in die_px)
        except (TypeError, ValueError):
            raise ValueError(f"die_px: expected (smallest, largest) in px, got {die_px!r}") from None
        if not (np.isfinite(lo) and np.isfinite(hi) and 4 <= lo < hi):
            raise ValueError(f"die_px: expected 4 <= smallest < largest, finite, got {die_px!r}")
        if tray is not None:
            try:
                tx0, ty0, tx1, ty1 = (int(v) for v in tray)
                ok = all(float(v) == int(v) for v in tray)
            except (TypeError, ValueError, OverflowError):
                ok = False
            if not ok or not (0 <= tx0 < tx1 and 0 <= ty0 < ty1):
                raise ValueError(f"tray: expected whole pixels x0, y0, x1, y1 with 0 <= x0 < x1 and 0 <= y0 < y1, got {tray!r}")
            tray = (tx0, ty0, tx1, ty1)
        self.tray = tray
        self.die_px = (lo, hi)
        self.foreground_lab = foreground_lab
        self.lightness_weight = lightness_weight
        self.model = FaceModel() if model == "default" else model
        self._floor = None
        self._wall_band = None
        if geometry is not None and self.tray is not None:
            self._floor = geometry.floor_mask(self.tray)

    def _read_singles(self, frame: np.ndarray, singles: list, raw_at) -> list[DieReading]:
        """The readings of the dice found (boxes ``singles``, frame px), in their order; the
        boxes neither reader sees a die in are left out.

        The pips first (each die's first two crops, the third where they do not read one
        value), then the face classifier, lazily: only the dice whose reading needs it, all of
        them in one batch of :data:`FIRST_VIEWS` views each (decided on them when they agree:
        :meth:`_Votes.agreed`), then the eight views of the others in a second batch
        (:class:`_Votes`, :func:`_decide_votes`). A die whose third crop was not read and that
        reads no value is read again with it: the readings are the three crops' but where a
        third crop's other value would veto a value the first two crops and the classifier
        give."""
        read = [self._pip_evidence(frame, box, False) for box in singles]
        evidence = [e for e, _ in read]
        skipped = [k for k, (_, crops) in enumerate(read) if len(crops) < len(_VARIANTS)]
        band = self._band()
        # (a box whose pips give a whole face inside it holds that die: a neighbour touches it)
        partial = [(_partial(raw_at, box, singles[:i] + singles[i + 1:], band)
                    if not self._whole_face(box, read[i][1]) else "") or self.too_small(box)
                   for i, box in enumerate(singles)]
        box_votes = None
        if self.model is not None and singles:
            box_votes = _Votes(self.model, np.stack([die_patch(frame, b) for b in singles]))
        results = self._decide_singles(frame, singles, raw_at, evidence, partial, box_votes, range(len(singles)))
        # A die whose third crop was not read and that reads no value: that crop read now, and
        # the die decided again on all three (a third crop's other value makes it "readings
        # disagree", whatever the rest says).
        redo = [i for i in skipped if results[i] is None or results[i].value not in range(1, 7)]
        if redo:
            for i in redo:
                evidence[i] = self._pip_evidence(frame, singles[i], True, read[i][1])[0]
            for i, r in zip(redo, self._decide_singles(frame, singles, raw_at, evidence, partial, box_votes, redo)):
                results[i] = r
        return [r for r in results if r is not None]

    def _decide_singles(self, frame: np.ndarray, singles: list, raw_at, evidence: list, partial: list,
                        box_votes: "_Votes | None", which: Sequence[int]) -> list:
        """The readings (or None: no die) of the dice ``which`` of ``singles``, from their pip
        ``evidence`` (:meth:`_pip_evidence`), ``partial`` (why each box is no whole die, or
        ``""``) and the classifier's views of their boxes (``box_votes``, taken here as they
        are needed), in ``which``'s order (:meth:`_read_singles`)."""
        which = list(which)
        band = self._band()
        results: dict[int, object] = {}
        face_votes = None
        face_at: dict[int, int] = {}
        if box_votes is not None and self.geometry is not None:
            faces = []
            for i in which:
                pips, _, seen, found = evidence[i]
                if pips is not None and not partial[i] and not self._cocked(pips, seen, found) and found:
                    face_at[i] = len(faces)
                    faces.append(die_patch(frame, self._face_square(found)))
            if faces:
                face_votes = _Votes(self.model, np.stack(faces))

        def wanted_box(i: int) -> bool:
            # Whether neither reader sees a die (the pips found none), or the die's value (no geometry).
            return evidence[i][0] is None or (self.geometry is None and not partial[i])

        if box_votes is not None:
            box_votes.take({i: FIRST_VIEWS for i in which if wanted_box(i)})
        if face_votes is not None:
            face_votes.take({j: FIRST_VIEWS for j in face_at.values()})

        def one(i: int, sure_only: bool):
            """The reading of die ``i``; None: left out; ``_UNDECIDED``: needs all views."""
            box = singles[i]
            pips, pip_reason, seen, found = evidence[i]
            # (pips found and no crop's value: the face's grid saw a face; the die is kept)
            if box_votes is not None and pips is None and not (found and not seen):
                not_a_die = _not_a_die(box_votes, i, sure_only)
                if not_a_die is _UNDECIDED:
                    return _UNDECIDED
                if not_a_die:
                    return None  # neither reader sees a die here: a shadow, a hand, the tray's wall
            if partial[i]:
                return DieReading(box, UNKNOWN, partial[i])
            if self.geometry is not None:
                got = self._judge(box, evidence[i], face_votes if i in face_at else box_votes,
                                  face_at.get(i, i), sure_only)
                if got is not _UNDECIDED and got.value == 1:
                    beyond = self._one_beyond(raw_at, evidence[i][3], singles[:i] + singles[i + 1:], band)
                    if beyond:
                        return DieReading(box, UNKNOWN, beyond)
                return got
            got = _decide_votes(box_votes, i, pips, pip_reason, seen, sure_only)
            if got is _UNDECIDED:
                return _UNDECIDED
            value, reason = got
            if value == 1 and pips is None and not self._one_pip_shows(frame, box):
                value, reason = None, "the face looks like 1 but shows no pip of a one's size (a glint?)"
            return DieReading(box, UNKNOWN if value is None else value, reason)

        results = {i: one(i, True) for i in which}
        undecided = [i for i in which if results[i] is _UNDECIDED]
        if undecided:
            # The few dice the first views leave undecided: all their views, in one batch.
            if box_votes is not None:
                box_votes.take({i: _Votes.VIEWS for i in undecided if i not in face_at or evidence[i][0] is None})
            if face_votes is not None:
                face_votes.take({face_at[i]: _Votes.VIEWS for i in undecided if i in face_at})
            for i in undecided:
                results[i] = one(i, False)
        return [results[i] for i in which]

    def _cocked(self, pips, seen, found) -> float | None:
        """With a tray geometry: how far the pips lie off a flat face when that makes the die
        ``cocked`` (:meth:`_judge`), else None."""
        off = self.flatness(found)
        if off is not None and off > FLAT_TOLERANCE and (pips is not None or len(set(seen)) == 1):
            from companion.readers.dice_tray import pips_fit_flat_face

            # pips that are some of a flat face's (two of a five's, a one and a glint) do not tell a tilt
            if not pips_fit_flat_face(self.geometry, found):
                return off
        return None

    def _face_square(self, found: list[np.ndarray]) -> tuple[float, float, float, float]:
        """The square centred on the face the pips show (the centroid of the crops' pips, frame
        px), of the side the geometry gives a die there."""
        c = np.mean([f.mean(0) for f in found if len(f)], axis=0)
        side = self._side_at((c[0], c[1], c[0], c[1]), 0.0)
        return (c[0] - side / 2, c[1] - side / 2, c[0] + side / 2, c[1] + side / 2)

    def _judge(self, box, evidence, votes: _Votes | None, at: int, sure_only: bool = False):
        """One die's reading with the tray's geometry: a value needs both readers (the pips
        found, on a flat face, and the classifier's vote for the same value); pips off a flat
        face's layout are a die that does not lie flat (``cocked``). The classifier's vote is
        taken on a square centred on the face the pips show (their centroid, :meth:`_face_square`),
        of the side the geometry gives a die there, rather than on the finder's box (which a
        shadow or a side face pulls off centre): ``votes`` holds that square's views at ``at``
        (the finder's box's when the pips show no face). ``_UNDECIDED`` when ``sure_only`` and
        the views taken do not decide."""
        pips, pip_reason, seen, found = evidence
        off = self._cocked(pips, seen, found)
        if off is not None:
            return DieReading(box, COCKED, f"its pips lie {100 * off:.0f}% off a flat face: the die does not lie flat")
        if pips is None:
            return DieReading(box, UNKNOWN, pip_reason or "pips unsure")
        off = self.flatness(found)
        got = _decide_votes(votes, at, pips, pip_reason, seen, sure_only)
        if got is _UNDECIDED:
            return _UNDECIDED
        value, reason = got
        if value is not None and off is not None and off > FLAT_SURE:
            return DieReading(box, UNKNOWN, f"its pips lie {100 * off:.0f}% off a flat face: it may not lie flat")
        flat = "" if off is not None else " (a one: flatness not seen)"
        return DieReading(box, UNKNOWN if value is None else value, reason + (flat if value is None else ""))

    def on_floor(self, box: Sequence[float], inset: float = 0.25, z_mm: float | None = None) -> bool:
        """With a tray geometry: does the box's centre, taken to the plane ``z_mm`` above the
        floor (default a die's top face height), lie on the tray's floor at least ``inset`` dice
        inside its outline (negative: outside by at most that)? Without one: True."""
        if self.geometry is None:
            return True
        import cv2

        g = self.geometry
        z = g.die_mm if z_mm is None else z_mm
        xy = g.to_plane(np.array([[(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]]), z)[0]
        d = cv2.pointPolygonTest(g.floor_mm.astype(np.float32), (float(xy[0]), float(xy[1])), True)
        return d >= inset * g.die_mm

    def _few_dice(self, box: Sequence[float]) -> bool:
        """With a tray geometry: is the box no larger than two or three dice touching there
        (:data:`CLUSTER_MAX_SIDES` die sides)? A larger region is a hand, a shadow, the wall."""
        s = self._side_at(box, 0.0)
        return max(box[2] - box[0], box[3] - box[1]) <= CLUSTER_MAX_SIDES * s

    def _side_at(self, box: Sequence[float], default: float) -> float:
        """A die's box side (px) at the box's centre: from the geometry (the mean of its sides
        turned 0 and 45 degrees), else ``default``."""
        if self.geometry is None:
            return default
        c = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        return 0.5 * (self.geometry.die_side_px(c, 0.0) + self.geometry.die_side_px(c, 45.0))

    def too_small(self, box: Sequence[float]) -> str:
        """``""``, or why the die in ``box`` is too small to read: with a tray geometry, its top
        face there is under :data:`~companion.readers.dice_tray.MIN_FACE_PX` px across."""
        if self.geometry is None:
            return ""
        from companion.readers.dice_tray import MIN_FACE_PX

        side = self.geometry.face_side_px(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
        if side < MIN_FACE_PX:
            return f"too small to read here (its face {side:.0f} px across, {MIN_FACE_PX:.0f} needed)"
        return ""

    def find_dice(self, frame: np.ndarray) -> list[tuple[tuple[float, float, float, float], bool]]:
        """Dice-sized foreground regions of the tray.

        The tray floor's colour is taken locally (a median filter much wider than a die, on a
        quarter-size copy), so uneven light and the shading near the walls do not count as
        dice; lightness differences weigh half (``lightness_weight``) so that shadows count
        less than colour. Regions of several touching dice are split by an erosion; what cannot
        be split is reported with ``single`` False.

        Args:
            frame: ``H x W x 3 uint8, BGR``.

        Returns:
            ``(box, single)`` per region, box ``(x0, y0, x1, y1)`` in frame pixels; ``single``
            is False for a region too large for one die (dice touching).

        Raises:
            ValueError: ``frame`` is not ``H x W x 3 uint8``, or the tray lies outside it.
        """
        return self._regions(frame)[0]

    def _regions(self, frame: np.ndarray):
        """``(find_dice's list, (raw foreground mask of the region of interest, its x0, y0 in
        the frame), typical die side px or None)``."""
        import cv2

        _check_frame(frame)
        x0, y0 = 0, 0
        roi = frame
        if self.tray is not None:
            x0, y0, x1, y1 = self.tray
            roi = frame[y0:y1, x0:x1]
            if roi.size == 0:
                fh, fw = frame.shape[:2]
                raise ValueError(f"tray {tuple(self.tray)}: outside the {fw} x {fh} px frame")
        h, w = roi.shape[:2]
        lab = cv2.cvtColor(roi, cv2.COLOR_BGR2LAB)
        small = cv2.resize(lab, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
        floor = cv2.resize(cv2.medianBlur(small, self._floor_aperture()), (w, h), interpolation=cv2.INTER_LINEAR)
        raw = self._foreground(lab, floor)
        if self._floor is not None and self._floor.shape == raw.shape:
            raw &= self._floor  # only where a die on the tray's floor can show
        if self.tray is None:
            # No tray given: the tray is the floor the frame is centred on; what lies outside
            # it (the table, the rim, a mounting hole) is not a die.
            inside = self.floor_region(small, (w, h), raw[::4, ::4][: small.shape[0], : small.shape[1]])
            if inside is not None:
                raw &= inside
        opened = cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        mask = cv2.morphologyEx(opened, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        lo, hi = self.die_px
        n, labels, stats, _ = _components(mask)
        comps = [tuple(int(v) for v in stats[i]) for i in range(n)]
        kinds = ["other"] + [self._shape(c[2], c[3], c[4]) for c in comps[1:]]
        inside = self._dice_in_bands(opened, labels, comps, kinds) if self.geometry is not None else []
        # The dice of one frame are of one size: a "die" much larger than the typical one is
        # two dice (or a die and its neighbour's side) touching.
        sides = sorted(max(c[2], c[3]) for c, k in zip(comps, kinds) if k == "die")
        typical = float(sides[len(sides) // 2]) if len(sides) >= 3 else None
        if typical is not None:
            kinds = [
                "cluster" if k == "die" and max(c[2], c[3]) > TYPICAL_SIZE_RATIO * typical else k
                for c, k in zip(comps, kinds)
            ]
        grow = int(round(0.45 * typical if typical else lo / 2)) | 1  # odd aperture, half a die
        out: list[tuple[tuple[float, float, float, float], bool]] = []
        for i in range(1, n):
            x, y, bw, bh, area = comps[i]
            if kinds[i] == "die":
                out.append(((float(x + x0), float(y + y0), float(x + bw + x0), float(y + bh + y0)), True))
            elif kinds[i] == "cluster":
                # Touching dice: erode the bridges between them, keep the die-shaped parts.
                part = (labels[y : y + bh, x : x + bw] == i).astype(np.uint8)
                eroded = cv2.erode(part, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grow, grow)))
                m, _, sub, _ = cv2.connectedComponentsWithStats(eroded)
                pieces = []
                g = grow // 2
                for k in range(1, m):
                    sx, sy, sw, sh, _ = (int(v) for v in sub[k])
                    sw, sh = sw + 2 * g, sh + 2 * g
                    if lo <= max(sw, sh) <= hi and max(sw, sh) <= 1.5 * min(sw, sh):
                        pieces.append((sx - g, sy - g, sw, sh))
                if not pieces:
                    out.append(((float(x + x0), float(y + y0), float(x + bw + x0), float(y + bh + y0)), False))
                for sx, sy, sw, sh in pieces:
                    bx, by = x + sx + x0, y + sy + y0
                    # a piece much larger than the frame's typical die is still dice touching
                    one = typical is None or max(sw, sh) <= TYPICAL_SIZE_RATIO * typical
                    out.append(((float(bx), float(by), float(bx + sw), float(by + sh)), one))
            # anything else is not dice (a tray wall, a hand): ignored
        out += [((float(bx + x0), float(by + y0), float(bx + bw + x0), float(by + bh + y0)), True)
                for bx, by, bw, bh in inside]
        if typical is not None:
            # A die seen only in part (a white die on the light floor, a dark side face) gives a
            # small region: its box grows to the typical die around the region's centre.
            grown = []
            for (bx0, by0, bx1, by1), single in out:
                if single and max(bx1 - bx0, by1 - by0) < SMALL_SIZE_RATIO * typical:
                    cx, cy, half = (bx0 + bx1) / 2, (by0 + by1) / 2, typical / 2
                    grown.append(((cx - half, cy - half, cx + half, cy + half), True))
                else:
                    grown.append(((bx0, by0, bx1, by1), single))
            out = grown
        return out, (raw, x0, y0), typical

    def _one_beyond(self, raw_at, found: Sequence[np.ndarray], others: Sequence[Sequence[float]],
                    band: np.ndarray | None) -> str:
        """With a tray geometry, for a die read as a one: ``""``, or why its value cannot be
        told. A one shows no flatness in its pips (:meth:`flatness`), and a die cocked against
        the wall or another die may show a one as its upper face; such a die shows more of its
        body than a flat die does. So the foreground joined to the one's face
        (:func:`_partial`, the other dice's boxes and the wall's band set aside) must lie in
        the box of a flat die whose top face is centred on the pip (at any yaw:
        :meth:`~companion.readers.dice_tray.TrayGeometry.flat_die_box_px`, already the union
        over every yaw: no margin), but for :data:`ONE_BODY_AREA` of that box (the calibration's
        error of a pixel or so along a side, a soft edge)."""
        pts = [np.asarray(p, float) for p in found if len(p)]
        if not pts:
            return ""
        c = np.mean([p.mean(0) for p in pts], axis=0)
        if _partial(raw_at, self.geometry.flat_die_box_px(c), others, band, 0.0, ONE_BODY_AREA):
            return "a one whose die shows more than a flat die's body (cocked, or touching another)"
        return ""

    def _band(self) -> np.ndarray | None:
        """With a tray geometry, the band :data:`WALL_BAND` dice wide along the tray's wall over
        the region of interest (:meth:`~companion.readers.dice_tray.TrayGeometry.wall_band_mask`,
        made once), else None."""
        if self.geometry is None or self.tray is None:
            return None
        if self._wall_band is None:
            self._wall_band = self.geometry.wall_band_mask(self.tray, WALL_BAND * self.geometry.die_mm)
        return self._wall_band

    def _floor_aperture(self) -> int:
        """The median filter's aperture (px, odd, on the quarter-size copy) that gives the
        floor's local colour: 31 (124 px in the frame); with a tray geometry,
        :data:`FLOOR_MEDIAN_DICE` dice at the tray (the geometric mean of the smallest top face
        and the largest die there), at most 31 and at least 5. Over that many dice a die or two
        touching are far under half the window and stay foreground, while the shading along the
        tray's wall (a band wider than half the window along it) is taken as the floor's own
        colour there, so that a die near the wall is not joined to it."""
        if self.geometry is None:
            return 31
        k = int(round(FLOOR_MEDIAN_DICE * self._die_side_px / 4))
        return max(5, min(31, k | 1))

    def _dice_in_bands(self, opened: np.ndarray, labels: np.ndarray, comps: list, kinds: list) -> list:
        """With a tray geometry: the dice inside regions too large to be dice, ``(x, y, w, h)``
        px of the region of interest per die.

        The finder's closing (5 x 5) joins a die lying near the tray's wall to the wall's
        shading band, and the joined region, longer than a few dice, is no die ("other"). In the
        foreground before the closing (``opened``: the raw mask after the 3 x 3 opening) such a
        die is a region of its own: every part of a large region that has a single die's size
        and squareness there (:meth:`_shape`) is taken as a die. A part of the band itself that
        happens to be die-sized goes to the two readers like any other box: neither sees a die
        there and it is dropped (:meth:`_read_singles`).

        Args:
            opened: ``h x w uint8`` 0/1, the opened foreground of the region of interest.
            labels: ``h x w int32``, the closed mask's components.
            comps: per component ``(x, y, w, h, area)``.
            kinds: per component ``"die"``, ``"cluster"`` or ``"other"``.
        """
        import cv2

        hi = self.die_px[1]
        out = []
        for i in range(1, len(comps)):
            x, y, bw, bh, _ = comps[i]
            if kinds[i] != "other" or max(bw, bh) <= hi:
                continue
            part = opened[y : y + bh, x : x + bw] & (labels[y : y + bh, x : x + bw] == i).astype(np.uint8)
            m, _, sub, _ = cv2.connectedComponentsWithStats(part)
            for k in range(1, m):
                sx, sy, sw, sh, area = (int(v) for v in sub[k])
                if self._shape(sw, sh, area) == "die":
                    out.append((x + sx, y + sy, sw, sh))
        return out

    def _foreground(self, lab: np.ndarray, floor: np.ndarray) -> np.ndarray:
        """``H x W uint8`` 0/1: the pixels whose Lab distance from the floor's local colour,
        lightness weighted by ``lightness_weight``, exceeds ``foreground_lab`` (both ``H x W x 3
        uint8`` OpenCV Lab).

        The distance is ``sqrt((w dL)^2 + da^2 + db^2)`` in float32. With the default weight 1/2
        its square is a whole number of quarters, ``k / 4`` with ``k = dL^2 + 4 (da^2 + db^2)``,
        taken exactly (whole numbers under 2^20, exact in float32: OpenCV's squares of the
        differences and their weighted sum) and compared with the least ``k`` whose float32
        distance exceeds ``foreground_lab`` (:meth:`_least_k`): the same pixels as the float32
        sum, ten times faster. Any other weight takes the float32 sum itself.
        """
        import cv2

        if self.lightness_weight == 0.5:
            d = cv2.absdiff(lab, floor)
            k = cv2.transform(cv2.multiply(d, d, dtype=cv2.CV_32F), _FOREGROUND_WEIGHTS)
            return (k >= _least_k(float(self.foreground_lab))).view(np.uint8)
        diff = lab.astype(np.float32) - floor.astype(np.float32)
        diff[..., 0] *= self.lightness_weight
        dist = np.linalg.norm(diff, axis=2)
        return (dist > self.foreground_lab).astype(np.uint8)

    def _leftovers(self, raw_at, found: Sequence[Sequence[float]], side: float) -> list[tuple[float, float, float, float]]:
        """Where the foreground is not explained by the dice found: boxes (frame px) around
        what is left of the raw foreground mask once every found die's box is cleared, its
        specks joined by a dilation of a third of a die (a pale die's pips join up; so does the
        unseen half of two touching dice)."""
        import cv2

        raw, x0, y0 = raw_at
        left = raw.copy()
        for bx0, by0, bx1, by1 in found:
            left[max(0, int(by0 - y0)) : max(0, int(by1 - y0) + 1), max(0, int(bx0 - x0)) : max(0, int(bx1 - x0) + 1)] = 0
        k = int(round(side / 3)) | 1
        # Only the window around what is left, grown by the dilation's reach, is dilated and
        # labelled (the same components, their boxes moved back to the whole mask's origin).
        lx, ly, lw, lh = cv2.boundingRect(left)
        if lw == 0 or lh == 0:
            return []
        h, w = left.shape
        wx0, wy0 = max(0, lx - k), max(0, ly - k)
        wx1, wy1 = min(w, lx + lw + k), min(h, ly + lh + k)
        left = left[wy0:wy1, wx0:wx1]
        x0, y0 = x0 + wx0, y0 + wy0
        joined = cv2.dilate(left, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        m, labels, gst, _ = _components(joined)
        lo, hi = self.die_px
        boxes = []
        for j in range(1, m):
            gx, gy, gw, gh, _ = (int(v) for v in gst[j])
            extent = max(gw, gh) - k + 1
            if extent < 0.5 * lo or extent > 2.5 * hi:
                continue  # a speck of dust, or no die-sized thing (a hand, the tray's wall)
            if int(left[gy : gy + gh, gx : gx + gw][labels[gy : gy + gh, gx : gx + gw] == j].sum()) < 0.02 * side * side:
                continue
            boxes.append((float(gx + x0), float(gy + y0), float(gx + gw + x0), float(gy + gh + y0)))
        boxes.sort(key=lambda bb: -(bb[2] - bb[0]) * (bb[3] - bb[1]))
        return boxes

    def floor_region(self, small_lab: np.ndarray, size: tuple[int, int],
                     foreground: np.ndarray | None = None) -> np.ndarray | None:
        """The tray's floor when no tray is given: ``H x W uint8`` 0/1 at ``size`` (w, h), or
        None when no floor is found (then the whole frame is read).

        The floor's colour is the median (CIE Lab, 8-bit) of the frame's central half (its
        pixels that are not ``foreground``: dice, a hand, seen against the local floor); the floor
        is the connected region of pixels near it (Lab distance, lightness weighted as the
        finder's, under ``foreground_lab``) that holds most of the centre; a tray's floor is
        convex (rectangle, round), so its convex hull, grown by half the largest die, also takes
        the dice on it and those against its walls. A floor under a tenth of the frame is not
        found.

        Args:
            small_lab: the frame in OpenCV 8-bit Lab at a quarter of its size.
            size: ``(w, h)`` of the frame (px).
            foreground: ``small_lab``-sized 0/1 mask of what is not floor, or None.
        """
        import cv2

        sh, sw = small_lab.shape[:2]
        centre = small_lab[sh // 4 : 3 * sh // 4, sw // 4 : 3 * sw // 4].reshape(-1, 3)
        if foreground is not None and foreground.shape == (sh, sw):
            keep = foreground[sh // 4 : 3 * sh // 4, sw // 4 : 3 * sw // 4].reshape(-1) == 0
            centre = centre[keep] if keep.sum() >= 0.1 * len(keep) else centre
        if len(centre) == 0:
            return None
        ref = np.median(centre, axis=0).astype(np.float32)
        d = small_lab.astype(np.float32) - ref
        d[..., 0] *= self.lightness_weight
        near = (np.linalg.norm(d, axis=2) < self.foreground_lab).astype(np.uint8)
        near = cv2.morphologyEx(near, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(near)
        if n <= 1:
            return None
        core = labels[sh // 4 : 3 * sh // 4, sw // 4 : 3 * sw // 4]
        counts = np.bincount(core.ravel(), minlength=n)
        counts[0] = 0
        k = int(np.argmax(counts))
        if stats[k, cv2.CC_STAT_AREA] < 0.1 * sh * sw:
            return None
        pts = cv2.findNonZero((labels == k).astype(np.uint8))
        hull = cv2.convexHull(pts)
        mask = np.zeros((sh, sw), np.uint8)
        cv2.fillConvexPoly(mask, hull, 1)
        grow = max(1, int(round(self.die_px[1] / 8))) * 2 + 1  # half the largest die, at 1/4 scale
        mask = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grow, grow)))
        return cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST)

    def colour_problem(self, frame: np.ndarray) -> str:
        """Why the tray in ``frame`` cannot be read in colour, or ``""``.

        The finder separates dice from the floor by colour (CIE Lab) and the pips by their
        contrast, so the frame must be a colour frame of a lit tray:

        * grayscale (the camera lost its colour): the 99.9th percentile of the pixels' chroma
          (OpenCV 8-bit Lab, ``|a - 128| + |b - 128|``) below :data:`MIN_CHROMA`: a colour
          frame of a tray (a coloured die, a felt, the rim, the light's tint) has 20 or more
          there, a grayscale one 0;
        * too dark: the tray's brightest pixels (99th percentile of L, 8-bit) below
          :data:`MIN_BRIGHT_L` - no pip or white face stands out of the sensor's noise;
        * over-exposed: the floor (the median of the tray) clipped in every channel.

        Args:
            frame: ``H x W x 3 uint8, BGR``.

        Returns:
            ``"colour lost: ..."`` or ``""``.
        """
        import cv2

        _check_frame(frame)
        roi = frame
        if self.tray is not None:
            x0, y0, x1, y1 = self.tray
            roi = frame[y0:y1, x0:x1]
        small = roi[::4, ::4]
        if small.size == 0:
            return ""
        small = np.ascontiguousarray(small)
        lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).reshape(-1, 3)
        # (the order statistics from the values' counts: the medians and percentiles np.median
        # and np.percentile's linear rule give, without their sorts)
        if min(_percentile_u8(c, 50.0) for c in cv2.split(small)) >= 245:
            return "colour lost: over-exposed, the tray's floor is clipped white"
        bright = _percentile_u8(lab[:, 0], 99.0)
        if bright < MIN_BRIGHT_L:
            return f"colour lost: too dark, the tray's brightest pixels are {bright:.0f} of 255 (at least {MIN_BRIGHT_L} needed)"
        chroma = cv2.add(cv2.absdiff(lab[:, 1], 128), cv2.absdiff(lab[:, 2], 128), dtype=cv2.CV_16U)
        if _percentile_counts(np.bincount(chroma.ravel(), minlength=1), 99.9) < MIN_CHROMA:
            return "colour lost: no colour in the frame (a grayscale camera)"
        return ""

    def partial_die(self, frame: np.ndarray, box: Sequence[float]) -> str:
        """Why ``box`` holds only part of a die, or ``""``: the die's foreground reaches well
        beyond the box (:func:`_partial`), the other dice the finder sees set aside."""
        _check_box(box)
        regions, raw_at, _ = self._regions(frame)
        x0, y0, x1, y1 = (float(v) for v in box)

        def overlap(b: Sequence[float]) -> float:
            ix = max(0.0, min(x1, b[2]) - max(x0, b[0]))
            iy = max(0.0, min(y1, b[3]) - max(y0, b[1]))
            return ix * iy / max(1e-9, min((x1 - x0) * (y1 - y0), (b[2] - b[0]) * (b[3] - b[1])))

        # the finder's other dice (not the one this box is over) are set aside
        others = [b for b, _ in regions if overlap(b) < 0.2]
        return _partial(raw_at, box, others, self._band())

    def _shape(self, w: int, h: int, area: int) -> str:
        """``"die"``, ``"cluster"`` (several touching dice) or ``"other"`` for a region."""
        lo, hi = self.die_px
        if max(w, h) < lo or min(w, h) < lo * 0.6:
            return "other"  # a speck
        fill = area / float(w * h)
        if max(w, h) <= hi and max(w, h) <= 1.5 * min(w, h) and fill > 0.45:
            return "die"
        if max(w, h) <= 3 * hi and area <= 4 * hi * hi and fill > 0.3:
            return "cluster"
        return "other"

    def pip_reading(self, frame: np.ndarray, box: Sequence[float]) -> tuple[int | None, str]:
        """The pips' reading of the die in ``box``: ``(value, "")`` or ``(None, reason)``.

        Of three crops, at least two must give the value and none another (module notes,
        step 4).
        """
        value, reason, _ = self.pip_readings(frame, box)
        return value, reason

    def pip_readings(self, frame: np.ndarray, box: Sequence[float]) -> tuple[int | None, str, tuple[int, ...]]:
        """:meth:`pip_reading` and the value of every crop that gave one (for :func:`decide`:
        a crop that read another value than the classifier is a disagreement)."""
        value, reason, given, _ = self.pip_evidence(frame, box)
        return value, reason, given

    def pip_evidence(self, frame: np.ndarray, box: Sequence[float]) -> tuple[
            int | None, str, tuple[int, ...], list[np.ndarray]]:
        """:meth:`pip_readings` and, for each crop that gave the value, its pips' centres in
        frame pixels (``n x 2 float64``), for :meth:`flatness`."""
        return self._pip_evidence(frame, box, True)[0]

    def _pip_evidence(self, frame: np.ndarray, box: Sequence[float], every_crop: bool,
                      crops: Sequence[tuple] = ()) -> tuple[tuple, list]:
        """``(pip_evidence's tuple, the crops read: (value, reason, pips frame px) each)``.
        Without ``every_crop`` the third crop is not read when the first two read one value
        (the value stands whatever the third reads, but for another value, which makes it
        "readings disagree": :meth:`_read_singles` reads it when the die's reading is no
        value). ``crops``: the first crops, already read."""
        x0, y0, x1, y1 = (float(v) for v in box)
        w = x1 - x0
        crops = list(crops)
        for k, (m, size) in enumerate(_VARIANTS[len(crops):], start=len(crops)):
            if k == 2 and not every_crop and crops[0][0] is not None and crops[0][0] == crops[1][0]:
                break
            v, r, pts = read_patch_pips(_resample(frame, box, m, size))
            scale = size / max(w * (1 + 2 * m), 1e-6)
            crops.append((v, r, np.column_stack([x0 - w * m + pts[:, 0] / scale, y0 - (y1 - y0) * m + pts[:, 1] / scale])
                          if len(pts) else pts))
        results = [(v, r) for v, r, _ in crops]
        pips = [p for _, _, p in crops]
        values = {v for v, _ in results if v is not None}
        given = tuple(v for v, _ in results if v is not None)
        found = [p for (v, _), p in zip(results, pips) if v is not None]
        if len(values) > 1:
            out = None, "readings disagree", given, found
        elif len(given) < 2:
            reasons = [r for v, r in results if v is None]
            out = None, reasons[0] if reasons else "unsure", given, found
        else:
            out = given[0], "", given, found
        if self.geometry is not None:
            # With the tray's geometry the face is also read on the plane of its top face: a
            # disagreement is no value; pips no crop could read may be read there.
            from companion.readers.dice_tray import with_face_fit

            out = with_face_fit(frame, self.geometry, box, out)
        return out, crops

    def flatness(self, pips_px: Sequence[np.ndarray]) -> float | None:
        """How far the pips read lie from a flat die's top face (0 = exactly), or None when it
        cannot be told (no geometry, fewer than two pips: a one).

        Each crop's pip centres (frame px) are taken to the plane of a flat die's top face (a
        die's height above the floor, :class:`~companion.readers.dice_tray.TrayGeometry`); there
        the pattern's spread along its principal axes (standard deviations, mm) must be that of
        the face's layout, pips :data:`PIP_GRID_SHARE` of the die's edge from the centre (a
        tilted face is shorter along its tilt; a face higher or lower than a flat die's top is
        larger or smaller). The result is the largest relative difference over the axes and the
        crops. A two or a three shows only its diagonal: a tilt along it is not seen.
        """
        if self.geometry is None:
            return None
        u = PIP_GRID_SHARE * self.geometry.die_mm
        worst = None
        for pts in pips_px:
            n = len(pts)
            if n < 2:
                continue
            mm = self.geometry.to_plane(np.asarray(pts, float), self.geometry.die_mm)
            eig = np.sort(np.linalg.eigvalsh(np.cov(mm.T, bias=True)))[::-1]
            want = {2: (2.0, 0.0), 3: (4 / 3, 0.0), 4: (1.0, 1.0), 5: (0.8, 0.8), 6: (1.0, 2 / 3)}[n]
            axes = [float(np.sqrt(max(eig[0], 0)) / (u * np.sqrt(want[0])))]
            if want[1] > 0:
                axes.append(float(np.sqrt(max(eig[1], 0)) / (u * np.sqrt(want[1]))))
            off = max(abs(a - 1) for a in axes)
            worst = off if worst is None else max(worst, off)
        return worst

    def read_die(self, frame: np.ndarray, box: Sequence[float]) -> tuple[int | None, str]:
        """Read the die in ``box`` (``x0, y0, x1, y1`` px) of ``frame`` (``H x W x 3 uint8``,
        BGR): ``(value, "")`` or ``(None, reason)``; see :func:`decide`."""
        _check_frame(frame)
        fault = self.colour_problem(frame)
        if fault:
            return None, fault
        partial = self.partial_die(frame, box)
        if partial and not self._whole_face(box, self._pip_evidence(frame, box, False)[1]):
            return None, partial
        probs = self.model.probabilities(die_patch(frame, box)[None])[0] if self.model else None
        value, reason, seen = self.pip_readings(frame, box)
        if partial and value is None:
            return None, partial
        got = decide(probs, value, reason, seen)
        if got[0] == 1 and value is None and not self._one_pip_shows(frame, box):
            return None, "the face looks like 1 but shows no pip of a one's size (a glint?)"
        return got

    @staticmethod
    def _one_pip_shows(frame: np.ndarray, box: Sequence[float]) -> bool:
        """Whether the box's first crop shows a blob of a one's pip size near its centre
        (:func:`~companion.readers.dice_face_checks.one_pip_seen`), or its colour map shows
        that blob alone (:func:`~companion.readers.dice_face_checks.one_colour_pip_seen`: a
        red pip ringed by a marbled die's white swirl, which the pip maps see as one ring): a
        one the classifier alone reads needs it (a glint on a die whose pips the pip reader
        did not see is no pip, and shows no colour)."""
        from companion.readers.dice_face_checks import colour_map, one_colour_pip_seen, one_pip_seen

        patch = _resample(frame, box, 0.0, PATCH_PX)
        w = patch.shape[1]
        return (one_pip_seen(_pip_candidates(pip_map(patch)) + _pip_candidates(face_map(patch)), w)
                or one_colour_pip_seen(_pip_candidates(colour_map(patch)), w))

    def _one_die_shape(self, box: Sequence[float]) -> bool:
        """Whether ``box`` has one die's size and shape (``die_px``, sides within 1.5 of each
        other), as a piece of the finder's erosion must: a region of touching dice that the
        search finds no die in, yet shaped so, is one die larger than the frame's others (dice
        of a mixed set), read as one."""
        lo, hi = self.die_px
        w, h = box[2] - box[0], box[3] - box[1]
        return lo <= max(w, h) <= hi and max(w, h) <= 1.5 * min(w, h)

    @staticmethod
    def _whole_face(box: Sequence[float], crops: Sequence[tuple]) -> bool:
        """Whether the box's pip crops (``(value, reason, pips frame px)`` each as
        :meth:`_pip_evidence` reads them) read one value whose face lies inside ``box``
        (:func:`~companion.readers.dice_face_checks.face_inside_box`): the box then holds a
        whole die's top face, and foreground reaching beyond it is a die touching it, not the
        rest of this one (a value still needs the pips and the classifier to agree).

        The first two crops when they read one value; else (the third crop is then read:
        :meth:`_pip_evidence`) the crops that read a value, at least two of them, all the
        same value (the first and third crops of a die touching another often read its face
        while the second, with its margin, takes in the neighbour's pips), in a box of one
        die's shape (its sides within 1.5 of each other, as the finder's dice: the first and
        third crops frame the box alike, and a box over half a die, twice as long as high,
        may show two of its pips as a small two)."""
        from companion.readers.dice_face_checks import face_inside_box

        (v0, _, p0), (v1, _, p1) = crops[:2]
        if v0 is not None and v0 == v1:
            return face_inside_box(box, [p0, p1], PIP_GRID_SHARE, _SPAN)
        read = [(v, p) for v, _, p in crops if v is not None]
        w, h = box[2] - box[0], box[3] - box[1]
        return (len(read) >= 2 and len({v for v, _ in read}) == 1 and max(w, h) <= 1.5 * min(w, h)
                and face_inside_box(box, [p for _, p in read], PIP_GRID_SHARE, _SPAN))

    def _covered(self, raw_at, centres: list[tuple[float, float]], half: float) -> list[tuple[float, float]]:
        """Of the square centres (frame px), those whose square (side ``2 half``) is at least
        :data:`SEARCH_MIN_COVER` foreground in the raw mask, at most :data:`SEARCH_MAX_LOOKS`
        of them, the most covered first (an integral image: one sum per square)."""
        import cv2

        raw, ox, oy = raw_at
        h, w = raw.shape
        if not centres:
            return []
        ii = cv2.integral(raw)
        c = np.asarray(centres, float)
        ax0 = np.clip(np.round(c[:, 0] - half - ox), 0, w).astype(int)
        ax1 = np.clip(np.round(c[:, 0] + half - ox), 0, w).astype(int)
        ay0 = np.clip(np.round(c[:, 1] - half - oy), 0, h).astype(int)
        ay1 = np.clip(np.round(c[:, 1] + half - oy), 0, h).astype(int)
        area = np.maximum(1, (ax1 - ax0) * (ay1 - ay0))
        cover = (ii[ay1, ax1] - ii[ay0, ax1] - ii[ay1, ax0] + ii[ay0, ax0]) / area
        cover[(ax1 <= ax0) | (ay1 <= ay0)] = 0.0
        order = [i for i in np.argsort(-cover, kind="stable") if cover[i] >= SEARCH_MIN_COVER][:SEARCH_MAX_LOOKS]
        return [centres[i] for i in order]

    def search(
        self, frame: np.ndarray, region: Sequence[float], side: float, taken: Sequence[Sequence[float]] = (),
        raw_at=None,
    ) -> list[tuple[float, float, float, float]]:
        """Dice inside ``region`` found by the face classifier's quick look.

        Squares of ``side`` px are placed on a grid (a fifth of a die apart, wider in a region
        so large that it would take more than about :data:`SEARCH_MAX_SQUARES` squares) over the region
        grown by half a die; each is scored by the classifier's probability that it holds one
        die (1 - P(not one die), one view); the best squares above :data:`SEARCH_SCORE` are
        kept, each at least :data:`SEARCH_SPACING` dice from the others and from ``taken``.

        Args:
            frame: ``H x W x 3 uint8, BGR``.
            region: ``(x0, y0, x1, y1)`` px, where to look (dice touching, pips of a pale die).
            side: a die's side (px) in this frame.
            taken: boxes of dice already found, which the new ones must keep clear of.
            raw_at: the raw foreground mask and its origin (:meth:`_regions`), or None; when
                given, only squares mostly foreground are looked at (:meth:`_covered`).

        Returns:
            The dice's boxes ``(x0, y0, x1, y1)`` px, best first; empty without a model.
        """
        if self.model is None:
            return []
        centres, boxes = self._squares(region, side, raw_at)
        if not centres:
            return []
        return self._pick(centres, boxes, self._scores(frame, [boxes])[0], side, taken)

    def _squares(self, region: Sequence[float], side: float, raw_at=None) -> tuple[list, list]:
        """:meth:`search`'s squares in ``region``: ``(centres, boxes)`` px, the boxes to score."""
        x0, y0, x1, y1 = (float(v) for v in region)
        step = side / 5
        # A large region is searched more coarsely: about SEARCH_MAX_SQUARES squares at most.
        step = max(step, float(np.sqrt(max(x1 - x0, 1) * max(y1 - y0, 1) / SEARCH_MAX_SQUARES)) + 1e-6)
        xs = np.arange(x0, x1 + 1e-6, step) if x1 - x0 > step else np.array([(x0 + x1) / 2])
        ys = np.arange(y0, y1 + 1e-6, step) if y1 - y0 > step else np.array([(y0 + y1) / 2])
        centres = [(cx, cy) for cy in ys for cx in xs]
        half = side / 2
        if raw_at is not None:
            # A cheap look first: only squares mostly covered by foreground (a die there), the
            # most covered first, go to the classifier.
            centres = self._covered(raw_at, centres, half)
        return centres, [(cx - half, cy - half, cx + half, cy + half) for cx, cy in centres]

    def _scores(self, frame: np.ndarray, box_lists: Sequence[Sequence[Sequence[float]]]) -> list[np.ndarray]:
        """The classifier's quick look (one view) at every box of every list, in one batch:
        per list, ``len float32`` scores (1 - P(not one die))."""
        every = [b for boxes in box_lists for b in boxes]
        if not every:
            return [np.zeros(0, np.float32) for _ in box_lists]
        probs = self.model.probabilities(np.stack([die_patch(frame, b) for b in every]), views=1)
        score = 1.0 - probs[:, 0]
        out, at = [], 0
        for boxes in box_lists:
            out.append(score[at:at + len(boxes)])
            at += len(boxes)
        return out

    def _pick(self, centres: list, boxes: list, score: np.ndarray, side: float,
              taken: Sequence[Sequence[float]]) -> list[tuple[float, float, float, float]]:
        """:meth:`search`'s choice: the best squares above :data:`SEARCH_SCORE`, each at least
        :data:`SEARCH_SPACING` dice from the others kept and from ``taken``."""
        kept: list[tuple[float, float, float, float]] = []
        others = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in taken]
        for i in np.argsort(-score):
            if score[i] < SEARCH_SCORE:
                break
            cx, cy = centres[i]
            if all(np.hypot(cx - ox, cy - oy) > SEARCH_SPACING * side for ox, oy in others):
                kept.append(boxes[i])
                others.append((cx, cy))
        return kept

    def read(self, frame: np.ndarray) -> list[DieReading]:
        """Every die in the tray, in rows 40 px high from the top, left to right in a row.

        Regions :meth:`find_dice` could not split, and pip-like specks with no die region
        (a white die on a light floor), are searched with the face classifier
        (:meth:`search`); without a model an unsplit region is one ``unknown`` reading
        ("dice touching").

        Args:
            frame: ``H x W x 3 uint8, BGR``.

        Raises:
            ValueError: ``frame`` is not ``H x W x 3 uint8``, or the tray lies outside it.
        """
        fault = self.colour_problem(frame)
        if fault:
            h, w = frame.shape[:2]
            x0, y0, x1, y1 = self.tray if self.tray is not None else (0, 0, w, h)
            return [DieReading((float(x0), float(y0), float(x1), float(y1)), UNKNOWN, fault)]
        regions, raw_at, typical = self._regions(frame)
        if self.geometry is not None:
            # Only what stands on the tray's floor can be a die (not its walls, not its rim).
            regions = [(box, single) for box, single in regions
                       if self.on_floor(box, 0.25) and (single or self._few_dice(box))]
        singles = [box for box, single in regions if single]
        readings = []
        if self.model is not None:
            side = typical or float(np.median([max(b[2] - b[0], b[3] - b[1]) for b in singles] or [np.mean(self.die_px)]))
            mask_at = raw_at if self.geometry is not None else None
            # The regions of touching dice: their squares scored in one batch, then searched
            # one by one (each keeps clear of the dice found before it).
            clusters = []
            for box, single in regions:
                if not single:
                    s = self._side_at(box, side)
                    clusters.append((box, s, *self._squares(_grown(box, s / 2), s, mask_at)))
            for (box, s, centres, squares), score in zip(clusters, self._scores(frame, [c[3] for c in clusters])):
                found = self._pick(centres, squares, score, s, singles) if centres else []
                singles += found
                if not found and self.geometry is not None and not self.on_floor(box, WALL_CLEAR, 0.0):
                    continue  # against the wall, no die found in it: the wall's shading
                if not found and self._one_die_shape(box):
                    singles.append(box)  # no two dice found in it: one die larger than the others
                elif not found:
                    readings.append(DieReading(box, UNKNOWN, "dice touching"))
            left = self._leftovers(raw_at, singles, side)
            if self.geometry is not None:
                left = [b for b in left if self.on_floor(b, 0.0) and self._few_dice(b)]
            looks = []
            for box in left[:SEARCH_MAX_REGIONS]:
                s = self._side_at(box, side)
                looks.append((s, *self._squares(_grown(box, s / 4), s, mask_at)))
            for (s, centres, squares), score in zip(looks, self._scores(frame, [lk[2] for lk in looks])):
                if centres:
                    singles += self._pick(centres, squares, score, s, singles)
            if self.geometry is not None:
                # A die seen only by its pips (coloured like the felt): a square on them.
                from companion.readers.dice_tray import speck_faces

                singles += speck_faces(raw_at, left[:SEARCH_MAX_REGIONS], singles, self.geometry)
                singles = [b for b in singles if self.on_floor(b, 0.25)]
        else:
            readings = [DieReading(box, UNKNOWN, "dice touching") for box, single in regions if not single]
        readings += self._read_singles(frame, singles, raw_at)
        return sorted(readings, key=lambda r: (round(r.centre[1] / 40), r.centre[0]))


#: A frame whose 99.9th-percentile chroma (OpenCV Lab, |a-128| + |b-128|) is below this has no colour.
MIN_CHROMA = 6
#: The tray's brightest pixels (99th percentile of OpenCV's 8-bit L) must reach this.
MIN_BRIGHT_L = 40
#: The box may miss this share of a die's side on each side (a loose label, a soft edge).
PARTIAL_MARGIN = 0.15
#: More of a die's foreground than this share of the box's area beyond that margin: part of a die.
PARTIAL_AREA = 0.1


def _partial(raw_at, box: Sequence[float], others: Sequence[Sequence[float]],
             band: np.ndarray | None = None, margin: float = PARTIAL_MARGIN, area: float = PARTIAL_AREA) -> str:
    """``""`` when ``box`` holds a whole die, else why not.

    The foreground (the raw mask of :meth:`DiceReader._regions`) connected to the box's central
    half, outside the other dice's boxes, must not reach beyond the box grown by
    :data:`PARTIAL_MARGIN` of its side by more than :data:`PARTIAL_AREA` of its area: else the
    box is over part of a die (a shifted or partial box), whose face it cannot show whole.
    ``band`` (a 0/1 mask the raw mask's size, or None): with a tray geometry, the band along
    the tray's wall (:meth:`~companion.readers.dice_tray.TrayGeometry.wall_band_mask`), whose
    foreground (the wall's shading and foot, which a die against the wall touches) does not
    count as the die reaching beyond its box.
    """
    import cv2

    raw, ox, oy = raw_at
    h, w = raw.shape
    bx0, by0, bx1, by1 = (float(v) - o for v, o in zip(box, (ox, oy, ox, oy)))
    side = max(bx1 - bx0, by1 - by0)
    g = 0.6 * side
    wx0, wy0 = max(0, int(bx0 - g)), max(0, int(by0 - g))
    wx1, wy1 = min(w, int(np.ceil(bx1 + g))), min(h, int(np.ceil(by1 + g)))
    if wx1 <= wx0 or wy1 <= wy0:
        return ""
    m = raw[wy0:wy1, wx0:wx1].copy()
    for ob in others:
        a0, b0, a1, b1 = (float(v) - o for v, o in zip(ob, (ox, oy, ox, oy)))
        m[max(0, int(b0) - wy0):max(0, int(np.ceil(b1)) - wy0 + 1), max(0, int(a0) - wx0):max(0, int(np.ceil(a1)) - wx0 + 1)] = 0
    n, labels = cv2.connectedComponents(m)
    if n <= 1:
        return ""
    cx0, cx1 = int((3 * bx0 + bx1) / 4) - wx0, int(np.ceil((bx0 + 3 * bx1) / 4)) - wx0
    cy0, cy1 = int((3 * by0 + by1) / 4) - wy0, int(np.ceil((by0 + 3 * by1) / 4)) - wy0
    ids = np.unique(labels[max(0, cy0):max(0, cy1), max(0, cx0):max(0, cx1)])
    ids = ids[ids > 0]
    if not len(ids):
        return ""
    lut = np.zeros(n, bool)
    lut[ids] = True
    comp = lut[labels]
    if band is not None and band.shape == raw.shape:
        comp &= band[wy0:wy1, wx0:wx1] == 0
    # the pixels (whole coordinates) within the box grown by the margin: a rectangle of the window
    t = margin * side
    ix0, ix1 = max(0, int(np.ceil(bx0 - t)) - wx0), max(0, int(np.floor(bx1 + t)) - wx0 + 1)
    iy0, iy1 = max(0, int(np.ceil(by0 - t)) - wy0), max(0, int(np.floor(by1 + t)) - wy0 + 1)
    beyond = int(np.count_nonzero(comp)) - int(np.count_nonzero(comp[iy0:iy1, ix0:ix1]))
    if beyond > area * (bx1 - bx0) * (by1 - by0):
        return "the box covers only part of a die (the die reaches beyond it)"
    return ""


def _percentile_counts(counts: np.ndarray, q: float) -> float:
    """The ``q``-th percentile (0-100, numpy's default linear rule: the sorted values at
    ``q (n - 1) / 100`` interpolated) of the whole numbers whose counts ``counts[v]`` give."""
    n = int(counts.sum())
    if n == 0:
        raise ValueError("no values")
    pos = q / 100.0 * (n - 1)
    i = int(np.floor(pos))
    cum = np.cumsum(counts)
    lo = float(np.searchsorted(cum, i, side="right"))
    hi = float(np.searchsorted(cum, min(i + 1, n - 1), side="right"))
    return lo + (hi - lo) * (pos - i)


def _percentile_u8(values: np.ndarray, q: float) -> float:
    """:func:`_percentile_counts` of ``uint8`` values (any shape)."""
    return _percentile_counts(np.bincount(np.asarray(values).ravel(), minlength=256), q)


def _components(mask: np.ndarray):
    """``cv2.connectedComponentsWithStats(mask)`` (``H x W uint8``, 8-connected): ``(n, labels,
    stats, centroids)``, the labels ``uint16`` when the mask has fewer than 65,535 foreground
    pixels (so fewer components than ``uint16`` can number; 2.5 times faster here than
    ``int32`` labels, the same labels and stats), else ``int32``."""
    import cv2

    if cv2.countNonZero(mask) < 65535:
        return cv2.connectedComponentsWithStats(mask, connectivity=8, ltype=cv2.CV_16U)
    return cv2.connectedComponentsWithStats(mask)


#: The weights of the squared differences (L, a, b) in :meth:`DiceReader._foreground`'s ``k``.
_FOREGROUND_WEIGHTS = np.array([[1.0, 4.0, 4.0]])


@functools.lru_cache(maxsize=8)
def _least_k(foreground_lab: float) -> int:
    """The least ``k = dL^2 + 4 (da^2 + db^2)`` (8-bit Lab differences) whose float32 distance
    ``sqrt(k / 4)`` exceeds ``foreground_lab`` (:meth:`DiceReader._foreground`); beyond every
    ``k`` (``3 x 255^2 x 4 + 1``) when none does."""
    k = np.arange(4 * 3 * 255 * 255 + 1)
    above = np.sqrt((k / 4).astype(np.float32)) > np.float32(foreground_lab)
    return int(np.argmax(above)) if above.any() else len(k)


def _grown(box: Sequence[float], by: float) -> tuple[float, float, float, float]:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


#: With the foreground mask, a search square is looked at only when at least this share of it
#: is foreground, and at most this many squares of a region (the most covered).
SEARCH_MIN_COVER = 0.45
SEARCH_MAX_LOOKS = 32
#: A square is a die when the classifier's quick look gives it at least this probability.
SEARCH_SCORE = 0.8
#: Dice found by searching are at least this many die sides apart (centre to centre).
SEARCH_SPACING = 0.7
#: At most this many squares are scored in one region, and this many speck groups searched.
SEARCH_MAX_SQUARES = 400
SEARCH_MAX_REGIONS = 20


#: The face classifier alone gives a value when its probability is at least this.
MODEL_ALONE = 0.6
#: With the pips' reading agreeing, a lower probability is enough.
MODEL_WITH_PIPS = 0.4


def decide(probs: np.ndarray | None, pip_value: int | None, pip_reason: str = "",
           pip_values: Sequence[int] = ()) -> tuple[int | None, str]:
    """One die's value from the face classifier's probabilities and the pips' reading.

    The two readers fail differently: the pip fitter abstains on faint pips and perspective but
    is hard to fool; the classifier reads most faces but can be confidently wrong on a style it
    has not seen. So: a value both give is taken when the classifier's probability is at least
    :data:`MODEL_WITH_PIPS`; the classifier alone needs :data:`MODEL_ALONE`; a disagreement, or
    the classifier seeing no single die, is ``unknown``. A disagreement is any pip reading
    (``pip_values``: the value of each of the pips' crops that gave one) other than the
    classifier's: even when the pips abstain as a whole, a crop that read another value means
    the two readers disagree, and the die is ``unknown``, never a value. Without a model, the
    pips decide (and must agree among themselves).

    Args:
        probs: ``7 float`` class probabilities (:meth:`FaceModel.probabilities`), or None.
        pip_value: the pips' reading (1-6) or None.
        pip_reason: why the pips gave no value.
        pip_values: every value (1-6) one of the pips' crops read (:meth:`DiceReader.pip_readings`);
            default: ``pip_value`` alone.

    Returns:
        ``(value, "")`` or ``(None, reason)``.

    Raises:
        ValueError: ``probs`` is not 7 probabilities summing to 1, or ``pip_value`` not 1-6.
    """
    if pip_value is not None and pip_value not in range(1, 7):
        raise ValueError(f"pip_value: expected 1-6 or None, got {pip_value!r}")
    seen = sorted(set(pip_values) | ({pip_value} if pip_value is not None else set()))
    if any(v not in range(1, 7) for v in seen):
        raise ValueError(f"pip_values: expected values 1-6, got {list(pip_values)!r}")
    if len(seen) > 1:
        return None, f"the pips' crops disagree ({', '.join(map(str, seen))})"
    if probs is None:
        return (pip_value, "") if pip_value is not None else (None, pip_reason or "unsure")
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape != (7,) or not np.isfinite(probs).all() or probs.min() < 0 or abs(probs.sum() - 1) > 1e-3:
        raise ValueError(f"probs: expected 7 probabilities (not one die, 1-6) summing to 1, got {probs!r}")
    best = int(np.argmax(probs))
    p = float(probs[best])
    if best == 0:
        seen = f"pips read {pip_value}, " if pip_value is not None else ""
        return None, f"{seen}the face classifier sees no single die ({p:.2f})"
    if pip_value is None and seen and seen[0] != best:
        # One crop of the pips read a face, the classifier another: the readers disagree.
        return None, f"pips read {seen[0]} in one crop, the face looks like {best}"
    if pip_value is not None:
        if best == pip_value and p >= MODEL_WITH_PIPS:
            return pip_value, ""
        if best != pip_value:
            return None, f"pips read {pip_value}, the face looks like {best}"
        return None, f"pips read {pip_value}, face classifier unsure ({p:.2f})"
    if p >= MODEL_ALONE:
        return best, ""
    return None, f"{pip_reason or 'pips unsure'}; face classifier unsure ({p:.2f})"


def draw_readings(
    frame: np.ndarray, readings: Sequence[DieReading], tray: Sequence[int] | None = None
) -> np.ndarray:
    """The frame annotated with what the reader saw.

    Each die's box and value in green; an ``unknown`` die's box in orange labelled ``?1``,
    ``?2``... and a ``cocked`` die's labelled ``cocked``; the tray's region of interest as a
    thin grey rectangle. The dice's values and each unknown die's whole reason (``?1 unknown: too small
    to read here (14 px, 18 needed)``) are written on a black band added above the frame
    (:func:`~companion.vision.images.draw_header`, wrapped onto as many lines as it takes), so
    that no die near the frame's top edge is hidden by it. A frame under
    :data:`~companion.vision.images.OVERLAY_MIN_SIDE_PX` on its shorter side is drawn enlarged
    (:class:`~companion.vision.images.OverlayCanvas`), and the band says so.

    Args:
        frame: ``H x W x 3 uint8, BGR`` (not modified).
        readings: :meth:`DiceReader.read`'s result for that frame.
        tray: ``(x0, y0, x1, y1)`` px or None.

    Returns:
        A new ``H' x W' x 3 uint8, BGR`` image: the band's rows, then the frame (``H x W``
        unless the frame was enlarged).
    """
    import cv2

    from companion.vision.images import OverlayCanvas, draw_header

    _check_frame(frame)
    canvas = OverlayCanvas(frame)
    scale = max(0.4, min(frame.shape[:2]) / 1000)
    names: list[str] = []
    reasons: dict[str, list[str]] = {}  # a reason -> the unknown dice it is given for, in order
    for r in readings:
        if r.value not in (UNKNOWN, COCKED):
            names.append(str(r.value))
        elif r.value == COCKED:
            names.append(COCKED)
        else:
            names.append(f"?{sum(n.startswith('?') for n in names) + 1}")
            reasons.setdefault(r.reason or "no reason given", []).append(names[-1])
    status = f"{len(readings)} {'die' if len(readings) == 1 else 'dice'}" + (f": {', '.join(names)}" if names else "")
    status += "".join(f"  {' '.join(who)} unknown: {why}" for why, who in reasons.items())
    if COCKED in names:
        status += "  cocked: a die not lying flat (roll again)"
    strip = np.zeros_like(canvas.img)
    band = draw_header(strip, status + canvas.note, (255, 255, 255), scale) + 1  # its rows, 0 to band - 1
    out = np.concatenate([strip[:band], canvas.img])

    def pt(xy: Sequence[float]) -> tuple[int, int]:
        u, v = canvas.pt(xy)
        return u, v + band

    if tray is not None:
        cv2.rectangle(out, pt((tray[0], tray[1])), pt((tray[2] - 1, tray[3] - 1)), (160, 160, 160), 1)
    for r, label in zip(readings, names):
        (x0, y0), (x1, y1) = pt(r.box[:2]), pt(r.box[2:])
        known = r.value not in (UNKNOWN, COCKED)
        colour = (40, 170, 40) if known else (0, 140, 255)
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, 2)
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        ty = y0 - 4 if y0 - th - 7 >= band else max(y1, band) + th + 4  # above the box, else under it: not on the band
        cv2.rectangle(out, (x0, ty - th - 3), (x0 + tw + 4, ty + 3), colour, -1)
        cv2.putText(out, label, (x0 + 2, ty), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def roll_values(readings: Sequence[DieReading], dice: int = 3) -> tuple[int | str, ...] | None:
    """The values of a Carnival roll from one frame's readings.

    Returns:
        ``dice`` values (1-6 or ``"unknown"``) in reading order, ready for a ``roll``
        observation; None when the tray does not hold exactly ``dice`` dice, or one of them
        does not lie flat (``cocked``: it must be rolled again, it is no roll).
    """
    if len(readings) != dice or any(r.value == COCKED for r in readings):
        return None
    return tuple(r.value for r in readings)


def _check_box(box: Sequence[float]) -> tuple[float, float, float, float]:
    try:
        x0, y0, x1, y1 = (float(v) for v in box)
    except (TypeError, ValueError):
        raise ValueError(f"box: expected x0, y0, x1, y1 in px, got {box!r}") from None
    if not all(np.isfinite((x0, y0, x1, y1))) or not (x0 < x1 and y0 < y1):
        raise ValueError(f"box: expected finite x0 < x1 and y0 < y1 in px, got {box!r}")
    return x0, y0, x1, y1


def _check_frame(frame: np.ndarray) -> None:
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        shape = getattr(frame, "shape", None)
        dtype = getattr(frame, "dtype", None)
        raise ValueError(f"frame: expected an H x W x 3 uint8 BGR image, got shape {shape} dtype {dtype}")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"frame: expected an H x W x 3 uint8 BGR image, got an empty one {frame.shape}")


class RollSettler:
    """Turns the per-frame dice readings into one roll, once the tray has settled.

    The camera reads the tray many times a second while the dice tumble, stop and are nudged.
    A roll is reported only when the same values (as a multiset, so that a die moving a little
    does not count) have been read for ``settle_s`` seconds, and only once until the tray
    changes again. Time comes in with each frame; nothing here reads a clock.

    Args:
        settle_s: seconds the reading must stay the same (configuration ``[dice] settle_s``).
        dice: dice in a roll (Carnival: 3).

    Example::

        settler = RollSettler(0.5)
        for t, frame in frames:
            values = settler.update(t, reader.read(frame))
            if values is not None:
                emit(Roll(t=t, player=active_player, dice=values))
    """

    def __init__(self, settle_s: float = 0.5, dice: int = 3):
        if settle_s < 0:
            raise ValueError(f"settle_s: expected seconds >= 0, got {settle_s}")
        self.settle_s = settle_s
        self.dice = dice
        self._values: tuple[int | str, ...] | None = None
        self._key: tuple[str, ...] | None = None
        self._since = 0.0
        self._reported = False

    def update(self, t: float, readings: Sequence[DieReading]) -> tuple[int | str, ...] | None:
        """Feed one frame's readings at session time ``t`` (s); return the roll's values (1-6
        or ``"unknown"``, in reading order) the first time they have been stable for
        ``settle_s``, else None."""
        values = roll_values(readings, self.dice)
        key = None if values is None else tuple(sorted(str(v) for v in values))
        if key != self._key:
            self._key, self._values, self._since, self._reported = key, values, t, False
            if self.settle_s > 0:
                return None
        if key is None or self._reported or t - self._since < self.settle_s:
            return None
        self._reported = True
        return self._values
