"""Checks of a die's reading from the physics and geometry of its face, beyond the pip fitter.

1. Whether a box that a die's foreground reaches beyond still holds that die's whole top face
   (:func:`face_inside_box`).

The dice reader calls a box "only part of a die" when the foreground connected to its centre
reaches well beyond it (``dice._partial``). Dice touching each other make one connected
foreground, so a die pressed against its neighbour looked partial too, and was never read (46
of the 82 dice left ``unknown`` on the held-out part of the real photo set's train split, the
labelled box given). The foreground cannot tell the two apart; the pips can. A standard die's
pips lie on a 3 x 3 grid whose spacing is a fixed share of the die's side (4.3 mm on a 16 mm
die: :data:`~companion.readers.dice.PIP_GRID_SHARE`), so the pips the crops read give the
size and place of their face: when that face lies inside the box, the box holds the whole
face, and what reaches beyond it is another die (or the die's own side), not the rest of this
die's top.

2. Whether a face the classifier alone reads as a one shows a one's pip (:func:`one_pip_seen`).
A one's single pip is the largest pip of a die (3.5 mm on a 16 mm die, 0.22 of its side; on the
real photo set's train split the blob detector measured 0.062-0.22 of the box), matte paint darker or
lighter than the face. A glint is a specular peak: a point or a streak of the light's colour,
much smaller. A dark die with red pips whose pips the reader could not see, with a glint in its
middle, was read 1 by the classifier alone; a one needs its pip.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

#: How far (a share of the box's side) the face the pips give may reach beyond the box: the
#: same loose label or soft edge the partial test allows (``dice.PARTIAL_MARGIN``).
FACE_MARGIN = 0.15


def face_inside_box(box: Sequence[float], found: Sequence[np.ndarray], grid_share: float,
                    spans: dict[int, float], margin: float = FACE_MARGIN) -> bool:
    """Does every crop's pip pattern give a top face that lies inside ``box``?

    For a crop's ``n`` pips (n >= 2), the grid's unit (px) is their largest pairwise distance
    over the face layout's span in grid units (``spans[n]``, e.g. 2 sqrt 2 for a five's
    diagonal); the face is the square centred on the pips' centroid whose side is that unit
    over ``grid_share`` (the grid spacing as a share of the die's side). It must lie inside
    ``box`` grown by ``margin`` of the box's side. A single pip (a one) gives no size: its
    face's pip must lie within the box's central third (the pip reader already asks for a
    pattern centred on the box); the classifier must agree, as for any value.

    Args:
        box: ``(x0, y0, x1, y1)`` frame px.
        found: per crop that read the value, its pips' centres (``n x 2 float`` frame px), as
            ``DiceReader.pip_evidence`` gives them; empty: no face, False.
        grid_share: the pip grid's spacing as a share of a die's side (0.27 on standard dice).
        spans: ``{n: span}`` the largest pip distance of face ``n`` in grid units (n = 2..6).
        margin: share of the box's side the face may reach beyond it.

    Returns:
        True when every crop's face lies inside the box.
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    side = max(x1 - x0, y1 - y0)
    if not found or side <= 0:
        return False
    t = margin * side
    for pts in found:
        pts = np.asarray(pts, float)
        n = len(pts)
        if n == 0:
            return False
        c = pts.mean(0)
        if n == 1:
            if abs(c[0] - (x0 + x1) / 2) > (x1 - x0) / 6 or abs(c[1] - (y0 + y1) / 2) > (y1 - y0) / 6:
                return False
            continue
        far = max(float(np.hypot(*(a - b))) for a, b in itertools.combinations(pts, 2))
        half = far / spans[n] / grid_share / 2
        if c[0] - half < x0 - t or c[0] + half > x1 + t or c[1] - half < y0 - t or c[1] + half > y1 + t:
            return False
    return True


#: A one's pip, as a share of the box's width: at least this. Nominal 0.22 of a die's side; the
#: blob detector measured 0.062-0.22 on the real train split's ones (the labelled box takes in
#: the side faces seen in perspective), a glint read as a one 0.048.
ONE_PIP_MIN = 0.06
#: ... and within this share of the width from the box's centre (the pip reader's own bound).
ONE_PIP_CENTRE = 0.22


def one_pip_seen(candidates: Sequence[tuple[np.ndarray, float]], width: int) -> bool:
    """Is one of the pip reader's candidate blobs a one's pip: at least :data:`ONE_PIP_MIN` of
    the patch's width across, within :data:`ONE_PIP_CENTRE` of it from the centre?

    Args:
        candidates: ``(centre xy px, diameter px)`` per round blob of the patch's pip maps
            (``dice._pip_candidates``), the patch being the box resampled ``width`` px wide.
        width: the patch's width, px.

    Returns:
        True when such a blob is there.
    """
    for xy, d in candidates:
        if d >= ONE_PIP_MIN * width and np.hypot(xy[0] - width / 2, xy[1] - width / 2) <= ONE_PIP_CENTRE * width:
            return True
    return False


#: A one's pip seen by its colour alone (:func:`one_colour_pip_seen`): at least this share of the
#: box's width across. Nominal 0.22 of a die's side; the box may take in the die's sides seen in
#: perspective (up to 1.4 times the face here), and the blob detector measures a pip a little
#: under its painted size: 0.12 is about half a one's pip's nominal area.
ONE_PIP_COLOUR_MIN = 0.12


def colour_map(patch: np.ndarray) -> np.ndarray:
    """Each pixel's colour distance from the die face's colour, lightness left out.

    The chroma plane (OpenCV 8-bit Lab ``a``, ``b``) distance from the median ``a``, ``b`` of the
    patch's central half (the face, pips being a minority there). A glint or a white swirl in a
    marbled die is the light's colour (no chroma) and does not show here; a painted pip of a
    colour (red pips on a black or blue die) does, however dark it is.

    Args:
        patch: ``h x w x 3 uint8, BGR``, one die centred.

    Returns:
        ``h x w float32``, OpenCV 8-bit Lab units.
    """
    import cv2

    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB)
    h, w = lab.shape[:2]
    core = lab[h // 4: 3 * h // 4, w // 4: 3 * w // 4].reshape(-1, 3)
    if len(core) == 0:
        core = lab.reshape(-1, 3)
    a0, b0 = (float(np.median(core[:, k])) for k in (1, 2))
    return np.hypot(lab[..., 1].astype(np.float32) - a0, lab[..., 2].astype(np.float32) - b0).astype(np.float32)


def one_colour_pip_seen(candidates: Sequence[tuple[np.ndarray, float]], width: int) -> bool:
    """Does the colour map (:func:`colour_map`) show a one's pip: exactly one round blob on
    the patch, at least :data:`ONE_PIP_COLOUR_MIN` of its width across and within
    :data:`ONE_PIP_CENTRE` of it from the centre? A die whose pips the classifier alone reads
    as a one, seen with a white swirl or glint around its pip, shows that pip here alone; a
    three or a five of coloured pips shows its other pips too, and is no one.

    Args:
        candidates: ``(centre xy px, diameter px)`` per round blob of the patch's colour map
            (``dice._pip_candidates``), the patch being the box resampled ``width`` px wide.
        width: the patch's width, px.

    Returns:
        True when exactly one blob is there and it is a one's pip.
    """
    if len(candidates) != 1:
        return False
    (xy, d), = candidates
    return bool(d >= ONE_PIP_COLOUR_MIN * width
                and np.hypot(xy[0] - width / 2, xy[1] - width / 2) <= ONE_PIP_CENTRE * width)

