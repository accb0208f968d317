"""The Monsieur Carrousel white reference when some markers' paper is clipped.

The reader's white is the fixed markers' paper margins (236/255 printed). Under a bright lamp
the exposure can push the paper of the markers in the most light past the sensor's top (255),
while a marker in less light (the lamp's fall-off, the lens's vignetting) keeps its paper
below it. A clipped paper says only that the white is at least that bright; an unclipped one
is a measurement of the white's colour. So the markers whose paper's median is clipped (its
smallest channel at or above :data:`companion.vision.colour.CLIPPED`) are left out whenever
another marker's paper is not: the reference is then that marker's paper, and the colour check
sees it unclipped. The seats' tests are ratios (chroma / lightness, hue, lightness against the
seat's own print on its ring), so a white a little darker than the brightest light's changes
none of them; clipped pixels on the seats are left out by the reader as before. With every
marker's paper clipped nothing changes (the colour check refuses the frame).

Source: ``shared/data/monsieur-table/README.md`` (the markers' paper, 236/255).
"""

from __future__ import annotations

import numpy as np

from companion.vision.colour import CLIPPED

__all__ = ["unclipped_papers"]


def unclipped_papers(pix: np.ndarray, marker: np.ndarray, min_pixels: int = 10) -> np.ndarray:
    """The paper pixels of the markers whose paper is not clipped, when there is one.

    Args:
        pix: ``N x 3 uint8`` the markers' paper pixels (BGR).
        marker: ``N`` int, which marker each pixel belongs to (any labels).
        min_pixels: a marker needs this many pixels to count as unclipped.

    Returns:
        ``M x 3 uint8``: ``pix`` itself when no marker's paper is clipped or all are, else only
        the unclipped markers' pixels.
    """
    if len(pix) == 0:
        return pix
    low = np.minimum(np.minimum(pix[:, 0], pix[:, 1]), pix[:, 2])  # (numpy reduces a short axis slowly)
    labels = np.unique(marker)
    clipped = []
    for m in labels:
        sel = np.sort(low[marker == m])
        # its median (the middle value, or the two middle ones' mean) at least CLIPPED
        clipped.append(len(sel) < min_pixels or int(sel[(len(sel) - 1) // 2]) + int(sel[len(sel) // 2]) >= 2 * CLIPPED)
    clipped_arr = np.array(clipped)
    if not clipped_arr.any() or clipped_arr.all():
        return pix
    keep = np.isin(marker, labels[~clipped_arr])
    return pix[keep]
