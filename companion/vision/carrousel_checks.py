"""The Carrousel reader's checks of each space's reading against the space's own print and the
board as a whole (run after the region rule, on both the fast and the per-region read).

A region's votes say what colours its pixels match; they cannot tell a hand from the floor nor
a coloured horse in a shadow from a black one. These checks look at the space itself:

* **empty needs the print seen** (:meth:`SpaceChecks.print_seen`): an empty space shows its own
  printed fill where a horse would stand (its centre, 12 mm around it: a 36 mm horse always
  covers it). The fill is measured on the same space, on its rim just inside the printed
  outline (15.5-19 mm from the centre: 4 mm or more inside the outline's inner edge, beyond
  JPEG's chroma bleed from the dark outline, which moved ln B/G by 0.1 at 18.5-21.5 mm on
  rendered frames), in the same light, so the centre of an empty space matches it whatever the
  lamp, the board's print or the exposure: in log luminance and in the
  log chromaticities ``ln R/G``, ``ln B/G`` (ratios of linear light, so a gain or a lamp's
  colour cancels). A pale or light hand over the centre is brighter or redder than the print
  (skin's haemoglobin raises R/G), though its Lab chroma against the board's white is as low
  as the print's and it counts as background. The quartiles of the centre's offsets must lie
  within the bounds, widened by the sensor's noise (the robust spread of neighbouring points'
  differences of the same measures over the board's white patch): a blob over a quarter of the
  centre moves a quartile. The bounds (:attr:`SpaceChecks.PRINT_BOUNDS`) allow a light gradient
  and JPEG's chroma; they are round figures chosen while looking at the photographs' empty
  spaces (all 20: the dim carrousel_042's ln B/G offsets, 0.1, set the chroma bounds) and
  checked on rendered frames, not derived from physics alone (the least margin on the
  photographs' empty spaces read empty: 0.05).
* **black in its own light** (:meth:`SpaceChecks.black_in_own_light`): a black reading means
  colourless pixels against the light at the horse's place. A shadow over the space itself (its
  rim's print darker than the ring outside by more than :attr:`SpaceChecks.SHADOW_RIM`) makes a
  coloured horse's pixels dark and grey against the ring's white; the space's pixels are read
  again against the rim's light, and a black reading stands only when that reading is black too.
* **a colour leads its black votes** (:meth:`SpaceChecks.colour_leads`): a coloured horse seen
  from above shows more of its colour than of its shaded side, so a chromatic label needs its
  confidence (its share of every colour vote, black included) at least
  :attr:`SpaceChecks.MIN_CONFIDENCE`; and, when black votes reach a quarter of the colour's,
  the median a*, b* of the space's non-background pixels (a robust statistic: sensor noise
  spreads a black horse's dark pixels' chroma both ways, its median stays grey) must point to
  the colour (its projection on the reference's hue at least :attr:`SpaceChecks.MEDIAN_SHARE` of
  the reference's chroma).
* **each colour once** (:func:`distinct_colours`): the game has one horse of each colour, so a
  board read with a colour on two spaces reads both ``unknown``.

Rulebook: shared/rules/carrousel.txt (Components: five horses of different colours).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import cv2
import numpy as np

from companion.vision.colour import (
    CLIPPED,
    UNKNOWN,
    RegionClassifier,
    RegionReading,
    linear_to_lab,
    srgb_to_linear,
)
from companion.vision.registration import Registration

__all__ = ["SpaceChecks", "disc_points", "distinct_colours"]

_LUMA = np.array([0.0722, 0.7152, 0.2126])  # linear B, G, R to luminance (Rec. 709)


def disc_points(radius: float, inner: float = 0.0, step: float = 1.5) -> np.ndarray:
    """Sample points of a disc (or of a ring, with ``inner`` > 0) on a square grid.

    Args:
        radius: outer radius, mm; points at most this far from the centre are kept.
        inner: inner radius, mm; points nearer than this are dropped (0: a whole disc).
        step: grid spacing, mm.

    Returns:
        ``N x 2 float64`` offsets (x, y) in mm from the disc's centre, row by row.
    """
    u = np.arange(-radius, radius + 1e-9, step)
    xx, yy = np.meshgrid(u, u)
    p = np.stack([xx.ravel(), yy.ravel()], axis=1)
    d = np.hypot(p[:, 0], p[:, 1])
    return p[(d <= radius) & (d >= inner)]


#: ln of each 8-bit code's linear light (at least 1e-4), float64
_LN = np.log(np.maximum(srgb_to_linear(np.arange(256, dtype=np.uint8)).astype(np.float64), 1e-4))
_LIN = np.maximum(srgb_to_linear(np.arange(256, dtype=np.uint8)).astype(np.float64), 1e-4)
#: each 8-bit code's linear light as :func:`srgb_to_linear` gives it, in float64 (no floor)
_LIN0 = srgb_to_linear(np.arange(256, dtype=np.uint8)).astype(np.float64)


def print_measures(px: np.ndarray) -> np.ndarray:
    """``N x 3 uint8`` BGR pixels to ``N x 3 float64`` (ln Y, ln R/G, ln B/G) of their linear
    light (IEC 61966-2-1 decoding; Rec. 709 luminance), each channel at least 1e-4."""
    px = np.asarray(px, dtype=np.uint8).reshape(-1, 3)
    ln = _LN[px]
    out = np.empty((len(px), 3))
    out[:, 0] = np.log(_LIN[px] @ _LUMA)
    np.subtract(ln[:, 2], ln[:, 1], out=out[:, 1])
    np.subtract(ln[:, 0], ln[:, 1], out=out[:, 2])
    return out


def measure_rows(px: np.ndarray) -> np.ndarray:
    """:func:`print_measures` of ``N x 3 uint8`` BGR pixels (``N`` at least 2, C-contiguous) as
    ``3 x N float64`` rows (ln Y, ln R/G, ln B/G): the very same values (the same table values
    by ``cv2.LUT``, the same matrix-vector product, the logarithm over a contiguous row as
    there, the same subtractions), in fewer array operations."""
    q = px.reshape(-1, 1, 3)
    ln = cv2.LUT(q, _LN).reshape(-1, 3)
    out = np.empty((3, len(ln)))
    np.log(cv2.LUT(q, _LIN).reshape(-1, 3) @ _LUMA, out=out[0])
    np.subtract(ln[:, 2::-2].T, ln[:, 1], out=out[1:])
    return out


def _kth(n: int, *qs: float) -> list[int]:
    """The order statistics :func:`_quantile_sorted` reads for the quantiles ``qs`` of ``n``
    values (for ``np.partition``)."""
    out: set[int] = set()
    for q in qs:
        i = int(q * (n - 1))
        out.update(k for k in (i, i + 1) if k < n)
    return sorted(out)


def _quantile_part(x: np.ndarray, q: float, n: int, shift: np.ndarray | None = None) -> np.ndarray:
    """:func:`_quantile_sorted` along the last axis of ``x`` (``n`` values a row) partitioned
    at :func:`_kth`'s positions (``np.partition``: those hold the sorted order's values), the
    same arithmetic; with ``shift``, of ``x - shift`` (subtracting a constant keeps the order,
    so the order statistics of the difference are those of ``x`` minus it, rounded alike)."""
    pos = q * (n - 1)
    i = int(pos)
    f = pos - i
    a = x[..., i] if shift is None else x[..., i] - shift
    if f == 0.0 or i + 1 >= n:
        return a
    b = x[..., i + 1] if shift is None else x[..., i + 1] - shift
    return a * (1.0 - f) + b * f


_SQRT2 = np.sqrt(2.0)


def _median_rows(x: np.ndarray) -> np.ndarray:
    """``np.median(x, axis=1)`` of a ``K x N`` float64 array without NaNs, the same values (the
    middle order statistic, or the mean of the two middle ones: their sum over 2, as
    ``np.mean`` of two values computes it), from one partition; ``x`` is partitioned in place."""
    n = x.shape[1]
    h = n // 2
    if n % 2:
        x.partition(h, axis=1)
        return x[:, h]
    x.partition([h - 1, h], axis=1)
    return (x[:, h - 1] + x[:, h]) / 2.0


def _quantile_sorted(x: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile of each column of ``N x C`` sorted columns (linear interpolation
    between order statistics, as ``np.percentile``'s default)."""
    pos = q * (len(x) - 1)
    i = int(pos)
    f = pos - i
    return x[i] if f == 0.0 or i + 1 >= len(x) else x[i] * (1.0 - f) + x[i + 1] * f


def robust_sigma(x: np.ndarray) -> np.ndarray:
    """Per column of ``N x C``: 1.4826 x the median absolute deviation (a normal's sigma)."""
    med = np.median(x, axis=0)
    return 1.4826 * np.median(np.abs(x - med), axis=0)


class SpaceChecks:
    """The checks above for one reader's geometry (board mm), each on one frame's pixels.

    Args:
        space_centres_mm: ``7 x 2`` the spaces' centres.
        disc_mm: ``N x 2`` the reader's sample points inside a space (relative to its centre).
        white_patch_mm: ``M x 2`` the board's white reference patch (board mm).

    The sample points' pixels are found once per registration and frame size.
    """

    #: the rim where a space's fill is measured (inside the outline, clear of its chroma bleed
    #: under JPEG), and the centre a horse always covers (mm)
    RIM_MM = (15.5, 19.0)
    CENTRE_MM = 12.0
    #: bounds on the quartiles of the centre's offsets from the rim's fill: ln Y (a light
    #: gradient over 20 mm is a few per cent; a lamp's spot at its edge up to 8 %), ln R/G and
    #: ln B/G (the same ink in the same light: 0; JPEG's chroma and a dim frame's noise move the
    #: medians up to 0.04 and 0.1 on the 20 photographs), each widened by the noise's sigma
    PRINT_BOUNDS = (0.12, 0.08, 0.08)
    #: how many noise sigmas widen them
    NOISE_WIDTH = 2.0
    #: a rim whose fill is darker than this share of the ring's light is in a shadow
    SHADOW_RIM = 0.8
    #: a chromatic label's least confidence (its share of all colour votes, black included)
    MIN_CONFIDENCE = 0.5
    #: black votes at this share of the colour's call for the median test
    BLACK_SHARE = 0.25
    #: the non-background pixels' median a*, b* projected on the reference's hue, at least this
    #: share of the reference's chroma
    MEDIAN_SHARE = 0.3

    def __init__(self, space_centres_mm: np.ndarray, disc_mm: np.ndarray, white_patch_mm: np.ndarray):
        self.centres = np.asarray(space_centres_mm, dtype=np.float64)
        self.disc = np.asarray(disc_mm, dtype=np.float64)
        self.rim = disc_points(self.RIM_MM[1], inner=self.RIM_MM[0], step=1.0)
        self.centre = disc_points(self.CENTRE_MM, step=1.5)
        self.patch = np.asarray(white_patch_mm, dtype=np.float64)
        #: pairs of neighbouring patch points (at most 3.5 mm apart) whose differences measure
        #: the sensor's noise (the light changes little over 3 mm)
        gap = np.hypot(*(self.patch[1:] - self.patch[:-1]).T)
        self._pairs = np.flatnonzero(gap <= 3.5)
        #: the order statistics :meth:`_print_seen_sampled` reads: the noise's median, the
        #: rim's median, the centre's quartiles
        self._kths = (_kth(len(self._pairs), 0.5), _kth(len(self.rim), 0.5), _kth(len(self.centre), 0.25, 0.75))
        self._sample_points: np.ndarray | None = None
        self._key: tuple[int, tuple[int, ...]] | None = None
        self._reg: Registration | None = None
        self._index: dict[str, list[np.ndarray]] = {}

    def _pixels(self, frame: np.ndarray, reg: Registration, part: str, k: int = 0) -> np.ndarray:
        """``N x 3 uint8`` pixels of ``part`` (``"rim"``, ``"centre"``, ``"disc"`` of space
        ``k``, or ``"patch"``) inside the frame."""
        key = (id(reg), frame.shape)
        if self._key != key or self._reg is not reg:
            self._key, self._reg, self._index = key, reg, {}
        idx = self._index.get(part)
        if idx is None:
            h, w = frame.shape[:2]
            offsets = {"rim": self.rim, "centre": self.centre, "disc": self.disc}.get(part)
            sets = [self.patch] if offsets is None else [offsets + c for c in self.centres]
            idx = []
            for pts in sets:
                p = np.rint(reg.to_image(pts)).astype(np.int64)
                ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
                idx.append(p[ok, 1] * w + p[ok, 0])
            self._index[part] = idx
        return frame.reshape(-1, 3)[idx[k]]

    def print_seen(self, frame: np.ndarray, reg: Registration, k: int, noise: np.ndarray | None = None) -> str:
        """``""`` when space ``k``'s centre shows the print of its rim, else why not (one
        line). Needs 20 pixels on the rim and in the centre (else: not seen). ``noise``:
        :meth:`noise` of the frame when already measured."""
        rim, centre = self._pixels(frame, reg, "rim", k), self._pixels(frame, reg, "centre", k)
        if len(rim) < 20 or len(centre) < 20:
            return "the space's print is out of the frame"
        m = print_measures(rim)
        m.sort(axis=0)
        fill = _quantile_sorted(m, 0.5)
        d = print_measures(centre) - fill
        d.sort(axis=0)
        off = np.maximum(np.abs(_quantile_sorted(d, 0.25)), np.abs(_quantile_sorted(d, 0.75)))
        if noise is None:
            noise = self.noise(frame, reg)
        bounds = np.asarray(self.PRINT_BOUNDS) + self.NOISE_WIDTH * noise
        j = int(np.argmax(off - bounds))
        if off[j] > bounds[j]:
            name = ("ln Y", "ln R/G", "ln B/G")[j]
            return (f"the space's print is not seen where a horse stands ({name} off its rim's by "
                    f"{off[j]:.2f} > {bounds[j]:.2f}): a hand?")
        return ""

    def noise(self, frame: np.ndarray, reg: Registration) -> np.ndarray:
        """The sensor's noise (and JPEG's) on the board's white patch: ``3`` sigmas of (ln Y,
        ln R/G, ln B/G), from the robust spread of neighbouring points' differences over
        sqrt(2). 0 when the patch is partly out of the frame (its points' order is lost)."""
        px = self._pixels(frame, reg, "patch")
        if len(px) != len(self.patch):
            return np.zeros(3)
        m = print_measures(px)
        d = np.abs(m[self._pairs + 1] - m[self._pairs])
        d.sort(axis=0)
        return 1.4826 * _quantile_sorted(d, 0.5) / np.sqrt(2.0)

    def rim_light(self, frame: np.ndarray, reg: Registration, k: int, white: np.ndarray) -> float:
        """Luminance of space ``k``'s rim fill (median, linear) over that of ``white`` (``3``
        linear BGR, the ring's light); 1.0 when the rim is out of the frame."""
        rim = self._pixels(frame, reg, "rim", k)
        if len(rim) < 20:
            return 1.0
        y = np.median(srgb_to_linear(rim).astype(np.float64) @ _LUMA)
        return float(y / max(float(np.asarray(white, dtype=np.float64) @ _LUMA), 1e-6))

    def black_in_own_light(self, frame: np.ndarray, reg: Registration, k: int, white: np.ndarray,
                           classifier: RegionClassifier) -> str:
        """``""`` when a black reading of space ``k`` (read against ``white``, ``3`` linear BGR
        float32) stands against the light on its own rim, else why not."""
        ratio = self.rim_light(frame, reg, k, white)
        if ratio >= self.SHADOW_RIM:
            return ""
        px = self._pixels(frame, reg, "disc", k)
        clipped = px.min(axis=1) >= CLIPPED
        own = np.asarray(white, dtype=np.float32) * np.float32(ratio)
        again = classifier.read(linear_to_lab(srgb_to_linear(px[~clipped]), own), int(clipped.sum()))
        if again.label == "black":
            return ""
        return (f"a shadow over the space ({ratio:.2f}x the light around it): against its own light "
                f"it reads {again.label}, not black")

    def colour_leads(self, frame: np.ndarray, reg: Registration, k: int, white: np.ndarray,
                     reading: RegionReading, classifier: RegionClassifier) -> str:
        """``""`` when the chromatic ``reading`` of space ``k`` (read against ``white``) leads
        its black votes, else why not."""
        if reading.confidence < self.MIN_CONFIDENCE:
            return (f"{reading.label} at confidence {reading.confidence:.2f}: its votes do not lead "
                    f"the other colours' and black's")
        fr = reading.fractions
        if fr.get("black", 0.0) < self.BLACK_SHARE * fr.get(reading.label, 0.0):
            return ""
        px = self._pixels(frame, reg, "disc", k)
        px = px[px.min(axis=1) < CLIPPED]
        lab = linear_to_lab(srgb_to_linear(px), np.asarray(white, dtype=np.float32))
        cls = classifier.pixel_classes_table(lab)
        fg = lab[cls != -1]
        if len(fg) < 10:
            return ""
        ref = classifier.references.lab[classifier.references.names.index(reading.label)]
        chroma = float(np.hypot(ref[1], ref[2]))
        med = np.median(fg[:, 1:].astype(np.float64), axis=0)
        along = float(med @ ref[1:] / max(chroma, 1e-6))
        if along >= self.MEDIAN_SHARE * chroma:
            return ""
        return (f"{reading.label} votes beside black ones, but the piece's median colour is "
                f"{along:.0f} along {reading.label}'s hue (at least {self.MEDIAN_SHARE * chroma:.0f} needed)")

    def apply(self, frame: np.ndarray, reg: Registration, readings: Sequence[RegionReading],
              whites: Sequence[np.ndarray], classifier: RegionClassifier) -> list[RegionReading]:
        """Every check on the region rule's ``readings`` (one per space) of ``frame``:
        ``whites[k]`` is space ``k``'s white (``3`` linear BGR float32, the board's white times
        its ring's light), ``classifier`` the space classifier. Returns the readings, a failed
        one as ``unknown`` with its reason (fractions kept)."""
        out = list(readings)
        empty = classifier.background_label
        noise = None
        for k, rd in enumerate(out):
            if rd.label == UNKNOWN:
                continue
            if rd.label == empty:
                if noise is None:
                    noise = self.noise(frame, reg)
                why = self.print_seen(frame, reg, k, noise)
            elif rd.label in classifier.shadow_like:
                why = self.black_in_own_light(frame, reg, k, whites[k], classifier)
            else:
                why = self.colour_leads(frame, reg, k, whites[k], rd, classifier)
            if why:
                out[k] = RegionReading(UNKNOWN, 0.0, why, rd.fractions)
        return distinct_colours(out, empty)

    def sample_points(self) -> np.ndarray:
        """The board mm (``n x (R + C)`` rows of ``2``, flat: ``n (R + C) x 2 float64``) of each
        space's rim then centre, space by space: the points :meth:`_pixels` projects for
        ``"rim"`` and ``"centre"``, the same values. A reader gathers their pixels with its own
        once per registration and hands them to :meth:`apply_sampled`. Made once (not to be
        written to)."""
        if self._sample_points is None:
            self._sample_points = np.concatenate([np.concatenate([self.rim + c, self.centre + c]) for c in self.centres])
        return self._sample_points

    def apply_sampled(self, frame: np.ndarray, reg: Registration, sampled: np.ndarray, patch: np.ndarray,
                      discs: np.ndarray, readings: Sequence[RegionReading], whites: Sequence[np.ndarray],
                      classifier: RegionClassifier,
                      read_again: Callable[[int, np.ndarray, np.ndarray], RegionReading] | None = None,
                      ratios: Mapping[int, float] | None = None) -> list[RegionReading]:
        """:meth:`apply`'s answers (the same readings, reasons and fractions) from pixels
        already gathered, every space's checks in a few array operations: the print's
        measures of every empty space's rim and centre and of the white patch at once, their
        quartiles from ``np.partition`` (the same order statistics as a sort), the rims' light
        of every black space from one product.

        Args:
            frame, reg: the frame and its registration (for a colour's median test, which
                gathers its own pixels: rarely needed).
            sampled: ``n x (R + C) x 3 uint8``, each space's rim then centre pixels, at the
                points of :meth:`sample_points` (every one inside the frame).
            patch: ``P x 3 uint8``, the white patch's pixels, every point in its order.
            discs: ``n x D x 3 uint8``, each space's disc pixels (every point inside the frame).
            readings, whites, classifier: as :meth:`apply`.
            read_again: ``read_again(k, px, white)``, the classifier's reading of space ``k``'s
                disc pixels ``px`` (``N x 3 uint8``) against a white (``3`` linear BGR float32),
                as ``classifier.read(linear_to_lab(srgb_to_linear(px[~clipped]), white),
                clipped)`` reads them (default: that).
            ratios: :meth:`rim_ratios` of some spaces of this frame already worked out, by space.

        Raises:
            ValueError: ``sampled``, ``patch`` or ``discs`` not of those shapes.
        """
        nr, nc = len(self.rim), len(self.centre)
        n = len(self.centres)
        if (sampled.shape != (n, nr + nc, 3) or patch.shape != (len(self.patch), 3) or discs.ndim != 3
                or len(discs) != n):
            raise ValueError(f"space checks: expected {n} x {nr + nc} x 3 rim and centre pixels, "
                             f"{len(self.patch)} x 3 patch pixels and {n} discs; got {sampled.shape}, "
                             f"{patch.shape}, {discs.shape}")
        out = list(readings)
        empty = classifier.background_label
        why: dict[int, str] = {}
        empties, blacks, colours = [], [], []
        for k, rd in enumerate(out):
            if rd.label == UNKNOWN:
                continue
            (empties if rd.label == empty else blacks if rd.label in classifier.shadow_like else colours).append(k)
        if empties:
            if nr < 20 or nc < 20:
                why.update((k, "the space's print is out of the frame") for k in empties)
            else:
                why.update(self._print_seen_sampled(sampled, patch, empties))
        if blacks:
            if read_again is None:
                read_again = _exact_reader(classifier)
            why.update(self._black_sampled(sampled, discs, blacks, whites, read_again, ratios or {}))
        for k in colours:
            why[k] = self.colour_leads(frame, reg, k, whites[k], out[k], classifier)
        for k, text in why.items():
            if text:
                out[k] = RegionReading(UNKNOWN, 0.0, text, out[k].fractions)
        return distinct_colours(out, empty)

    def _print_seen_sampled(self, sampled: np.ndarray, patch: np.ndarray, ks: list[int]) -> dict[int, str]:
        """:meth:`print_seen` of the spaces ``ks`` (with :meth:`noise` of the patch), from
        :meth:`apply_sampled`'s pixels: only the failed ones, with their reasons."""
        nr, nc, p = len(self.rim), len(self.centre), len(patch)
        sel = sampled if len(ks) == len(sampled) else sampled[ks]
        m = measure_rows(np.concatenate([patch, sel.reshape(-1, 3)]))
        # the noise: the neighbouring patch points' differences (those of m[pairs + 1] - m[pairs]);
        # each partition in place (the parts of m are not read again in their order)
        pm = m[:, :p]
        d = np.abs(pm[:, 1:] - pm[:, :-1]).take(self._pairs, axis=1)
        npairs = d.shape[1]
        kth_pairs, kth_rim, kth_centre = self._kths
        d.partition(kth_pairs, axis=1)
        noise = 1.4826 * _quantile_part(d, 0.5, npairs) / _SQRT2
        bounds = np.asarray(self.PRINT_BOUNDS) + self.NOISE_WIDTH * noise
        rc = m[:, p:].reshape(3, len(ks), nr + nc)
        rim, centre = rc[:, :, :nr], rc[:, :, nr:]
        rim.partition(kth_rim, axis=2)
        centre.partition(kth_centre, axis=2)
        fill = _quantile_part(rim, 0.5, nr)
        off = np.maximum(np.abs(_quantile_part(centre, 0.25, nc, fill)), np.abs(_quantile_part(centre, 0.75, nc, fill)))
        worst = (off - bounds[:, None]).argmax(axis=0).tolist()
        bl = bounds.tolist()
        why = {}
        for k, j, o in zip(ks, worst, off.T.tolist()):
            if o[j] > bl[j]:
                name = ("ln Y", "ln R/G", "ln B/G")[j]
                why[k] = (f"the space's print is not seen where a horse stands ({name} off its rim's by "
                          f"{o[j]:.2f} > {bl[j]:.2f}): a hand?")
        return why

    def rim_ratios(self, sampled: np.ndarray, ks: Sequence[int], whites: Sequence[np.ndarray]) -> list[float]:
        """:meth:`rim_light` of the spaces ``ks`` from :meth:`apply_sampled`'s ``sampled``
        pixels (``n x (R + C) x 3 uint8``) and ``whites`` (``3`` linear BGR float32 each): the
        same ratios (the same table values, product, median and division), one per space."""
        nr = len(self.rim)
        if nr < 20:
            return [1.0] * len(ks)
        rims = sampled[list(ks), :nr]
        y = (cv2.LUT(rims.reshape(-1, 1, 3), _LIN0).reshape(-1, 3) @ _LUMA).reshape(len(ks), nr)
        return [float(yk / max(float(np.asarray(whites[k], dtype=np.float64) @ _LUMA), 1e-6))
                for k, yk in zip(ks, _median_rows(y).tolist())]

    def own_white(self, white: np.ndarray, ratio: float) -> np.ndarray:
        """The light on a space's own rim (``3`` linear BGR float32) from the ring's ``white``
        and :meth:`rim_light`'s ``ratio``, as :meth:`black_in_own_light` reads against it."""
        return np.asarray(white, dtype=np.float32) * np.float32(ratio)

    def _black_sampled(self, sampled: np.ndarray, discs: np.ndarray, ks: list[int], whites: Sequence[np.ndarray],
                       read_again: Callable[[int, np.ndarray, np.ndarray], RegionReading],
                       known: Mapping[int, float]) -> dict[int, str]:
        """:meth:`black_in_own_light` of the spaces ``ks`` from :meth:`apply_sampled`'s pixels
        (``sampled`` and every space's disc pixels), the ratios ``known`` taken as given: only
        the failed ones, with their reasons."""
        why = {}
        rest = [k for k in ks if k not in known]
        ratio_of = dict(zip(rest, self.rim_ratios(sampled, rest, whites))) if rest else {}
        ratio_of.update(known)
        for k in ks:
            ratio = ratio_of[k]
            if ratio >= self.SHADOW_RIM:
                continue
            again = read_again(k, discs[k], self.own_white(whites[k], ratio))
            if again.label != "black":
                why[k] = (f"a shadow over the space ({ratio:.2f}x the light around it): against its own light "
                          f"it reads {again.label}, not black")
        return why


def _exact_reader(classifier: RegionClassifier) -> Callable[[int, np.ndarray, np.ndarray], RegionReading]:
    """The classifier's reading of a space's ``N x 3 uint8`` pixels against a white, as
    :meth:`SpaceChecks.black_in_own_light` reads them (clipped pixels counted as background)."""
    def read(k: int, px: np.ndarray, white: np.ndarray) -> RegionReading:
        clipped = px.min(axis=1) >= CLIPPED
        return classifier.read(linear_to_lab(srgb_to_linear(px[~clipped]), white), int(clipped.sum()))
    return read


def distinct_colours(readings: Sequence[RegionReading], background: str | None = "empty") -> list[RegionReading]:
    """The readings with every colour read on two or more spaces made ``unknown`` (the board
    has one horse of each colour: shared/rules/carrousel.txt, Components)."""
    seen: dict[str, list[int]] = {}
    for k, rd in enumerate(readings):
        if rd.label not in (UNKNOWN, background):
            seen.setdefault(rd.label, []).append(k)
    out = list(readings)
    for label, ks in seen.items():
        if len(ks) > 1:
            where = ", ".join(str(k) for k in ks)
            for k in ks:
                out[k] = RegionReading(UNKNOWN, 0.0, f"{label} read on spaces {where}: the board has one {label} horse",
                                       readings[k].fractions)
    return out
