"""The Monsieur Carrousel white reference when a colour cast clips one channel of the paper.

The reader's white is the fixed markers' paper (236/255 printed, neutral), and every seat rule
is a ratio against it (von Kries, per channel). A colour cast (a white balance gone wrong, a
lamp far from the one the camera was set for) scales each channel by its own gain; a strong
one pushes one channel of the paper past the sensor's top while the others stay below it. The
paper then reads, in that channel, only as bright as full scale: the white is too dark there,
every pixel divided by it too strong in that channel, and the pale tokens lose their paleness
(a blue cast of x1.35 made a lilac token read as its purple seat's print, monsieur_003 seat
11, ``empty``, truth a kid).

The paper's colour is still seen where it is not clipped: along each marker's edge the lens
mixes the paper with the black square, in linear light, ``a * paper + (1 - a) * black``, and
the black (14/255, linear 0.004 against the paper's 0.84) hardly adds. So in the mixed pixels
whose channels are all below clipping, the clipped channel over an unclipped one is the
paper's own ratio, whatever the mix ``a`` (for a cast applied in linear light, before the tone
curve; a cast applied to the codes makes the ratio vary with the level, and JPEG's halved
chroma pulls the mixes next to the clipped paper down). Rather than trust one estimate the
seats are read twice, against the white as measured (the clipped channel at full scale: the
least it can be) and against the white with that channel raised to the mixed pixels' 90th
percentile ratio times :data:`CLIP_HEADROOM` (JPEG's chroma bias: the most it is assumed to
be), at every corner of the box the clipped channels span, and a seat is read only where both agree (as
``monsieur_tone`` does for a gain after the tone curve). With no unclipped channel (the whole
paper clipped) or too few mixed pixels nothing changes.

Source: ``shared/data/monsieur-table/README.md`` (the markers' paper 236/255 and black 14/255
around the 36 mm square).
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from companion.vision.colour import _LUT, CLIPPED, lab_exact, srgb_to_linear
from companion.vision.monsieur_die import white_relative
from companion.vision.monsieur_tone import seats_under_gains

__all__ = ["corner_whites", "die_under_clipped_white", "edge_blur_px", "glyph_mixes_as_glyph", "seats_guarded", "seats_under_clipped_white", "white_upper_bound"]

#: mixed pixels need this many codes in the unclipped reference channel (below it the noise and
#: the black's share scatter the ratio)
MIN_MIX_CODE = 25
#: mixed pixels needed for the ratio
MIN_MIX_PIXELS = 20
#: a channel of the white whose paper's median code is at least this is saturated (a clipped
#: flat paper decodes at 254-255 through JPEG; a median a few codes below the top is the
#: paper's own value, right within a few per cent)
SATURATED = 253
#: the ratio's bound: this percentile of the mixed pixels' ratios (a camera that applies the
#: cast after its tone curve, on the codes, gives ratios that vary with the mix's level)
BOUND_PERCENTILE = 90.0
#: the die's status when the two whites read it differently
DIE_DISAGREE = "the die reads otherwise with the paper's clipped channel as bright as its edges say (a colour cast)"
#: ASSUMED: the upper end of a clipped channel is the markers' edge mixes' ratio times this.
#: The mixes alone underestimate it under JPEG: its chroma, halved in resolution, averages each
#: edge pixel's colour with the black square's and the clipped paper's (the x 1.35 blue cast on
#: monsieur_003's codes: 1.1 against about 1.5; a rendered x 1.4 frame's green: 1.27 against
#: 1.78, both linear, a ratio of 1.36-1.40)
CLIP_HEADROOM = 1.5
#: the reason of a seat the two whites read differently
DISAGREE = "read otherwise with the paper's clipped channel as bright as its edges say (a colour cast)"


#: the last registration's marker-edge pixels of :func:`white_upper_bound` (registration, the
#: frame's shape and the sampling, the markers, the flat pixel indices): a stream keeps its
#: registration from frame to frame, and the pixels with it
_EDGE_PIXELS: list[tuple] = []


def white_upper_bound(frame: np.ndarray, reg, markers: dict[int, np.ndarray], white: np.ndarray,
                      code: np.ndarray, square_mm: float, step_mm: float = 0.5) -> np.ndarray | None:
    """The brightest the white may be in the paper's clipped channels, from the markers' edges.

    Args:
        frame: ``H x W x 3 uint8`` BGR.
        reg: the fixed markers' :class:`~companion.vision.registration.Registration`
            (``marker_ids``, ``to_image``).
        markers: each fixed marker's corners on the board (``4 x 2`` mm), by id.
        white: ``3`` linear BGR, the paper's median (the reader's white).
        code: ``3`` the paper's median 8-bit codes.
        square_mm: the marker's black square's side (mm): the samples span it and 2 mm of
            paper around it (inside the paper's 4 mm margin: its outer edge mixes with the
            board's print, not with the black).
        step_mm: the samples' spacing on the board (mm).

    Returns:
        ``3 float32`` linear BGR, ``white`` with each clipped channel (code at least
        :data:`SATURATED`) raised to the unclipped brightest channel's
        white times the :data:`BOUND_PERCENTILE` percentile of the mixed pixels' ratio times
        :data:`CLIP_HEADROOM` (never below its measured value); None when no channel is
        saturated (:data:`SATURATED`), all are, or fewer than :data:`MIN_MIX_PIXELS` mixed
        pixels are found.
    """
    white = np.asarray(white, dtype=np.float32).reshape(3)
    code = np.asarray(code, dtype=np.float64).reshape(3)
    clipped = code >= SATURATED
    if not clipped.any() or clipped.all():
        return None
    ref = int(np.argmax(np.where(clipped, -1.0, code)))
    h, w = frame.shape[:2]
    key = (tuple(reg.marker_ids), (h, w), float(square_mm), float(step_mm))
    kept = _EDGE_PIXELS[0] if _EDGE_PIXELS else None
    if kept is not None and kept[0] is reg and kept[1] == key and kept[2] is markers:
        idx = kept[3]  # (a stream's frame of the same registration: the same pixels)
    else:
        half = square_mm / 2.0 + 2.0
        u = np.arange(-half, half + 1e-9, step_mm)
        xx, yy = np.meshgrid(u, u)
        grid = np.stack([xx.ravel(), yy.ravel()], axis=1)
        pts = np.concatenate([np.asarray(markers[i], dtype=np.float64).mean(axis=0) + grid for i in reg.marker_ids])
        px = np.rint(reg.to_image(pts)).astype(np.int64)
        ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)
        idx = np.unique(px[ok, 1] * w + px[ok, 0])
        _EDGE_PIXELS[:] = [(reg, key, markers, idx)]
    pix = np.take(frame.reshape(-1, 3), idx, axis=0)
    lin = srgb_to_linear(pix).reshape(-1, 3)
    mixed = (pix.max(axis=1) < CLIPPED) & (pix[:, ref] >= MIN_MIX_CODE)
    if int(mixed.sum()) < MIN_MIX_PIXELS:
        return None
    out = white.copy()
    for c in np.flatnonzero(clipped):
        ratio = float(np.percentile(lin[mixed, c] / lin[mixed, ref], BOUND_PERCENTILE))
        out[c] = max(float(white[c]), float(white[ref]) * ratio * CLIP_HEADROOM)
    return out


def corner_whites(white: np.ndarray, white_hi: np.ndarray) -> list[np.ndarray]:
    """The whites at the corners of the box between ``white`` and ``white_hi`` (``3`` linear
    BGR each) other than ``white`` itself: each non-empty subset of the raised channels at its
    upper end (one channel clipped: 1 white; two: 3). The seats' and the die's evidence moves
    one way with each channel's scale, but two raised together can cancel (a blue and a green
    both raised keep a lilac's balance of blue to green): every corner is read."""
    white = np.asarray(white, dtype=np.float32).reshape(3)
    white_hi = np.asarray(white_hi, dtype=np.float32).reshape(3)
    raised = [c for c in range(3) if white_hi[c] > white[c]]
    out = []
    for mask in range(1, 1 << len(raised)):
        w = white.copy()
        for b, c in enumerate(raised):
            if mask >> b & 1:
                w[c] = white_hi[c]
        out.append(w)
    return out


def seats_under_clipped_white(reader, plan, pix: np.ndarray, lab: np.ndarray, white: np.ndarray,
                              white_hi: np.ndarray) -> tuple[str, ...]:
    """Each seat's state (``12`` of ``"kid"`` / ``"empty"`` / ``"unknown"``) read against the
    measured ``white`` and against every corner white up to ``white_hi``
    (:func:`white_upper_bound`, :func:`corner_whites`), each with
    :func:`~companion.vision.monsieur_tone.seats_under_gains`; a seat any two read differently
    is ``"unknown"``. ``pix``: the plan's samples, ``N x 3 uint8``; ``lab``: their ``N x 3``
    L*a*b* against ``white``. Sets ``reader.seat_reasons``."""
    first = seats_under_gains(reader, plan, pix, lab, white)
    why = reader.seat_reasons
    out = list(first)
    for w in corner_whites(white, white_hi):
        if all(s == "unknown" for s in out):
            break
        other = seats_under_gains(reader, plan, pix, lab_exact(white_relative(pix, w)), w)
        for k, (a, b) in enumerate(zip(out, other)):
            if a != b:
                out[k] = "unknown"
    reader.seat_reasons = tuple(w if a == b else DISAGREE for w, a, b in zip(why, first, out))
    return tuple(out)


# ---------------------------------------------------------------------- lens blur

#: the markers' edge blur (Gaussian sigma, pixels) of the two photographs the seat rules' glyph
#: lightness was set on (monsieur_030 0.63, monsieur_045 0.65, by :func:`edge_blur_px`)
CALIBRATED_EDGE_SIGMA_PX = 0.65
#: a frame blurred beyond this many times the calibrated sigma (an extra lens blur of sigma
#: 0.5 px in quadrature) is read also as if its glyph-print mixes were the glyph
BLUR_GUARD = 1.25
#: the reason of a seat read differently when its blurred glyph's mixes are taken as glyph
BLURRED = "read otherwise were its blurred glyph's mix with the print the glyph (a lens blur)"


#: each fixed marker's edge points and those points a millimetre out (:func:`_edge_points`), by
#: the marker's id and corners (the board's markers do not change from frame to frame)
_EDGE_POINTS: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray]] = {}


#: the sRGB decoding table (:data:`~companion.vision.colour._LUT`) for the three channels of
#: ``cv2.LUT`` (``1 x 256 x 3 float32``)
_LUT3 = np.ascontiguousarray(np.repeat(_LUT.reshape(256, 1), 3, axis=1).reshape(1, 256, 3))


def _edge_points(marker_id: int, corners_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of :func:`edge_blur_px`'s profiles on one marker (``28 x 2`` board mm: its four
    outer edges, 7 each from 20 to 80 % along) and the same points moved 1 mm along each
    edge's outward normal (``28 x 2``), for the marker's ``corners_mm`` (``4 x 2``, OpenCV's
    order); worked out once per marker and kept (the same values every frame)."""
    c = np.asarray(corners_mm, dtype=np.float64)
    key = (int(marker_id), c.tobytes())
    got = _EDGE_POINTS.get(key)
    if got is None:
        d = np.roll(c, -1, axis=0) - c  # the four edges
        nrm = np.stack([d[:, 1], -d[:, 0]], axis=1) / np.linalg.norm(d, axis=1, keepdims=True)
        along = np.linspace(0.2, 0.8, 7)
        p = (c[:, None, :] + d[:, None, :] * along[None, :, None]).reshape(-1, 2)
        got = (p, p + np.repeat(nrm, len(along), axis=0))
        for a in got:
            a.flags.writeable = False
        if len(_EDGE_POINTS) >= 64:
            _EDGE_POINTS.clear()
        _EDGE_POINTS[key] = got
    return got


def edge_blur_px(frame: np.ndarray, reg, markers: dict[int, np.ndarray], half_px: float = 3.0,
                 step_px: float = 0.25) -> float | None:
    """The frame's blur as a Gaussian's sigma (pixels) from the fixed markers' black-to-paper
    edges.

    Profiles across each registered marker's four outer edges (7 each, 20-80 % along it),
    ``half_px`` either side, are sampled (bilinear) in linear grey light; a step of contrast
    ``A`` blurred by a Gaussian of sigma ``s`` has a steepest slope ``A / (s sqrt(2 pi))``, so
    each profile gives ``s = A / (sqrt(2 pi) max slope)`` (the slope smoothed over 3 samples);
    the median over profiles of contrast 0.1 or more. It includes the pixels' own and the
    sampling's spread (0.6-0.7 px on the photographs).

    Args:
        frame: ``H x W x 3 uint8`` BGR.
        reg: the fixed markers' registration (``marker_ids``, ``to_image``).
        markers: each fixed marker's corners on the board (``4 x 2`` mm), by id.
        half_px, step_px: the profiles' half length and spacing (pixels).

    Returns:
        sigma in pixels (float), or None with fewer than 8 profiles of enough contrast.
    """
    t = np.arange(-half_px, half_px + 1e-9, step_px)
    h, w = frame.shape[:2]
    ids = list(reg.marker_ids)
    if not ids:
        return None
    # each marker's edge points and those a millimetre out through the registration (a call
    # per marker and set, as ever), then every marker's profiles at once, a coordinate at a
    # time (the same values: numpy broadcasts over a last axis of 2 slowly)
    q0, q1 = [], []
    for i in ids:
        p, p_out = _edge_points(i, markers[i])
        q0.append(reg.to_image(p))
        q1.append(reg.to_image(p_out))
    q0 = np.stack(q0)  # markers x profiles x 2
    n_img = np.stack(q1) - q0
    n_img /= np.maximum(np.linalg.norm(n_img, axis=2, keepdims=True), 1e-9)
    px = q0[:, :, 0, None] + t[None, None, :] * n_img[:, :, 0, None]  # markers x profiles x samples
    py = q0[:, :, 1, None] + t[None, None, :] * n_img[:, :, 1, None]
    lo_x = (np.floor(px.reshape(len(ids), -1).min(axis=1)).astype(int) - 1).tolist()
    lo_y = (np.floor(py.reshape(len(ids), -1).min(axis=1)).astype(int) - 1).tolist()
    hi_x = (np.ceil(px.reshape(len(ids), -1).max(axis=1)).astype(int) + 2).tolist()
    hi_y = (np.ceil(py.reshape(len(ids), -1).max(axis=1)).astype(int) + 2).tolist()
    vals = []
    for m, (x0, y0, x1, y1) in enumerate(zip(lo_x, lo_y, hi_x, hi_y)):
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
            continue  # (a marker at the frame's edge: its profiles would leave the frame)
        # only the marker's own crop is taken to linear grey light
        # (srgb_to_linear(crop).mean(axis=2, dtype=np.float32)'s values: numpy sums the three
        # channels in turn, then divides by 3 in float32; the channels' light by one look-up)
        lin3 = cv2.LUT(frame[y0:y1, x0:x1], _LUT3)
        lin = (lin3[..., 0] + lin3[..., 1]) + lin3[..., 2]
        lin /= np.float32(3)
        vals.append(cv2.remap(lin, (px[m] - x0).astype(np.float32), (py[m] - y0).astype(np.float32),
                              cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=-1.0))
    if not vals:
        return None
    v = np.concatenate(vals)
    inside = (v >= 0).all(axis=1)
    contrast = np.abs(v[:, -3:].mean(axis=1) - v[:, :3].mean(axis=1))
    slope = np.abs(np.diff(v, axis=1)) / step_px
    slope = (slope[:, :-2] + slope[:, 1:-1] + slope[:, 2:]) / 3.0
    ok = inside & (contrast >= 0.1)
    if int(ok.sum()) < 8:
        return None
    return float(np.median(contrast[ok] / (np.sqrt(2.0 * np.pi) * slope[ok].max(axis=1))))


def glyph_mixes_as_glyph(plan, lab: np.ndarray, kid_chromaticity: float, cos_hue: float, parts: int) -> np.ndarray:
    """``lab`` (``N x 3``, the plan's samples) with every middle and head sample that could be
    the seat's blurred glyph set to the glyph (L* a* b* 0): pale (chroma under
    ``kid_chromaticity`` of its lightness), of the seat's print hue (within the tolerance,
    ``cos_hue``; chroma 6 or more) and no lighter than the median of its seat's clear ring (the
    print's local light: a mix of the dark glyph and the print lies between them). A token's
    pale colour passes too where it is as dark as the print (its shade): the pass with these
    as glyph can only find less of a token, so agreeing with it only turns readings unknown."""
    seg = plan.seg
    part = seg % parts
    seat = seg // parts
    light = lab[:, 0]
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    n = int(seat.max()) + 1 if len(seat) else 0
    ring = part == 0
    ring_l = np.full(n, -np.inf)
    for k in np.unique(seat[ring]):
        ring_l[k] = float(np.median(light[ring & (seat == k)]))
    along = lab[:, 1] * plan.unit[:, 0] + lab[:, 2] * plan.unit[:, 1]
    mix = (((part == 1) | (part == 2)) & (chroma < kid_chromaticity * light) & (chroma >= 6.0)
           & (along >= cos_hue * chroma) & (light <= ring_l[seat]))
    out = np.array(lab, dtype=np.float32, copy=True)
    out[mix] = 0.0
    return out


def seats_guarded(reader, plan, pix: np.ndarray, lab: np.ndarray, white: np.ndarray, white_hi: np.ndarray | None,
                  sigma_px: float | None, parts: int) -> tuple[str, ...]:
    """Each seat's state (``12`` of ``"kid"`` / ``"empty"`` / ``"unknown"``) read only where every
    reading of the doubts that apply agrees: against both ends of a clipped white
    (:func:`seats_under_clipped_white`, with ``white_hi``), and, for a frame blurred beyond
    :data:`BLUR_GUARD` times :data:`CALIBRATED_EDGE_SIGMA_PX` (``sigma_px``, from
    :func:`edge_blur_px`), with the blurred glyph's mixes taken as glyph
    (:func:`glyph_mixes_as_glyph`). ``pix``: the plan's samples, ``N x 3 uint8``; ``lab``: their
    L*a*b* against ``white``; ``parts``: sample parts per seat. Sets ``reader.seat_reasons``."""
    if white_hi is not None:
        first = seats_under_clipped_white(reader, plan, pix, lab, white, white_hi)
    else:
        first = seats_under_gains(reader, plan, pix, lab, white)
    if sigma_px is None or sigma_px < BLUR_GUARD * CALIBRATED_EDGE_SIGMA_PX or all(s == "unknown" for s in first):
        return first
    why = reader.seat_reasons
    mixed = glyph_mixes_as_glyph(plan, lab, reader.kid_chromaticity, reader.cos_hue, parts)
    other = reader._seats_pass(plan, pix, mixed, np.ones(len(plan.seg), dtype=bool))
    reader.seat_reasons = tuple(w if a == b else BLURRED for w, a, b in zip(why, first, other))
    return tuple(a if a == b else "unknown" for a, b in zip(first, other))


def die_under_clipped_white(die_reader, frame: np.ndarray, cam, angle: float, white: np.ndarray,
                            white_hi: np.ndarray | None):
    """The die's :class:`~companion.vision.monsieur_die.DieReading` against the measured
    ``white`` (``3`` linear BGR) and, with ``white_hi`` (:func:`white_upper_bound`, or None),
    against every corner white up to it (:func:`corner_whites`): a colour any of them reads
    differently is ``"unknown"`` with :data:`DIE_DISAGREE` (a green cast clipping the paper's
    green read a yellow top green). ``die_reader``: the reader's
    :class:`~companion.vision.monsieur_die.DieReader`; ``frame``, ``cam``, ``angle``: as it
    takes them."""
    first = die_reader.read(frame, cam, angle, white)
    if white_hi is None or first.colour == "unknown":
        return first
    for w in corner_whites(white, white_hi):
        if die_reader.read(frame, cam, angle, w).colour != first.colour:
            return dataclasses.replace(first, colour="unknown", status=DIE_DISAGREE)
    return first
