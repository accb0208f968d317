"""The Carrousel reader's steady read as it was before it was vectorised (commit 31ee12c):
a frozen copy kept so that tests and bench/vision_equal.py can prove the vectorised reader gives
the same readings, bit for bit (labels, confidences, reasons, fractions, white level).

Not used by the product. :class:`ReferenceCarrouselReader` is a
:class:`~companion.vision.carrousel.CarrouselReader` whose ``read`` (and everything under it:
sample plan, medians, Lab conversions, pixel classes, region rules) is the old code.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from companion.vision.carrousel import CardReading, CarrouselReader, CarrouselReading
from companion.vision.colour import (
    BACKGROUND,
    CLIPPED,
    COLOUR_LOST,
    OFFSET,
    UNKNOWN,
    ColourReferences,
    RegionClassifier,
    RegionReading,
    linear_to_lab,
    srgb_to_linear,
)
from companion.vision.registration import Registration

__all__ = ["ReferenceCarrouselReader"]


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



def _luminance(linear_bgr: np.ndarray) -> float:
    b, g, r = (float(x) for x in linear_bgr)
    return max(0.0722 * b + 0.7152 * g + 0.2126 * r, 1e-6)


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
class _RefColourCheck:
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

    def cast_distance(self, white: np.ndarray) -> float:
        """Distance of a white (``3`` linear BGR) from the lamp locus, natural-log units."""
        b, g, r = (max(float(v), 1e-6) for v in white)
        p = np.array([np.log(r / g), np.log(b / g)])
        a, bb = self._locus[:-1], self._locus[1:]  # type: ignore[attr-defined]
        ab = bb - a
        t = np.clip(((p - a) * ab).sum(axis=1) / (ab * ab).sum(axis=1), 0.0, 1.0)
        return float(np.min(np.hypot(*(p - (a + t[:, None] * ab)).T)))

    def problem(self, white: np.ndarray, white_code: np.ndarray, region_lab: np.ndarray) -> str:
        """Why the frame is not a calibrated colour frame, or ``""``.

        Args:
            white: ``3`` linear BGR of the white reference (:func:`white_of`).
            white_code: ``3`` the white reference's median 8-bit BGR levels.
            region_lab: ``N x 3`` Lab (against the white) of the regions' sampled pixels.

        Returns:
            ``"colour lost: ..."`` naming the fault (too dark, clipped, a cast, no colour), or
            ``""`` when the frame is fit.
        """
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
        if self.least_chroma > 0 and len(region_lab):
            chroma = np.hypot(region_lab[:, 1], region_lab[:, 2])
            seen = float(np.percentile(chroma, self.percentile))
            if seen < self.chroma_share * self.least_chroma:
                return (f"{COLOUR_LOST}: no colour in the frame (chroma {seen:.0f}, the references need "
                        f"{self.chroma_share * self.least_chroma:.0f}): a grayscale or washed-out camera")
        return ""


class _RefClassifier:
    """The old region classifier's pixel and region rules on a classifier's settings."""

    def __init__(self, c: RegionClassifier):
        self._c = c

    def __getattr__(self, name):
        return getattr(self._c, name)

    def pixel_classes(self, lab: np.ndarray) -> np.ndarray:
        """Per-pixel class of ``N x 3`` Lab: ``k >= 0`` a reference, -1 background, -2 other,
        -3 dark shade (darker than ``background_min_l`` and no reference: the shaded side of a
        piece, a shadow; it neither votes nor counts as the hand's "other")."""
        lab = np.asarray(lab, dtype=np.float32).reshape(-1, 3)
        refs = self.references.lab
        lw = np.where(np.hypot(refs[:, 1], refs[:, 2]) < 10.0, 1.0, self.l_weight).astype(np.float32)
        # squared weighted distances by expansion, sum_c w^2 (x - r)^2 = x^2.w^2 - 2 x.(w^2 r) + r^2.w^2:
        # three small matrix products instead of an N x K x 3 array; no square roots needed
        w2 = np.ones_like(refs)
        w2[:, 0] = lw * lw
        d = (lab * lab) @ w2.T - 2.0 * (lab @ (w2 * refs).T) + (w2 * refs * refs).sum(axis=1)
        np.maximum(d, 0.0, out=d)
        rows = np.arange(len(d))
        best = d.argmin(axis=1)
        d1 = d[rows, best]
        if d.shape[1] > 1:
            d[rows, best] = np.inf
            d2 = d.min(axis=1)
        else:
            d2 = np.full(len(d), np.inf, dtype=d.dtype)
        chroma = np.hypot(lab[:, 1], lab[:, 2])
        light = lab[:, 0]
        cls = np.where(light < self.background_min_l, -3, -2).astype(np.int16)
        cls[(chroma < self.background_chroma) & (light >= self.background_min_l)] = -1
        tinted = (np.abs(lab[:, 1]) < self.tint_a) & (np.abs(lab[:, 2]) < self.tint_b) & (light >= self.tint_min_l)
        cls[tinted] = -1
        is_colour = (d1 < self.near ** 2) & (d1 < self.ratio ** 2 * d2)
        # an achromatic reference (black) takes only pixels without colour: a coloured horse
        # in a deep shadow, or a dark sleeve, is dark but still has a hue
        achromatic = lw[best] == 1.0
        is_colour &= ~achromatic | ((d1 < self.near_achromatic ** 2) & (chroma < self.achromatic_chroma))
        cls[is_colour] = best[is_colour]
        return cls

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
        names = self.references.names
        dark, other, background = c[0] / n, c[1] / n, c[2] / n
        colours = [v / n for v in c[3:]]
        fractions = {"dark": dark, "other": other, BACKGROUND: background, **dict(zip(names, colours))}
        total = sum(colours)
        if other > self.max_other:
            return RegionReading(UNKNOWN, 0.0, f"uneven: {other:.0%} of the region matches nothing", fractions)
        if dark + other + total > self.max_cover:
            return RegionReading(UNKNOWN, 0.0, f"covered: {dark + other + total:.0%} of the region", fractions)
        shadow = [name in self.shadow_like for name in names]
        chromatic = [0.0 if s else v for s, v in zip(shadow, colours)]
        dark = [v for s, v in zip(shadow, colours) if s]
        if max(chromatic, default=0.0) >= self.min_colour:
            ranked = chromatic  # a coloured piece: its dark side does not compete
        elif sum(dark) > 0 and sum(chromatic) > self.max_second * max(dark):
            return RegionReading(UNKNOWN, 0.0, "dark with some colour: a shadow or a piece?", fractions)
        else:
            ranked = colours
        order = sorted(range(len(ranked)), key=lambda i: -ranked[i])
        c1 = ranked[order[0]]
        c2 = ranked[order[1]] if len(order) > 1 else 0.0
        if self.background_label is not None and total <= self.max_colour_in_background:
            if background >= self.min_background:
                return RegionReading(self.background_label, background, "", fractions)
            return RegionReading(UNKNOWN, 0.0, "neither a piece nor the plain background", fractions)
        if c1 < self.min_colour:
            return RegionReading(UNKNOWN, 0.0, f"too little colour ({c1:.0%})", fractions)
        if c2 > self.max_second * c1:
            return RegionReading(
                UNKNOWN, 0.0, f"two colours: {names[order[0]]} {c1:.0%} and {names[order[1]]} {c2:.0%}", fractions)
        confidence = (c1 / max(total, 1e-9)) * (1.0 - c2 / c1)
        return RegionReading(names[order[0]], confidence, "", fractions)


class ReferenceCarrouselReader(CarrouselReader):
    """The Carrousel reader with the old (per-region) steady read; same constructor."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._ref_plan = None
        self._ref_space = _RefClassifier(self.space_classifier)
        self._ref_card = _RefClassifier(self.card_classifier)
        self._ref_check = _RefColourCheck(self.colour_check.references, **{
            f.name: getattr(self.colour_check, f.name) for f in dataclasses.fields(self.colour_check) if f.name != 'references'})
        self._ref_points = None

    def _ref_all_points(self) -> tuple[np.ndarray, dict[str, list[tuple[int, int]]]]:
        """Every sample point (board mm, ``N x 2``) and, per kind, the (start, end) of each
        region in it."""
        if self._ref_points is None:
            g = self.geometry
            chunks: list[np.ndarray] = []
            segs: dict[str, list[tuple[int, int]]] = {}
            n = 0

            def add(name: str, pts: np.ndarray) -> None:
                nonlocal n
                chunks.append(pts)
                segs.setdefault(name, []).append((n, n + len(pts)))
                n += len(pts)

            add("board", np.concatenate([self._white_patch] + [self._space_ring + c for c in g.space_centres_mm]))
            for c in g.space_centres_mm:
                add("rings", self._space_ring + c)
            for c in g.space_centres_mm:
                add("discs", self._space_disc + c)
            for c in g.space_centres_mm:
                for r in self._outline + [self._outline_in, self._outline_out]:
                    add("outline", r + c)
            for slot in g.cards:
                add("card_white", self._card_white[slot.seat])
            for slot in g.cards:
                for c in slot.disc_centres_mm:
                    add("card_discs", self._card_disc + c)
            segs.setdefault("card_white", [])
            segs.setdefault("card_discs", [])
            self._ref_points = (np.concatenate(chunks), segs)
        return self._ref_points

    def read(self, frame: np.ndarray, registration: Registration | None = None,
             stream: bool = False, t: float | None = None) -> CarrouselReading:
        """Read one frame.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            registration: use this registration instead of registering the frame.
            stream: frames of one video stream: keep the registration between frames and
                re-detect only when needed (:meth:`Registrar.update`); else detect every time.
            t: the frame's time (s) in a stream: the same frame for more than ``frozen_s``
                is a frozen camera, not a new reading.

        Returns:
            The :class:`CarrouselReading`: status ``"ok"``; ``"board not visible: ..."`` when
            it cannot register; ``"colour lost: ..."`` when the frame is not a colour frame of
            the calibrated light (:class:`~companion.vision.colour.ColourCheck`: grayscale, a
            cast beyond the calibrated range, too dark, clipped); ``"camera frozen: ..."``.
            Every region is unknown unless the status is ``"ok"``.

        Raises:
            ValueError: a frame that is not ``H x W x 3 uint8``.
        """
        if not (isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8):
            raise ValueError(f"expected an H x W x 3 uint8 BGR frame, got "
                             f"{getattr(frame, 'shape', type(frame).__name__)} {getattr(frame, 'dtype', '')}")
        if t is not None:
            held = self.frozen.update(t, frame)
            if held is not None:
                return CarrouselReading(f"camera frozen: the same frame for {held:.1f} s")
        reg = registration
        if reg is None:
            reg = self.registrar.update(frame) if stream else self.registrar.register(frame)
        if reg is None:
            return CarrouselReading(self.registrar.status or "board not visible")
        plan = self._ref_plan
        if plan is None or plan.reg is not reg or plan.shape != frame.shape:
            plan = self._ref_plan = _Plan(self, reg, frame.shape)
        flat = frame.reshape(-1, 3)
        self._frame_shape = frame.shape
        board_white = white_of(flat[plan.board]) if len(plan.board) >= 0.3 * plan.board_planned else None
        if board_white is None:
            return CarrouselReading("board not visible: the board's reference patch is out of the frame",
                                    registration=reg)
        fault = self._colour_fault(flat, plan, board_white)
        if fault:
            return CarrouselReading(fault, registration=reg, white_level=_luminance(board_white))
        spaces = self._read_spaces(flat, plan, board_white)
        cards = self._read_cards(flat, plan, board_white)
        return CarrouselReading("ok", spaces, cards, reg, _luminance(board_white))

    def _colour_fault(self, flat: np.ndarray, plan: _Plan, board_white: np.ndarray) -> str:
        """The colour check (:class:`~companion.vision.colour.ColourCheck`) on the board's
        white and the spaces' and cards' pixels (every other one): ``""`` or why not."""
        code = np.median(flat[plan.board], axis=0)
        idx = np.concatenate([plan.discs[::2], plan.card_discs[::2]])
        lab = linear_to_lab(srgb_to_linear(flat[idx]), board_white)
        return self._ref_check.problem(board_white, code, lab)

    def _read_spaces(self, flat: np.ndarray, plan: _Plan, board_white: np.ndarray) -> tuple[RegionReading, ...]:
        board_y = _luminance(board_white)
        n = len(plan.rings)
        gains = np.ones(n, dtype=np.float32)
        early: dict[int, RegionReading] = {}
        lo, hi = self.LIGHT_RANGE
        for k, ring_idx in enumerate(plan.rings):
            local = white_of(flat[ring_idx]) if len(ring_idx) >= 0.5 * plan.ring_planned else None
            if local is None:
                early[k] = RegionReading(UNKNOWN, 0.0, "the space's surroundings are out of the frame")
                continue
            gains[k] = _luminance(local) / board_y
            if not lo <= gains[k] <= hi:
                early[k] = RegionReading(UNKNOWN, 0.0, f"light {gains[k]:.2f}x the board's: too dark or too bright")
        px = flat[plan.discs]
        clipped = px.min(axis=1) >= CLIPPED
        lab = linear_to_lab(srgb_to_linear(px), board_white[None, :] * gains[plan.disc_seg, None])
        classifier = self._ref_space
        cls = classifier.pixel_classes(lab)
        cls[clipped] = -1
        width = len(classifier.references.names) + OFFSET
        counts = np.bincount(plan.disc_seg * width + cls + OFFSET, minlength=n * width).reshape(n, width)
        sampled = np.bincount(plan.disc_seg, minlength=n)
        seen = self._outline_seen(flat, plan)
        out = []
        for k in range(n):
            if k in early:
                out.append(early[k])
                continue
            if sampled[k] < 0.8 * plan.disc_planned:
                out.append(RegionReading(UNKNOWN, 0.0, "the space is partly out of the frame"))
                continue
            reading = classifier.decide(counts[k])
            if reading.label != UNKNOWN:
                need = self.OUTLINE_FOR_EMPTY if reading.label == classifier.background_label else self.OUTLINE_FOR_COLOUR
                if seen[k] < need:
                    reading = RegionReading(UNKNOWN, 0.0, f"covered: {seen[k]:.0%} of the space's outline seen",
                                            reading.fractions)
            out.append(reading)
        whites = board_white[None, :] * gains[:, None]
        return tuple(self.checks.apply(flat.reshape(self._frame_shape), plan.reg, out, whites, self.space_classifier))

    def _outline_seen(self, flat: np.ndarray, plan: _Plan) -> np.ndarray:
        """Share (0-1) of each space's printed outline that is visible: at each of 48 angles,
        the darkest of three samples across the outline must be at most
        :attr:`OUTLINE_CONTRAST` times the lightness just inside and just outside it."""
        lum = srgb_to_linear(flat[plan.outline]) @ np.array([0.0722, 0.7152, 0.2126], dtype=np.float32)
        line = lum[:, :3, :].min(axis=1)
        around = np.minimum(lum[:, 3, :], lum[:, 4, :])
        return (line <= self.OUTLINE_CONTRAST * around).mean(axis=1)

    def _read_cards(self, flat: np.ndarray, plan: _Plan, board_white: np.ndarray) -> dict[str, CardReading]:
        g = self.geometry
        if not g.cards:
            return {}
        whites = np.empty((len(g.cards), 3), dtype=np.float32)
        problem: dict[int, str] = {}
        patches = [flat[idx] for idx in plan.card_white]
        for i, patch in enumerate(patches):
            white = white_of(patch)
            if white is None or len(patch) < 0.9 * plan.card_white_planned[i]:
                problem[i] = "the card is out of the frame"
                whites[i] = board_white
            else:
                whites[i] = white
        # the card's white must be even: every patch pixel within Delta E 15 of the card's white
        seg = np.repeat(np.arange(len(patches)), [len(p) for p in patches])
        lab_patch = linear_to_lab(srgb_to_linear(np.concatenate(patches)), whites[seg])
        dev = np.sqrt((lab_patch[:, 0] - 100.0) ** 2 + lab_patch[:, 1] ** 2 + lab_patch[:, 2] ** 2) > 15.0
        uneven = np.bincount(seg, weights=dev, minlength=len(patches)) / np.maximum(
            np.bincount(seg, minlength=len(patches)), 1)
        board_y = _luminance(board_white)
        for i in range(len(patches)):
            if i in problem:
                continue
            ratio = _luminance(whites[i]) / board_y
            if uneven[i] > 0.1:
                problem[i] = f"the card's white is uneven ({uneven[i]:.0%}): covered"
            elif not 0.5 <= ratio <= 2.5:
                problem[i] = f"the card is {ratio:.2f}x as bright as the board: not a card"
        px = flat[plan.card_discs]
        clipped = px.min(axis=1) >= CLIPPED
        lab = linear_to_lab(srgb_to_linear(px), whites[plan.card_disc_seg // 3])
        classifier = self._ref_card
        cls = classifier.pixel_classes(lab)
        cls[clipped] = -1
        width = len(classifier.references.names) + OFFSET
        ndisc = 3 * len(g.cards)
        counts = np.bincount(plan.card_disc_seg * width + cls + OFFSET, minlength=ndisc * width).reshape(ndisc, width)
        blank = (RegionReading(UNKNOWN, 0.0),) * 3
        out = {}
        for i, slot in enumerate(g.cards):
            if i in problem:
                out[slot.seat] = CardReading(slot.seat, blank, None, problem[i])
                continue
            discs = tuple(classifier.decide(counts[3 * i + j]) for j in range(3))
            labels = tuple(d.label for d in discs)
            if UNKNOWN in labels:
                out[slot.seat] = CardReading(slot.seat, discs, None, "a disc is unclear")
            elif len(set(labels)) != 3:
                out[slot.seat] = CardReading(slot.seat, discs, None, "a card shows three different horses")
            else:
                out[slot.seat] = CardReading(slot.seat, discs, labels)  # type: ignore[arg-type]
        return out


class _Plan:
    """Where every sample point of the reader falls in the image, for one registration:
    flat pixel indices computed once (one projection of all points), so that reading a frame
    is a few array operations."""

    def __init__(self, reader: CarrouselReader, reg: Registration, shape: tuple[int, ...]):
        self.reg, self.shape = reg, shape
        h, w = shape[:2]
        pts, segs = reader._ref_all_points()
        p = np.rint(reg.to_image(pts)).astype(np.int64)
        inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
        flat = np.clip(p[:, 1], 0, h - 1) * w + np.clip(p[:, 0], 0, w - 1)

        def part(name: str, clip: bool = False) -> list[np.ndarray]:
            out = []
            for a, b in segs[name]:
                out.append(flat[a:b] if clip else flat[a:b][inside[a:b]])
            return out

        (self.board,) = part("board")
        self.board_planned = segs["board"][0][1] - segs["board"][0][0]
        self.rings = part("rings")
        self.ring_planned = len(reader._space_ring)
        discs = part("discs")
        self.discs = np.concatenate(discs)
        self.disc_seg = np.repeat(np.arange(len(discs)), [len(d) for d in discs])
        self.disc_planned = len(reader._space_disc)
        n = len(reader.geometry.space_centres_mm)
        self.outline = np.stack(part("outline", clip=True)).reshape(n, 5, -1)
        self.card_white = part("card_white")
        self.card_white_planned = [b - a for a, b in segs["card_white"]]
        cd = part("card_discs")
        self.card_discs = np.concatenate(cd) if cd else np.zeros(0, np.int64)
        self.card_disc_seg = np.repeat(np.arange(len(cd)), [len(d) for d in cd]) if cd else np.zeros(0, np.int64)
