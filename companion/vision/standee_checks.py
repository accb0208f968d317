"""Checks that a Carrossel tile's "standee" is a standee: a painted figure of known size on the
tile's centre, not a hand's fingers or a letter that noise or JPEG made unclear.

Used by :meth:`companion.vision.carrossel.CarrosselReader._standees` once its own tests (an even
middle, the rim hidden where the body leans) have passed:

* **The letter is hidden.** The body (radius 6 mm at its foot, README "Client standees") stands
  on the tile's centre (within 1.2 mm of the cell's) and the 10 mm letter lies within 5 mm of
  it, so from any camera the body hides the whole letter. A disc whose letter still matches its
  template as well as the reader asks of a letter it reads (``LETTER_MIN``) shows that letter:
  it is no standee's (noise, JPEG or a zoom only blurred the margin over the second letter).
* **The paint stays on the figure.** A standee is 12 mm across: seen from any camera height of
  the table (``STANDEE_CAMERA_HEIGHTS_MM``) its paint lies inside the region
  :meth:`~companion.vision.carrossel.CarrosselReader.standee_mask` gives (widened for the tile's
  placement and the registration's error). The tile's corners outside that region show the
  tile's print. A hand is larger than the figure: its fingers and arm reach past the region to
  the tile's edge, so the corners show the colour found in the disc's middle.
  :func:`paint_beyond` measures the share of the visible corners nearer the middle's colour than
  the tile's own (and near it); more than :data:`PAINT_BEYOND_MAX` is a hand.
"""

from __future__ import annotations

import numpy as np

#: the share of the corners outside the standee's region (widened by :data:`REGION_GROW_MM`)
#: that may show the middle's colour: a sample in ten (the corners are 1.5 mm apart: a band one
#: sample wide along a region edge blurred by a pixel). Measured: the 20 photographs' standees
#: 0-0.12 (median 0, 95 % under 0.05); skin blobs and fingers over a tile 0.14-0.49
PAINT_BEYOND_MAX = 0.1
#: the region the figure may cover is widened by this (mm): the tile's placement (1.2 mm) and
#: the registration's error (about 1 px, 0.8 mm)
REGION_GROW_MM = 2.0
#: a corner sample is the middle's colour when its distance to it (CIE76 with L* weighted by
#: :data:`L_WEIGHT`: shading moves lightness more than hue) is under :data:`NEAR_DELTA_E` and
#: under its distance to the tile's reference colour
NEAR_DELTA_E = 12.0
L_WEIGHT = 0.5


def _distance(lab: np.ndarray, ref: np.ndarray) -> np.ndarray:
    d = np.asarray(lab, dtype=np.float64) - np.asarray(ref, dtype=np.float64)[..., None, :]
    d[..., 0] *= L_WEIGHT
    return np.sqrt(np.square(d).sum(axis=-1))


def paint_beyond(corner_lab: np.ndarray, visible: np.ndarray, middle_lab: np.ndarray,
                 tile_lab: np.ndarray) -> np.ndarray:
    """Per tile, the share of its visible corners (outside the standee's region) of the disc
    middle's colour: a hand's skin reaching past the figure's footprint (module docstring).

    Args:
        corner_lab: ``n x m x 3`` CIE L*a*b* of the tiles' corner samples (against the white).
        visible: ``n x m bool``: the corners outside the region a standee may cover (and in the
            frame, unclipped).
        middle_lab: ``n x k x 3`` Lab of the disc's middle (where a standee always is).
        tile_lab: ``n x 3``: the reference Lab of each tile's read colour.

    Returns:
        ``n float64`` shares 0-1 (0 where no corner is visible).
    """
    paint = np.median(np.asarray(middle_lab, dtype=np.float64), axis=1)  # n x 3
    d_paint = _distance(corner_lab, paint)
    d_tile = _distance(corner_lab, tile_lab)
    vis = np.asarray(visible, dtype=bool)
    near = (d_paint < NEAR_DELTA_E) & (d_paint < d_tile) & vis
    n = vis.sum(axis=1)
    return np.where(n > 0, near.sum(axis=1) / np.maximum(n, 1), 0.0)
