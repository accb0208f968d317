"""Region colours in CIE Lab against a white reference, with abstention; the settle-time
stabiliser.

A region (a space, a card disc) is sampled at fixed board points, so its pixels are an
``N x 3 uint8`` BGR array. They are converted to linear light, divided by the white reference
(a von Kries adaptation to the light on the table: the reference patch is the plain printed
board, or the card's own white), and converted to CIE L*a*b* (D65, L* 0-100). Each pixel then
goes to the nearest reference colour when it is near enough and clearly nearer than the second
nearest; to the background when it is a shade of the reference white; otherwise to "other".

A region's label comes from those votes, and the reader abstains (``unknown``) when

* too few pixels are readable (out of the frame, clipped highlights);
* too many pixels are "other" or the region is covered beyond what a piece can cover (a hand:
  *too uneven*);
* the best colour is too close to a second one, or too few pixels vote for it.

Sources: CIE 15:2004 (L*a*b*, D65); IEC 61966-2-1 (sRGB transfer function); J. von Kries
(1902) chromatic adaptation; OpenCV ``cv2.cvtColor`` (COLOR_BGR2Lab on float32 input).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import cv2
import numpy as np

__all__ = [
    "UNKNOWN",
    "BACKGROUND",
    "OFFSET",
    "srgb_to_linear",
    "linear_to_lab",
    "lab_fast",
    "lab_exact",
    "LAB_FAST_ERROR",
    "grid_cells",
    "new_grid",
    "white_of",
    "ColourReferences",
    "RegionReading",
    "RegionClassifier",
    "Stabiliser",
    "COLOUR_LOST",
    "ColourCheck",
    "CHANNEL_ORDERS",
    "PrintCheck",
    "FrozenFrames",
    "lamp_locus",
]

UNKNOWN = "unknown"
BACKGROUND = "background"
#: pixel classes: -3 dark shade, -2 other, -1 background, k >= 0 reference k; add OFFSET to
#: count them with ``np.bincount``
OFFSET = 3
BACKGROUND_CLASS = -1
#: A pixel whose every channel is at or above this (8-bit) is clipped white (glare): its
#: colour is not known, only that it is at least as bright as the white.
CLIPPED = 245

_LUT = np.array(
    [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in np.arange(256) / 255.0],
    dtype=np.float32,
)


def srgb_to_linear(bgr: np.ndarray) -> np.ndarray:
    """8-bit sRGB values (any shape, uint8) to linear light (float32, 0-1), IEC 61966-2-1."""
    return _LUT[np.asarray(bgr, dtype=np.uint8)]


def linear_to_lab(linear_bgr: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Linear BGR pixels to CIE L*a*b*, seen against ``white``.

    Args:
        linear_bgr: ``N x 3 float32`` linear light (see :func:`srgb_to_linear`).
        white: ``3`` linear BGR of the reference white under the current light (or ``N x 3``,
            one white per pixel); it maps to L* = 100, a* = b* = 0 (von Kries adaptation).

    Returns:
        ``N x 3 float32``: L* (0-100 for surfaces no brighter than the white), a*, b*.
    """
    w = np.maximum(np.asarray(white, dtype=np.float32).reshape(-1, 3), 1e-4)
    if np.asarray(linear_bgr).size == 0:
        return np.zeros((0, 3), dtype=np.float32)
    rel = np.clip(np.asarray(linear_bgr, dtype=np.float32).reshape(-1, 3) / w, 0.0, 1.0)
    # OpenCV's linear-BGR conversion (COLOR_LBGR2Lab): no sRGB encoding round trip
    return cv2.cvtColor(rel.reshape(-1, 1, 3), cv2.COLOR_LBGR2Lab).reshape(-1, 3)


#: A bound, with a wide margin, on the difference of one component (L*, a* or b*) between
#: :func:`lab_fast` and :func:`linear_to_lab` on the same pixels. OpenCV converts float pixels
#: with its vector loop when a row has several pixels (``RGB2Lab_f``: the cube root F from a
#: cubic spline on a 1024-entry table) and with its scalar loop for a one-pixel row
#: (``cubeRoot``); the rest of the arithmetic is the same up to float rounding. The two F differ
#: by at most 3.5e-5 on 5 million grey inputs over 0-1 (a step of 2.5e-7, denser near the knee at
#: 0.008856), the same on OpenCV 4.11 and 5.0; so |dL*| <= 116 x 3.5e-5 = 0.004,
#: |da*| <= 500 x 7e-5 = 0.035, |db*| <= 200 x 7e-5 = 0.014 (measured on 4.8 million random
#: pixels: 0.004, 0.031, 0.012). ``bench/vision_equal.py`` checks the readings.
LAB_FAST_ERROR = 0.1


# The grid of pixel classes (RegionClassifier.pixel_classes_near): 1 unit of L*, a*, b*,
# covering every value white-relative linear pixels (0-1) convert to (L* 0-100, a* -86 to 98,
# b* -108 to 94) with room; a value beyond it falls in an edge cell, which is always unsure.
_GRID_LO = np.array([-2.0, -92.0, -114.0], dtype=np.float32)
_GRID_HI = np.array([102.0, 104.0, 100.0], dtype=np.float32)
_GRID_SHAPE = tuple(int(v) for v in (_GRID_HI - _GRID_LO + 1))
_GRID_SIZE = _GRID_SHAPE[0] * _GRID_SHAPE[1] * _GRID_SHAPE[2]
_GRID_STRIDE = np.array([_GRID_SHAPE[1] * _GRID_SHAPE[2], _GRID_SHAPE[2], 1], dtype=np.float32)
_GRID_OFFSET = np.float32(-(_GRID_LO @ _GRID_STRIDE))
# a cell holds its class + _GRID_SHIFT (1 and up), _GRID_UNSURE, or _GRID_NEW (not met yet)
_GRID_NEW, _GRID_UNSURE, _GRID_SHIFT = 0, 127, 4


#: new cells are classified a block at a time: every cell of the _GRID_BLOCK^3 cells (aligned
#: on multiples of _GRID_BLOCK) around each new one, so that a camera's noise, which keeps
#: meeting cells next to those met, soon finds them classified
_GRID_BLOCK = 8

#: grid cells classified at once when the grid is filled (bounds the temporary arrays)
_FILL_CHUNK = 8192


def _in_blocks(cells: np.ndarray, grid: np.ndarray, size: int = _GRID_BLOCK) -> np.ndarray:
    """The cells of the ``size`` x ``size`` x ``size`` blocks (aligned on multiples of
    ``size`` in each component, inside the grid) that hold the grid ``cells`` (flat indices),
    not classified yet: sorted, each once."""
    rest, b = np.divmod(cells, _GRID_SHAPE[2])
    l, a = np.divmod(rest, _GRID_SHAPE[1])
    origin = np.unique(((l // size * size) * _GRID_SHAPE[1] + a // size * size) * _GRID_SHAPE[2] + b // size * size)
    rest, b0 = np.divmod(origin, _GRID_SHAPE[2])
    l0, a0 = np.divmod(rest, _GRID_SHAPE[1])
    step = np.arange(size)
    ll = l0[:, None, None, None] + step[None, :, None, None]
    aa = a0[:, None, None, None] + step[None, None, :, None]
    bb = b0[:, None, None, None] + step[None, None, None, :]
    inside = (ll < _GRID_SHAPE[0]) & (aa < _GRID_SHAPE[1]) & (bb < _GRID_SHAPE[2])
    every = ((ll * _GRID_SHAPE[1] + aa) * _GRID_SHAPE[2] + bb)[inside]  # disjoint blocks, sorted
    return every[grid[every] == _GRID_NEW]


# the cell of (L*, a*, b*) rounded: one affine map of the three components (integers below
# 2**24, so exact in float32 in any order)
_GRID_MAP = np.array([[_GRID_STRIDE[0], _GRID_STRIDE[1], 1.0, _GRID_OFFSET]], dtype=np.float32)
_GRID_LO_SCALAR = tuple(float(v) for v in _GRID_LO) + (0.0,)
_GRID_HI_SCALAR = tuple(float(v) for v in _GRID_HI) + (0.0,)


def new_grid(n: int = 1) -> np.ndarray:
    """``n`` empty pixel-class grids in one array (``n x _GRID_SIZE int8`` zeros, flat: the
    grid of classifier ``i`` is ``[i * _GRID_SIZE:(i + 1) * _GRID_SIZE]``; 4.4 MB of zero
    pages each, only the pages of cells met become resident)."""
    return np.zeros(n * _GRID_SIZE, dtype=np.int8)


def grid_cells(lab: np.ndarray, inside: bool = False) -> np.ndarray:
    """The pixel-class grid's cell of each ``N x 3 float32`` L*a*b* (``N intp`` flat indices):
    each component rounded to the nearest integer (so within 0.5 of the cell's centre), then
    clipped to the grid (a value beyond it falls in an edge cell, always unsure).

    Args:
        lab: ``N x 3 float32`` L*a*b*.
        inside: the caller knows every value lies inside the grid, as the conversion of
            white-relative linear light in 0-1 does (L* 0-100, a* -86 to 98, b* -108 to 94,
            within :data:`LAB_FAST_ERROR`; the grid spans -2 to 102, -92 to 104, -114 to 100):
            the clipping is skipped.
    """
    q = np.rint(np.ascontiguousarray(lab, dtype=np.float32)).reshape(-1, 1, 3)
    if not inside:
        cv2.max(q, _GRID_LO_SCALAR, dst=q)
        cv2.min(q, _GRID_HI_SCALAR, dst=q)
    return cv2.transform(q, _GRID_MAP).reshape(-1).astype(np.intp)


def lab_fast(rel: np.ndarray) -> np.ndarray:
    """White-relative linear BGR (``N x 3 float32``, 0-1) to CIE L*a*b* in one vectorised
    OpenCV call (about a tenth of :func:`linear_to_lab`'s time per pixel), each component
    within :data:`LAB_FAST_ERROR` of :func:`linear_to_lab`'s; ``N x 3 float32``."""
    rel = np.ascontiguousarray(rel, dtype=np.float32).reshape(1, -1, 3)
    if rel.shape[1] == 0:
        return np.zeros((0, 3), dtype=np.float32)
    return cv2.cvtColor(rel, cv2.COLOR_LBGR2Lab).reshape(-1, 3)


def lab_exact(rel: np.ndarray) -> np.ndarray:
    """White-relative linear BGR (``N x 3 float32``, 0-1) to CIE L*a*b* exactly as
    :func:`linear_to_lab` converts it (OpenCV's one-pixel-a-row conversion); ``N x 3 float32``."""
    rel = np.ascontiguousarray(rel, dtype=np.float32).reshape(-1, 1, 3)
    if rel.shape[0] == 0:
        return np.zeros((0, 3), dtype=np.float32)
    return cv2.cvtColor(rel, cv2.COLOR_LBGR2Lab).reshape(-1, 3)


def white_of(bgr: np.ndarray) -> np.ndarray | None:
    """The white reference of a patch: the per-channel median of its pixels in linear light
    (``3 float32``), or None when it has fewer than 10 pixels. Clipped pixels are kept: in
    glare the white is at least as bright as they say, and the median stays robust.

    Args:
        bgr: ``N x 3 uint8`` pixels of the reference patch.
    """
    px = np.asarray(bgr, dtype=np.uint8).reshape(-1, 3)
    if len(px) < 10:
        return None
    return np.median(srgb_to_linear(px), axis=0).astype(np.float32)


@dataclasses.dataclass(frozen=True)
class ColourReferences:
    """Reference colours of one kind of region, in CIE Lab seen against the reference white.

    Attributes:
        names: the labels, e.g. ``("black", "yellow", "blue", "green", "red")``.
        lab: ``K x 3 float32``, one L*a*b* per name.
    """

    names: tuple[str, ...]
    lab: np.ndarray

    def __post_init__(self) -> None:
        lab = np.asarray(self.lab, dtype=np.float32)
        if lab.shape != (len(self.names), 3):
            raise ValueError(f"expected {len(self.names)} x 3 Lab values, got shape {lab.shape}")
        object.__setattr__(self, "lab", lab)

    def to_dict(self) -> dict[str, list[float]]:
        """name -> [L*, a*, b*] rounded to 0.1 (for a human-readable calibration file)."""
        return {n: [round(float(v), 1) for v in row] for n, row in zip(self.names, self.lab)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Sequence[float]], where: str = "references") -> ColourReferences:
        """Build from ``{name: [L, a, b]}``.

        Raises:
            ValueError: a value that is not three numbers, naming ``where`` and the name.
        """
        names, rows = [], []
        for name, v in d.items():
            if not (isinstance(v, (list, tuple)) and len(v) == 3
                    and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)):
                raise ValueError(f"{where}: {name}: expected [L, a, b] (three finite numbers), got {v!r}")
            names.append(str(name))
            rows.append([float(x) for x in v])
        if not names:
            raise ValueError(f"{where}: no reference colours")
        return cls(tuple(names), np.array(rows, dtype=np.float32))


@dataclasses.dataclass(frozen=True)
class RegionReading:
    """What one region shows.

    Attributes:
        label: a reference name, the region's background label (e.g. ``"empty"``) or
            ``"unknown"``.
        confidence: 0-1; for a colour, the share of the colour's votes among all colour votes
            times how far the best colour is ahead of the second; for the background, the
            background share; 0 for ``unknown``.
        reason: why the reader abstained ("" otherwise).
        fractions: label -> share of the region's readable pixels (``"other"`` included).
    """

    label: str
    confidence: float
    reason: str = ""
    fractions: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d: dict[str, Any] = {"label": self.label, "confidence": round(self.confidence, 3)}
        if self.reason:
            d["reason"] = self.reason
        return d


#: how many vote-count rows :meth:`RegionClassifier.decide_many` keeps the reading of (about
#: 0.7 KB each)
DECIDE_KEPT = 1024


@dataclasses.dataclass(frozen=True)
class RegionClassifier:
    """Reads a region's label from its Lab pixels, or abstains.

    Pixel rule: a pixel belongs to reference k when its distance (CIE76 Delta E, with L*
    weighted by ``l_weight`` for chromatic references because shading changes lightness more
    than hue; fully for achromatic ones such as black, whose only cue is lightness) to k is
    below ``near`` and below ``ratio`` times the distance to the second nearest reference; an
    achromatic reference also needs the distance below ``near_achromatic`` and the pixel's
    chroma below ``achromatic_chroma``.
    Else it is background when its L* is at least ``background_min_l`` and its chroma is below
    ``background_chroma``, or it is tinted only along the blue-yellow axis (|a*| below
    ``tint_a``, |b*| below ``tint_b``, L* at least ``tint_min_l``): the white in light or
    shadow, lit by a warmer or cooler lamp. Else it is "other". Clipped pixels count as
    background (they are at least as bright as the white).

    Region rule, on the readable pixels:

    * unreadable: fewer than ``min_pixels``;
    * too uneven: "other" above ``max_other``, or foreground (colours, dark shade and other)
      above ``max_cover`` (no piece covers that much of its region);
    * background (``background_label``): colour votes below ``max_colour_in_background`` and
      background at least ``min_background``;
    * colour k: its votes at least ``min_colour``, and the second colour's votes at most
      ``max_second`` times k's. Votes for the ``shadow_like`` references (black) do not
      compete with a chromatic colour that has enough votes: a coloured piece's own shaded
      side is dark. A ``shadow_like`` label needs the chromatic votes at most ``max_second``
      times its own;
    * otherwise unknown.

    Attributes are in the units above (Delta E, fractions 0-1).
    """

    references: ColourReferences
    background_label: str | None = "empty"
    near: float = 24.0
    ratio: float = 0.6
    l_weight: float = 0.5
    background_chroma: float = 16.0
    background_min_l: float = 40.0
    tint_a: float = 7.0
    tint_b: float = 35.0
    tint_min_l: float = 55.0
    shadow_like: tuple[str, ...] = ("black",)
    near_achromatic: float = 18.0
    achromatic_chroma: float = 12.0
    min_pixels: int = 20
    max_other: float = 0.2
    max_cover: float = 0.8
    max_colour_in_background: float = 0.01
    min_background: float = 0.8
    min_colour: float = 0.05
    max_second: float = 0.25

    def pixel_classes(self, lab: np.ndarray) -> np.ndarray:
        """Per-pixel class of ``N x 3`` Lab: ``k >= 0`` a reference, -1 background, -2 other,
        -3 dark shade (darker than ``background_min_l`` and no reference: the shaded side of a
        piece, a shadow; it neither votes nor counts as the hand's "other")."""
        lab = np.asarray(lab, dtype=np.float32).reshape(-1, 3)
        w2t, w2rt, r2, achromatic_ref = self._distance_terms()
        # squared weighted distances by expansion, sum_c w^2 (x - r)^2 = x^2.w^2 - 2 x.(w^2 r) + r^2.w^2:
        # three small matrix products instead of an N x K x 3 array; no square roots needed
        d = (lab * lab) @ w2t - 2.0 * (lab @ w2rt) + r2
        # nearest (the first on ties, as argmin) and second nearest, on the K x N transpose:
        # numpy reduces a short last axis row by row, many times slower
        dt = np.ascontiguousarray(d.T)
        np.maximum(dt, 0.0, out=dt)
        k = np.arange(len(dt), dtype=np.int16)[:, None]
        d1 = dt.min(axis=0)
        # argmin (the first of equals) is faster on a few pixels, the masked minimum on many
        best = dt.argmin(axis=0) if dt.shape[1] <= 1000 else np.where(dt == d1, k, np.int16(len(dt))).min(axis=0)
        d2 = np.where(k == best, np.float32(np.inf), dt).min(axis=0) if len(dt) > 1 else np.full(len(d1), np.inf, dt.dtype)
        # the components as rows (contiguous): L*, a*, b*
        light, a, b = np.ascontiguousarray(lab.T)
        chroma = np.hypot(a, b)
        lit = light >= self.background_min_l
        background = chroma < self.background_chroma
        background &= lit
        # tinted: the white lit by a warmer or cooler lamp
        tinted = np.abs(a) < self.tint_a
        tinted &= np.abs(b) < self.tint_b
        tinted &= light >= self.tint_min_l
        background |= tinted
        is_colour = d1 < self.near ** 2
        is_colour &= d1 < self.ratio ** 2 * d2
        # an achromatic reference (black) takes only pixels without colour: a coloured horse
        # in a deep shadow, or a dark sleeve, is dark but still has a hue
        grey = d1 < self.near_achromatic ** 2
        grey &= chroma < self.achromatic_chroma
        grey |= ~achromatic_ref[best]
        is_colour &= grey
        cls = np.where(lit, np.int16(-2), np.int16(-3))
        cls[background] = -1
        np.copyto(cls, best, where=is_colour, casting="unsafe")
        return cls

    def pixel_classes_unsure(self, lab: np.ndarray, error: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pixel_classes` of Lab values known only to within ``error`` per component,
        and which pixels that error could move to another class.

        Args:
            lab: ``N x 3 float32`` L*a*b*, each component within ``error`` of the values the
                classes are wanted for (e.g. :func:`lab_fast` against :func:`linear_to_lab`).
            error: the largest error of one component (L*, a* or b*), > 0.

        Returns:
            (``N int16`` classes, exactly :meth:`pixel_classes` of ``lab``; ``N bool`` unsure:
            a pixel whose class could change within ``error``, because a test its class rests
            on (a distance to a reference at ``near`` or at ``ratio`` times the second's, two
            references equally near, the achromatic bounds, L* at ``background_min_l`` or
            ``tint_min_l``, chroma at ``background_chroma``, |a*| or |b*| at the tint bounds)
            is within the error of its bound). Every pixel not unsure has the class of the true
            values; an unsure one must be classified again from them.
        """
        lab = np.asarray(lab, dtype=np.float32).reshape(-1, 3)
        w2t, w2rt, r2, achromatic_ref = self._distance_terms()
        # the same distances as pixel_classes (the same products, the same rounding)
        d = (lab * lab) @ w2t - 2.0 * (lab @ w2rt) + r2
        dt = np.ascontiguousarray(d.T)
        np.maximum(dt, 0.0, out=dt)
        # nearest (the first on ties) and second nearest, one reference at a time: the same
        # minima as pixel_classes' reductions (a minimum is exact in any order)
        d1 = dt[0].copy()
        best = np.zeros(len(d1), dtype=np.int16)
        d2 = np.full(len(d1), np.inf, dtype=dt.dtype)
        for k in range(1, len(dt)):
            x = dt[k]
            nearer = x < d1
            np.minimum(d2, np.where(nearer, d1, x), out=d2)
            np.minimum(d1, x, out=d1)
            best[nearer] = k
        a, b, light = lab[:, 1], lab[:, 2], lab[:, 0]
        chroma = np.hypot(a, b)
        lit = light >= self.background_min_l
        background = (chroma < self.background_chroma) & lit
        abs_a, abs_b = np.abs(a), np.abs(b)
        background |= (abs_a < self.tint_a) & (abs_b < self.tint_b) & (light >= self.tint_min_l)
        is_colour = (d1 < self.near ** 2) & (d1 < self.ratio ** 2 * d2)
        ach = achromatic_ref[best]
        is_colour &= ~ach | ((d1 < self.near_achromatic ** 2) & (chroma < self.achromatic_chroma))
        cls = np.where(lit, np.int16(-2), np.int16(-3))
        cls[background] = -1
        np.copyto(cls, best, where=is_colour, casting="unsafe")
        # Which pixels the error could move to another class: each test of the rule is surely
        # true (T), surely false (F) or neither, and the class is sure when the tests it rests
        # on are. A weighted distance (weights <= 1) moves by at most |error vector| =
        # error * sqrt(3), chroma by error * sqrt(2), L*, |a*|, |b*| by error; a little more
        # for float32 rounding.
        m = np.float32(error * 1.7321 + 0.05)
        s1, s2 = np.sqrt(d1), np.sqrt(d2)

        def below(x: np.ndarray, bound: float, margin: float = m) -> tuple[np.ndarray, np.ndarray]:
            return x < bound - margin, x >= bound + margin

        best_stable = s2 - s1 >= 2.0 * m
        near_t, near_f = below(s1, self.near)
        ratio_t, ratio_f = below(s1 - self.ratio * s2, 0.0, m * (1.0 + self.ratio))
        nach_t, nach_f = below(s1, self.near_achromatic)
        achc_t, achc_f = below(chroma, self.achromatic_chroma)
        ach3_t = best_stable & (~ach | (nach_t & achc_t))
        ach3_f = best_stable & ach & (nach_f | achc_f)
        colour_t = near_t & ratio_t & ach3_t & best_stable
        colour_f = near_f | ratio_f | ach3_f
        lit_t, lit_f = light >= self.background_min_l + m, light < self.background_min_l - m
        chroma_t, chroma_f = below(chroma, self.background_chroma)
        ta_t, ta_f = below(abs_a, self.tint_a)
        tb_t, tb_f = below(abs_b, self.tint_b)
        tl_t, tl_f = light >= self.tint_min_l + m, light < self.tint_min_l - m
        back_t = (chroma_t & lit_t) | (ta_t & tb_t & tl_t)
        back_f = (chroma_f | lit_f) & (ta_f | tb_f | tl_f)
        sure = colour_t | (colour_f & (back_t | (back_f & (lit_t | lit_f))))
        unsure = ~sure
        return cls, unsure

    def pixel_classes_table(self, lab: np.ndarray) -> np.ndarray:
        """:meth:`pixel_classes` of ``N x 3`` Lab, the same classes with fewer array
        operations (for the few pixels a grid leaves unsure, where each operation's fixed cost
        is most of the time): the same distances (the same products, the same rounding), their
        nearest and second nearest, then the nine tests of the pixel rule (L* at
        ``background_min_l`` and ``tint_min_l``, chroma at ``background_chroma`` and
        ``achromatic_chroma``, |a*| and |b*| at the tint bounds, the nearest distance at
        ``near``, at ``near_achromatic`` and at ``ratio`` times the second's) as one comparison
        of a ``9 x N`` array, a 9-bit code per pixel and one look-up of the class in a table of
        every code and nearest reference (:meth:`_class_table`).

        Args:
            lab: ``N x 3`` L*a*b* (float32, as :meth:`pixel_classes` takes it).

        Returns:
            ``N int16`` classes, equal to :meth:`pixel_classes`'.
        """
        lab = np.asarray(lab, dtype=np.float32).reshape(-1, 3)
        w2t, w2rt, r2, _ = self._distance_terms()
        if len(r2) < 2 or not len(lab):
            return self.pixel_classes(lab)
        bounds, table, weights = self._class_table()
        # the distances exactly as pixel_classes computes them, on the K x N transpose
        d = (lab * lab) @ w2t - 2.0 * (lab @ w2rt) + r2
        dt = np.ascontiguousarray(d.T)
        np.maximum(dt, 0.0, out=dt)
        best = dt.argmin(axis=0)
        x = np.empty((9, len(lab)), dtype=np.float32)
        d1 = dt.min(axis=0, out=x[6])
        x[7] = d1
        k = np.arange(len(dt))[:, None]
        d2 = np.where(k == best, np.float32(np.inf), dt).min(axis=0)
        light, a, b = np.ascontiguousarray(lab.T)
        x[0] = light
        x[1] = light
        np.hypot(a, b, out=x[2])
        x[3] = x[2]
        np.abs(a, out=x[4])
        np.abs(b, out=x[5])
        # d1 < ratio^2 x d2 (the float32 product of pixel_classes) as d1 - that < 0: a float
        # difference is below 0 exactly when the first is below the second
        np.subtract(d1, self.ratio ** 2 * d2, out=x[8])
        code = weights @ (x < bounds)  # each test's bit, times the table's row width
        code += best
        return np.take(table, code)

    def _class_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`pixel_classes_table`'s constants (computed once): the ``9 x 1 float32``
        bounds of its tests (each test is ``value < bound``; every bound as pixel_classes
        compares it, a Python float against float32 values), the ``512 K int16`` class of
        each 9-bit code and nearest reference, and each bit's weight (``2^i K``)."""
        terms = self.__dict__.get("_table")
        if terms is None:
            achromatic = self._distance_terms()[3]
            n_refs = len(achromatic)
            bounds = np.array([[self.background_min_l], [self.tint_min_l], [self.background_chroma],
                               [self.achromatic_chroma], [self.tint_a], [self.tint_b], [self.near ** 2],
                               [self.near_achromatic ** 2], [0.0]], dtype=np.float32)
            code = np.arange(512)
            dark, tint_dark, chroma_low, achromatic_low, a_low, b_low, near, near_achromatic, ratio = (
                (code >> i) & 1 == 1 for i in range(9))
            lit = ~dark
            background = (chroma_low & lit) | (a_low & b_low & ~tint_dark)
            table = np.empty((512, n_refs), dtype=np.int16)
            for k in range(n_refs):
                colour = near & ratio & (~achromatic[k] | (near_achromatic & achromatic_low))
                table[:, k] = np.where(colour, k, np.where(background, -1, np.where(lit, -2, -3)))
            weights = (n_refs << np.arange(9)).astype(np.intp)
            terms = (bounds, table.reshape(-1), weights)
            object.__setattr__(self, "_table", terms)
        return terms

    def pixel_classes_near(self, lab: np.ndarray, exact: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """:meth:`pixel_classes` of pixels whose Lab is known to within :data:`LAB_FAST_ERROR`
        (from :func:`lab_fast`), the same classes as :meth:`pixel_classes` of the exact values.

        Each pixel's class is looked up on a grid of 1 L*a*b* unit, filled as cells are met
        (:meth:`pixel_classes_unsure` at the cell's centre, with the half cell plus
        :data:`LAB_FAST_ERROR` as the error); a pixel in a cell that lies across a boundary
        of the pixel rule (or on the grid's edge) is classified from its exact Lab.

        Args:
            lab: ``N x 3 float32`` approximate L*a*b*, each component within
                :data:`LAB_FAST_ERROR` of the exact value.
            exact: given ``M`` indices into ``lab``, their exact ``M x 3`` L*a*b* (what
                :meth:`pixel_classes` would be given).

        Returns:
            ``N int16`` classes (see :meth:`pixel_classes`).
        """
        out = self.grid_values(grid_cells(lab)).astype(np.int16)
        unsure = np.flatnonzero(out == _GRID_UNSURE)
        out -= _GRID_SHIFT
        if len(unsure):
            out[unsure] = self.pixel_classes(exact(unsure))
        return out

    def grid_values(self, cell: np.ndarray, grid: np.ndarray | None = None) -> np.ndarray:
        """The grid's entries at ``cell`` (``N intp`` flat cell indices, from
        :func:`grid_cells`): ``N int8``, each a class plus ``_GRID_SHIFT`` (a class
        every point of the cell has, within :data:`LAB_FAST_ERROR`) or ``_GRID_UNSURE``
        (the pixel must be classified from its exact Lab). Cells met for the first time are
        classified now (:meth:`pixel_classes_unsure` at the cell's centre) and kept.

        Args:
            cell: the cells.
            grid: the grid to use (``_GRID_SIZE int8``, zeros when new; a reader may keep the
                grids of its classifiers in one array); default: the classifier's own.
        """
        if grid is None:
            grid = self.__dict__.get("_grid")
            if grid is None:  # zeros: pages of cells never met are never touched (not resident)
                grid = new_grid()
                object.__setattr__(self, "_grid", grid)
        cls = np.take(grid, cell)
        new = cls == _GRID_NEW
        if new.any():
            # the new cells' blocks: where a camera's noise goes next
            self._fill(grid, _in_blocks(cell[new], grid))
            cls[new] = np.take(grid, cell[new])
        return cls

    def _fill(self, grid: np.ndarray, cells: np.ndarray) -> None:
        """Classify the grid ``cells`` (flat indices) at their centres; a cell whose every
        point (plus :data:`LAB_FAST_ERROR`) might not share the centre's class, or on the
        grid's edge, is marked unsure. Cells are classified :data:`_FILL_CHUNK` at a time (each
        cell on its own, so the same classes), which bounds the temporary arrays: a first frame
        meets thousands of cells, hundreds of thousands with their blocks."""
        for start in range(0, len(cells), _FILL_CHUNK):
            self._fill_chunk(grid, cells[start:start + _FILL_CHUNK])

    def _fill_chunk(self, grid: np.ndarray, cells: np.ndarray) -> None:
        rest, b = np.divmod(cells, _GRID_SHAPE[2])
        l, a = np.divmod(rest, _GRID_SHAPE[1])
        centre = np.stack([l, a, b], axis=1).astype(np.float32) + _GRID_LO
        cls, unsure = self.pixel_classes_unsure(centre, 0.5 + LAB_FAST_ERROR)
        edge = ((l == 0) | (l == _GRID_SHAPE[0] - 1) | (a == 0) | (a == _GRID_SHAPE[1] - 1)
                | (b == 0) | (b == _GRID_SHAPE[2] - 1))
        grid[cells] = np.where(unsure | edge, np.int16(_GRID_UNSURE), cls + np.int16(_GRID_SHIFT)).astype(np.int8)

    def _distance_terms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The references' constant terms of :meth:`pixel_classes`' distances (computed once):
        ``3 x K`` squared weights, ``3 x K`` weighted references, ``K`` squared weighted
        norms, ``K`` bool achromatic."""
        terms = self.__dict__.get("_terms")
        if terms is None:
            refs = self.references.lab
            lw = np.where(np.hypot(refs[:, 1], refs[:, 2]) < 10.0, 1.0, self.l_weight).astype(np.float32)
            w2 = np.ones_like(refs)
            w2[:, 0] = lw * lw
            terms = (np.ascontiguousarray(w2.T), np.ascontiguousarray((w2 * refs).T),
                     (w2 * refs * refs).sum(axis=1), lw == 1.0)
            object.__setattr__(self, "_terms", terms)
        return terms

    def read(self, lab: np.ndarray, clipped: int = 0) -> RegionReading:
        """Read one region.

        Args:
            lab: ``N x 3`` L*a*b* of the region's readable pixels.
            clipped: how many further pixels of the region were clipped highlights (counted
                as background).

        Returns:
            The :class:`RegionReading`.
        """
        cls = self.pixel_classes(lab) if len(lab) else np.zeros(0, dtype=np.int16)
        k = len(self.references.names)
        counts = np.bincount(cls + OFFSET, minlength=k + OFFSET).astype(np.float64)
        counts[OFFSET + BACKGROUND_CLASS] += clipped
        return self.decide(counts)

    def decide(self, counts: np.ndarray) -> RegionReading:
        """The region rule on vote counts.

        Args:
            counts: ``K + 3`` pixel counts: dark shade, other, background (clipped
                included), then one per reference in :attr:`references` order (that is,
                ``np.bincount(pixel_classes(lab) + OFFSET)``).
        """
        c = [float(v) for v in counts]  # a handful of numbers: plain Python is fastest
        n = sum(c)
        if n < self.min_pixels:
            return RegionReading(UNKNOWN, 0.0, "too few readable pixels (out of the frame)")
        return self._rule([v / n for v in c])

    def decide_many(self, counts: np.ndarray) -> list[RegionReading]:
        """:meth:`decide` of each row of vote counts, the same readings.

        The rule is a function of the counts alone, so each row's reading is kept (up to
        :data:`DECIDE_KEPT` rows, then forgotten all at once) and a row seen again gets the
        same reading (the same object) without the rule: on a still table most regions give
        the very same counts frame after frame (an empty space, a card's disc).

        Args:
            counts: ``R x (K + 3)`` integer pixel counts, one region a row (see :meth:`decide`).

        Returns:
            ``R`` :class:`RegionReading`, in row order (treat them as read-only: a reading
            may be returned again for another frame).
        """
        kept = self.__dict__.get("_kept")
        if kept is None:
            kept = {}
            object.__setattr__(self, "_kept", kept)
        out = []
        for row in np.asarray(counts).tolist():
            key = tuple(row)
            reading = kept.get(key)
            if reading is None:
                reading = self.decide(row)
                if len(kept) >= DECIDE_KEPT:
                    kept.clear()
                kept[key] = reading
            out.append(reading)
        return out

    def _rule(self, fr: list[float]) -> RegionReading:
        """The region rule on the fractions of a region's readable pixels (``K + 3`` floats in
        :meth:`decide`'s order, at least ``min_pixels`` pixels)."""
        keys, shadow = self._decide_terms()
        dark, other, background = fr[0], fr[1], fr[2]
        colours = fr[3:]
        fractions = dict(zip(keys, fr))  # dark, other, background, then the references by name
        total = sum(colours)
        if other > self.max_other:
            return RegionReading(UNKNOWN, 0.0, f"uneven: {other:.0%} of the region matches nothing", fractions)
        if dark + other + total > self.max_cover:
            return RegionReading(UNKNOWN, 0.0, f"covered: {dark + other + total:.0%} of the region", fractions)
        chromatic = [0.0 if s else v for s, v in zip(shadow, colours)]
        dark_votes = [v for s, v in zip(shadow, colours) if s]
        if max(chromatic, default=0.0) >= self.min_colour:
            ranked = chromatic  # a coloured piece: its dark side does not compete
        elif sum(dark_votes) > 0 and sum(chromatic) > self.max_second * max(dark_votes):
            return RegionReading(UNKNOWN, 0.0, "dark with some colour: a shadow or a piece?", fractions)
        else:
            ranked = colours
        # the best (the first of equals) and the second best (the next of equals)
        c1 = max(ranked)
        i1 = ranked.index(c1)
        c2 = max(ranked[:i1] + ranked[i1 + 1:]) if len(ranked) > 1 else 0.0
        if self.background_label is not None and total <= self.max_colour_in_background:
            if background >= self.min_background:
                return RegionReading(self.background_label, background, "", fractions)
            return RegionReading(UNKNOWN, 0.0, "neither a piece nor the plain background", fractions)
        names = self.references.names
        if c1 < self.min_colour:
            return RegionReading(UNKNOWN, 0.0, f"too little colour ({c1:.0%})", fractions)
        if c2 > self.max_second * c1:
            i2 = next(j for j, v in enumerate(ranked) if j != i1 and v == c2)
            return RegionReading(
                UNKNOWN, 0.0, f"two colours: {names[i1]} {c1:.0%} and {names[i2]} {c2:.0%}", fractions)
        confidence = (c1 / max(total, 1e-9)) * (1.0 - c2 / c1)
        return RegionReading(names[i1], confidence, "", fractions)

    def _decide_terms(self) -> tuple[tuple[str, ...], tuple[bool, ...]]:
        """The fractions' keys (dark, other, background, the references) and which references
        are ``shadow_like``, computed once."""
        terms = self.__dict__.get("_decide")
        if terms is None:
            names = self.references.names
            terms = (("dark", "other", BACKGROUND, *names), tuple(name in self.shadow_like for name in names))
            object.__setattr__(self, "_decide", terms)
        return terms


#: The status of a frame whose colour is not what the references were calibrated for.
COLOUR_LOST = "colour lost"

_SRGB_TO_XYZ_INV = np.array([[3.2406, -1.5372, -0.4986], [-0.9689, 1.8758, 0.0415], [0.0557, -0.2040, 1.0570]])
_D65_XYZ = np.array([0.95047, 1.0, 1.08883])


def lamp_locus(kelvin: np.ndarray) -> np.ndarray:
    """The white of a black-body lamp as a camera balanced for daylight (D65) sees it.

    Args:
        kelvin: ``N`` colour temperatures (1667-25000 K).

    Returns:
        ``N x 2 float64``: ``(ln(R/G), ln(B/G))`` of the lamp's white in linear sRGB, D65 at
        about (0, 0).

    Source: the Planckian locus in CIE 1931 xy by the cubic fit of Kang et al. (2002), J. Korean
    Physical Society 41(6), 865-871; xy to XYZ (Y = 1) to linear sRGB by IEC 61966-2-1.
    """
    t = np.asarray(kelvin, dtype=np.float64)
    x = np.where(t <= 4000, -0.2661239e9 / t**3 - 0.2343589e6 / t**2 + 0.8776956e3 / t + 0.179910,
                 -3.0258469e9 / t**3 + 2.1070379e6 / t**2 + 0.2226347e3 / t + 0.240390)
    y = np.where(t <= 2222, -1.1063814 * x**3 - 1.34811020 * x**2 + 2.18555832 * x - 0.20219683,
                 np.where(t <= 4000, -0.9549476 * x**3 - 1.37418593 * x**2 + 2.09137015 * x - 0.16748867,
                          3.0817580 * x**3 - 5.87338670 * x**2 + 3.75112997 * x - 0.37001483))
    xyz = np.stack([x / y, np.ones_like(x), (1 - x - y) / y])
    rgb = (_SRGB_TO_XYZ_INV @ xyz).T / (_SRGB_TO_XYZ_INV @ _D65_XYZ)
    return np.stack([np.log(rgb[:, 0] / rgb[:, 1]), np.log(rgb[:, 2] / rgb[:, 1])], axis=1)


def _srgb_encode(linear: float) -> float:
    return 12.92 * linear if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055


@dataclasses.dataclass(frozen=True)
class ColourCheck:
    """Is a frame a colour frame of the light the reference colours were calibrated for?

    A reader whose references were captured in colour must not read a frame that has lost its
    colour: a grayscale copy reads as empty and black spaces with full confidence, an
    over-exposed one as empty. :meth:`problem` answers why a frame is not fit (the reader then
    reports ``colour lost`` for every region), from three measurements:

    * **exposure** of the white reference (linear BGR median of the plain board): too dark
      when, in some channel, the darkest reference (its L* in the references, e.g. the black
      horse's 27) would fall below ``min_dark_code`` 8-bit levels, under the sensor's noise and
      quantisation (with L* 27: a white below about 62 of 255); clipped when every channel of
      the white is at or above :data:`CLIPPED` (the white's true level is unknown, so every
      colour measured against it is wrong);
    * **the white's chroma**: the white's ``(ln R/G, ln B/G)`` must lie within ``cast_log`` of
      the lamp locus (:func:`lamp_locus`, ``kelvin`` range): lamps from candle-warm to
      overcast daylight, plus the board's own tint and a lamp's off-locus tint (0.8: the
      simulated camera's warm light lies up to 0.68 from the locus; see docs/vision.md). A
      coloured light (a green or magenta cast), or a channel lost, lies farther;
    * **the separation of the reference colours**: in a colour frame of the table the
      chromatic pieces (four of the five horses and the cards' discs) give the sampled regions
      a ``percentile``-th percentile chroma (against the white) of at least ``chroma_share``
      times the least chromatic reference's chroma; a grayscale or colour-lost frame has
      none, so the references could not be told apart.

    Attributes:
        references: the reference colours the reader uses (chroma and darkest L* from them).
        min_dark_code: 8-bit level (0-255) the darkest reference must reach in every channel.
        cast_log: largest distance (natural-log units of the channel ratios) of the white from
            the lamp locus.
        kelvin: (warmest, coolest) lamp colour temperature of the locus, K.
        chroma_share: fraction (0-1) of the least chromatic reference's chroma.
        percentile: percentile (0-100) of the sampled pixels' chroma compared with it.
        chromatic_min: a reference with chroma below this (C*ab) is achromatic (black).

    The bounds come from the references and the physics of the camera; they were checked, not
    fitted, on the simulated camera's stress set (bench/vision_stress.py: no normal frame is
    refused) and on the path-traced photographs (docs/vision.md, "Colour check").
    """

    references: ColourReferences
    min_dark_code: float = 8.0
    cast_log: float = 0.8
    kelvin: tuple[float, float] = (2000.0, 12000.0)
    chroma_share: float = 0.5
    percentile: float = 97.0
    chromatic_min: float = 10.0

    def __post_init__(self) -> None:
        lab = self.references.lab
        chroma = np.hypot(lab[:, 1], lab[:, 2])
        chromatic = chroma[chroma >= self.chromatic_min]
        darkest_l = float(lab[:, 0].min())
        y = ((darkest_l + 16.0) / 116.0) ** 3 if darkest_l > 8.0 else darkest_l / 903.3
        object.__setattr__(self, "_least_chroma", float(chromatic.min()) if len(chromatic) else 0.0)
        object.__setattr__(self, "_darkest_y", y)
        object.__setattr__(self, "_locus", lamp_locus(np.geomspace(self.kelvin[0], self.kelvin[1], 120)))

    @property
    def least_chroma(self) -> float:
        """Chroma (C*ab) of the least chromatic chromatic reference."""
        return self._least_chroma  # type: ignore[attr-defined,no-any-return]

    def min_white_code(self) -> float:
        """The 8-bit level a white channel needs so that the darkest reference reaches
        :attr:`min_dark_code` (about 62 with the black horse's L* 27)."""
        lin = self._linear(self.min_dark_code / 255.0) / self._darkest_y  # type: ignore[attr-defined]
        return 255.0 * _srgb_encode(min(lin, 1.0))

    @staticmethod
    def _linear(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    def chroma_bound(self) -> float:
        """The chroma (C*ab) a sampled pixel must exceed to count, in :meth:`problem`'s
        quick test, as clearly above the bound (``chroma_share`` x :attr:`least_chroma`)."""
        return self.chroma_share * self.least_chroma * (1.0 + 1e-5) + 1e-6

    def _surely_enough(self, lab: np.ndarray, n: int, need: float) -> bool:
        """Is the ``percentile``-th percentile chroma of ``n`` pixels, of which ``lab`` are
        some, surely at least ``need``? True when more pixels than lie above the order
        statistic just below the percentile's are clearly above ``need`` (no sorting)."""
        below = int(np.floor((n - 1) * self.percentile / 100.0))
        above = np.count_nonzero(np.hypot(lab[:, 1], lab[:, 2]) > need * (1.0 + 1e-5) + 1e-6)
        return bool(above >= n - below + 1)

    def cast_distance(self, white: np.ndarray) -> float:
        """Distance of a white (``3`` linear BGR) from the lamp locus, natural-log units (the
        distances of the last 256 whites are kept: the same white gives the same distance)."""
        key = tuple(max(float(v), 1e-6) for v in white)
        kept = self.__dict__.get("_casts")
        if kept is None:
            kept = {}
            object.__setattr__(self, "_casts", kept)
        distance = kept.get(key)
        if distance is None:
            # a still table gives the same few whites again (the median of 8-bit levels
            # moves by a level under the sensor's noise): the distances of the last ones kept
            distance = self._cast_distance(*key)
            if len(kept) >= 256:
                kept.clear()
            kept[key] = distance
        return distance

    def _cast_distance(self, b: float, g: float, r: float) -> float:
        """:meth:`cast_distance` of the white (b, g, r), computed."""
        p = np.array([np.log(r / g), np.log(b / g)])
        segments = self.__dict__.get("_segments")
        if segments is None:  # the locus's segments, once (the same arithmetic as per call)
            a = self._locus[:-1]  # type: ignore[attr-defined]
            ab = self._locus[1:] - a  # type: ignore[attr-defined]
            segments = (a[:, 0].copy(), a[:, 1].copy(), ab[:, 0].copy(), ab[:, 1].copy(),
                        ab[:, 0] * ab[:, 0] + ab[:, 1] * ab[:, 1])
            object.__setattr__(self, "_segments", segments)
        a0, a1, ab0, ab1, norm = segments
        t = np.clip(((p[0] - a0) * ab0 + (p[1] - a1) * ab1) / norm, 0.0, 1.0)
        return float(np.min(np.hypot(p[0] - (a0 + t * ab0), p[1] - (a1 + t * ab1))))

    def problem(self, white: np.ndarray, white_code: np.ndarray,
                region_lab: np.ndarray | Callable[[], np.ndarray]) -> str:
        """Why the frame is not a calibrated colour frame, or ``""``.

        Args:
            white: ``3`` linear BGR of the white reference (:func:`white_of`).
            white_code: ``3`` the white reference's median 8-bit BGR levels.
            region_lab: ``N x 3`` Lab (against the white) of the regions' sampled pixels, or a
                function that computes it (called only when needed: not when the white alone
                is at fault, nor in :meth:`problem_counted` when the count settles it).

        Returns:
            ``"colour lost: ..."`` naming the fault (too dark, clipped, a cast, no colour), or
            ``""`` when the frame is fit.
        """
        fault = self._light_fault(white, white_code)
        if fault or self.least_chroma <= 0:
            return fault
        return self._colour_fault(region_lab)

    def problem_counted(self, white: np.ndarray, white_code: np.ndarray,
                        region_lab: np.ndarray | Callable[[], np.ndarray], above: int, sample_of: int) -> str:
        """:meth:`problem`'s answer, sooner when a count settles it: ``""`` without
        ``region_lab`` when more of its ``sample_of`` pixels have a chroma (``np.hypot(a*, b*)``)
        above :meth:`chroma_bound` than lie above the ``percentile``-th percentile's order
        statistic (that percentile is then surely above the bound; no sorting).

        Args:
            white, white_code, region_lab: as :meth:`problem`.
            above: how many of the sample's pixels have a chroma above :meth:`chroma_bound`.
            sample_of: ``N``, the number of pixels ``region_lab`` has.

        Returns:
            ``"colour lost: ..."`` or ``""``, as :meth:`problem`.
        """
        fault = self._light_fault(white, white_code)
        if fault or self.least_chroma <= 0:
            return fault
        below = int(np.floor((sample_of - 1) * self.percentile / 100.0))
        if sample_of and above >= sample_of - below + 1:
            return ""
        return self._colour_fault(region_lab)

    def _light_fault(self, white: np.ndarray, white_code: np.ndarray) -> str:
        """:meth:`problem`'s tests of the white alone (clipped, too dark, a cast), or ``""``."""
        code = [float(v) for v in white_code]
        if min(code) >= CLIPPED:
            return f"{COLOUR_LOST}: over-exposed, the board's white is clipped ({min(code):.0f} of 255)"
        dark = min(float(v) for v in white) * self._darkest_y  # type: ignore[attr-defined]
        if 255.0 * _srgb_encode(dark) < self.min_dark_code:
            return (f"{COLOUR_LOST}: too dark, the board's white is {min(code):.0f} of 255 in its weakest "
                    f"channel (at least {self.min_white_code():.0f} needed)")
        cast = self.cast_distance(white)
        if cast > self.cast_log:
            return f"{COLOUR_LOST}: the light's colour is beyond the calibrated range (cast {cast:.2f} > {self.cast_log})"
        return ""

    def _colour_fault(self, region_lab: np.ndarray | Callable[[], np.ndarray]) -> str:
        """:meth:`problem`'s test of the regions' chroma on every pixel, or ``""``."""
        need = self.chroma_share * self.least_chroma
        if callable(region_lab):
            region_lab = region_lab()
        if len(region_lab):
            if self._surely_enough(region_lab, len(region_lab), need):
                return ""
            chroma = np.hypot(region_lab[:, 1], region_lab[:, 2])
            seen = float(np.percentile(chroma, self.percentile))
            if seen < self.chroma_share * self.least_chroma:
                return (f"{COLOUR_LOST}: no colour in the frame (chroma {seen:.0f}, the references need "
                        f"{self.chroma_share * self.least_chroma:.0f}): a grayscale or washed-out camera")
        return ""


#: The channel orders a camera driver can deliver, as the index (in BGR) each delivered
#: channel holds, with the words for the fault; the first is the right order.
CHANNEL_ORDERS: tuple[tuple[tuple[int, int, int], str], ...] = (
    ((0, 1, 2), ""),
    ((2, 1, 0), "the camera's red and blue look swapped"),
    ((1, 0, 2), "the camera's green and blue look swapped"),
    ((0, 2, 1), "the camera's red and green look swapped"),
    ((1, 2, 0), "the camera's colour channels look rotated (each one read as the next)"),
    ((2, 0, 1), "the camera's colour channels look rotated (each one read as the previous)"),
)


@dataclasses.dataclass(frozen=True)
class PrintCheck:
    """Are the camera's colour channels in their order? Told from colours printed at fixed
    places on the board (a red/blue swap of a camera driver, or any channel permutation).

    A frame whose red and blue are swapped keeps a white board white and every colour
    saturated, so :class:`ColourCheck` passes it, and the reader would give a blue horse for a
    red one. Fixed print does not move: its hue, against the white reference, is known.

    Each place's colour is taken as its **chromaticity** ``(ln R/G, ln B/G)`` of white-relative
    linear light: shading and exposure scale the three channels alike and cancel; the camera's
    tone curve, glare and haze pull the colour towards the white, which shortens the vector
    but keeps its direction. So a place is compared by the **direction** (a hue angle, degrees)
    of its chromaticity with the printed colour's, and with the printed colour's channels
    permuted in each of the other :data:`CHANNEL_ORDERS`. A place *votes* for an order when its
    angle from that order's prediction is at most ``nearer`` times its angle from the other's
    (clearly nearer: a hand, a shadow or glare over one place gives a colour near neither);
    a place whose printed hue an order moves by less than ``min_separation_deg`` cannot tell
    that order, and a place whose chromaticity is shorter than ``min_share`` of its print's
    (washed out, or covered by something grey) votes for none.

    The frame is refused when, of the places seen that can tell a wrong order, at least
    ``min_places`` and more than half vote for it, and more than vote for the right order. The
    bounds are geometry (a vote is twice as near one prediction as the other), not fitted.

    Attributes:
        expected: ``K x 3 float`` white-relative linear BGR of each place's print (the printed
            sRGB over the printed white, IEC 61966-2-1), one row a place.
        names: ``K`` names of the places (for tests and the overlay).
        nearer: ratio (0-1) of hue angles for a vote.
        min_separation_deg: least hue angle (degrees) between a print and its permuted copy for
            the place to tell that order.
        min_share: least length of a place's chromaticity, as a share (0-1) of its print's.
        min_places: least number of places voting for one wrong order.

    Raises:
        ValueError: ``expected`` not ``K x 3`` positive, or ``names`` not ``K`` long.
    """

    expected: np.ndarray
    names: tuple[str, ...]
    nearer: float = 0.5
    min_separation_deg: float = 45.0
    min_share: float = 0.1
    min_places: int = 2

    def __post_init__(self) -> None:
        e = np.asarray(self.expected, dtype=np.float64)
        if e.ndim != 2 or e.shape[1] != 3 or len(e) != len(self.names) or not (e > 0).all():
            raise ValueError(f"PrintCheck: expected {len(self.names)} x 3 positive linear BGR, got shape {e.shape}")
        object.__setattr__(self, "expected", e)
        # every order's prediction of each place's hue angle: orders x K
        pred = np.stack([_hue_deg(_chromaticity(e[:, list(order)])) for order, _w in CHANNEL_ORDERS])
        object.__setattr__(self, "_pred", pred)
        object.__setattr__(self, "_tells", _angle_between(pred, pred[:1]) >= self.min_separation_deg)
        object.__setattr__(self, "_length", np.linalg.norm(_chromaticity(e), axis=1))

    @classmethod
    def from_print(cls, print_srgb: Mapping[str, Sequence[float]], white_srgb: Sequence[float],
                   **kwargs: Any) -> PrintCheck:
        """Build from printed colours: ``{place: [R, G, B]}`` 8-bit sRGB and the printed white
        (``[R, G, B]``) the reader balances against."""
        names = tuple(print_srgb)
        rgb = np.array([list(print_srgb[n]) for n in names], dtype=np.float64).reshape(-1, 3)
        w = np.asarray(white_srgb, dtype=np.float64).reshape(3)
        lin = _LUT[np.clip(np.rint(rgb[:, ::-1]), 0, 255).astype(np.uint8)].astype(np.float64)
        wl = _LUT[np.clip(np.rint(w[::-1]), 0, 255).astype(np.uint8)].astype(np.float64)
        return cls(lin / wl, names, **kwargs)

    @staticmethod
    def _seen(measured: np.ndarray) -> np.ndarray:
        return np.isfinite(measured).all(axis=1) & (np.nan_to_num(measured, nan=0.0) > 0).all(axis=1)  # type: ignore[no-any-return]

    def votes(self, measured: np.ndarray) -> np.ndarray:
        """Which orders each place's hue is clearly near.

        Args:
            measured: ``K x 3`` white-relative linear BGR of each place (its median), a row of
                NaN (or any value <= 0) for a place not seen.

        Returns:
            ``len(CHANNEL_ORDERS) x K int8``: for a wrong order k (row k > 0), 1 where the
            place is clearly nearer order k's prediction than the right order's, -1 where it is
            clearly nearer the right order's, 0 where it cannot tell (near neither, too pale,
            not seen, or a print the order leaves alike). Row 0: 1 where the place is clearly
            nearer the right order than every order it tells.
        """
        return self._votes(np.asarray(measured, dtype=np.float64).reshape(-1, 3))[0]

    def _votes(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`votes` of ``K x 3`` float64 and the hue angles (orders x K, degrees) of each
        place from each order's prediction."""
        seen = self._seen(m)
        c = _chromaticity(np.where(seen[:, None], m, 1.0))
        seen &= np.linalg.norm(c, axis=1) >= self.min_share * self._length  # type: ignore[attr-defined]
        d = _angle_between(self._pred, _hue_deg(c)[None])  # type: ignore[attr-defined]
        tells = self._tells & seen[None]  # type: ignore[attr-defined]
        right = d[0]
        out = np.zeros(d.shape, dtype=np.int8)
        out[(d <= self.nearer * right) & tells] = 1
        out[(right <= self.nearer * d) & tells] = -1
        out[0] = seen & (right <= self.nearer * np.where(tells, d, np.inf)[1:].min(axis=0))
        return out, d

    def problem(self, measured: np.ndarray) -> str:
        """``"colour lost: ..."`` when the fixed print's hues are those of a wrong channel
        order (naming it and how many places say so), else ``""``: refused when, of the places
        seen that can tell a wrong order from the right one, at least ``min_places`` and more
        than half are clearly nearer the wrong order, and more than are clearly nearer the
        right one.

        Args:
            measured: as for :meth:`votes`.
        """
        m = np.asarray(measured, dtype=np.float64).reshape(-1, 3)
        seen = self._seen(m)
        if not seen.any():
            return ""
        votes, angles = self._votes(m)
        near = (votes[1:] == 1).sum(axis=1)
        against = (votes[1:] == -1).sum(axis=1)
        can = (self._tells[1:] & seen[None]).sum(axis=1)  # type: ignore[attr-defined]
        found = [j + 1 for j in range(len(near))
                 if near[j] >= self.min_places and 2 * near[j] > can[j] and near[j] > against[j]]
        if not found:
            return ""
        # of the wrong orders enough places are near, the one nearest all the places (each
        # place's angle capped at 90 degrees: one covered place does not decide)
        fit = np.minimum(np.where(seen[None], angles, 0.0), 90.0).sum(axis=1)
        k = min(found, key=lambda j: float(fit[j]))
        return (f"{COLOUR_LOST}: {CHANNEL_ORDERS[k][1]} ({int(near[k - 1])} of {int(can[k - 1])} fixed printed "
                "colours seen that tell it have the swapped hue): check the camera's pixel format")


def _hue_deg(chromaticity: np.ndarray) -> np.ndarray:
    """``N`` directions (degrees) of ``N x 2`` chromaticities."""
    return np.degrees(np.arctan2(chromaticity[:, 1], chromaticity[:, 0]))  # type: ignore[no-any-return]


def _angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Absolute difference (0-180 degrees) of hue angles, broadcast."""
    return np.abs((np.asarray(a) - np.asarray(b) + 180.0) % 360.0 - 180.0)  # type: ignore[no-any-return]


def _chromaticity(linear_bgr: np.ndarray) -> np.ndarray:
    """``N x 2`` (ln R/G, ln B/G) of ``N x 3`` positive linear BGR."""
    x = np.maximum(np.asarray(linear_bgr, dtype=np.float64), 1e-4)
    return np.stack([np.log(x[:, 2] / x[:, 1]), np.log(x[:, 0] / x[:, 1])], axis=1)


class FrozenFrames:
    """Tells a camera that keeps giving the very same frame (a frozen driver or capture).

    A live camera's frames always differ a little (sensor noise); identical frames for more
    than ``frozen_s`` seconds mean the picture is no longer the table as it is now.
    ``update(t, frame)`` returns how long (s) the frame has been identical when that is more
    than ``frozen_s``, else None. Frames are compared on a sparse grid of pixels (every 7th
    row and column), exactly. Time comes in with each frame.

    Args:
        frozen_s: seconds of identical frames before the camera is frozen (> 0).

    Raises:
        ValueError: ``frozen_s`` not positive.
    """

    def __init__(self, frozen_s: float = 3.0):
        if not frozen_s > 0:
            raise ValueError(f"frozen_s: expected seconds > 0, got {frozen_s}")
        self.frozen_s = float(frozen_s)
        self._last: bytes | None = None
        self._since = 0.0

    def update(self, t: float, frame: np.ndarray) -> float | None:
        """Feed a frame (``H x W x 3 uint8``) at time ``t`` (s); the seconds it has been
        the same when more than ``frozen_s``, else None."""
        key = np.ascontiguousarray(frame[::7, ::7]).tobytes()
        if key != self._last:
            self._last, self._since = key, t
            return None
        held = t - self._since
        return held if held > self.frozen_s else None


T = TypeVar("T")


class Stabiliser(Generic[T]):
    """Passes a reading on only once it has stayed the same for a settle time.

    ``update(t, value)`` returns the value the first time it has been unchanged for at least
    ``settle_s`` seconds (and differs from the last value returned); otherwise None. Time is
    given with each reading, so tests drive it with any clock.

    Args:
        settle_s: seconds a reading must stay unchanged (0 = pass every change at once).
    """

    def __init__(self, settle_s: float):
        if settle_s < 0:
            raise ValueError(f"settle time must be >= 0 s, got {settle_s}")
        self.settle_s = float(settle_s)
        self._candidate: T | None = None
        self._since: float = 0.0
        self._has_candidate = False
        self.stable: T | None = None
        self._has_stable = False

    def update(self, t: float, value: T) -> T | None:
        """Feed the reading at time ``t`` (seconds); returns it when it has just settled."""
        if not self._has_candidate or value != self._candidate:
            self._candidate, self._since, self._has_candidate = value, t, True
        if t - self._since >= self.settle_s and (not self._has_stable or value != self.stable):
            self.stable, self._has_stable = value, True
            return value
        return None

    @property
    def since(self) -> float:
        """Time (s) the current candidate reading first appeared: for a value :meth:`update`
        has just returned, the moment the table started to look like that."""
        return self._since

    def reset(self) -> None:
        """Forget the candidate and the stable reading (e.g. after the camera was lost)."""
        self._has_candidate = self._has_stable = False
        self._candidate = self.stable = None


def load_json(path: str | Path) -> Any:
    """Read a JSON calibration file.

    Raises:
        ValueError: the file is missing, unreadable, not UTF-8 or not valid JSON, naming the file
            (and the line).
    """
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{p}: no such file") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not a JSON text file (not UTF-8)") from None
    except OSError as exc:
        raise ValueError(f"{p}: cannot read it: {exc.strerror or exc}") from None
