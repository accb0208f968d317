"""Skin over the table: what a hand looks like to the readers, shared by the Carrossel and the
Monsieur Carrousel readers.

A hand is not the table's print. Two things of the physics of a frame tell them apart, and the
readers use them to say ``unknown`` where a hand's skin would otherwise pass for the print:

* **Hue survives brightness.** A surface is read against the markers' paper white (von Kries:
  each channel's linear light over the white's); a print on the table is under the same light as
  that paper, so its white-relative light is at most about 1 in every channel. A hand is nearer
  the lamp than the table and, in a dim frame, its skin can be brighter than the paper in every
  channel: the readers' tables clip white-relative light to 1, and a pixel brighter than the
  white in all three channels then reads L* 100, a* = b* = 0, i.e. *white print*. Scaled down to
  the white's brightness instead (each pixel divided by its largest white-relative channel when
  that is over 1) its chromaticity, hence its hue and chroma, are kept (:func:`unclipped_lab`).
* **Skin is warm and moderately saturated.** Human skin of every tone lies in a narrow band of
  CIELAB hue, orange-red to yellow-orange (h_ab about 25-75 degrees, a* 5-20, b* 10-30 for skin
  under a neutral white: Xiao et al., "Characterising the variations in ethnic skin colours",
  Color Res. Appl. 2017; the melanin/haemoglobin absorption spectra), chroma 10-35 whatever its
  lightness (:func:`skin_like`). The table's prints that share that hue are far more saturated
  (the tiles' red and yellow, chroma 60 and more nominal) or neutral (the white and cream print,
  ink). (The Carrossel reader uses the first point; :func:`skin_like` is not yet used by a
  reader: natural wood, a standee's and a token's paint, lies in the same hue band.)

Source of the hand's look in the project's test sets: the path-traced photographs' hands
(``shared/data/*/README.md``, four skin tones) and the blobs of the attacker's transforms
(skin sRGB (214, 166, 132), (236, 200, 180), (120, 82, 60)).
"""

from __future__ import annotations

import numpy as np

from companion.vision.colour import CLIPPED, lab_fast, srgb_to_linear

#: the hue band of skin (degrees of CIELAB h_ab against the paper white) and its chroma band
#: (module docstring: Xiao et al. 2017; a* 5-20, b* 10-30 gives h 27-80, C 11-36)
SKIN_HUE_DEG = (20.0, 80.0)
SKIN_CHROMA = (9.0, 40.0)


def unclipped_lab(px_bgr: np.ndarray, white: np.ndarray) -> np.ndarray:
    """CIE L*a*b* of pixels against the white, their hue kept where brighter than the white.

    Each pixel's white-relative linear light (``srgb_to_linear(px) / white``) is divided by its
    largest channel when that is over 1 (a surface brighter than the white: a hand nearer the
    lamp, a glint), so its chromaticity is kept instead of being clipped to white.

    Args:
        px_bgr: ``... x 3 uint8`` BGR pixels (any leading shape).
        white: ``3`` linear BGR of the markers' paper (``colour.white_of``).

    Returns:
        ``... x 3 float32`` L*, a*, b* (L* at most 100).
    """
    px = np.asarray(px_bgr, dtype=np.uint8)
    shape = px.shape
    rel = srgb_to_linear(px.reshape(-1, 3)).astype(np.float32) / np.maximum(
        np.asarray(white, dtype=np.float32).reshape(1, 3), 1e-4)
    top = rel.max(axis=1, keepdims=True)
    rel /= np.maximum(top, 1.0)
    # one vectorised conversion: within colour.LAB_FAST_ERROR (0.01) of the exact Lab, far
    # below the margins the readers' bounds on these values leave
    return lab_fast(rel).reshape(shape[:-1] + (3,))


def median_chroma(px_bgr: np.ndarray, white: np.ndarray, use: np.ndarray | None = None,
                  brighter_only: bool = False) -> np.ndarray:
    """Per row of pixels, the CIE Lab chroma of the median a* and median b* of the pixels used
    (:func:`unclipped_lab`: the hue of a hand brighter than the white is kept).

    Pixels clipped by the sensor (every channel at least ``colour.CLIPPED``) carry no hue and
    are left out, as are those with ``use`` False; with ``brighter_only``, only the pixels
    brighter than the white in every channel are used (those a table clipped to 1 reads as the
    white itself, whatever their hue); a row with no pixel left has chroma 0.

    Args:
        px_bgr: ``n x m x 3 uint8`` BGR, one region a row.
        white: ``3`` linear BGR of the white reference.
        use: ``n x m bool`` pixels to use (default all).

    Returns:
        ``n float64`` chroma.
    """
    px = np.asarray(px_bgr, dtype=np.uint8)
    if px.size == 0:
        return np.zeros(px.shape[0] if px.ndim == 3 else 0)
    lab = unclipped_lab(px, white).astype(np.float64)
    ok = ~np.all(px >= CLIPPED, axis=-1)
    if use is not None:
        ok &= np.asarray(use, dtype=bool)
    if brighter_only:
        ok &= brighter_than_white(px, white)
    return np.hypot(_row_median(lab[..., 1], ok), _row_median(lab[..., 2], ok))


def _row_median(values: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Each row's median of the values where ``use`` (0 for a row with none): one sort with
    the unused values last (numpy's nanmedian is many times slower on short rows)."""
    v = np.sort(np.where(use, values, np.inf), axis=1)
    n = use.sum(axis=1)
    lo = np.maximum((n - 1) // 2, 0)[:, None]
    hi = np.maximum(n // 2, 0)[:, None]
    med = 0.5 * (np.take_along_axis(v, lo, axis=1) + np.take_along_axis(v, hi, axis=1))[:, 0]
    return np.where(n > 0, med, 0.0)


def brighter_than_white(px_bgr: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Which pixels are brighter than the white in every channel (white-relative linear light
    over 1 in B, G and R): a table clipped to 1 reads them as the white itself.

    Args:
        px_bgr: ``... x 3 uint8`` BGR; white: ``3`` linear BGR.

    Returns:
        ``...`` bool.
    """
    px = np.asarray(px_bgr, dtype=np.uint8)
    rel = srgb_to_linear(px.reshape(-1, 3)).astype(np.float32) / np.maximum(
        np.asarray(white, dtype=np.float32).reshape(1, 3), 1e-4)
    return (rel.min(axis=1) > 1.0).reshape(px.shape[:-1])


def skin_like(lab: np.ndarray) -> np.ndarray:
    """Which Lab pixels have skin's colour: hue within :data:`SKIN_HUE_DEG` and chroma within
    :data:`SKIN_CHROMA` (module docstring), against the paper white.

    Args:
        lab: ``... x 3`` L*, a*, b* (from :func:`unclipped_lab`, so a hand brighter than the
            white keeps its hue).

    Returns:
        ``...`` bool.
    """
    lab = np.asarray(lab, dtype=np.float64)
    a, b = lab[..., 1], lab[..., 2]
    hue = np.degrees(np.arctan2(b, a))
    chroma = np.hypot(a, b)
    return ((hue >= SKIN_HUE_DEG[0]) & (hue <= SKIN_HUE_DEG[1])
            & (chroma >= SKIN_CHROMA[0]) & (chroma <= SKIN_CHROMA[1]))
