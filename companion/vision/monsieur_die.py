"""The Monsieur Carrousel die's top colour, from one camera frame of the table.

The die is a cube (``die.size_mm``, 16 mm) lying flat on the fixed board outside the carousel,
each face printed in one of the seats' colours (``monsieur-board.toml`` [die], [print_srgb]).
Its top face is a square of that size in the horizontal plane at the die's height. The frame is
warped onto that plane (the camera model of :mod:`companion.vision.monsieur_geometry` gives its
homography at any height) at ``px_per_mm`` pixels a millimetre over the board's die area, so
the top face is a square of known size wherever the die lies and whatever the camera's tilt; a
print on the board (the suns, the drops) and the die's own side faces are at other heights and
come out round, stretched or of another size.

Each warped pixel is seen against the white reference (the fixed markers' paper, linear light,
von Kries) in CIE Lab and given the print colour whose hue it has (within
``hue_tolerance_deg``) when it is as saturated as a print (chroma at least ``print_share`` of
the print's for its lightness). Each colour's connected blobs are then measured: a die top is
one blob whose rotated bounding rectangle has both sides within ``size_tolerance`` of the die's
side and that fills it (``min_fill``). The die reads that colour when exactly one such blob is
found and its pixels clearly vote for it; else ``"unknown"`` with a status: no top found (the
die under a hand, off the board, or on its edge: then no face is horizontal), several, or
unclear. The board's printed suns are orange and about the size of a die's top: at this
resolution a sun's disc (its rays cut off by an opening) can pass as a square, so a candidate
where a printed sun is seen (``board.printed_suns_mm`` of the geometry) is not a die, and a
frame with two candidates reads ``"unknown"`` (the status names them). A colour that covers
much of the board (the sun half's pale yellow) is the board's print: a top of that hue must be
more saturated than it, the floor measured without the die's own most saturated pixels (else a
yellow top on the sun half is lost and its side face, another colour, is left as the only
square). A top whose colour cannot be told from a neighbouring print colour's reads
``"unknown"``: its core (less the pixels at its edge that blend with a side face; JPEG keeps
chroma at half resolution) under a 3 x 3 patch of the frame, or its median hue too near the
middle between two print hues. The carousel (disc, tokens, roof) and the figure, seen from the camera, are masked
out.

A die on its edge shows the face tilted towards the camera as a "top" and, beyond the ridge,
its other face up as a strip too thin for a blob: a band just beyond every edge of the top
that does not face the camera's foot is read for a saturated colour that is neither the top's
nor a blend of the top with the board (:meth:`DieReader._beyond_far_edge`); from above, a blob
of another colour on the camera's side larger than a flat die's side face could show is a
second face too. A printed sun is left out of these looks; where it lies where the second
face would be, the die reads ``"unknown"`` (an orange face there could not be told from it).

Sources: the table, ``shared/data/monsieur-table/README.md`` (Die: 16 mm cube lying flat, face
colours); the rulebook ``shared/rules/monsieur-carrousel.txt`` (Phase 1: the die's colours are
the carousel's colours); CIE 15:2004 (L*a*b*); OpenCV ``warpPerspective``,
``connectedComponentsWithStats``, ``minAreaRect``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import cv2
import numpy as np

from companion.vision.colour import (
    _LUT,
    CLIPPED,
    LAB_FAST_ERROR,
    UNKNOWN,
    ColourReferences,
    lab_exact,
    lab_fast,
    linear_to_lab,
)
from companion.vision.monsieur_geometry import MonsieurGeometry, TableCamera

__all__ = ["DieReader", "DieReading"]

_NUMPY2 = int(np.__version__.split(".")[0]) >= 2


def white_relative(pixels: np.ndarray, white: np.ndarray) -> np.ndarray:
    """8-bit BGR pixels (``N x 3 uint8``) as linear light over the white reference (``3``
    linear BGR), clipped to 0-1: ``N x 3 float32``, the same values :func:`linear_to_lab`
    divides (one look-up table of the 256 levels of each channel per white, ``cv2.LUT``), for
    :func:`~companion.vision.colour.lab_fast` and :func:`~companion.vision.colour.lab_exact`."""
    w = np.maximum(np.asarray(white, dtype=np.float32).reshape(3), 1e-4)
    table = np.minimum(_LUT[:, None] / w[None, :], 1.0).reshape(1, 256, 3)  # (linear light is never below 0)
    px = np.ascontiguousarray(pixels, dtype=np.uint8).reshape(-1, 1, 3)
    if len(px) == 0:
        return np.zeros((0, 3), np.float32)
    return cv2.LUT(px, table).reshape(-1, 3)


def _median(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=0)`` of finite values (``N`` or ``N x C``; ``N`` > 0): the middle
    value, or the mean of the two middle ones in the values' own type, as numpy takes them
    (``(a + b) / 2``), from one sort; without numpy's general machinery, which costs more than
    the sort for the few hundred values here."""
    v = np.sort(values, axis=0)
    n = len(v)
    if n % 2:
        return v[n // 2]
    return (v[n // 2 - 1] + v[n // 2]) / v.dtype.type(2)


#: whether :func:`_percentile90_of_least`'s arithmetic is this numpy's (checked at its first use)
_PERCENTILE_RULE: list[bool] = []


def _percentile90_rule(c: np.ndarray, keep: int) -> float:
    """numpy's linear 90th percentile of the ``keep`` least of ``c`` (``N`` float32) from the
    two order statistics around it (one partition): numpy 2 interpolates in the values' float32
    with the weight as a Python float; numpy 1.x in float64."""
    v = (keep - 1) * 0.9
    i = int(math.floor(v))
    if i >= keep - 1:
        return float(np.partition(c, keep - 1)[keep - 1])
    t = v - i
    p = np.partition(c, [i, i + 1])
    a, b = p[i], p[i + 1]
    d = b - a
    if _NUMPY2:
        return float(b - d * np.float32(1.0 - t) if t >= 0.5 else a + d * np.float32(t))
    return float(np.float64(b) - np.float64(d) * (1.0 - t) if t >= 0.5 else np.float64(a) + np.float64(d) * t)


def _percentile90_of_least(c: np.ndarray, keep: int) -> float:
    """``float(np.percentile(np.sort(c)[:keep], 90))`` (``c``: ``N`` float32, ``1 <= keep <= N``),
    its value exactly: from one partition (:func:`_percentile90_rule`) where that rule gives
    numpy's own values, checked once against ``np.percentile`` on 300 random cases (ties
    included); else by ``np.percentile`` itself. numpy's percentile costs about a tenth of a
    millisecond a call, the partition a few microseconds."""
    if not _PERCENTILE_RULE:
        rng = np.random.default_rng(12)
        ok = True
        for j in range(300):
            x = rng.gamma(2.0, 10.0, int(rng.integers(1, 3000))).astype(np.float32)
            if j % 2:
                x = np.round(x, 1)
            m = int(rng.integers(1, len(x) + 1))
            ok = ok and _percentile90_rule(x, m) == float(np.percentile(np.sort(x)[:m], 90))
        _PERCENTILE_RULE.append(ok)
    if _PERCENTILE_RULE[0] and c.dtype == np.float32:
        return _percentile90_rule(c, keep)
    return float(np.percentile(np.sort(c)[:keep], 90))


def _faint(chroma: np.ndarray, top_chroma: float) -> bool:
    """Is a blob (its pixels' C*ab, ``N`` float, NaN where masked) too faint to be a die's face:
    its median chroma under half the top's ``top_chroma`` (or no finite pixel)? A face in shade
    keeps its print's chroma for its lightness; half is the bound a second face is held to
    beside the top (:meth:`DieReader._beyond_far_edge`)."""
    c = chroma[np.isfinite(chroma)]
    return len(c) == 0 or float(_median(c)) < 0.5 * top_chroma


def clipped_pixels(pixels: np.ndarray) -> np.ndarray:
    """``N`` bool: the pixels (``N x 3 uint8``) whose every channel is at least ``CLIPPED``
    (pairwise minima: numpy reduces a short axis slowly)."""
    return np.minimum(np.minimum(pixels[:, 0], pixels[:, 1]), pixels[:, 2]) >= CLIPPED


@dataclasses.dataclass(frozen=True)
class DieReading:
    """The die in one frame.

    Attributes:
        colour: the top face's colour (a name of ``die.colours``) or ``"unknown"``.
        status: ``""`` when read, else why not.
        centre_mm: the top face's centre on the board (x, y mm), or None.
    """

    colour: str
    status: str = ""
    centre_mm: tuple[float, float] | None = None


class DieReader:
    """Finds the die's top face and reads its colour.

    Args:
        geometry: the table.
        references: the print colours in Lab against the paper white (the Monsieur reader's).
        px_per_mm: resolution of the warped board plane (pixels per mm).
        hue_tolerance_deg: a pixel's a*b* hue within this of a print colour's hue counts for it
            (the nearest prints, red and orange, are 24 degrees apart).
        min_chroma: and its chroma (C*ab) at least this: a die's glossy top under a lamp's
            highlight keeps its hue but loses chroma, down to about a quarter of the print's.
        size_tolerance: the blob's sides within this fraction of the die's side (blur, the
            face's printed edge, the warp's resolution).
        min_fill: the blob fills at least this fraction (0-1) of its rotated rectangle (a
            square fills it all, a round print 0.79; a die's rounded corners about 0.8).
        coarse_px_per_mm: resolution of the first pass that finds the blobs to look at.
        max_aspect: the blob's longer side at most this times its shorter (a die on its edge
            shows faces at 45 degrees, 1.41 long for wide).
        min_contrast: the top's median a*b* at least this far (Delta E in a*b*) from the median of
            what lies around it (a patch of the board's own print is not a die).
        max_rays: at most this share (0-1) of the square ring just beyond the top's corners
            (0.75-1.1 sides from its centre) may have the top's colour: no other face of a die
            has it, a printed sun's rays do.
        second_face: a blob of another face colour beyond the top (away from the camera's foot)
            at least this share (0-1) of the top's area means a die on its edge (its second
            face up is at least 0.3 of the first from any view within 35 degrees of tilt).
        min_vote: the blob's pixels of its colour at least this share of its inside (its
            border pixels aside).
        border_px: image pixels at the top's edge that mix with what lies beside it (a side
            face of a near hue, the board): JPEG keeps chroma at half resolution (4:2:0), so 2.
        min_core_px: the top's core (the top less ``border_px`` all round) at least this many
            image pixels (a 3 x 3 patch) for its colour to be told; a smaller die (far from a
            tilted camera, a low camera) reads ``"unknown"``.
        hue_margin: the core's median a*b* hue nearer the top's print hue than any other die
            colour's by at least this share (0-1) of their hue separation (CIE Lab: red-orange
            24 degrees, orange-yellow 34); nearer the middle, a blend of the top with a side face
            of the neighbouring colour cannot be told from the neighbour: ``"unknown"``.

    Every bound comes from the die's size and print colours, not from the photographs.
    """

    def __init__(self, geometry: MonsieurGeometry, references: ColourReferences, px_per_mm: float = 1.0,
                 hue_tolerance_deg: float = 12.0, min_chroma: float = 15.0, size_tolerance: float = 0.3,
                 min_fill: float = 0.7, min_vote: float = 0.8, coarse_px_per_mm: float = 0.4,
                 max_aspect: float = 1.25, min_contrast: float = 20.0, second_face: float = 0.3,
                 max_rays: float = 0.08, border_px: float = 2.0, min_core_px: float = 9.0,
                 hue_margin: float = 0.25):
        self.geometry = g = geometry
        self.px_per_mm = float(px_per_mm)
        self.cos_hue = float(np.cos(np.radians(hue_tolerance_deg)))
        self.min_chroma = float(min_chroma)
        self.size_tolerance = float(size_tolerance)
        self.min_fill = float(min_fill)
        self.min_vote = float(min_vote)
        names = list(references.names)
        lab = np.array([references.lab[names.index(c)] for c in g.die_colours], dtype=np.float64)
        chroma = np.hypot(lab[:, 1], lab[:, 2])
        self.colours = tuple(g.die_colours)
        self._unit = (lab[:, 1:] / chroma[:, None]).astype(np.float32)  # K x 2
        self._cl = (chroma / lab[:, 0]).astype(np.float32)
        kernel = max(round(g.die_size_mm * self.px_per_mm / 3.0), 1)
        self._kernel = np.ones((kernel, kernel), np.uint8)
        # a die on its edge tilts its second face away from the camera, foreshortened to a
        # strip; its opening is by a sixth of the side (a blurred fringe, not the strip, goes)
        thin = max(round(g.die_size_mm * self.px_per_mm / 6.0), 1)
        self._thin_kernel = np.ones((thin, thin), np.uint8)
        self.coarse_px_per_mm = float(coarse_px_per_mm)
        self.max_aspect = float(max_aspect)
        self.min_contrast = float(min_contrast)
        self.second_face = float(second_face)
        self.max_rays = float(max_rays)
        self.border_px = float(border_px)
        self.min_core_px = float(min_core_px)
        self.hue_margin = float(hue_margin)
        self.band_mm = (1.5, 5.0)
        self.far_share = 0.3
        self.far_off_ab = 15.0
        self._hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1]))  # K: each print colour's a*b* hue
        self._suns = np.array(g.suns_mm, dtype=np.float64).reshape(-1, 2)
        self._suns_key: tuple[TableCamera, float, np.ndarray] | None = None
        self._to_plane_key: tuple[TableCamera, float, np.ndarray] | None = None
        self._circles_at: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _warp_matrix(self, scale: float, origin: tuple[float, float]) -> np.ndarray:
        """Board mm to warped pixels: ``scale`` px/mm, board ``origin`` (x, y) at the top-left, y down."""
        x0, y1 = origin
        return np.array([[scale, 0.0, -scale * x0], [0.0, -scale, scale * y1], [0.0, 0.0, 1.0]])

    def _hidden_circles(self, cam: TableCamera, z: float) -> np.ndarray:
        """Circles (``N x 3``: x, y, radius; board mm) of the plane at ``z`` that the carousel's
        disc with its tokens, the roof, the figure and its arm hide from the camera."""
        kept = self._circles_at.get(z)
        if kept is None:
            kept = self._circles_at[z] = self._circles_of(z)
        cen, rad, zz = kept
        c = cam.centre_mm
        # the plane's points whose ray passes height zz within radius of centre
        s = np.maximum((zz - z) / max(c[2] - z, 1e-6), 0.0)
        q = (cen - s[:, None] * c[None, :2]) / (1.0 - s)[:, None]
        return np.column_stack([q, rad / (1.0 - s)])

    def _circles_of(self, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The hiding parts of :meth:`_hidden_circles` for the plane at ``z``: their axes'
        points (``N x 2`` mm), radii (``N``) and heights (``N``), which the camera does not
        change."""
        g = self.geometry
        centres, radii, heights = [], [], []

        def hide(centre_mm: np.ndarray, radius: float, zz: np.ndarray) -> None:
            centres.append(np.broadcast_to(np.asarray(centre_mm, dtype=np.float64), (len(zz), 2)))
            radii.append(np.full(len(zz), radius))
            heights.append(np.asarray(zz, dtype=np.float64))

        top = g.disc_top_z_mm + g.kid_height_mm
        hide(np.asarray(g.axis_mm, dtype=np.float64), g.disc_radius_mm + 2.0, np.linspace(z, max(top, z), 4))
        hide(np.asarray(g.axis_mm, dtype=np.float64), g.roof_radius_mm + 1.0, np.linspace(g.roof_bottom_z_mm, g.roof_top_z_mm, 3))
        hide(np.asarray(g.figure_mm, dtype=np.float64), g.figure_radius_mm + 2.0, np.linspace(z, g.figure_top_z_mm, 6))
        if g.arm_mm is not None:  # the arm and finger, 6 mm thick with the hand
            a, b = np.asarray(g.arm_mm[0]), np.asarray(g.arm_mm[1])
            q = a[None, :] + np.linspace(0.0, 1.0, 8)[:, None] * (b - a)[None, :]
            centres.append(np.repeat(q[:, :2], 2, axis=0))
            radii.append(np.full(16, 6.0))
            heights.append(np.stack([np.maximum(q[:, 2] - 4.0, z), q[:, 2] + 4.0], axis=1).reshape(-1))
        return np.concatenate(centres), np.concatenate(radii), np.concatenate(heights)

    def _mask(self, circles: np.ndarray, scale: float, origin: tuple[float, float],
              size: tuple[int, int]) -> np.ndarray:
        """Warped pixels where the die's top can be seen (255), the ``circles`` masked out (0)."""
        w, h = size
        mask = np.full((h, w), 255, np.uint8)
        x0, y1 = origin
        c = np.asarray(circles, dtype=np.float64).reshape(-1, 3)
        cols = np.rint((c[:, 0] - x0) * scale).astype(int).tolist()
        rows = np.rint((y1 - c[:, 1]) * scale).astype(int).tolist()
        radii = (np.ceil(c[:, 2] * scale).astype(int) + 2).tolist()
        for u, v, r in zip(cols, rows, radii):
            if -r <= u < w + r and -r <= v < h + r:  # only the circles that reach the window
                cv2.circle(mask, (u, v), r, 0, -1)
        return mask

    def _labels(self, frame: np.ndarray, cam: TableCamera, white: np.ndarray, scale: float,
                origin: tuple[float, float], size: tuple[int, int], circles: np.ndarray,
                floors: np.ndarray | None = None, with_ab: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The warped plane's pixel labels (``h x w int64``: die colour index, -1 none), their
        a*, b* (``h x w x 2 float32``, NaN where masked out) and the per-colour chroma floors (``K``; given, or measured here: a colour that covers much more
        of the board than a die top is the board's own print, the sun half's pale yellow, and a
        die top of that hue must stand out above it). With ``with_ab`` False the a*, b* are not
        kept (None; the labels and floors are the same)."""
        z = self.geometry.die_size_mm
        w, h = size
        key = self._to_plane_key
        if key is None or key[0] is not cam or key[1] != z:  # (one inverse per frame and height)
            key = self._to_plane_key = (cam, z, np.linalg.inv(cam.plane_homography(z)))
        m = self._warp_matrix(scale, origin) @ key[2]
        src = frame if cam.registration.lens is None else cv2.undistort(frame, *cam.registration.lens)
        warped = cv2.warpPerspective(src, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
        mask = self._mask(circles, scale, origin, size)
        flat = warped.reshape(-1, 3)
        labels = np.full(h * w, -1, np.int64)
        ab = np.full((h * w, 2), np.nan, np.float32) if with_ab else None
        b, g_, r = flat[:, 0], flat[:, 1], flat[:, 2]  # pairwise: numpy reduces a short axis slowly
        cand = np.flatnonzero((mask.reshape(-1) > 0) & (np.minimum(np.minimum(b, g_), r) < CLIPPED)
                              & (np.maximum(np.maximum(b, g_), r) > 8))
        if floors is None:
            floors = np.full(len(self.colours), self.min_chroma)
            measure = True
        else:
            measure = False
        if len(cand) and not with_ab:
            # only the labels: the exact Lab (as linear_to_lab converts it) of the pixels that
            # may pass the hue and chroma tests, told by the fast vectorised Lab, each
            # component within LAB_FAST_ERROR of it (so the tests' two sides by at most
            # (1 + cos) sqrt(2) of it: a margin of 3 of it); the others get no label either way
            rel = white_relative(np.take(flat, cand, axis=0), white)  # (np.take: numpy gathers rows by an index slowly)
            fast = lab_fast(rel)
            chroma = np.hypot(fast[:, 1], fast[:, 2])
            m = 3.0 * LAB_FAST_ERROR
            maybe = np.flatnonzero(chroma >= self.min_chroma - m)
            along = self._unit @ np.take(fast[:, 1:], maybe, axis=0).T  # K x N
            thr = self.cos_hue * chroma[maybe] - m
            hue = along[0] >= thr
            for row in along[1:]:
                hue |= row >= thr
            maybe = maybe[hue]
            cand = cand[maybe]
            lab = lab_exact(np.take(rel, maybe, axis=0))
        elif len(cand):
            lab = lab_exact(white_relative(np.take(flat, cand, axis=0), white))  # (linear_to_lab's values)
        if len(cand):
            chroma = np.hypot(lab[:, 1], lab[:, 2])
            # the print colour of the pixel's hue (within the tolerance) with the most chroma
            # along it, -1 for none (or under min_chroma): the first of equals, as argmax takes it
            label = np.full(len(cand), -1, np.int64)
            strong = np.flatnonzero(chroma >= self.min_chroma)
            along = np.take(lab[:, 1:], strong, axis=0) @ self._unit.T  # N x K: chroma along each print colour's hue
            thr = self.cos_hue * chroma[strong]
            got = np.full(len(strong), -1, np.int64)
            best = np.full(len(strong), -np.inf, np.float32)
            for k in range(len(self.colours)):
                a = along[:, k]
                better = (a >= thr) & (a > best)
                got[better] = k
                best = np.where(better, a, best)
            label[strong] = got
            if measure:
                area = (z * scale) ** 2
                counts = np.bincount(got[got >= 0], minlength=len(self.colours))
                for k in np.flatnonzero(counts > 8 * area).tolist():
                    c = chroma[label == k]
                    if len(c) > 8 * area:
                        # the die has one face of each colour: its most saturated pixels, up to
                        # two tops' area (a face and its blur), are not the board's print and
                        # must not raise the floor above the die's own top
                        floors[k] = _percentile90_of_least(c, int(len(c) - 2 * area)) + self.min_chroma
            label[(label >= 0) & (chroma < floors[np.maximum(label, 0)])] = -1
            labels[cand] = label
            if with_ab:
                ab[cand] = lab[:, 1:]
        return labels.reshape(h, w), floors, (ab.reshape(h, w, 2) if with_ab else None)

    def _on_a_sun(self, centre_mm: np.ndarray, cam: TableCamera, z: float) -> bool:
        """Is a candidate (its centre on the plane at ``z``, board mm) where a printed sun is
        seen? A print at z = 0 shows on that plane shifted towards the camera's foot by
        ``z / camera height`` of its distance to it."""
        for seen in self._suns_seen(cam, z):
            if float(np.linalg.norm(centre_mm - seen)) <= self.geometry.sun_radius_mm:
                return True
        return False

    def _suns_seen(self, cam: TableCamera, z: float) -> np.ndarray:
        """Where the printed suns are seen on the plane at ``z`` (``K x 2`` board mm; kept for
        the last camera and height)."""
        key = self._suns_key
        if key is not None and key[0] is cam and key[1] == z:
            return key[2]
        c = cam.centre_mm
        s = z / max(float(c[2]), 1e-6)
        suns = self._suns
        seen = suns + s * (c[None, :2] - suns)
        self._suns_key = (cam, z, seen)
        return seen

    def _beyond_far_edge(self, ab: np.ndarray, k: int, px: float, py: float, rw: float, rh: float, rect_deg: float,
                         toward: np.ndarray, scale: float, top_ab: np.ndarray, all_sides: bool,
                         sun: np.ndarray | None = None, strip_px: float = 0.0, chroma: np.ndarray | None = None) -> str:
        """Does a saturated colour other than the top's lie just beyond the top candidate's edge
        that does not face the camera's foot (``toward``: unit vector to it, warped pixels; the
        cosine of the edge's outward normal with it at most 0.35: beyond the others a flat die's
        side faces show), or with ``all_sides`` beyond any edge? Beyond an edge that faces the foot the band starts past the strip where a flat
        die's side face shows (``strip_px`` times the edge's facing).

        A flat die's top is its highest face: beyond its far edge the camera sees the board
        (pale print, a shadow). A die on its edge shows its face tilted towards the camera as the
        square and, beyond the ridge, the other face up tilted away: foreshortened to a strip a
        few millimetres wide, blurred and blended with the first, too thin for a blob, but as
        saturated as a print. The band looked at runs from ``band_mm`` (1.5, 5) beyond the edge
        (past the top's own blur), along the edge's middle 80 %; it holds a second face when
        ``far_share`` (0.3) of it is at least half as saturated (C*ab) as the top, more than
        the board around (its median chroma beyond 1.3 sides) by ``min_chroma``, and at least
        ``far_off_ab`` (15, a*b*) off the segment from the board just beyond the band (1-7 mm
        further) to the top: the top's blur into the board lies on that segment, another face
        does not. A printed sun (``sun``, ``h x w bool``) is left out of the band; where it
        covers half the band or more, an orange face there could not be told from it.
        ``chroma``: the window's C*ab (``h x w``, ``np.hypot`` of ``ab``'s two planes) when the
        caller has it (else worked out here).

        Returns ``"edge"`` (a second face there), ``"sun"`` (a printed sun there) or ``""``. (A printed sun there is :meth:`_second_face`'s
        case.)"""
        a = np.radians(rect_deg)
        u = np.array([np.cos(a), np.sin(a)])
        v = np.array([-np.sin(a), np.cos(a)])
        h, w = ab.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        rel = np.stack([xx - px, yy - py], axis=-1).astype(np.float64)
        med = _median(top_ab)
        top_c = float(np.hypot(med[0], med[1]))
        if chroma is None:
            chroma = np.hypot(ab[..., 0], ab[..., 1])
        fin = np.isfinite(chroma)
        # the board around (beyond 1.3 sides of the top's centre): a second face is more
        # saturated than the board's print by the least chroma of a print colour
        cheb = np.maximum(np.abs(xx - px), np.abs(yy - py))
        board = chroma[(cheb > 1.3 * max(rw, rh)) & fin]
        floor = max(0.5 * top_c, (float(_median(board)) if len(board) else 0.0) + self.min_chroma)
        lo, hi = self.band_mm[0] * scale, self.band_mm[1] * scale
        for n, t, half, length in ((u, v, rw / 2.0, rh / 2.0), (-u, v, rw / 2.0, rh / 2.0),
                                   (v, u, rh / 2.0, rw / 2.0), (-v, u, rh / 2.0, rw / 2.0)):
            facing = float(n @ toward)
            if not all_sides and facing > 0.35:
                continue  # the edges facing away from the foot (no side face shows beyond them), and across the view (its strip thin)
            # a flat die's side face under this edge shows beyond it on the top's plane, as a
            # strip ``side_strip`` times how much the edge faces the camera's foot
            shown = max(facing, 0.0) * strip_px
            out = rel @ n - half - shown
            along = np.abs(rel @ t) <= 0.8 * length
            band = (out >= lo) & (out <= hi) & along & fin
            beyond = (out > hi + scale) & (out <= hi + 7.0 * scale) & along & fin
            if sun is not None:
                whole = int(band.sum())
                band &= ~sun
                beyond &= ~sun
                if whole and int(band.sum()) < 0.5 * whole:
                    return "sun"
            if int(band.sum()) < 10 or int(beyond.sum()) < 10:
                continue
            # the top blurred into the board beyond it lies between their colours (a*b*): a
            # second face is off that segment
            ref = _median(ab[beyond])
            seg = med - ref
            q = ab[band] - ref
            tt = np.clip((q @ seg) / max(float(seg @ seg), 1e-9), 0.0, 1.0)
            off = np.hypot(*(q - tt[:, None] * seg[None, :]).T)
            foreign = (chroma[band] >= floor) & (off >= self.far_off_ab)
            if float(foreign.mean()) >= self.far_share:
                return "edge"
        return ""

    def _sun_mask(self, cam: TableCamera, z: float, scale: float, origin: tuple[float, float],
                  shape: tuple[int, ...]) -> np.ndarray:
        """``h x w bool`` of a warped window (``scale`` px/mm, board ``origin`` top-left) where a
        printed sun is seen on the plane at ``z`` (as :meth:`_on_a_sun`; its disc of
        ``board.printed_sun_radius_mm``, rays' roots included)."""
        g = self.geometry
        h, w = shape[:2]
        out = np.zeros((h, w), bool)
        if not g.suns_mm:
            return out
        c = cam.centre_mm
        f = z / max(float(c[2]), 1e-6)
        xs = origin[0] + np.arange(w) / scale
        ys = origin[1] - np.arange(h) / scale
        r = g.sun_radius_mm
        for x, y in g.suns_mm:
            sx, sy = x + f * (c[0] - x), y + f * (c[1] - y)
            if sx + r < xs[0] - 1.0 or sx - r > xs[-1] + 1.0 or sy + r < ys[-1] - 1.0 or sy - r > ys[0] + 1.0:
                continue  # (its disc does not reach the window)
            out |= ((xs[None, :] - sx) ** 2 + (ys[:, None] - sy) ** 2) <= r ** 2
        return out

    def _unclear(self, blob: np.ndarray, ab: np.ndarray, k: int, centre_mm: np.ndarray, cam: TableCamera,
                 z: float) -> str:
        """Why the top candidate ``blob`` (``h x w bool`` of the fine window, its a*b* ``ab``) of
        colour ``k`` cannot be told from its neighbours' colours, or ``""``.

        The top's size in image pixels comes from the camera model (its corners at ``z``); its
        core is the blob less ``border_px`` image pixels all round (in warped pixels by the
        top's scale). The core must have ``min_core_px`` image pixels and its median a*b* hue
        must be nearer k's print hue than every other die colour's by ``hue_margin`` of their
        separation."""
        g = self.geometry
        h = g.die_size_mm / 2.0
        quad = cam.to_image(centre_mm + np.array([[-h, -h], [h, -h], [h, h], [-h, h]]), z).astype(np.float32)
        side_px = float(np.sqrt(max(abs(cv2.contourArea(quad)), 1e-9)))
        warped_per_image = g.die_size_mm * self.px_per_mm / side_px
        r = max(round(self.border_px * warped_per_image), 1)
        core = cv2.erode(blob.astype(np.uint8), np.ones((2 * r + 1, 2 * r + 1), np.uint8)) > 0
        core_px = float(core.sum()) / warped_per_image ** 2
        if core_px < self.min_core_px:
            return (f"the die's top is {side_px:.0f} px across in the frame: too small to tell "
                    f"{self.colours[k]} from its neighbouring colours (unknown)")
        med = _median(ab[core & np.isfinite(ab[..., 0])])
        hue = float(np.degrees(np.arctan2(med[1], med[0])))
        d = np.abs((self._hue - hue + 180.0) % 360.0 - 180.0)  # K: to each print hue
        sep = np.abs((self._hue - self._hue[k] + 180.0) % 360.0 - 180.0)
        for j in range(len(self.colours)):
            if j != k and d[k] > d[j] - self.hue_margin * sep[j]:
                return (f"the die's top ({side_px:.0f} px across, hue {hue:.0f} deg) lies between "
                        f"{self.colours[k]} and {self.colours[j]}: cannot tell them apart (unknown)")
        return ""

    def _second_face(self, labels: np.ndarray, k: int, px: float, py: float, side: float, area: float,
                     toward: np.ndarray, on_sun: Callable[[float, float], bool] = lambda u, v: False,
                     side_strip: float = float("inf"), sun: np.ndarray | None = None,
                     chroma: np.ndarray | None = None, top_chroma: float = 0.0) -> str:
        """Is there, within a side's length of the top candidate at (``px``, ``py``) and on its
        side away from the camera's foot (``toward``: unit vector to it, warped pixels), a blob
        of another die colour at least ``second_face`` of the candidate's ``area`` (after the same
        opening, or one by a sixth of the side: the second face of a die on its edge tilts away
        and is foreshortened to a strip that the first opening removes)?

        A flat die's side faces stand below its top, so on the plane of the top they show on the
        camera's side of it, each at most a strip of the side's length by ``side_strip`` (warped
        pixels: the top's height times its distance to the camera's foot over the camera's
        height, where a ray through a side's foot meets the top's plane); a die on its edge has
        its second face up beyond the ridge, on the far side, or, seen from above, beside the
        ridge as large as the first: on the camera's side a blob larger than 1.5 side strips is
        a second face too.

        A die's face is a print as saturated as its top: a blob whose median chroma (``chroma``,
        ``h x w`` C*ab of ``labels``, NaN where masked) is under half the top's (``top_chroma``,
        the bound :meth:`_beyond_far_edge` puts on a second face) is the board's own print of a
        near hue (monsieur_054: the rain half's blue-grey under a mixed light labelled green,
        C*ab 16 beside a blue top of 60), not a face.

        A printed sun (``sun``: ``h x w bool`` of ``labels``, where one is seen) is left out of
        every blob (its print is a die colour, orange). Where it lies is not enough to abstain:
        a second face adjoins an edge of the top, and the band beyond every edge (from above,
        where the faces look alike, every edge's) is read by :meth:`_beyond_far_edge`, which
        abstains where the sun covers half of it.

        Returns ``"edge"`` (a second face found), ``"sun"`` (a printed sun beside the top, where
        an orange face would not be told from it) or ``""``."""
        y0, x0 = max(int(py - 1.5 * side), 0), max(int(px - 1.5 * side), 0)
        sub = labels[y0:int(py + 1.5 * side) + 1, x0:int(px + 1.5 * side) + 1]
        chroma_sub = None if chroma is None else chroma[y0:int(py + 1.5 * side) + 1, x0:int(px + 1.5 * side) + 1]
        near_sun = False
        sun_sub = None
        if sun is not None:
            # (from an oblique view a die on its edge that shows a square face tilts its second
            # face away from the camera, just beyond the top's far edge; from above, nearer than
            # a quarter side's strip, the two faces look alike and the second may lie beyond any
            # edge: _beyond_far_edge reads those bands, around a sun)
            sun_sub = sun[y0:int(py + 1.5 * side) + 1, x0:int(px + 1.5 * side) + 1]
        for other, kernel in ((o, kk) for o in range(len(self.colours)) for kk in (self._kernel, self._thin_kernel)):
            if other == k:
                continue
            mine = sub == other
            if sun_sub is not None:
                mine &= ~sun_sub
            if int(np.count_nonzero(mine)) < self.second_face * area:  # an opening only removes pixels
                continue
            binary = cv2.morphologyEx(mine.astype(np.uint8), cv2.MORPH_OPEN, kernel)
            if int(binary.sum()) < self.second_face * area:
                continue
            n, comp, stats, cents = cv2.connectedComponentsWithStats(binary, connectivity=4)
            for j in range(1, n):
                dx, dy = cents[j, 0] + x0 - px, cents[j, 1] + y0 - py
                away = float(dx * toward[0] + dy * toward[1])
                big = stats[j, cv2.CC_STAT_AREA]
                # the second face adjoins the top: its centre within 1.2 sides of the top's
                if big >= self.second_face * area and np.hypot(dx, dy) <= 1.2 * side and (
                        away < 0.0 or big >= 1.5 * side * side_strip):
                    if chroma_sub is not None and _faint(chroma_sub[comp == j], top_chroma):
                        continue  # the board's print of a near hue, not a die's face
                    if not on_sun(float(cents[j, 0] + x0), float(cents[j, 1] + y0)):
                        return "edge"
                    near_sun = True  # a printed sun there: an orange face would look the same
        return "sun" if near_sun else ""

    def read(self, frame: np.ndarray, cam: TableCamera, angle_deg: float, white: np.ndarray) -> DieReading:
        """Read the die's top colour.

        A coarse pass (``coarse_px_per_mm``) over the whole die area finds the colour blobs of
        about a die top's size; each is then looked at again at ``px_per_mm`` in a window
        around it.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            cam: the frame's camera model (from the roof marker).
            angle_deg: the carousel's angle (unused by the search; kept for the caller's call).
            white: ``3`` linear BGR of the white reference.

        Returns:
            The :class:`DieReading`.
        """
        g = self.geometry
        z = g.die_size_mm
        x0, y0, x1, y1 = g.die_area_mm
        cs = self.coarse_px_per_mm
        circles = self._hidden_circles(cam, z)
        coarse, floors, _ = self._labels(frame, cam, white, cs, (x0, y1),
                                         (round((x1 - x0) * cs), round((y1 - y0) * cs)), circles, with_ab=False)
        side_c = z * cs
        windows = []
        present = np.bincount(coarse[coarse >= 0].ravel(), minlength=len(self.colours))
        for k in range(len(self.colours)):
            if present[k] < 0.3 * side_c * side_c:  # not one top's worth of this colour anywhere
                continue
            _n, _comp, stats, _ = cv2.connectedComponentsWithStats((coarse == k).astype(np.uint8), connectivity=8)
            areas = stats[:, cv2.CC_STAT_AREA]
            for j in np.flatnonzero((areas >= 0.3 * side_c * side_c) & (areas <= 4.0 * side_c * side_c)):
                if j == 0:
                    continue
                bx, by, bw, bh = stats[j, :4]
                if max(bw, bh) > 2.5 * side_c:
                    continue
                cx, cy = x0 + (bx + bw / 2.0) / cs, y1 - (by + bh / 2.0) / cs
                if not self._on_a_sun(np.array([cx, cy]), cam, z):  # a printed sun: not worth a look
                    windows.append((k, cx, cy))
        s = self.px_per_mm
        side = z * s
        lo, hi = side * (1.0 - self.size_tolerance), side * (1.0 + self.size_tolerance)
        half = z * 1.5  # mm around the coarse blob's centre
        tops: list[tuple[int, np.ndarray]] = []
        edge_seen = False
        unclear: list[str] = []
        for k_blob, cx, cy in windows:
            origin = (cx - half, cy + half)
            size = (round(2 * half * s), round(2 * half * s))
            labels, _, ab = self._labels(frame, cam, white, s, origin, size, circles, floors)
            sun = self._sun_mask(cam, z, s, origin, labels.shape)
            chroma = None
            for k in (k_blob,):
                # an opening by a third of the side cuts off what touches the top (an edge of a
                # side face of a near hue, a blurred border) and keeps the square whole
                binary = cv2.morphologyEx((labels == k).astype(np.uint8), cv2.MORPH_OPEN, self._kernel)
                if int(binary.sum()) < lo * lo * self.min_fill:
                    continue
                _n, comp, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=4)
                areas = stats[:, cv2.CC_STAT_AREA]
                for j in np.flatnonzero((areas >= lo * lo * self.min_fill) & (areas <= hi * hi)):
                    if j == 0:
                        continue
                    ys, xs = np.nonzero(comp == j)
                    pts = np.stack([xs, ys], axis=1).astype(np.float32)
                    (px, py), (rw, rh), rect_deg = cv2.minAreaRect(pts)
                    rw, rh = rw + 1.0, rh + 1.0  # pixel extents, not centre to centre
                    if not (lo <= rw <= hi and lo <= rh <= hi) or areas[j] / (rw * rh) < self.min_fill:
                        continue
                    # square, not a face at 45 degrees (a die on its edge: sides 16 and 11.3)
                    if max(rw, rh) / min(rw, rh) > self.max_aspect:
                        continue
                    # it stands out from what lies around it (a*b*, shading aside): the board's
                    # print, a side face; a patch of a large print area does not
                    yy, xx = np.ogrid[0:labels.shape[0], 0:labels.shape[1]]  # (broadcast: the same values)
                    cheb = np.maximum(np.abs(xx - px), np.abs(yy - py))
                    around = ab[(cheb >= 0.8 * side) & (cheb <= 1.3 * side)]
                    around = around[np.isfinite(around[:, 0])]
                    # no face of a die shares the top's colour, so nothing of it lies just beyond
                    # the top's corners; a printed sun's rays do
                    raw = labels[(cheb >= 0.75 * side) & (cheb <= 1.1 * side)]
                    if len(raw) and float(np.mean(raw == k)) > self.max_rays:
                        continue
                    top_ab = ab[comp == j]
                    if len(around) < 10 or float(np.linalg.norm(_median(top_ab) - _median(around))) < self.min_contrast:
                        continue
                    # its inside (a third of the side from the centre) must vote for the colour
                    r = max(int(side / 3.0), 1)
                    ix, iy = round(px), round(py)
                    inside = labels[max(iy - r, 0):iy + r + 1, max(ix - r, 0):ix + r + 1]
                    if inside.size == 0 or float(np.mean(inside == k)) < self.min_vote:
                        continue
                    centre = np.array([origin[0] + px / s, origin[1] - py / s])
                    # a die on its edge shows two faces up, each about as large as a top: another
                    # colour's blob beside it half as large or more means no top is flat
                    foot = cam.centre_mm[:2] - np.array([origin[0] + px / s, origin[1] - py / s])
                    toward = np.array([foot[0], -foot[1]]) / max(float(np.linalg.norm(foot)), 1e-9)
                    def on_sun(u: float, v: float, o: tuple[float, float] = origin) -> bool:
                        return self._on_a_sun(np.array([o[0] + u / s, o[1] - v / s]), cam, z)

                    # a flat die's side face on the top's plane: a strip the top's height times
                    # the distance to the camera's foot over the camera's height wide
                    strip = z * float(np.linalg.norm(foot)) / max(float(cam.centre_mm[2]) - z, 1e-6) * s
                    if chroma is None:  # (the window's C*ab, once for its blobs)
                        chroma = np.hypot(ab[..., 0], ab[..., 1])
                    second = self._second_face(labels, k, px, py, side, float(areas[j]), toward, on_sun, strip, sun,
                                               chroma, float(np.hypot(*_median(top_ab))))
                    if second == "":
                        second = self._beyond_far_edge(ab, k, px, py, rw, rh, rect_deg, toward, s, top_ab,
                                                       strip < 0.25 * side, sun, strip, chroma)
                    if second == "edge":
                        edge_seen = True
                        continue
                    if second == "sun":
                        unclear.append(f"a printed sun beside the die's {self.colours[k]} top: cannot tell whether "
                                       "the die lies on its edge (unknown)")
                        continue
                    if self._on_a_sun(centre, cam, z):
                        continue
                    # (whether its colour can be told: only for a top that is still one)
                    why = self._unclear(comp == j, ab, k, centre, cam, z)
                    if why:
                        unclear.append(why)
                    elif all(np.linalg.norm(centre - c) > z / 2.0 or kk != k for kk, c in tops):
                        tops.append((k, centre))
        if unclear:  # a top whose colour cannot be told: never a guess
            return DieReading(UNKNOWN, unclear[0])
        if not tops and edge_seen:
            return DieReading(UNKNOWN, "two die faces up side by side: the die is on its edge, roll it again")
        if not tops:
            return DieReading(UNKNOWN, "no die top found (under a hand, off the board or on its edge)")
        if len(tops) > 1:
            where = ", ".join(f"{self.colours[k]} at ({c[0]:.0f}, {c[1]:.0f}) mm" for k, c in tops)
            return DieReading(UNKNOWN, f"{len(tops)} die-sized squares of print colour ({where}): not sure which is the die")
        k, centre = tops[0]
        return DieReading(self.colours[k], "", (float(centre[0]), float(centre[1])))
