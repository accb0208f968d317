"""The Monsieur Carrousel reader: the carousel's angle from its roof marker, the seat Monsieur
Carrousel points at, each seat's kid token, each seat's weather zone and the die's top colour,
from one camera frame.

Geometry is data (``calibration/monsieur-board.toml``, see
:mod:`companion.vision.monsieur_geometry`). The fixed markers register the board plane; the roof
marker, 122 mm above it, gives the carousel's angle (exact under tilt: the module notes of
``monsieur_geometry`` show why) and, with its size, the camera's projection at every height.
One marker detection serves both (the roof marker is in the same dictionary).

* **Pointed seat**: the seat whose centre is angularly nearest the finger's board angle; within
  ``seat_margin_deg`` of a line between two seats it is ``"ambiguous"`` (the DESIGN.md ruling:
  turn the carousel again); with no roof marker read it is ``"unknown"``.
* **Zones**: a seat's board angle in the sun half or the rain half; within ``zone_margin_deg``
  of the boundary ``"ambiguous"``.
* **Kids**: every pixel is seen in CIE Lab against the white reference (the fixed markers'
  paper, von Kries, as :mod:`companion.vision.colour` does for the Carrousel reader) and is
  *print* (the hue of the seat's calibrated print colour, and at least ``print_share`` of its
  chroma for its lightness), *pale* (chroma below ``kid_chromaticity`` times its lightness: the
  tokens' wood and pastels, whose chroma is a third to a half of their lightness where every
  print's is near or above it; the ratio does not change with shading), or *dark* (under
  ``dark_lightness`` once scaled by the seat's own print lightness: the seat's dark glyph).
  Three places of
  each seat are sampled, planned once per registration and angle with the camera's rays:

  - the *ring* (12-14 mm from the seat's centre on the disc top: 3 mm inside the seat's edge
    for the angle's error) where no token, on this seat or a neighbour, can stand between it
    and the camera: it must show the seat's print (else a hand or a shadow covers the seat:
    ``"unknown"``), and its lightness is the seat's local light;
  - the *middle* (``core_mm`` around the centre on the disc top): a token stands on it (base
    radius 9, at most 2.5 mm off the centre), so a middle that shows the print or the glyph is
    an empty seat;
  - the *head* (the token's top, 3 mm under its height): on a kid, pale and as light as the
    print around it.

  ``"kid"``: the head pale and light, the middle pale and neither print nor glyph, nothing
  pale on the clear ring (a hand's or a finger's skin would be there). ``"empty"``: the middle
  shows the print with nothing pale, or neither the middle nor the head's place looks like a
  token, with no glare on them. Anything else, a seat hidden by the roof or the figure, out of
  the frame, or with too few clear ring pixels, is ``"unknown"`` (the reading says why:
  ``seat_reasons``).

  From an oblique camera a fourth place, *behind* the token: the seat's print beyond its glyph
  whose ray to the camera crosses the part of a token that is there wherever it stands. A token
  hides it; an empty seat shows its print there whatever the light does to its middle. It
  counts as print only when more saturated than any token colour of a near hue could look
  (``token_margin``); a seat showing it is ``"empty"``, one where something pale hides all of
  it, with a light pale head and a clear ring, is a ``"kid"``; either bars the other.
  A glossy print's glare adds white (washed purple looks lilac, a glyph under it grey): a
  middle whose light pale pixels are grey is no token, and a seat whose surrounding wood is
  less saturated and lighter than the disc's elsewhere (:meth:`MonsieurReader._glare`) is never
  a kid.
* **Die**: :mod:`companion.vision.monsieur_die` (its top face found on the board plane at the
  die's height; ``"unknown"`` when it is not clear, a die on its edge included).
* A frame whose colour is not a colour frame of the calibrated light reads ``"colour lost: ..."``
  (the same :class:`~companion.vision.colour.ColourCheck` as the Carrousel reader, against the
  markers' white paper and the seats' printed colours): every seat and the die unknown; the
  angle, pointed seat and zones still stand (they come from marker corners, not colours).

Speed: in a stream (``read(frame, stream=True)``) the fixed markers' registration is kept while
their cells match (:meth:`Registrar.update`), the roof marker is looked for only in a window
around its last place (it turns about the axis, so its image stays within the circle its
corners sweep), and the seats' sample pixels are planned once per registration and carousel
angle (:class:`_SeatPlan`).

Sources: the table, ``shared/data/monsieur-table/README.md``; the rulebook
``shared/rules/monsieur-carrousel.txt`` (Phase 2: Monsieur Carrousel points at a seat; the sun
and rain zones); DESIGN.md (Vision; the margin ruling); CIE 15:2004 (L*a*b*).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.vision.colour import (
    _LUT,
    LAB_FAST_ERROR,
    UNKNOWN,
    ColourCheck,
    ColourReferences,
    FrozenFrames,
    lab_exact,
    lab_fast,
    linear_to_lab,
    srgb_to_linear,
    white_of,
)
from companion.vision.frames import check_bgr_frame
from companion.vision.monsieur_die import (
    DieReader,
    DieReading,
    _median,
    clipped_pixels,
    white_relative,
)
from companion.vision.monsieur_cast import die_under_clipped_white, edge_blur_px, seats_guarded, white_upper_bound
from companion.vision.monsieur_geometry import (
    MonsieurGeometry,
    RoofReading,
    TableCamera,
    read_roof,
)
from companion.vision.monsieur_seat_angle import print_beyond_seat, read_without_roof
from companion.vision.monsieur_tone import seats_under_gains
from companion.vision.monsieur_white import unclipped_papers
from companion.vision.registration import (
    Registrar,
    Registration,
    _detector,
    _grey,
    detect_markers,
)

__all__ = ["AMBIGUOUS", "EMPTY", "KID", "MonsieurReader", "MonsieurReading", "draw_overlay", "seat_margin_from_table"]

AMBIGUOUS = "ambiguous"
_PARTS = 5  # sample parts of a seat: ring, middle, head, behind, wood around (see _SeatPlan)
KID = "kid"
EMPTY = "empty"


def seat_margin_from_table(path: str | Path | None = None, config: Any = None) -> tuple[float, float]:
    """The configured ``(seat_margin_deg, zone_margin_deg)`` of the game's table
    (``monsieur_carrousel.toml`` [board]; the calibration folder's, else the shipped one).

    Raises:
        ValueError: an unreadable file or a missing field (the message names them).
    """
    import tomllib

    from companion.calibration_dir import calibration_path

    p = Path(path) if path is not None else calibration_path("monsieur_carrousel.toml", config)
    try:
        with open(p, "rb") as fh:
            board = tomllib.load(fh)["board"]
        return float(board["seat_margin_deg"]), float(board["zone_margin_deg"])
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{p}: cannot read [board] seat_margin_deg and zone_margin_deg ({exc})") from None


def _disc(radius: float, inner: float = 0.0, step: float = 1.0) -> np.ndarray:
    u = np.arange(-radius, radius + 1e-9, step)
    xx, yy = np.meshgrid(u, u)
    p = np.stack([xx.ravel(), yy.ravel()], axis=1)
    d = np.hypot(p[:, 0], p[:, 1])
    return p[(d <= radius) & (d >= inner)]


def _lab_of_print(rgb: tuple[int, int, int], paper: float) -> np.ndarray:
    lin = srgb_to_linear(np.array([[rgb[2], rgb[1], rgb[0]]], dtype=np.uint8))
    white = srgb_to_linear(np.array([[paper, paper, paper]], dtype=np.uint8))[0]
    return linear_to_lab(lin, white)[0]


@dataclasses.dataclass(frozen=True)
class MonsieurReading:
    """What the camera sees of the Monsieur Carrousel table in one frame.

    Attributes:
        status: ``"ok"``, or why the frame could not be read (``"board not visible: ..."``,
            ``"colour lost: ..."``, ``"camera frozen: ..."``); with ``"ok"`` the angle may still
            be unknown (see ``roof_status``).
        carousel_angle_deg: the disc zero mark's board angle (degrees, 0-360) or None.
        pointed_seat: seat index 0-11, ``"ambiguous"`` or ``"unknown"``.
        pointed_offset_deg: signed degrees from the finger to the pointed seat's centre, or None.
        seats: 12 of ``"kid"``, ``"empty"``, ``"unknown"``.
        zones: 12 of ``"sun"``, ``"rain"``, ``"ambiguous"``, ``"unknown"``.
        die: the die's top colour or ``"unknown"``.
        roof_status: ``""`` when the roof marker was read, else why not.
        registration: the board registration used, or None.
        camera: the frame's camera model, or None.
        die_status: ``""`` when the die was read, else why not (``"no die top found"``, ...).
        seat_reasons: per seat, why it reads ``"unknown"`` (``""`` for a seat read); empty when
            no seat was looked at (no angle, colour lost).
        seats_angle_deg: without the roof marker, the carousel's angle (degrees) the seats were
            placed at from their print and the disc's zero mark (for the overlay; not a reading
            of the angle: ``carousel_angle_deg`` stays None), else None.
    """

    status: str
    carousel_angle_deg: float | None = None
    pointed_seat: int | str = UNKNOWN
    pointed_offset_deg: float | None = None
    seats: tuple[str, ...] = (UNKNOWN,) * 12
    zones: tuple[str, ...] = (UNKNOWN,) * 12
    die: str = UNKNOWN
    roof_status: str = ""
    registration: Registration | None = None
    camera: TableCamera | None = None
    die_status: str = ""
    seat_reasons: tuple[str, ...] = ()
    seats_angle_deg: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON fields of ``companion read monsieur-carrousel`` (issue 12, item 7)."""
        out: dict[str, Any] = {
            "status": self.status,
            "carousel_angle_deg": None if self.carousel_angle_deg is None else round(self.carousel_angle_deg, 2),
            "pointed_seat": self.pointed_seat,
            "seats": list(self.seats),
            "zones": list(self.zones),
            "die": self.die,
        }
        if self.roof_status:
            out["roof"] = self.roof_status
        if self.die_status:
            out["die_status"] = self.die_status
        if self.registration is not None:
            out["markers"] = list(self.registration.marker_ids)
        return out


class _SeatPlan:
    """The seats' sample pixels for one registration, camera and carousel angle: which pixels
    to read and which part of which seat each belongs to (computed once, read every frame).

    Attributes:
        idx: ``N`` flat pixel indices (row * width + column) into the frame.
        seg: ``N`` segment of each sample: ``3 k`` seat k's ring, ``3 k + 1`` its middle,
            ``3 k + 2`` its head.
        unit: ``N x 2`` the unit (a*, b*) direction of the sample's seat print colour.
        print_cl: ``N`` the chroma / lightness ratio of that print colour.
        planned: ``3 x 12`` planned samples per segment (ring, middle, head rows), before
            hiding, for the visibility fractions.
        angle_deg: the carousel angle it was planned for.
    """

    def __init__(self, reader: MonsieurReader, cam: TableCamera, angle: float, shape: tuple[int, ...]):
        g = reader.geometry
        h, w = shape[:2]
        n = g.n_seats
        z = g.disc_top_z_mm
        top = z + g.kid_height_mm
        head_z = top - 3.0
        reach = g.kid_base_radius_mm + g.kid_max_offset_mm + 1.0  # a token, anywhere it may stand, + 1 mm
        a = np.radians(angle + g.seat_first_deg + g.seat_pitch_deg * np.arange(n))
        centres = np.asarray(g.axis_mm, dtype=np.float64) + g.seat_ring_radius_mm * np.stack([np.cos(a), np.sin(a)], axis=1)
        # every sample of every seat at once: seat, part, board point, height (the reader's
        # layout of them, the same for every plan)
        seat, part, off = reader._layout
        self.planned = reader._planned
        pts = np.take(centres, seat, axis=0) + off
        ring_s, _core_s, heads, back_s, wood_s = reader._part_slices
        px = np.rint(cam.to_image_at(pts, z, heads, head_z)).astype(np.int64)
        ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)
        # every sample's ray to the camera once; each test below on the samples of the parts
        # it concerns (contiguous in the layout), every sample's answer its own
        rays = _Rays(cam.centre_mm, pts, np.array([z, head_z]), heads)
        # the seat's print behind its token: the samples whose ray to the camera crosses the
        # part of a token that is there wherever on the seat it stands (its axis within
        # kid_max_offset_mm of the centre, less the angle's error: behind_margin_mm), up to
        # where its head still covers that radius (a token's head is narrower than its base: up
        # to its height less the base's radius, README: base radius 9, head radius 7.5 at 22.5);
        # a token hides them, an empty seat shows its print there
        core_r = g.kid_base_radius_mm - g.kid_max_offset_mm - reader.behind_margin_mm
        sure_top = z + g.kid_height_mm - g.kid_base_radius_mm
        # (rows gathered by np.take: numpy's fancy indexing of rows is several times slower)
        ok[back_s] &= rays.passes(back_s, z, sure_top, np.take(centres, seat[back_s], axis=0), core_r)
        # a token on its own seat may hide a ring; a middle or a head only another seat's
        # token; only the two neighbours' can (the next ones are 85 mm away, beyond a token's
        # height times any tilt)
        # the wood around a seat: on the disc's top, off every seat's print
        wp = pts[wood_s]
        near = _within(wp[:, 0] - g.axis_mm[0], wp[:, 1] - g.axis_mm[1], g.disc_radius_mm - 1.5)
        for nb in reader._layout_neighbours:
            other = np.take(centres, nb[wood_s], axis=0)
            near &= ~_within(wp[:, 0] - other[:, 0], wp[:, 1] - other[:, 1], g.seat_diameter_mm / 2.0 + 1.5, strict=True)
        ok[wood_s] &= near
        for sl in (ring_s, wood_s):
            ok[sl] &= ~rays.passes(sl, z, top, np.take(centres, seat[sl], axis=0), reach)
        # (each test below over the blocks of samples whose rays may reach its axis: the others
        # cannot, by the block's centre's ray and its farthest sample; the same answers)
        # the neighbours' tokens; the roof (skirt and cone inside its cylinder) and the figure
        # hide what lies behind them
        blocks = (reader._block_seat, reader._block_len, reader._block_reach, reader._block_upper)
        ok &= ~rays.passes_any(blocks, centres, [
            (z, top, np.roll(centres, 1, axis=0), reach), (z, top, np.roll(centres, -1, axis=0), reach),
            (g.roof_bottom_z_mm, g.roof_top_z_mm, np.asarray(g.axis_mm, dtype=np.float64), g.roof_radius_mm + 1.0),
            (z, g.figure_top_z_mm, np.asarray(g.figure_mm, dtype=np.float64), g.figure_radius_mm + 1.0)])
        keep = np.flatnonzero(ok)
        self.idx = np.take(px[:, 1], keep) * w + np.take(px[:, 0], keep)
        self.seg = np.take(reader._layout_seg, keep)
        #: per sample, its sector (0-7) of the wood around its seat (-1 for other parts)
        self.sector = np.take(reader._layout_sectors, keep)
        seat = np.take(seat, keep)
        self.unit = np.take(reader._print_unit, seat, axis=0)
        self.print_cl = np.take(reader._print_cl, seat)
        self.print_l = np.take(reader._print_l, seat)
        self.strict_cl = np.take(reader._strict_cl, seat)
        self.angle_deg = angle
        #: the roof marker's angle this plan was made for (its seats at ``angle_deg``)
        self.roof_angle_deg = angle
        self.camera = cam
        self.shape = tuple(shape[:2])
        self._groups: _SampleGroups | None = None

    def groups(self, reader: MonsieurReader) -> _SampleGroups:
        """The plan's samples grouped for the seats' reading, all of them used (made once)."""
        if self._groups is None:
            self._groups = _SampleGroups(reader, self, np.ones(len(self.seg), dtype=bool))
        return self._groups


class _SampleGroups:
    """The seats' samples grouped for :meth:`MonsieurReader._seats_pass`: what depends on the
    plan (and the samples used) only, not on the frame's pixels.

    Attributes (``N`` the plan's samples):
        seg: ``N`` each sample's segment (``_PARTS * seat + part``; unused samples in the spare
            segment ``_PARTS * n``).
        seat: ``N`` its seat (``n`` for the unused); ``seat_of``: the same, at most ``n - 1``.
        ring, middle: ``N`` bool, the used samples of the clear ring, of the middle.
        count: ``_PARTS * n + 1`` float64, samples per segment.
        flag_at: ``6 N`` the places of six per-sample tests' counts in one bincount.
        wood: the used samples of the wood around the seats (indices); ``wood_key``: their
            seat and sector (``8 seat + sector``); ``wood_count``: ``8 n`` samples per key.
        print_floor: ``N`` float32, the least chroma / lightness of a print pixel.
    """

    def __init__(self, reader: MonsieurReader, plan: _SeatPlan, use: np.ndarray):
        n = reader.geometry.n_seats
        segs = _PARTS * n
        self.seg = seg = np.where(use, plan.seg, segs)
        self.seat = seg // _PARTS
        self.seat_of = np.minimum(self.seat, n - 1)
        used = seg < segs
        self.ring = (seg % _PARTS == 0) & used
        self.middle = (seg % _PARTS == 1) & used
        self.count = np.bincount(seg, minlength=segs + 1).astype(np.float64)
        self.flag_at = (np.arange(6)[:, None] * (segs + 1) + seg[None, :]).ravel()
        self.wood = np.flatnonzero((plan.sector >= 0) & used)
        self.wood_key = self.seat[self.wood] * 8 + plan.sector[self.wood]
        self.wood_count = np.bincount(self.wood_key, minlength=n * 8)[: n * 8]
        self.print_floor = np.maximum(reader.print_share * plan.print_cl, reader.kid_chromaticity)
        self._wood_groups: tuple[np.ndarray, ...] | None = None

    def wood_groups(self) -> tuple[np.ndarray, ...] | None:
        """:func:`_groups_of` of :attr:`wood_key` (``8 n`` groups), made once (None without wood
        samples: :func:`_group_median` then takes its general path)."""
        if self._wood_groups is None and len(self.wood_key):
            self._wood_groups = _groups_of(self.wood_key, len(self.wood_count), keep=False)
        return self._wood_groups


def _group_median(key: np.ndarray, values: np.ndarray, n_keys: int, groups: tuple[np.ndarray, ...] | None = None,
                  keep: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The median of ``values`` (``N`` float) in each group ``key`` (``N`` int, 0 to
    ``n_keys - 1``): ``n_keys`` float64 (NaN for an empty group) and the groups' counts
    (``n_keys`` int, read-only). One sort for all groups. ``groups``: :func:`_groups_of` of
    ``key`` when the caller keeps it (the same values); ``keep``: False for a key not asked
    again (its groups are not kept)."""
    if values.dtype == np.float32 and 0 < len(key) and n_keys < 2 ** 31:
        # the groups' part (counts, the group words, each group's middle places) kept for the
        # next call with the same groups (the seats' reading asks several medians of each)
        count, high, lo, hi, has = groups if groups is not None else _groups_of(key, n_keys, keep)
        bits = np.ascontiguousarray(values).view(np.uint32)
        if bits.max() < 0x80000000:
            # every value 0 or above (-0.0 aside): their bits sort as the values do, so one sort
            # of the words (the group in the high half, the bits in the low) orders them by
            # group then value, as below
            v = np.sort(high | bits).astype(np.uint32).view(np.float32)
        else:
            word = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(0x80000000)).astype(np.uint64) | high
            low = np.sort(word).astype(np.uint32)
            v = np.where(low >> np.uint32(31), low & np.uint32(0x7FFFFFFF), ~low).view(np.float32)
        out = np.full(n_keys, np.nan)
        out[has] = 0.5 * (v[lo].astype(np.float64) + v[hi])
        return out, count
    out = np.full(n_keys, np.nan)
    count = np.bincount(key, minlength=n_keys)[:n_keys]
    if len(key) == 0:
        return out, count
    if values.dtype == np.float32 and n_keys < 2 ** 31:
        # one sort of 64-bit words: the group in the high half, the value's bits in the low half
        # made to sort as the floats do (the sign bit set on positives, every bit flipped on
        # negatives): the same order as sorting by group then value
        bits = np.ascontiguousarray(values).view(np.uint32)
        word = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(0x80000000)).astype(np.uint64)
        word |= np.asarray(key, dtype=np.uint64) << np.uint64(32)
        low = np.sort(word).astype(np.uint32)  # (the low half: the value's sortable bits)
        v = np.where(low >> np.uint32(31), low & np.uint32(0x7FFFFFFF), ~low).view(np.float32).astype(np.float64)
    else:
        v = np.asarray(values, dtype=np.float64)[np.lexsort((values, key))]
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    has = count > 0
    lo = start + (count - 1) // 2
    hi = start + count // 2
    out[has] = 0.5 * (v[lo[has]] + v[hi[has]])
    return out, count


#: the last groups :func:`_groups_of` made, by their keys' bytes (a few: one frame's)
_GROUPS: dict[tuple[int, bytes], tuple[np.ndarray, ...]] = {}


def _groups_of(key: np.ndarray, n_keys: int, keep: bool = True) -> tuple[np.ndarray, ...]:
    """For :func:`_group_median`: the groups' counts (``n_keys`` int, read-only), the keys
    as the high half of 64-bit words (``N`` uint64), each non-empty group's lower and upper
    middle places in the sorted values, and which groups are non-empty (``n_keys`` bool);
    kept by the keys' bytes for the next calls with the same groups (with ``keep``; without,
    worked out and not kept: a key asked once costs no hashing of its bytes)."""
    k = np.ascontiguousarray(key)
    tag = (n_keys, k.dtype.str.encode() + k.tobytes()) if keep else None
    got = _GROUPS.get(tag) if keep else None
    if got is None:
        count = np.bincount(k, minlength=n_keys)[:n_keys]
        count.flags.writeable = False
        start = np.concatenate([[0], np.cumsum(count)[:-1]])
        has = count > 0
        got = (count, k.astype(np.uint64) << np.uint64(32), (start + (count - 1) // 2)[has], (start + count // 2)[has], has)
        if keep:
            if len(_GROUPS) >= 16:
                _GROUPS.clear()
            _GROUPS[tag] = got
    return got


def _within(dx: np.ndarray, dy: np.ndarray, radius: float, strict: bool = False) -> np.ndarray:
    """``np.hypot(dx, dy) <= radius`` (``< radius`` with ``strict``) for ``N`` float64 offsets,
    told from the squared length where it is clear (more than a millionth of the radius away)
    and from ``np.hypot`` itself near the radius: the same answers, a fraction of the time."""
    d2 = dx * dx + dy * dy
    r2 = radius * radius
    out = d2 < r2
    near = np.flatnonzero(np.abs(d2 - r2) <= 1e-6 * r2)
    if len(near):
        d = np.hypot(dx[near], dy[near])
        out[near] = d < radius if strict else d <= radius
    return out


def _ray_passes(camera_mm: np.ndarray, pts: np.ndarray, z: np.ndarray, z_lo: float, z_hi: float,
                centres: np.ndarray, radius: float) -> np.ndarray:
    """Do the rays from points (``N x 2`` mm at heights ``z``, ``N``) to the camera's centre
    (``3`` mm) pass within ``radius`` mm of a vertical axis through ``centres`` (``2``: one
    for all, or ``N x 2``: each point its own) between heights ``z_lo`` and ``z_hi``? ``N`` bool.

    The ray's part between the two heights is a segment in plan view; its nearest point to the
    centre decides (exact for a vertical cylinder). One-dimensional arrays throughout (the
    seats' plan makes several such tests of every sample)."""
    zc = float(camera_mm[2])
    zz = np.asarray(z, dtype=np.float64)
    span = np.maximum(zc - zz, 1e-6)
    lo = np.clip((np.maximum(z_lo, zz) - zz) / span, 0.0, 1.0)
    hi = np.clip((z_hi - zz) / span, 0.0, 1.0)
    tx = camera_mm[0] - pts[:, 0]
    ty = camera_mm[1] - pts[:, 1]
    cen = np.asarray(centres, dtype=np.float64)
    cx, cy = (cen[0], cen[1]) if cen.ndim == 1 else (cen[:, 0], cen[:, 1])
    rx = cx - (pts[:, 0] + lo * tx)
    ry = cy - (pts[:, 1] + lo * ty)
    w = hi - lo
    bx, by = w * tx, w * ty
    t = np.clip((rx * bx + ry * by) / np.maximum(bx * bx + by * by, 1e-12), 0.0, 1.0)
    dx, dy = rx - t * bx, ry - t * by
    return (dx * dx + dy * dy <= radius * radius) & (w > 0)


class _Rays:
    """The rays from sample points to the camera's centre, for :meth:`passes` tests.

    Args:
        camera_mm: ``3`` mm, the camera's centre.
        pts: ``N x 2`` mm, the points.
        heights: ``2`` mm: every point is at ``heights[0]``, but those of ``upper`` (a slice
            of the points) at ``heights[1]``.
        upper: that slice.
    """

    def __init__(self, camera_mm: np.ndarray, pts: np.ndarray, heights: np.ndarray, upper: slice):
        self.camera = np.asarray(camera_mm, dtype=np.float64)
        self.x = np.ascontiguousarray(pts[:, 0])
        self.y = np.ascontiguousarray(pts[:, 1])
        self.tx = self.camera[0] - self.x
        self.ty = self.camera[1] - self.y
        self.heights = np.asarray(heights, dtype=np.float64)
        self.span = np.maximum(float(self.camera[2]) - self.heights, 1e-6)
        self.which = np.zeros(len(pts), dtype=np.intp)
        self.which[upper] = 1
        self._kept: dict[tuple[float, float, int, int], tuple[np.ndarray, ...]] = {}

    def _segments(self, sl: slice, z_lo: float, z_hi: float) -> tuple[np.ndarray, ...]:
        """The rays' parts between heights ``z_lo`` and ``z_hi`` in plan view, for the points
        ``sl``: start (x, y), run (x, y), its squared length (at least 1e-12) and whether it is
        not empty; kept for the next test of the same heights (a slice of a kept range is
        its part of it)."""
        for (lo_z, hi_z, start, stop), got in self._kept.items():
            if lo_z == z_lo and hi_z == z_hi and start <= sl.start and sl.stop <= stop:
                cut = slice(sl.start - start, sl.stop - start)
                return tuple(v[cut] for v in got)
        zz = self.heights
        lo2 = np.clip((np.maximum(z_lo, zz) - zz) / self.span, 0.0, 1.0)
        w2 = np.clip((z_hi - zz) / self.span, 0.0, 1.0) - lo2
        which = self.which[sl]
        lo, w = lo2[which], w2[which]
        tx, ty = self.tx[sl], self.ty[sl]
        bx, by = w * tx, w * ty
        got = (self.x[sl] + lo * tx, self.y[sl] + lo * ty, bx, by, np.maximum(bx * bx + by * by, 1e-12), w > 0)
        self._kept[(z_lo, z_hi, sl.start, sl.stop)] = got
        return got

    def passes_any(self, blocks: tuple[np.ndarray, ...], seat_centres: np.ndarray,
                   tests: Sequence[tuple[float, float, np.ndarray, float]]) -> np.ndarray:
        """Does each point's ray pass any of the ``tests`` (``N`` bool): each test ``(z_lo, z_hi,
        axes, radius)`` is :meth:`passes` over every point, each point's axis its block's. The
        points come in blocks (``blocks``: each block's seat, point count, the farthest of its
        points from the seat's centre in ``seat_centres`` (``n x 2`` mm), whether they lie at
        ``heights[1]``; the blocks in turn cover the points); a block of seat ``k`` has the
        axis ``axes[k]`` (``axes``: ``n x 2``, or one ``2`` for all). A block whose seat
        centre's ray passes farther than ``radius`` plus that reach (and a millimetre) from its
        axis between the heights has no point within ``radius`` (the ray of a point ``d`` from
        the centre is, at every height, within ``d`` of the centre's); only the other blocks'
        points are tested, each with :meth:`passes`'s arithmetic: the same answers."""
        seat, count, reach, upper = blocks
        cam = self.camera
        z_lo = np.array([t[0] for t in tests], dtype=np.float64)[:, None]
        z_hi = np.array([t[1] for t in tests], dtype=np.float64)[:, None]
        radius = np.array([t[3] for t in tests], dtype=np.float64)
        axes = np.stack([np.asarray(t[2], dtype=np.float64)[seat] if np.ndim(t[2]) == 2
                         else np.broadcast_to(np.asarray(t[2], dtype=np.float64), (len(seat), 2)) for t in tests])
        # each test's rays' parts between its heights at the two heights (as _segments), T x 2
        lo2 = np.clip((np.maximum(z_lo, self.heights) - self.heights) / self.span, 0.0, 1.0)
        w2 = np.clip((z_hi - self.heights) / self.span, 0.0, 1.0) - lo2
        level = upper.astype(np.intp)
        lo, w = lo2[:, level], w2[:, level]  # T x B
        c = seat_centres[seat]
        run = cam[None, :2] - c
        r = axes - (c[None] + lo[..., None] * run[None])
        b = w[..., None] * run[None]
        t = np.clip((r * b).sum(axis=2) / np.maximum((b * b).sum(axis=2), 1e-12), 0.0, 1.0)
        q = r - t[..., None] * b
        near = (w > 0) & (np.hypot(q[..., 0], q[..., 1]) - reach[None] <= radius[:, None] + 1.0)
        out = np.zeros(len(self.x), dtype=bool)
        for i in np.flatnonzero(near.any(axis=1)).tolist():
            sel = np.repeat(near[i], count)  # (boolean gathers: numpy 1.24's take is slow)
            n_sel = count[near[i]]
            lo_i = np.repeat(lo2[i][level[near[i]]], n_sel)
            w_i = np.repeat(w2[i][level[near[i]]], n_sel)
            tx, ty = self.tx[sel], self.ty[sel]
            bx, by = w_i * tx, w_i * ty
            x0 = self.x[sel] + lo_i * tx
            y0 = self.y[sel] + lo_i * ty
            den = np.maximum(bx * bx + by * by, 1e-12)
            rx = np.repeat(axes[i, near[i], 0], n_sel) - x0
            ry = np.repeat(axes[i, near[i], 1], n_sel) - y0
            tt = np.clip((rx * bx + ry * by) / den, 0.0, 1.0)
            dx, dy = rx - tt * bx, ry - tt * by
            out[sel] |= (dx * dx + dy * dy <= float(radius[i]) * float(radius[i])) & (w_i > 0)
        return out

    def passes(self, sl: slice, z_lo: float, z_hi: float, centres: np.ndarray, radius: float) -> np.ndarray:
        """Do the rays of the points ``sl`` (a slice with its start and stop) pass within
        ``radius`` mm of a vertical axis through ``centres`` (``2``: one for all, or one per
        point of ``sl``: ``M x 2``) between heights ``z_lo`` and ``z_hi``? ``M`` bool.

        The ray's part between the two heights is a segment in plan view; its nearest point to
        the centre decides (exact for a vertical cylinder): :func:`_ray_passes`'s answer, its
        arithmetic the same."""
        x0, y0, bx, by, den, some = self._segments(sl, z_lo, z_hi)
        cen = np.asarray(centres, dtype=np.float64)
        cx, cy = (cen[0], cen[1]) if cen.ndim == 1 else (cen[:, 0], cen[:, 1])
        rx = cx - x0
        ry = cy - y0
        t = np.clip((rx * bx + ry * by) / den, 0.0, 1.0)
        dx, dy = rx - t * bx, ry - t * by
        return (dx * dx + dy * dy <= radius * radius) & some


class MonsieurReader:
    """Reads Monsieur Carrousel frames.

    Args:
        geometry: the table (default: ``monsieur-board.toml`` of the calibration folder).
        seat_margin_deg: a finger closer than this (degrees) to the line between two seats
            points at ``"ambiguous"`` (default 4.0, ``monsieur_carrousel.toml`` [board]).
        zone_margin_deg: a seat closer than this to the sun/rain boundary is ``"ambiguous"``.
        registrar: the fixed markers' registrar (e.g. with the lens from ``companion calibrate
            intrinsics``); default one built from the geometry, lens distortion-free.
        core_mm: radius (mm) of a seat's middle: always under a token's base (base radius 9
            minus the token's 2.5 mm placement tolerance, less a 3 mm allowance for the angle's
            and the registration's error at the seat).
        kid_lightness: a light pale pixel (a token's) has an L*, scaled by its seat's print
            lightness (the ring's print stands for the calibrated print), of at least this (the
            tokens are printed at L* 70-97; halfway to the glyph's 4 under the shade of their
            own sides is about 35).
        kid_chromaticity: a pale pixel (a token) has a chroma (C*ab) under this share of its
            lightness; the tokens' wood and pastels are 0.26-0.52, the prints 0.93-1.66 (their
            colours in the geometry file).
        min_visible: fraction (0-1) of a seat's middle and head samples that must be in the
            frame and not hidden (by the roof, the figure or another seat's token).
        min_own_ring: fraction (0-1) of a seat's clear ring that must show the seat's print
            (else something covers the seat: a hand, its shadow, glare).
        print_share: a print pixel has at least this share of its print colour's chroma for its
            lightness (and more than ``kid_chromaticity``), and a hue within
            ``hue_tolerance_deg`` of it (the camera keeps 0.58-0.8 of the prints' chroma on
            monsieur_030 and monsieur_045).
        hue_tolerance_deg: degrees (a*b* hue angle) a print pixel may be off its print colour
            (the white reference leaves casts of a few degrees; neighbouring prints are 30-60
            apart).
        dark_lightness: a glyph pixel's L*, scaled by the seat's print lightness, is under this
            (printed at 14/255, L* 4, it reads 24-35 through blur and JPEG on monsieur_030 and
            monsieur_045; a token, L* 70-97 printed, reads 38 or more in its shade).
        max_ring_pale: a kid's clear ring (which no token reaches and no token can hide from
            the camera) has at most this share (0-1) of light pale pixels: more is a hand or a
            finger over the seat (a finger reaching the seat's middle crosses the ring at least
            once: a child's finger, 10 mm or more across, covers 12 % or more of the ring's
            82 mm; a token's blurred edge, 0.5 mm from the ring at its 2.5 mm offset, reaches a
            few per cent of it).
        frozen_s: in a stream read with times (``read(..., t=...)``), identical frames for
            more than this many seconds read ``"camera frozen: ..."``.
        die: the die reader (default: one on this geometry).
        min_behind: samples behind a token's place (see the module notes) a seat needs for them
            to count.
        behind_print: share (0-1) of those showing the seat's print for ``"empty"``.
        max_ring_pale_behind: share (0-1) of light pale pixels the clear ring may have for a
            kid told by the samples behind it (a token's blurred edge reaches it; a hand or a
            finger across the seat covers a fifth or more).
        token_margin: behind a token's place a print pixel is at least this many times as
            saturated (chroma / lightness) as every token colour within the hue tolerance of
            the seat's print (``[kids.srgb]`` of the geometry file).
        glare_share: a sector of the wood around a seat with its chroma / lightness under this
            share of the disc's median sector (and lighter than it) is glare.

    Every bound comes from the print, paper and token colours of the table (the geometry file),
    not from the photographs.
    """

    def __init__(self, geometry: MonsieurGeometry | None = None, seat_margin_deg: float = 4.0,
                 zone_margin_deg: float = 6.0, registrar: Registrar | None = None,
                 core_mm: float = 3.5, kid_lightness: float = 35.0, kid_chromaticity: float = 0.6,
                 min_visible: float = 0.6, min_own_ring: float = 0.75, print_share: float = 0.45,
                 hue_tolerance_deg: float = 35.0, dark_lightness: float = 36.0, max_ring_pale: float = 0.1, frozen_s: float = 3.0,
                 min_behind: int = 8, behind_print: float = 0.6, max_ring_pale_behind: float = 0.15,
                 token_margin: float = 1.4, glare_share: float = 0.7,
                 die: DieReader | None = None):
        self.geometry = g = geometry if geometry is not None else MonsieurGeometry.load()
        self.seat_margin_deg = float(seat_margin_deg)
        self.zone_margin_deg = float(zone_margin_deg)
        self.registrar = registrar if registrar is not None else Registrar(g.markers, g.dictionary)
        self.kid_lightness = float(kid_lightness)
        self.kid_chromaticity = float(kid_chromaticity)
        self.min_visible = float(min_visible)
        self.min_own_ring = float(min_own_ring)
        self.print_share = float(print_share)
        self.cos_hue = float(np.cos(np.radians(hue_tolerance_deg)))
        self.dark_lightness = float(dark_lightness)
        self.max_ring_pale = float(max_ring_pale)
        self.refine_deg = 2.5
        self.refine_step_deg = 0.25
        self.refine_gain = 0.3
        # the seats' print (11.5 and 14 mm from a seat's centre, past its glyph) and the wood
        # just beyond its edge (19.5 mm), 16 directions each, for the angle's fit to the prints
        th = np.radians(np.arange(0.0, 360.0, 22.5))
        ring = np.stack([np.cos(th), np.sin(th)], axis=1)
        self._fit_in = np.concatenate([ring * r for r in (11.5, 14.0)])
        self._fit_out = ring * 19.5
        self.min_behind = int(min_behind)
        self.glare_share = float(glare_share)
        self.glare_lighter = 5.0
        #: the carousel angle's error (2 degrees at the seats' 85 mm: 3 mm) less than this: the
        #: samples behind a token are planned this much inside the token's sure part
        self.behind_margin_mm = 3.0
        self.max_ring_pale_behind = float(max_ring_pale_behind)
        self.behind_print = float(behind_print)
        self.ring_edge_mm = 3.0
        #: a kid's middle may read this share (0-1) of its seat's print (its foot tinted by the
        #: print's light) when its head is pale and light throughout and no glyph shows
        self.foot_print = 0.4
        #: a kid told by the print behind its token shows the glyph's darkness on less than this
        #: share (0-1) of its middle: a token covers the whole middle, its side in shade reading
        #: as dark over part of it (0.53 of monsieur_057's, a dim photograph); a middle mostly
        #: dark is the glyph, under a hand that hides the head's place and the print behind (a
        #: rendered hand over the roof read an empty seat's middle 0.85 dark, its head's place
        #: and behind it the hand's pale skin)
        self.behind_core_dark = 0.6
        #: no seat reads a kid where the print behind a token's place shows (any print, not only
        #: the strict test's) on this share (0-1) of those samples: a token would hide them all
        self.behind_bars_kid = 0.6
        #: clear-ring samples a seat needs to be read (its print share, 75 %, and its local light
        #: are measured there: 12 samples 1 mm apart, each 8 % of the share; a token's own
        #: possible place hides half the ring or more from a tilted camera)
        self.min_ring = 12
        self.frozen = FrozenFrames(frozen_s)
        self._core = _disc(core_mm, step=0.7)
        self._head = _disc(3.5, step=0.7)
        # the seat's print beyond its glyph (half of glyph_mm across, + 1.5 mm) to the ring's edge
        # the disc's wood around the seat, in 8 sectors (a glossy print's glare shows there)
        self._wood = _disc(g.seat_diameter_mm / 2.0 + 6.0, inner=g.seat_diameter_mm / 2.0 + 2.0, step=1.5)
        self._wood_sector = (np.floor((np.degrees(np.arctan2(self._wood[:, 1], self._wood[:, 0])) % 360.0) / 45.0)).astype(np.int64)
        self._behind = _disc(g.seat_diameter_mm / 2.0 - self.ring_edge_mm, inner=g.glyph_mm / 2.0 + 1.5, step=1.2)
        self._ring = _disc(g.seat_diameter_mm / 2.0 - self.ring_edge_mm, inner=12.0)
        half = g.marker_size_mm / 2.0 + (g.marker_paper_mm - g.marker_size_mm) / 4.0
        u = np.arange(-half, half + 1e-9, 1.0)
        xx, yy = np.meshgrid(u, u)
        sq = np.stack([xx.ravel(), yy.ravel()], axis=1)
        self._paper = sq[np.abs(sq).max(axis=1) >= half - 0.5]
        offsets = (self._ring, self._core, self._head, self._behind, self._wood)
        n = g.n_seats
        self._planned = np.array([[len(o)] * n for o in offsets], dtype=np.float64)
        self._layout = (np.concatenate([np.repeat(np.arange(n), len(o)) for o in offsets]),
                        np.concatenate([np.full(n * len(o), j) for j, o in enumerate(offsets)]),
                        np.concatenate([np.tile(o, (n, 1)) for o in offsets]))
        #: each sample's segment (its seat's parts in turn) and its sector of the wood (-1 elsewhere)
        self._layout_seg = _PARTS * self._layout[0] + self._layout[1]
        #: each sample's neighbouring seats (the one before, the one after)
        self._layout_neighbours = tuple((self._layout[0] + step) % n for step in (-1, 1))
        ends = np.cumsum([0] + [n * len(o) for o in offsets])
        #: each part's samples in the layout (ring, middle, head, behind, wood), contiguous
        self._part_slices = tuple(slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:]))
        self._layout_sector = np.concatenate([np.tile(self._wood_sector, n) if o is self._wood else np.full(n * len(o), -1)
                                              for o in offsets])
        self._layout_sectors = np.where(self._layout[1] == 4, self._layout_sector, -1)
        #: the layout's blocks (a part of a seat: its samples contiguous, parts in turn, seats in
        #: turn within a part): each one's seat, sample count, farthest sample from the seat's
        #: centre (mm) and whether it lies at the head's height (the plan's ray tests pass over
        #: the blocks no ray of which can reach the tested axis)
        self._block_seat = np.tile(np.arange(n), len(offsets))
        self._block_len = np.repeat([len(o) for o in offsets], n)
        self._block_reach = np.repeat([float(np.hypot(o[:, 0], o[:, 1]).max()) for o in offsets], n)
        self._block_upper = np.repeat([o is self._head for o in offsets], n)
        names = tuple(g.print_srgb)
        self.references = ColourReferences(names, np.array([_lab_of_print(g.print_srgb[n], g.paper_srgb) for n in names]))
        self.colour_check = ColourCheck(self.references)
        seat_lab = np.array([self.references.lab[names.index(c)] for c in g.seat_colours], dtype=np.float64)
        chroma = np.hypot(seat_lab[:, 1], seat_lab[:, 2])
        self._print_unit = (seat_lab[:, 1:] / chroma[:, None]).astype(np.float32)
        self._print_cl = (chroma / seat_lab[:, 0]).astype(np.float32)
        self._print_l = seat_lab[:, 0].astype(np.float32)
        # the print behind a token counts only where no token's colour could pass for it: more
        # saturated (chroma / lightness) than token_margin times every token colour within the
        # hue tolerance of the seat's print (natural wood, 0.52, is 22 degrees from yellow)
        kid_lab = np.array([_lab_of_print(c, g.paper_srgb) for c in g.kid_srgb.values()], dtype=np.float64)
        kid_cl = np.hypot(kid_lab[:, 1], kid_lab[:, 2]) / kid_lab[:, 0]
        kid_unit = kid_lab[:, 1:] / np.maximum(np.hypot(kid_lab[:, 1], kid_lab[:, 2]), 1e-9)[:, None]
        near = (self._print_unit.astype(np.float64) @ kid_unit.T) >= self.cos_hue  # seats x tokens
        self._kid_min_cl = float(kid_cl.min()) / 2.0
        self._strict_cl = np.maximum(np.where(near, kid_cl[None, :], 0.0).max(axis=1) * token_margin,
                                     self._print_cl * self.print_share).astype(np.float32)
        self.die_reader = die if die is not None else DieReader(g, self.references)
        self._roof_detector = _detector(g.dictionary, window=True)
        self._roof_px: np.ndarray | None = None
        self._roof_kept: tuple[Registration, bytes, RoofReading] | None = None
        self._plan: _SeatPlan | None = None
        #: why each seat of the last frame read ``"unknown"`` ("" for a seat read)
        self.seat_reasons: tuple[str, ...] = ("",) * g.n_seats
        self._covers = g.glyph_covers_middle or (True,) * g.n_seats
        self.die_change_levels = 3.0
        #: sample points (4 mm apart) changed by more than 40 levels that make the die area
        #: changed: half a die's top face at that spacing (a die put down, taken away or moved
        #: changes two to four times as many; a still table's noise and JPEG, 0-2 on the rendered
        #: kinds)
        self.die_change_points = max(2, int((g.die_size_mm / 4.0) ** 2) // 2)
        self._die_cache: tuple[_SeatPlan, np.ndarray, np.ndarray, DieReading] | None = None
        self._paper_plan: tuple[Registration, tuple[int, int], np.ndarray, np.ndarray] | None = None
        #: per set of fixed markers, their paper's sample points (board mm) and each one's marker
        self._paper_mm: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        #: the frame's white with the paper's clipped channels at their brightest (None: none clipped)
        self._white_hi: np.ndarray | None = None
        #: the frame's blur from the markers' edges (Gaussian sigma, px; None: not measured)
        self._edge_sigma_px: float | None = None
        self._edge_kept: tuple[Registration, float | None] | None = None

    # ------------------------------------------------------------------ geometry answers
    def pointed(self, angle_deg: float) -> tuple[int | str, float]:
        """The seat pointed at with the carousel at ``angle_deg``: (seat index or
        ``"ambiguous"``, signed offset of that seat's centre from the finger, degrees)."""
        g = self.geometry
        rel = (g.finger_deg - angle_deg - g.seat_first_deg) / g.seat_pitch_deg
        k = int(np.round(rel)) % g.n_seats
        offset = ((angle_deg + g.seat_disc_angle(k) - g.finger_deg + 180.0) % 360.0) - 180.0
        if g.seat_pitch_deg / 2.0 - abs(offset) < self.seat_margin_deg:
            return AMBIGUOUS, offset
        return k, offset

    def zones(self, angle_deg: float) -> tuple[str, ...]:
        """Each seat's weather zone with the carousel at ``angle_deg`` (``"ambiguous"`` within
        ``zone_margin_deg`` of the boundary)."""
        g = self.geometry
        out = []
        for k in range(g.n_seats):
            b = (angle_deg + g.seat_disc_angle(k)) % 360.0
            out.append(AMBIGUOUS if g.zone_boundary_distance(b) < self.zone_margin_deg else g.zone_of(b))
        return tuple(out)

    # ------------------------------------------------------------------ reading
    def read(self, frame: np.ndarray, stream: bool = False, t: float | None = None) -> MonsieurReading:
        """Read one frame.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            stream: frames of one video stream: keep the fixed markers' registration between
                frames (:meth:`Registrar.update`), look for the roof marker near its last place
                first, reuse the seats' plan while the carousel has not turned.
            t: the frame's time (s) in a stream, to tell a frozen camera (optional).

        Returns:
            The :class:`MonsieurReading`.

        Raises:
            ValueError: a frame that is not ``H x W x 3 uint8``.
        """
        check_bgr_frame(frame)
        g = self.geometry
        if t is not None:
            held = self.frozen.update(t, frame)
            if held is not None:
                return MonsieurReading(f"camera frozen: the same frame for {held:.1f} s")
        found: dict[int, np.ndarray] | None = None
        if stream:
            before = self.registrar.found
            reg = self.registrar.update(frame)
            if reg is not None and self.registrar.found is not before:
                found = self.registrar.found  # a full detection of this frame ran: it saw the roof too
        else:
            grey = _grey(frame)
            found = detect_markers(grey, detector=self.registrar._detector)
            reg = self.registrar.register(grey, found)
        if reg is None:
            self._roof_px = None
            return MonsieurReading(self.registrar.status or "board not visible")
        corners = None
        if found is not None:
            corners = found.get(g.roof_marker_id)
        if corners is None and stream:
            corners = self._roof_near(frame)
            if corners is None and found is None:
                corners = detect_markers(frame, detector=self.registrar._detector).get(g.roof_marker_id)
        self._roof_px = None if corners is None else np.asarray(corners, np.float64)
        roof = self._roof_of(reg, corners)
        white, code = self._white(frame, reg)
        if white is None:
            return MonsieurReading("board not visible: the markers' white paper is out of the frame", registration=reg)
        # a colour cast clipping one channel of the paper: the seats read against both ends of
        # what that channel may be (companion.vision.monsieur_cast)
        self._white_hi = white_upper_bound(frame, reg, g.markers, white, code, g.marker_size_mm)
        # a lens blur beyond the calibration's: the blurred glyph's mixes may pass for a token
        # (in a stream, kept while the fixed markers' registration is: their cells unchanged)
        kept = self._edge_kept
        if not (stream and kept is not None and kept[0] is reg):
            self._edge_kept = kept = (reg, edge_blur_px(frame, reg, g.markers))
        self._edge_sigma_px = kept[1]
        if roof.camera is None:
            # the seats placed by their own print and the disc's zero mark (the camera from the
            # board plane alone): companion.vision.monsieur_seat_angle
            got, why = read_without_roof(self, frame, reg, white, code, roof.status, stream)
            if got is not None:
                return got
            fault = self.colour_check.problem(white, code, np.zeros((0, 3), np.float32))
            return MonsieurReading(fault or "ok", roof_status=f"{roof.status}; {why}", registration=reg)
        cam = roof.camera
        angle = float(roof.angle_deg)  # type: ignore[arg-type]
        plan = self._plan_for(cam, angle, frame.shape, reg, stream, frame, white)
        pix = np.take(frame.reshape(-1, 3), plan.idx, axis=0)
        lab = lab_exact(white_relative(pix, white))  # (linear_to_lab's values, its table looked up)
        pointed, offset = self.pointed(angle)
        ring = plan.seg % _PARTS == 0
        fault = self.colour_check.problem(white, code, lab[ring])
        if fault:  # the angle is geometry (marker corners), not colour: it stands
            return MonsieurReading(fault, angle, pointed, offset, zones=self.zones(angle), registration=reg, camera=cam)
        seats = self._seats(plan, pix, lab, white)
        die = self._die(frame, cam, angle, white, plan, stream)
        return MonsieurReading("ok", angle, pointed, offset, seats, self.zones(angle), die.colour, "", reg, cam,
                               die.status, self.seat_reasons)

    def _die(self, frame: np.ndarray, cam: TableCamera, angle: float, white: np.ndarray, plan: _SeatPlan,
             stream: bool) -> DieReading:
        """The die's reading; in a stream the last one is kept while the seats' plan stands (the
        registration and the carousel's angle are the same) and the die area's pixels have not
        changed (a sparse grid of them, 4 mm apart: under ``die_change_levels`` mean 8-bit
        difference, and fewer than ``die_change_points`` of them changed by more than 40
        levels: a die that tumbled to a new place, not under a hand, changes about 50 of the
        area's 6,500 points, under the 1 % once used, and kept the colour of a frame before)."""
        cached = self._die_cache
        if stream and cached is not None and cached[0] is plan:
            now = np.take(frame.reshape(-1, 3), cached[1], axis=0).astype(np.int16)
            diff = np.abs(now - cached[2])
            most = np.maximum(np.maximum(diff[:, 0], diff[:, 1]), diff[:, 2])  # (numpy reduces a short axis slowly)
            changed = int(np.count_nonzero(most > 40))
            if float(diff.mean()) < self.die_change_levels and changed < self.die_change_points:
                return cached[3]
        reading = die_under_clipped_white(self.die_reader, frame, cam, angle, white, self._white_hi)
        if stream:
            g = self.geometry
            x0, y0, x1, y1 = g.die_area_mm
            xx, yy = np.meshgrid(np.arange(x0, x1, 4.0), np.arange(y0, y1, 4.0))
            px = np.rint(cam.to_image(np.stack([xx.ravel(), yy.ravel()], axis=1), g.die_size_mm)).astype(np.int64)
            h, w = frame.shape[:2]
            ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)
            idx = px[ok, 1] * w + px[ok, 0]
            self._die_cache = (plan, idx, np.take(frame.reshape(-1, 3), idx, axis=0).astype(np.int16), reading)
        return reading

    def _roof_of(self, reg: Registration, corners: np.ndarray | None) -> RoofReading:
        """:func:`read_roof`'s reading of the roof marker's ``corners`` (``4 x 2`` pixels, or
        None); the last one kept for a frame of the same registration whose corners are the
        same to the bit (a still table in a stream): the same reading, its camera model the
        same object, so the seats' plan and the die's reading made for it stand."""
        if corners is None:
            return read_roof(self.geometry, reg, None)
        key = np.asarray(corners, dtype=np.float64).tobytes()
        kept = self._roof_kept
        if kept is not None and kept[0] is reg and kept[1] == key:
            return kept[2]
        roof = read_roof(self.geometry, reg, corners)
        self._roof_kept = (reg, key, roof)
        return roof

    def _roof_near(self, frame: np.ndarray) -> np.ndarray | None:
        """The roof marker's corners found in a window around its last place (the circle its
        corners sweep as the carousel turns, plus 12 pixels), or None."""
        last = self._roof_px
        if last is None:
            return None
        h, w = frame.shape[:2]
        c = last.mean(axis=0)
        r = float(np.max(np.linalg.norm(last - c, axis=1))) * 1.15 + 12.0
        x0, y0 = max(int(c[0] - r), 0), max(int(c[1] - r), 0)
        x1, y1 = min(int(c[0] + r) + 1, w), min(int(c[1] + r) + 1, h)
        if x1 - x0 < 16 or y1 - y0 < 16:
            return None
        crop = _grey(np.ascontiguousarray(frame[y0:y1, x0:x1]))
        got = detect_markers(crop, detector=self._roof_detector).get(self.geometry.roof_marker_id)
        return None if got is None else got + np.array([x0, y0], dtype=np.float32)

    def _plan_for(self, cam: TableCamera, angle: float, shape: tuple[int, ...], reg: Registration,
                  stream: bool, frame: np.ndarray | None = None, white: np.ndarray | None = None) -> _SeatPlan:
        """The seats' plan: reused in a stream while the registration is the same, the carousel
        has not turned by more than 0.3 degrees and the camera has not moved by 5 mm. A new
        plan is made at the angle the seats' own prints fit best near the roof marker's
        (:meth:`_refine_angle`, with ``frame`` and ``white``)."""
        plan = self._plan
        if (stream and plan is not None and plan.camera.registration is reg and plan.shape == tuple(shape[:2])
                and abs((angle - plan.roof_angle_deg + 180.0) % 360.0 - 180.0) < 0.3
                and float(np.linalg.norm(plan.camera.centre_mm - cam.centre_mm)) < 5.0):
            return plan
        seats_angle = angle if frame is None or white is None else self._refine_angle(frame, cam, angle, white)
        plan = self._plan = _SeatPlan(self, cam, seats_angle, shape)
        plan.roof_angle_deg = angle
        return plan

    def _refine_angle(self, frame: np.ndarray, cam: TableCamera, angle: float, white: np.ndarray) -> float:
        """The carousel angle (degrees) within ``refine_deg`` of the roof marker's ``angle`` at
        which the seats' prints fit best: the share of each seat's own print among samples on
        its print (11.5 and 14 mm from its centre), less that among samples just beyond its
        edge (19.5 mm, the disc's wood), summed over the seats; in steps of twice
        ``refine_step_deg``, then one step either side of the best. The roof marker is 30 mm
        across; its corners, a pixel off, turn its angle by a degree or two, while the twelve
        seats' edges lie 85 mm out. The roof's angle stands when no step is better by
        ``refine_gain`` (a share summed over the seats)."""
        coarse = np.arange(-self.refine_deg, self.refine_deg + 1e-9, 2.0 * self.refine_step_deg)
        scores = self._fit_scores(frame, cam, angle, white, coarse)
        zero = float(scores[int(np.argmin(np.abs(coarse)))])
        best = float(coarse[int(np.argmax(scores))])
        fine = np.array([best - self.refine_step_deg, best + self.refine_step_deg])
        fine_scores = self._fit_scores(frame, cam, angle, white, fine)
        steps = np.concatenate([coarse, fine])
        total = np.concatenate([scores, fine_scores])
        i = int(np.argmax(total))
        if total[i] - zero < self.refine_gain:
            return angle
        return float(angle + steps[i])

    def _fit_scores(self, frame: np.ndarray, cam: TableCamera, angle: float, white: np.ndarray,
                    steps: np.ndarray) -> np.ndarray:
        """For each step (degrees, ``S``) from ``angle``: the seats' print share on their print
        less that just beyond their edge, summed over the seats (``S`` float64; see
        :meth:`_refine_angle`)."""
        g = self.geometry
        n = g.n_seats
        inner, outer = self._fit_in, self._fit_out
        offs = np.concatenate([inner, outer])
        k = np.arange(n)
        a = np.radians(angle + steps[:, None] + g.seat_first_deg + g.seat_pitch_deg * k[None, :])  # S x n
        centres = np.asarray(g.axis_mm) + g.seat_ring_radius_mm * np.stack([np.cos(a), np.sin(a)], axis=-1)
        # S x n x M x 2, a coordinate at a time (the same sums; numpy broadcasts over a last
        # axis of 2 slowly)
        pts = np.empty((len(steps), n, len(offs), 2))
        np.add(centres[:, :, None, 0], offs[None, None, :, 0], out=pts[..., 0])
        np.add(centres[:, :, None, 1], offs[None, None, :, 1], out=pts[..., 1])
        px = np.rint(cam.to_image(pts.reshape(-1, 2), g.disc_top_z_mm)).astype(np.int64)
        h, w = frame.shape[:2]
        u, v = np.ascontiguousarray(px.T)  # (each coordinate a contiguous row: the same values, faster)
        ok = (u >= 0) & (v >= 0) & (u < w) & (v < h)
        idx = np.where(ok, np.clip(v, 0, h - 1) * w + np.clip(u, 0, w - 1), 0)
        pix = np.take(frame.reshape(-1, 3), idx, axis=0)
        shape = (len(steps), n, len(offs))
        # each sample's seat print colour, broadcast over the steps and samples (S x n x M)
        u0, u1 = self._print_unit[None, :, None, 0], self._print_unit[None, :, None, 1]
        floor = np.maximum(self.print_share * self._print_cl, self.kid_chromaticity)[None, :, None]

        def print_margin(lab: np.ndarray) -> np.ndarray:
            # the three print tests' least margin (a print pixel: every one at least 0), S x n x M
            chroma = np.hypot(lab[..., 1], lab[..., 2])
            along = lab[..., 1] * u0 + lab[..., 2] * u1
            return np.minimum(np.minimum(along - self.cos_hue * chroma, chroma - 12.0), chroma - floor * lab[..., 0])

        # the fast vectorised Lab decides every pixel whose margin exceeds what its error
        # (LAB_FAST_ERROR a component) can move it; the others are decided on the exact Lab
        # (as linear_to_lab converts them): the same answers as the exact Lab's everywhere
        rel = white_relative(pix, white)
        margin = print_margin(lab_fast(rel).reshape(*shape, 3)).reshape(-1)
        is_print = margin >= 0.0
        unsure = np.flatnonzero(np.abs(margin) < 4.0 * LAB_FAST_ERROR)
        if len(unsure):
            lab = lab_exact(np.take(rel, unsure, axis=0))
            chroma = np.hypot(lab[:, 1], lab[:, 2])
            seat = (unsure // shape[2]) % n
            u = np.take(self._print_unit, seat, axis=0)
            along = lab[:, 1] * u[:, 0] + lab[:, 2] * u[:, 1]
            is_print[unsure] = ((along >= self.cos_hue * chroma) & (chroma >= 12.0)
                                & (chroma >= floor.reshape(-1)[seat] * lab[:, 0]))
        is_print &= ~clipped_pixels(pix) & ok
        score = is_print.reshape(shape)
        share = score[:, :, : len(inner)].mean(axis=2) - score[:, :, len(inner):].mean(axis=2)  # S x n
        return share.sum(axis=1)

    def _white(self, frame: np.ndarray, reg: Registration) -> tuple[np.ndarray | None, np.ndarray]:
        """The white reference: the fixed markers' paper margins (linear BGR median, 8-bit median)."""
        cached = self._paper_plan
        if cached is not None and cached[0] is reg and cached[1] == frame.shape[:2]:
            idx, which = cached[2], cached[3]
        else:
            g = self.geometry
            board = self._paper_mm.get(reg.marker_ids)
            if board is None:  # (the markers' paper points and their marker: the board's, kept)
                board = self._paper_mm[reg.marker_ids] = (
                    np.concatenate([g.markers[i].mean(axis=0) + self._paper for i in reg.marker_ids]),
                    np.repeat(np.arange(len(reg.marker_ids)), len(self._paper)))
            px = np.rint(reg.to_image(board[0])).astype(np.int64)
            h, w = frame.shape[:2]
            ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)
            idx = px[ok, 1] * w + px[ok, 0]
            which = board[1][ok]
            self._paper_plan = (reg, frame.shape[:2], idx, which)
        # a marker's clipped paper left out while another's is not (monsieur_white)
        pix = unclipped_papers(np.take(frame.reshape(-1, 3), idx, axis=0), which)
        if len(pix) < 10:
            return white_of(pix), (np.median(pix, axis=0) if len(pix) else np.zeros(3))
        # white_of's and np.median's values from one sort of the codes: the middle code of each
        # channel, or the two middle ones' mean ((a + b) / 2, float64 for the codes, float32 for
        # their linear light: the sRGB curve is increasing, so its median is the middle codes')
        s = np.sort(pix, axis=0)
        lo, hi = s[(len(s) - 1) // 2], s[len(s) // 2]
        return (_LUT[lo] + _LUT[hi]) / np.float32(2), (lo.astype(np.float64) + hi) / 2.0

    def _seats(self, plan: _SeatPlan, pix: np.ndarray, lab: np.ndarray, white: np.ndarray | None = None) -> tuple[str, ...]:
        """Each seat's state from its planned samples (see the module notes; a token is assumed
        on every neighbour: the samples one could hide are not planned). With the frame's
        ``white``, a seat is read only where it reads the same had a gain been applied to the
        codes after the camera's tone curve (:mod:`companion.vision.monsieur_tone`)."""
        if white is not None and (self._white_hi is not None or self._edge_sigma_px is not None):
            return seats_guarded(self, plan, pix, lab, white, self._white_hi, self._edge_sigma_px, _PARTS)
        if white is not None:
            return seats_under_gains(self, plan, pix, lab, white)
        return self._seats_pass(plan, pix, lab, np.ones(len(plan.seg), dtype=bool))

    def _glare(self, plan: _SeatPlan, seg: np.ndarray, chroma: np.ndarray, light: np.ndarray,
               clipped: np.ndarray, groups: _SampleGroups | None = None, ratio: np.ndarray | None = None) -> np.ndarray:
        """Per seat (``12`` bool): does a glossy print's glare reach it? The reflection adds the
        lamp's white to everything under it, so the disc's wood there is less saturated (chroma
        / lightness) than elsewhere on the disc, where shading alone keeps the ratio. The wood
        around each seat is read in 8 sectors (their medians, 5 samples or more); a sector
        under ``glare_share`` of the median sector's ratio and lighter than the median sector
        by ``glare_lighter`` (L*; clipped pixels count as white) is glare. A seat with fewer
        than 3 sectors seen, or a disc with fewer than 6, cannot be cleared."""
        n = self.geometry.n_seats
        P = _PARTS
        kept = None
        if groups is not None and ratio is not None:  # (the plan's wood samples and their keys, the pass's ratios)
            wood, key, kept = groups.wood, groups.wood_key, groups.wood_groups()
            ratio = np.where(clipped[wood], 0.0, ratio[wood])
        else:
            wood = plan.sector >= 0
            key = (seg[wood] // P) * 8 + plan.sector[wood]
            ratio = np.where(clipped[wood], 0.0, chroma[wood] / np.maximum(light[wood], 1.0))
        lit = np.where(clipped[wood], 100.0, light[wood])
        med, cnt = _group_median(key, ratio, n * 8, kept)
        med_l = _group_median(key, lit, n * 8, kept)[0]
        med = np.where(cnt >= 5, med, np.nan).reshape(n, 8)
        med_l = med_l.reshape(n, 8)
        seen = np.isfinite(med)
        if seen.sum() < 6:
            return np.ones(n, dtype=bool)
        ref = float(_median(med[seen]))  # (np.median's values, from one sort)
        ref_l = float(_median(med_l[seen]))
        # (glare adds light: a less saturated sector that is no lighter than the disc's wood is
        # a shadow under another light's colour, not glare)
        low = np.where(seen, (med < self.glare_share * ref) & (med_l >= ref_l + self.glare_lighter), False)
        return low.any(axis=1) | (seen.sum(axis=1) < 3)

    def _seats_pass(self, plan: _SeatPlan, pix: np.ndarray, lab: np.ndarray, use: np.ndarray) -> tuple[str, ...]:
        """One pass of :meth:`_seats` on the samples where ``use`` (``N`` bool) is set."""
        n = self.geometry.n_seats
        P = _PARTS
        # the samples' segments and groups (the unused samples in a spare segment): kept on the
        # plan for every pass of all its samples
        fx = plan.groups(self) if use.all() else _SampleGroups(self, plan, use)
        seg = fx.seg
        light = lab[:, 0]
        chroma = np.hypot(lab[:, 1], lab[:, 2])
        clipped = clipped_pixels(pix)
        along = lab[:, 1] * plan.unit[:, 0] + lab[:, 2] * plan.unit[:, 1]
        # print and pale exclude each other: a print pixel is at least as chromatic as the
        # palest print allows and more than any token
        is_print = ((along >= self.cos_hue * chroma) & (chroma >= 12.0) & ~clipped
                    & (chroma >= fx.print_floor * light))
        pale = (chroma < self.kid_chromaticity * light) & ~clipped
        strict = is_print & (chroma >= plan.strict_cl * light)
        segs = P * n
        count = fx.count
        # the seat's local light: the median lightness of its ring's print pixels
        sel = fx.ring & is_print
        ring_light = _group_median(fx.seat[sel], light[sel], n, keep=False)[0]
        # each pixel's lightness as it would be under the light of its seat's print (the ring's
        # print lightness stands for the calibrated print's): a glyph is dark, a token light
        rel = light * (plan.print_l / ring_light[fx.seat_of])
        dark = rel < self.dark_lightness
        bright = pale & (rel >= self.kid_lightness)
        # a token's colour is never neutral (the palest, pastel sky, keeps 0.27 of its
        # lightness as chroma; shading keeps the ratio): a middle whose light pale pixels are
        # grey (their median chroma / lightness under half that; noise scatters single
        # pixels) is a glyph or a shadow under a glossy print's glare, not a token
        ratio = chroma / np.maximum(light, 1.0)
        sel = fx.middle & bright
        grey_med = _group_median(fx.seat[sel], ratio[sel], n, keep=False)[0]
        grey = np.isfinite(grey_med) & (grey_med < self._kid_min_cl)
        # each test's count per segment from one bincount (sums of 0 and 1: exact)
        print_n, dark_n, bright_n, pale_n, strict_n, clip_n = np.bincount(
            fx.flag_at, weights=np.concatenate([is_print, dark, bright, pale, strict, clipped]),
            minlength=6 * (segs + 1)).reshape(6, segs + 1)
        glare = self._glare(plan, seg, chroma, light, clipped, fx, ratio)
        covered = print_beyond_seat(plan, seg, strict, is_print, chroma, light, n, P, groups=fx, ratio=ratio)
        # (the per-seat rules on Python numbers: the same values, numpy's scalars cost more than the rules)
        count, print_n, dark_n, bright_n, pale_n, strict_n, clip_n = (
            v.tolist() for v in (count, print_n, dark_n, bright_n, pale_n, strict_n, clip_n))
        glare, covered, grey = glare.tolist(), covered.tolist(), grey.tolist()
        out = []
        why = []
        for k in range(n):
            r, c, hd, bk = P * k, P * k + 1, P * k + 2, P * k + 3
            if count[r] < self.min_ring or count[c] < self.min_visible * plan.planned[1, k] or count[c] < 5:
                out.append(UNKNOWN)
                why.append("hidden (out of the frame, behind the roof, the figure or a token)")
                continue
            if print_n[r] / count[r] < self.min_own_ring:
                out.append(UNKNOWN)  # the seat's own print is not clear around it: a hand, a shadow, glare
                why.append("its print is not clear around it (a hand, a shadow, glare)")
                continue
            if covered[k]:
                out.append(UNKNOWN)  # its print's colour on the wood beyond it: a sleeve of that hue over it
                why.append("its print's colour reaches beyond it (a sleeve or a thing of that colour over it)")
                continue
            core_print = print_n[c] / count[c]
            core_dark = dark_n[c] / count[c]
            core_pale = bright_n[c] / count[c]
            head_seen = count[hd] >= self.min_visible * plan.planned[2, k] and count[hd] >= 5
            head_bright = bright_n[hd] / count[hd] if count[hd] else 0.0
            ring_pale = bright_n[r] / count[r]
            # the print behind where a token would stand (from an oblique camera): shown, the
            # seat is empty; hidden by something pale, a token is there (print cannot be
            # mistaken for a token or skin whatever their shading: the chroma / lightness ratio)
            behind_seen = count[bk] >= self.min_behind
            behind_print = strict_n[bk] / count[bk] if count[bk] else 0.0
            behind_any_print = print_n[bk] / count[bk] if count[bk] else 0.0
            behind_pale = pale_n[bk] / count[bk] if count[bk] else 0.0
            # an empty seat: its middle, which a token would hide, shows the print; or the middle
            # is mostly print or glyph and neither it nor the head's place shows a token's light
            # pale colour, with no glare there to hide it (a wooden token under a warm lamp can
            # look less pale than a token should: "no token seen" alone is not enough)
            # (a glyph over the middle shows there too: a wooden token of the print's hue under a
            # bright lamp can pass for print, never for the glyph)
            glyph_shown = core_dark >= 0.1 or not self._covers[k]
            bare = core_pale <= 0.1 and core_print >= 0.3 and glyph_shown
            no_token = (head_seen and glyph_shown and head_bright <= 0.3 and core_pale <= 0.45 and core_print + core_dark >= 0.5
                        and clip_n[c] / count[c] <= 0.1 and clip_n[hd] / count[hd] <= 0.1)
            shows_behind = behind_seen and behind_print >= self.behind_print
            # a kid: the token's head is pale and light, its middle too, and neither print nor glyph
            # and the seat's clear ring shows nothing pale (a hand over the seat, a finger
            # across it, shows its skin there too; a token is never there)
            token = (head_seen and head_bright >= 0.7 and core_pale >= 0.5 and core_print <= 0.05 and core_dark <= 0.3
                     and ring_pale <= self.max_ring_pale and not grey[k])
            # or: a token whose foot takes its seat's print colour (the print's light thrown back,
            # what monsieur_006 shows), part of the middle reading print: the head pale and light
            # throughout, the middle mostly pale and showing no glyph where the glyph covers it
            # (an empty seat's middle there shows it: glyph_shown below)
            token = token or (self._covers[k] and head_seen and head_bright >= 0.85 and core_pale >= 0.45
                              and core_print <= self.foot_print and core_dark < 0.1
                              and ring_pale <= self.max_ring_pale and not grey[k])
            # or: the print behind it hidden by something pale, the head pale and light, the
            # middle not print (its side in shade may read dark over part of it, but not the
            # glyph over most of it: a token covers the whole middle, so a middle showing the
            # glyph has none, whatever pale thing above hides the rest), the clear ring as above
            hides_behind = (behind_seen and behind_any_print <= 0.05 and behind_pale >= 0.8 and head_seen
                            and head_bright >= 0.7 and core_print <= 0.2 and core_dark < self.behind_core_dark
                            and ring_pale <= self.max_ring_pale_behind and not grey[k])
            empty = bare or no_token or shows_behind
            kid = (token or hides_behind) and not glare[k]
            # never a kid where the print behind a token's place shows, strictly or not, on
            # behind_bars_kid of its samples: a token would hide them all (a rendered glossy
            # print's glare over an empty orange seat read its middle and head pale and light);
            # such a seat is unknown, its kid evidence still barring "empty"
            barred = behind_seen and behind_any_print >= self.behind_bars_kid
            # the print behind a token's place not shown (under 0.3 of it: a token, or a shadow
            # or glare there) bars every "empty" (a wooden token under a warm bright lamp can
            # look as saturated as a red print over the middle)
            if empty and not kid and not (behind_seen and behind_any_print < 0.3):
                out.append(EMPTY)
            elif kid and not empty and not barred:
                out.append(KID)
            else:
                out.append(UNKNOWN)
                why.append("neither a token nor the bare seat for sure")
                continue
            why.append("")
        self.seat_reasons = tuple(why)
        return tuple(out)


def draw_overlay(frame: np.ndarray, reading: MonsieurReading, geometry: MonsieurGeometry) -> np.ndarray:
    """The frame annotated with the reading: each seat's number and state's letter at its
    place (without the roof marker, at the angle the seats' print gave), the pointed seat in a
    thick yellow ring, Monsieur Carrousel's arm and finger as a yellow arrow, and the status, the
    angle, the die and a legend of the letters written whole on a band at the top
    (:func:`~companion.vision.images.draw_header`, wrapped onto as many lines as it takes). A
    frame under :data:`~companion.vision.images.OVERLAY_MIN_SIDE_PX` on its shorter side is
    drawn enlarged (:class:`~companion.vision.images.OverlayCanvas`), and the band says so.
    Returns a new ``H' x W' x 3 uint8`` image (``H x W`` unless enlarged; ``frame``:
    ``H x W x 3 uint8`` BGR, left untouched)."""
    from companion.vision.images import LabelPlacer, OverlayCanvas, draw_header

    canvas = OverlayCanvas(frame)
    img = canvas.img
    text = f"{reading.status}"
    if reading.carousel_angle_deg is not None:
        text += f"  angle {reading.carousel_angle_deg:.1f}  pointed {reading.pointed_seat}  die {reading.die}"
    elif reading.roof_status:
        text += f"  {reading.roof_status}"
    cam = reading.camera
    angle = reading.carousel_angle_deg if reading.carousel_angle_deg is not None else reading.seats_angle_deg
    if cam is not None and angle is not None:
        text += f"\nseats: number and {KID[0]} {KID}, {EMPTY[0]} {EMPTY}, {UNKNOWN[0]} {UNKNOWN}"
        if geometry.arm_mm is not None:
            text += "; yellow arrow: the finger"
        if isinstance(reading.pointed_seat, int):
            text += ", thick yellow ring: the seat it points at"
    header = (text + canvas.note, (80, 220, 80) if reading.status == "ok" else (60, 60, 255))
    band = draw_header(img, *header)
    drawn = img[:band + 1].copy()  # put back over the rings that reach into the band
    if cam is None or angle is None:
        return img
    colours = {KID: (0, 200, 0), EMPTY: (255, 255, 255), UNKNOWN: (0, 0, 255)}
    labels = LabelPlacer(img, 0.33, top_px=band + 1)  # white on black: readable on a dim photo
    for k, state in enumerate(reading.seats):
        c = geometry.seat_centre(k, angle)
        u, v = canvas.pt(cam.to_image(c[None, :], geometry.disc_top_z_mm)[0])
        if reading.pointed_seat == k:
            cv2.circle(img, (u, v), 16, (0, 0, 0), 5, cv2.LINE_AA)
            cv2.circle(img, (u, v), 16, (0, 230, 255), 3, cv2.LINE_AA)
        cv2.circle(img, (u, v), 9, colours.get(state, (0, 0, 255)), 2, cv2.LINE_AA)
        labels.put(f"{k}{state[0]}", (u, v), colours.get(state, (0, 0, 255)))
    if geometry.arm_mm is not None:  # the arm does not turn: from the shoulder to the finger's tip
        (a, b) = (canvas.pt(cam.to_image(np.asarray(p[:2], dtype=np.float64)[None, :], float(p[2]))[0])
                  for p in geometry.arm_mm)
        cv2.arrowedLine(img, a, b, (0, 0, 0), 5, cv2.LINE_AA, tipLength=0.25)
        cv2.arrowedLine(img, a, b, (0, 230, 255), 2, cv2.LINE_AA, tipLength=0.25)
    img[:band + 1] = drawn
    return img
