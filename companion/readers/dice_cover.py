"""Is something over the dice tray? A hand (skin) over the felt hides dice, so a tray read then
is no roll, whatever the pip reader says of the dice it can see.

The rule works on the tray's floor (the reader's tray box, and the floor's outline from the tray
calibration when there is one: inside its outline on the felt and inside the wall top's
outline, :data:`WALL_DIE_EDGES`; the walls and the rim, brown leather or wood as skin-coloured as
a hand, are left out) in
CIE L*a*b* (OpenCV's 8-bit Lab: a*, b* offset by 128):

1. **The felt.** The floor's median colour is the felt's (dice and a hand cover a minority of it).
2. **Skin.** A pixel is skin-like when its hue angle ``h_ab`` lies in :data:`SKIN_HUE_DEG` with a
   chroma of at least :data:`SKIN_CHROMA` and it stands at least :data:`FELT_DISTANCE` (ΔE*ab)
   from the felt: human skin of every tone sits at h_ab 40-70 deg, C*ab 10-35 (CIE L*a*b*
   measurements of skin reflectance, e.g. Weatherall & Coombs 1992; Xiao et al. 2017), widened
   by 10 deg each side for the colour casts of a 2700-6500 K light. The felts are green, navy,
   grey, burgundy (h_ab near 20 deg): their shadows keep their hue; a die's white or ivory face
   in warm light may pass, as one die-sized blob.
3. **Size and place.** A skin-like region is a hand when it covers at least
   :data:`HAND_DIE_AREAS` times a die's top face (from the calibration's face size, else the
   reader's largest die) and reaches the floor's edge (an arm comes in over the wall), or
   covers :data:`PALM_DIE_AREAS` die faces anywhere: dice lie apart on the felt and a die is
   never larger than one face plus its sides.

This is the roll's decision (the camera source asks it before a tray becomes a roll), not the
pip reader's: the readers' values are not changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["TrayCover", "CoverCheck", "tray_cover", "WALL_DIE_EDGES", "SKIN_HUE_DEG", "SKIN_CHROMA", "FELT_DISTANCE", "HAND_DIE_AREAS",
           "PALM_DIE_AREAS"]

#: Hue angle range (degrees, CIE h_ab) of skin-like pixels: skin's 40-70 widened for light casts.
SKIN_HUE_DEG = (30.0, 80.0)
#: Least chroma (CIE C*ab) of a skin-like pixel: skin is never grey.
SKIN_CHROMA = 9.0
#: Least colour distance (CIE ΔE*ab, 1976) from the felt's median of a skin-like pixel.
FELT_DISTANCE = 18.0
#: A skin-like region reaching the floor's edge is a hand from this many die top faces' area.
HAND_DIE_AREAS = 2.0
#: A skin-like region anywhere on the floor is a hand from this many die top faces' area.
PALM_DIE_AREAS = 4.0


@dataclasses.dataclass(frozen=True, slots=True)
class TrayCover:
    """What covers the tray's floor.

    Attributes:
        covered: a hand (skin) is over the tray.
        fraction: share (0-1) of the floor under the largest skin-like region.
        area_dice: that region's area in die top faces.
        box: its box ``(x0, y0, x1, y1)`` in frame pixels, or None.
    """

    covered: bool
    fraction: float = 0.0
    area_dice: float = 0.0
    box: tuple[int, int, int, int] | None = None


def _face_px(geometry: Any, die_px: Sequence[float] | None) -> float:
    """The largest face of a die, px across: the calibration's, else ``die_px``'s largest, else
    40 px (the reader's default die size)."""
    if geometry is not None:
        return float(geometry.face_px_range()[1])
    if die_px is not None:
        return float(die_px[1])
    return 40.0


#: Height of the tray's wall in die edges (25 mm walls, 16 mm dice): the floor the camera sees is
#: inside the floor's outline and inside the wall top's outline seen from the camera.
WALL_DIE_EDGES = 1.5


def _visible_floor(geometry: Any, roi: Sequence[int]) -> np.ndarray:
    """``h x w bool`` over ``roi``: the felt the camera sees, inside the floor's outline (z = 0)
    and inside the wall top's (z = :data:`WALL_DIE_EDGES` die edges), whose near side hides the
    floor's edge below it; shrunk by 2 px (the outline's anti-aliased edge)."""
    import cv2

    x0, y0, x1, y1 = (int(v) for v in roi)
    poly = np.asarray(geometry.floor_mm, float)
    masks = []
    for z in (0.0, WALL_DIE_EDGES * float(geometry.die_mm)):
        px = geometry.project(np.column_stack([poly, np.full(len(poly), z)])) - [x0, y0]
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(m, [np.round(px).astype(np.int32)], 1)
        masks.append(m)
    return cv2.erode(masks[0] & masks[1], np.ones((5, 5), np.uint8)).astype(bool)


class CoverCheck:
    """:func:`tray_cover` for one camera: the floor's mask and a die's face size worked out once
    (a calibration's face size costs as much as many frames' checks).

    Args:
        tray: ``(x0, y0, x1, y1)`` px of the tray's region, or None for the whole frame.
        geometry: the tray's :class:`~companion.readers.dice_tray.TrayGeometry`, or None.
        die_px: ``(min, max)`` px of a die's side when there is no geometry.
    """

    def __init__(self, tray: Sequence[int] | None = None, geometry: Any = None,
                 die_px: Sequence[float] | None = None):
        self.tray = None if tray is None else tuple(int(v) for v in tray)
        self.geometry = geometry
        self.face_area_px = _face_px(geometry, die_px) ** 2
        self._floor: np.ndarray | None = None
        self._edge: np.ndarray | None = None

    def _masks(self, shape: tuple[int, int], roi: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        import cv2

        if self._floor is None or self._floor.shape != shape:
            if self.geometry is not None:  # the felt floor itself: not the walls, not the rim (leather, wood)
                floor = _visible_floor(self.geometry, roi)
            else:
                floor = np.ones(shape, bool)
            edge = floor & ~cv2.erode(floor.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
            edge[0, :] = edge[-1, :] = True
            edge[:, 0] = edge[:, -1] = True
            self._floor, self._edge = floor, edge
        return self._floor, self._edge  # type: ignore[return-value]

    def check(self, image: np.ndarray) -> TrayCover:
        """Whether a hand is over the tray in ``image`` (``H x W x 3 uint8`` BGR).

        Only with the tray's calibration (``geometry``): without its floor's outline the box
        holds the tray's walls and rim too, as skin-coloured as a hand (leather, wood), and a
        bare tray would be called covered; then nothing is covered (no hand check).

        Returns:
            A :class:`TrayCover`: ``covered``, and the largest skin region's share of the
            visible floor, its size in die faces and its box (px of the frame).

        Raises:
            ValueError: ``image`` is not ``H x W x 3 uint8`` or the tray lies outside it.
        """
        import cv2

        if not (isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] == 3
                and image.dtype == np.uint8):
            raise ValueError(f"image: expected an H x W x 3 uint8 BGR frame, got {getattr(image, 'shape', type(image))}")
        h, w = image.shape[:2]
        x0, y0, x1, y1 = (0, 0, w, h) if self.tray is None else self.tray
        if not (0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h):
            raise ValueError(f"tray {list(self.tray or ())} lies outside the {w} x {h} px frame")
        if self.geometry is None:  # the walls cannot be told from the felt: no hand check
            return TrayCover(False)
        floor, edge = self._masks((y1 - y0, x1 - x0), (x0, y0, x1, y1))
        n_floor = int(floor.sum())
        if n_floor == 0:
            return TrayCover(False)
        lab = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2Lab).astype(np.float32)
        L = lab[..., 0] * (100.0 / 255.0)
        a = lab[..., 1] - 128.0
        b = lab[..., 2] - 128.0
        felt = (float(np.median(L[floor])), float(np.median(a[floor])), float(np.median(b[floor])))
        chroma = np.hypot(a, b)
        hue = np.degrees(np.arctan2(b, a)) % 360.0
        distance = np.sqrt((L - felt[0]) ** 2 + (a - felt[1]) ** 2 + (b - felt[2]) ** 2)
        skin = (floor & (hue >= SKIN_HUE_DEG[0]) & (hue <= SKIN_HUE_DEG[1]) & (chroma >= SKIN_CHROMA)
                & (distance >= FELT_DISTANCE)).astype(np.uint8)
        skin = cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(skin, connectivity=8)
        if n <= 1:
            return TrayCover(False)
        at_edge = set(np.unique(labels[edge & (labels > 0)]).tolist())
        best = max(range(1, n), key=lambda k: stats[k, cv2.CC_STAT_AREA])
        covered = False
        for k in range(1, n):
            faces = stats[k, cv2.CC_STAT_AREA] / self.face_area_px
            # a die is never more than a face and its sides; an arm comes in over the wall
            if faces >= PALM_DIE_AREAS or (faces >= HAND_DIE_AREAS and k in at_edge):
                covered, best = True, k
                break
        area = float(stats[best, cv2.CC_STAT_AREA])
        bx, by, bw, bh = (int(v) for v in stats[best, :4])
        return TrayCover(covered, round(area / n_floor, 4), round(area / self.face_area_px, 2),
                         (x0 + bx, y0 + by, x0 + bx + bw, y0 + by + bh))


def tray_cover(image: np.ndarray, tray: Sequence[int] | None = None, geometry: Any = None,
               die_px: Sequence[float] | None = None) -> TrayCover:
    """Whether a hand is over the tray in one frame (:class:`CoverCheck` made for it: a camera
    source keeps one :class:`CoverCheck` instead).

    Args:
        image: ``H x W x 3 uint8`` BGR frame.
        tray: ``(x0, y0, x1, y1)`` px of the tray's region (the reader's ``tray``), or None for
            the whole frame.
        geometry: the tray's :class:`~companion.readers.dice_tray.TrayGeometry` (the floor's
            outline and a die's face size in pixels), or None.
        die_px: ``(min, max)`` px of a die's side when there is no geometry.

    Returns:
        A :class:`TrayCover`.

    Raises:
        ValueError: ``image`` is not ``H x W x 3 uint8`` or the tray lies outside it.
    """
    return CoverCheck(tray, geometry, die_px).check(image)
