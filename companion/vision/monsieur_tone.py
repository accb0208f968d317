"""The Monsieur Carrousel seats read the same under every tone curve the frame may have been
made with, or not read.

Why: the seat rules (:mod:`companion.vision.monsieur`) tell a token from the bare seat by
ratios of linear light: a pixel's chroma against its lightness (*pale*), its lightness against
the seat's print around it (*bright*: a token; *dark*: the glyph). The reader decodes the
8-bit codes with the sRGB curve (IEC 61966-2-1), whose shadows are a straight line and an
offset (``(v + 0.055) / 1.055``), not a power law. Ratios of linear light are what a change of
light leaves alone, but only when the codes came through that curve. A camera that applies a
gain to its output codes (digital gain, exposure compensation after the tone curve, a tone
curve other than sRGB in its shadows: the Raspberry Pi's tuned gamma) changes them: codes times
0.35 leave a power law's ratios as they were but lift sRGB's dark values against its light
ones. The glyph of an empty seat, L* 31 against its print's 69 in monsieur_030, reads 39 against
72 in the same photograph's codes times 0.35; with its chroma ratio falling from 0.28 to 0.19
too, the glyph passes for a pale, light token's head and middle (monsieur_030 seats 7 and 8, and
monsieur_051's seat 7, read ``kid`` on empty seats). Noise and JPEG were not the cause: the
copies without noise read wrong, those with it did not.

What is done: the frame's codes may have been scaled by any gain ``s`` from ``s_min`` to 1,
where ``s_min`` puts the paper white's brightest channel at full scale (255: the codes cannot
have been brighter than that before the gain). Each pixel is decoded a second time as if the
gain had been ``s_min`` (its codes divided by it before the sRGB curve, the white's too), the
seat rules run on both decodings, and a seat keeps its reading only where both agree; else it
is ``"unknown"``. The rules' evidence moves one way with the gain (a smaller ``s`` makes dark
pixels darker against the white and colours more saturated: *bright* and *pale* fall, *dark*
and *print* rise), so a token's evidence is weakest at ``s_min`` and the bare seat's at 1: the
two ends bound every gain between. A frame whose white is within ``AGREE_ABOVE`` of full scale
leaves no room for a gain and is read once.

What it costs: one more pass of the seat rules (2-2.5 ms CPU on this machine, 640 x 480) on
frames whose paper reads under 247; on the 20 photographs 2 of 177 seats right become
``unknown`` (monsieur_006 seat 7, monsieur_012 seat 8: tokens whose chroma ratio sits at the
pale bound), and no seat is wrong on their copies at x0.25 to x1.4 with or without noise and
JPEG (``bench/monsieur_exposure.py``).

Sources: IEC 61966-2-1 (sRGB); the reader's rules and their bounds, docs/vision.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np

from companion.vision.colour import UNKNOWN, lab_exact

if TYPE_CHECKING:  # pragma: no cover
    from companion.vision.monsieur import MonsieurReader, _SeatPlan

__all__ = ["AGREE_ABOVE", "FULL_SCALE", "gain_floor", "relit", "seats_under_gains", "srgb_decode", "srgb_encode"]

#: the largest 8-bit code: a white brighter than this before a gain could not have been coded
FULL_SCALE = 255.0
#: a gain floor above this (the white within 3 % of full scale) leaves the decodings equal
#: within a code's quantisation: the frame is read once
AGREE_ABOVE = 0.97
#: why a seat is ``"unknown"`` when the two decodings disagree
DISAGREE = "read otherwise if a gain was applied after the camera's tone curve (a dim frame)"


def srgb_decode(code: np.ndarray) -> np.ndarray:
    """sRGB codes (any shape, float, 0-255 nominal; above 255 the curve is extended) to linear
    light (float64, 1 at code 255), IEC 61966-2-1."""
    x = np.asarray(code, dtype=np.float64) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((np.maximum(x, 0.0) + 0.055) / 1.055) ** 2.4)


def srgb_encode(linear: np.ndarray) -> np.ndarray:
    """Linear light (any shape, 0-1) to sRGB codes (float64, 0-255), IEC 61966-2-1."""
    v = np.asarray(linear, dtype=np.float64)
    return 255.0 * np.where(v <= 0.0031308, 12.92 * v, 1.055 * np.maximum(v, 0.0) ** (1.0 / 2.4) - 0.055)


def gain_floor(white: np.ndarray) -> float:
    """The smallest gain (0-1] the frame's codes may have been scaled by after the tone curve:
    the paper white's brightest channel (``white``: ``3`` linear BGR, as
    :func:`~companion.vision.colour.white_of` gives it) over :data:`FULL_SCALE`."""
    top = float(np.max(srgb_encode(np.asarray(white, dtype=np.float64).reshape(3))))
    return float(min(max(top / FULL_SCALE, 1e-3), 1.0))


def relit(pixels: np.ndarray, white: np.ndarray, gain: float) -> np.ndarray:
    """8-bit BGR pixels (``N x 3 uint8``) decoded as if their codes had been scaled by ``gain``
    after an sRGB curve, relative to the white (``3`` linear BGR) decoded the same way, clipped
    to 0-1: ``N x 3 float32``, for :func:`~companion.vision.colour.lab_exact`."""
    table = srgb_decode(np.arange(256, dtype=np.float64) / float(gain))
    w = np.maximum(srgb_decode(srgb_encode(np.asarray(white, dtype=np.float64).reshape(3)) / float(gain)), 1e-6)
    px = np.ascontiguousarray(pixels, dtype=np.uint8).reshape(-1, 1, 3)
    if len(px) == 0:
        return np.zeros((0, 3), np.float32)
    # each channel's 256 codes decoded over the white once, then looked up (cv2.LUT): the
    # values of min(table[px] / w, 1) in float32, the same division of the same numbers
    lut = np.minimum(table[:, None] / w[None, :], 1.0).astype(np.float32).reshape(1, 256, 3)
    return cv2.LUT(px, lut).reshape(-1, 3)


def seats_under_gains(reader: MonsieurReader, plan: _SeatPlan, pix: np.ndarray, lab: np.ndarray,
                      white: np.ndarray) -> tuple[str, ...]:
    """Each seat's state (``12`` of ``"kid"`` / ``"empty"`` / ``"unknown"``) read from the plan's
    samples as the frame decodes (``lab``: ``N x 3`` of ``pix``, ``N x 3 uint8``, against
    ``white``) and, when the white leaves room for a gain (:func:`gain_floor` under
    :data:`AGREE_ABOVE`), as it decodes had its codes been scaled by that floor: a seat the two
    readings disagree on is ``"unknown"`` (see the module notes). Sets ``reader.seat_reasons``."""
    use = np.ones(len(plan.seg), dtype=bool)
    first = reader._seats_pass(plan, pix, lab, use)
    floor = gain_floor(white)
    if floor >= AGREE_ABOVE or all(s == UNKNOWN for s in first):
        return first
    why = reader.seat_reasons
    other = reader._seats_pass(plan, pix, lab_exact(relit(pix, white, floor)), use)
    out = tuple(a if a == b else UNKNOWN for a, b in zip(first, other))
    reader.seat_reasons = tuple(w if a == b else DISAGREE for w, a, b in zip(why, first, other))
    return out
