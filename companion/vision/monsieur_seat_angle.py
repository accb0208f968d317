"""The Monsieur Carrousel seats without the roof marker: the camera from the board plane alone,
the carousel's angle from the seats' own print.

When a hand hides the roof marker (or the roof is out of view) the reader has the fixed markers'
homography ``H`` of the board plane but neither the carousel's angle nor the camera's height,
so it cannot say where a seat 10 mm up, or a token's head 40 mm up, appears. Two steps give
both back:

* **The camera from one plane** (:func:`camera_from_board`). With square pixels, no skew and the
  principal point at the image centre (or a calibrated lens's, when the registration has one),
  ``K^-1 H = s [r1 r2 t]`` with ``r1``, ``r2`` orthonormal. Those two conditions (``r1 . r2 = 0``
  and ``|r1| = |r2|``) are Zhang's constraints; with only the focal length ``f`` unknown each is
  linear in ``1 / f^2`` (Z. Zhang, "A flexible new technique for camera calibration", IEEE PAMI
  22(11), 2000, section 2.3; Hartley & Zisserman, *Multiple View Geometry*, 2nd ed., 8.8). The
  rotation's third column ``r3 = r1 x r2`` then gives the image of the vertical,
  ``p3 = K r3 / s``: the same model (``TableCamera``) the roof marker gives. A camera looking
  straight down leaves ``f`` undetermined (both constraints vanish), but then ``f`` hardly
  matters: the solution is bounded to the lens range ``hfov_range_deg`` and weighted towards
  the range's middle as the constraints weaken.
* **The angle from the seats' print** (:func:`seats_angle`). The twelve seat prints repeat
  their six colours (seats ``k`` and ``k + 6`` share one), so the share of each seat's print on
  its own print less that on the wood just beyond its edge (the same score the reader's angle
  refinement uses) is a function of the angle modulo 180 degrees. Its best angle must lead every
  angle 15 degrees or more away by ``min_lead`` seat shares and reach ``min_score``; the half
  turn is then settled by the disc's zero mark (a dark triangle at the rim, at disc angle 0):
  it must be dark at one of the two candidate angles and wood-light at the other. Anything
  else: no angle (the seats stay ``unknown``).

The pointed seat stays ``unknown`` without the roof marker (the finger's call is the roof
marker's; the seats' angle only places the seats), and so do the zones.

Sources: ``shared/data/monsieur-table/README.md`` (the disc, the seats' colours, the zero mark);
Zhang (2000); Hartley & Zisserman (2004).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from companion.vision.colour import _LUT, CLIPPED, linear_to_lab
from companion.vision.monsieur_geometry import TableCamera
from companion.vision.registration import Registration

if TYPE_CHECKING:  # pragma: no cover
    from companion.vision.monsieur import (
        MonsieurReader,
        MonsieurReading,
        _SampleGroups,
        _SeatPlan,
    )

__all__ = ["PlaneCamera", "SeatAngle", "camera_from_board", "print_beyond_seat", "read_without_roof", "seats_angle", "zero_mark_lightness"]


@dataclasses.dataclass(frozen=True)
class PlaneCamera:
    """A camera model found from the board plane's homography alone.

    Attributes:
        camera: the :class:`TableCamera` (``None`` when none fits: ``status`` says why).
        focal_px: the focal length used (pixels).
        focal_free_px: the focal length the two constraints alone give (pixels; NaN when they
            give none, e.g. a camera looking straight down).
        tilt_deg: the camera's optical axis from the vertical (degrees).
        status: ``""`` or why there is no camera.
    """

    camera: TableCamera | None
    focal_px: float
    focal_free_px: float
    tilt_deg: float
    status: str = ""


def camera_from_board(registration: Registration, frame_shape: tuple[int, ...], z0_mm: float,
                      hfov_range_deg: tuple[float, float] = (45.0, 80.0),
                      camera_z_range_mm: tuple[float, float] = (200.0, 3000.0)) -> PlaneCamera:
    """The camera of a frame from the board plane's homography (see the module notes).

    Args:
        registration: the fixed markers' registration (``board_to_image`` of the plane at
            ``z0_mm``, in undistorted pixels when it has a lens).
        frame_shape: the frame's shape (``H, W, ...``): the principal point is its centre
            (``((W - 1) / 2, (H - 1) / 2)``, OpenCV's pixel centres) unless the registration has
            a calibrated lens, whose matrix is then used as it is (focal length included).
        z0_mm: the height of the registered plane (the fixed markers' print, mm).
        hfov_range_deg: the horizontal fields of view (degrees) a camera over the table may
            have (Raspberry Pi camera modules: 54-66 degrees; a margin either side), across the
            frame's longer side: the focal length is kept within it.
        camera_z_range_mm: the camera centre's height must lie in this range (mm).

    Returns:
        A :class:`PlaneCamera` (``camera`` None with a status when no camera above the board
        fits).
    """
    h, w = int(frame_shape[0]), int(frame_shape[1])
    hom = np.asarray(registration.board_to_image, dtype=np.float64)
    free = float("nan")
    if registration.lens is not None:
        k = np.asarray(registration.lens[0], dtype=np.float64)
        f = float(k[0, 0])
    else:
        cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
        # a camera module's horizontal field spans its sensor's longer side: the frame's width,
        # or its height when the camera is mounted (or the photo turned) upright
        side = max(w, h)
        f_lo = (side / 2.0) / math.tan(math.radians(hfov_range_deg[1]) / 2.0)
        f_hi = (side / 2.0) / math.tan(math.radians(hfov_range_deg[0]) / 2.0)
        f_mid = math.sqrt(f_lo * f_hi)
        m = np.array([[1.0, 0.0, -cx], [0.0, 1.0, -cy], [0.0, 0.0, 1.0]]) @ hom
        # scale the third row as a focal length of f_mid would: K^-1 m = (m_xy / f, m_z)
        a1, a2 = m[:, 0] / np.linalg.norm(m[:2, 0]), m[:, 1] / np.linalg.norm(m[:2, 1])
        a1z, a2z = a1[2] * f_mid, a2[2] * f_mid
        # with v = (f_mid / f)^2: (x1 x2 + y1 y2) v + z1 z2 = 0; (|xy1|^2 - |xy2|^2) v + z1^2 - z2^2 = 0
        rows = np.array([[a1[0] * a2[0] + a1[1] * a2[1], a1z * a2z],
                         [a1[0] ** 2 + a1[1] ** 2 - a2[0] ** 2 - a2[1] ** 2, a1z ** 2 - a2z ** 2]])
        num = -float(np.sum(rows[:, 0] * rows[:, 1]))
        den = float(np.sum(rows[:, 0] ** 2))
        # the constraints' own weight against a weak prior at the range's middle (v = 1): a
        # camera straight down gives rows of zeros and so f_mid
        prior = 1e-4
        v = (num + prior) / (den + prior)
        if num > 0.0 and den > 0.0:
            free = f_mid / math.sqrt(num / den)
        f = f_mid / math.sqrt(v) if v > 0.0 else f_hi
        f = min(max(f, f_lo), f_hi)
        k = np.array([[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]])
    r = np.linalg.solve(k, hom)
    s = 0.5 * (np.linalg.norm(r[:, 0]) + np.linalg.norm(r[:, 1]))
    r = r / s
    if r[2, 2] < 0.0:  # the board in front of the camera: t_z > 0
        r = -r
        s = -s
    u, _, vt = np.linalg.svd(np.column_stack([r[:, 0], r[:, 1], np.cross(r[:, 0], r[:, 1])]))
    rot = u @ vt
    if np.linalg.det(rot) < 0.0:
        return PlaneCamera(None, f, free, float("nan"), "the board plane does not fit a camera")
    p3 = k @ rot[:, 2] * s
    p = np.column_stack([hom[:, 0], hom[:, 1], p3, hom[:, 2]])
    _, _, vt = np.linalg.svd(p)
    c = vt[-1]
    if abs(c[3]) < 1e-12:
        return PlaneCamera(None, f, free, float("nan"), "the board plane does not fit a camera")
    c = c[:3] / c[3]
    centre = np.array([c[0], c[1], c[2] + z0_mm])
    tilt = float(np.degrees(np.arccos(min(1.0, abs(float(rot[2, 2]))))))
    if not camera_z_range_mm[0] <= centre[2] <= camera_z_range_mm[1]:
        return PlaneCamera(None, f, free, tilt, f"the board plane implies a camera {centre[2]:.0f} mm above it")
    return PlaneCamera(TableCamera(registration, p3, z0_mm, centre), f, free, tilt)


@dataclasses.dataclass(frozen=True)
class SeatAngle:
    """The carousel's angle from the seats' print.

    Attributes:
        angle_deg: degrees 0-360 (the disc zero mark CCW from +x), or None.
        status: ``""`` or why there is no angle.
        score: the best angle's score (seat shares summed over the 12 seats, at most 12).
        lead: how far it leads the best angle 15 degrees or more away (seat shares).
        zero_contrast: how much darker (L*) the zero mark's place is than the wood beside it at
            the chosen half turn (see :func:`zero_mark_lightness`), NaN when there is no angle.
    """

    angle_deg: float | None
    status: str
    score: float = 0.0
    lead: float = 0.0
    zero_contrast: float = float("nan")


def seats_angle(reader: MonsieurReader, frame: np.ndarray, cam: TableCamera, white: np.ndarray,
                step_deg: float = 2.0, min_score: float = 5.0, min_lead: float = 2.5,
                min_zero_contrast: float = 15.0, max_zero_ratio: float = 0.7,
                max_wood_contrast: float = 6.0) -> SeatAngle:
    """The carousel's angle from the seats' print colours and the zero mark (module notes).

    Args:
        reader: the reader (its seat-print score, ``MonsieurReader._fit_scores``, is used).
        frame: ``H x W x 3 uint8`` BGR.
        cam: the frame's camera (e.g. :func:`camera_from_board`).
        white: the white reference (linear BGR ``3``).
        step_deg: the coarse search's step over 0-180 degrees (then a half, a quarter and an
            eighth of it either side of the best; the print ring's 2.5 mm at 85 mm from the axis
            is 1.7 degrees, so a 2 degree step always lands a sample on it).
        min_score: the best angle's score must reach this (seat shares: print on the print
            less print on the wood beyond, summed over the 12 seats; 1 a seat fully seen).
        min_lead: it must lead every angle at least 15 degrees away by this much (seat
            shares; a shift of one seat pitch moves each print onto its neighbour's colour, of
            another hue, but a red and an orange seat are 30 hue degrees apart).
        min_zero_contrast: the zero mark (a dark triangle at the rim, printed black: L* 4 on
            wood of L* 60-90) must be darker than the wood beside it by at least this many L*
            at one of the two half turns ...
        max_zero_ratio: ... and its L* at most this share of the wood's (a shadow across both
            leaves them alike; the print is a tenth of the wood's);
        max_wood_contrast: ... and the other half turn's place, where there is only wood, at
            most this many L* darker than the wood beside it, or hidden (a token, the roof or
            the figure in the way).

    Returns:
        A :class:`SeatAngle`.
    """
    coarse = np.arange(0.0, 180.0, step_deg)
    scores = reader._fit_scores(frame, cam, 0.0, white, coarse)
    i = int(np.argmax(scores))
    best = float(coarse[i])
    steps, total = coarse, scores
    for frac in (0.5, 0.25, 0.125):  # halving steps either side of the best so far
        fine = np.array([best - frac * step_deg, best + frac * step_deg])
        steps = np.concatenate([steps, fine])
        total = np.concatenate([total, reader._fit_scores(frame, cam, 0.0, white, fine)])
        best = float(steps[int(np.argmax(total))])
    j = int(np.argmax(total))
    angle, score = float(steps[j]) % 180.0, float(total[j])
    away = np.abs((coarse - angle + 90.0) % 180.0 - 90.0) >= 15.0
    lead = score - float(scores[away].max())
    if score < min_score:
        return SeatAngle(None, f"the seats' print does not show the carousel's angle (score {score:.1f})", score, lead)
    if lead < min_lead:
        return SeatAngle(None, f"the seats' print fits two angles (lead {lead:.1f})", score, lead)
    marks = [zero_mark_lightness(reader, frame, cam, white, angle + half) for half in (0.0, 180.0)]
    dark = [m is not None and m[1] - m[0] >= min_zero_contrast and m[0] <= max_zero_ratio * m[1] for m in marks]
    light = [m is not None and m[1] - m[0] <= max_wood_contrast for m in marks]
    hidden = [m is None for m in marks]
    seen = [float("nan") if m is None else m[1] - m[0] for m in marks]
    for half in (0, 1):
        if dark[half] and (light[1 - half] or hidden[1 - half]):
            angle, contrast = angle + 180.0 * half, seen[half]
            break
    else:
        if all(hidden):
            return SeatAngle(None, "the disc's zero mark is hidden: the half turn is not known", score, lead)
        what = ", ".join("hidden" if m is None else f"{m[1] - m[0]:.0f}" for m in marks)
        return SeatAngle(None, f"the disc's zero mark is not clear (darker than the wood by {what} L*)", score, lead)
    return SeatAngle(angle % 360.0, "", score, lead, contrast)


def zero_mark_lightness(reader: MonsieurReader, frame: np.ndarray, cam: TableCamera, white: np.ndarray,
                       angle_deg: float, min_samples: int = 6) -> tuple[float, float] | None:
    """The median L* of the zero mark's place and of the wood beside it with the carousel at
    ``angle_deg`` (``(mark, wood)``), or None when either is hidden (by the roof, the figure and
    its arm, whose finger hangs over the rim at the finger's angle, or a token, as the reader's
    plan and the die reader trace them) or out of the frame.

    The mark's place: 1.5-3 mm either side of the radial line, 100-103 mm from the axis (inside
    the triangle, off the line and the boundary tick on it: README, a dark triangle at the rim
    at disc angle 0); the wood: 7-9 mm either side at the same radii (off the seats, whose edge
    is 17 mm from their centres 85 mm out at 15 degrees).
    """
    from companion.vision.monsieur import _ray_passes

    g = reader.geometry
    a = math.radians(angle_deg)
    radial = np.array([math.cos(a), math.sin(a)])
    side = np.array([-math.sin(a), math.cos(a)])
    radii = np.arange(100.0, 103.01, 1.0)

    def place(lateral: np.ndarray) -> np.ndarray:
        rr, ll = np.meshgrid(radii, lateral)
        return np.asarray(g.axis_mm) + rr.reshape(-1, 1) * radial + ll.reshape(-1, 1) * side

    mark = place(np.array([-3.0, -2.25, -1.5, 1.5, 2.25, 3.0]))
    wood = place(np.array([-9.0, -8.0, -7.0, 7.0, 8.0, 9.0]))
    z = g.disc_top_z_mm
    h, w = frame.shape[:2]
    c = cam.centre_mm
    out = []
    for pts in (mark, wood):
        px = np.rint(cam.to_image(pts, z)).astype(np.int64)
        ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)
        zs = np.full(len(pts), z)
        ok &= ~_ray_passes(c, pts, zs, g.roof_bottom_z_mm, g.roof_top_z_mm, np.asarray(g.axis_mm), g.roof_radius_mm + 1.0)
        ok &= ~_ray_passes(c, pts, zs, z, g.figure_top_z_mm, np.asarray(g.figure_mm), g.figure_radius_mm + 1.0)
        if g.arm_mm is not None:  # Monsieur Carrousel's arm and finger over the rim at the finger's
            # angle (dark, 6 mm thick with the hand: as the die reader hides it), 8 points along it
            a, b = np.asarray(g.arm_mm[0], dtype=np.float64), np.asarray(g.arm_mm[1], dtype=np.float64)
            for q in a[None, :] + np.linspace(0.0, 1.0, 8)[:, None] * (b - a)[None, :]:
                ok &= ~_ray_passes(c, pts, zs, max(q[2] - 4.0, z), q[2] + 4.0, q[:2], 6.0)
        reach = g.kid_base_radius_mm + g.kid_max_offset_mm + 1.0
        for k in (g.n_seats - 1, 0, g.n_seats // 2 - 1, g.n_seats // 2):
            ca = math.radians(angle_deg + g.seat_disc_angle(k))
            centre = np.asarray(g.axis_mm) + g.seat_ring_radius_mm * np.array([math.cos(ca), math.sin(ca)])
            ok &= ~_ray_passes(c, pts, zs, z, z + g.kid_height_mm, np.broadcast_to(centre, pts.shape), reach)
        if int(ok.sum()) < min_samples:
            return None
        pix = frame[px[ok, 1], px[ok, 0]]
        if np.any(pix.min(axis=1) >= CLIPPED):
            return None
        out.append(float(np.median(linear_to_lab(_LUT[pix], white)[:, 0])))
    return out[0], out[1]


def read_without_roof(reader: MonsieurReader, frame: np.ndarray, registration: Registration, white: np.ndarray,
                      code: np.ndarray, roof_status: str, stream: bool = False) -> tuple[MonsieurReading | None, str]:
    """The seats and the die of a frame whose roof marker was not read: the camera from the
    board plane (:func:`camera_from_board`), the seats placed at the angle their print and the
    zero mark give (:func:`seats_angle`), then read as with the roof marker.

    Args:
        reader: the reader (its seat plan, seat rules, die reader and colour check are used).
        frame: ``H x W x 3 uint8`` BGR.
        registration: the fixed markers' registration of this frame.
        white: the white reference (linear BGR ``3``); ``code``: the paper's 8-bit median BGR.
        roof_status: why the roof marker was not read (kept in the reading's ``roof_status``).
        stream: frames of one stream (the seats' plan may be reused, as with the roof).

    Returns:
        ``(reading, why)``: a :class:`MonsieurReading` with ``carousel_angle_deg`` None,
        ``pointed_seat`` and the zones ``"unknown"`` (they are the roof marker's), the seats and
        the die read, and ``""``; or None and why no camera or no angle was found.
    """
    from companion.vision.monsieur import _PARTS, MonsieurReading

    g = reader.geometry
    pc = camera_from_board(registration, frame.shape, g.marker_z_mm)
    if pc.camera is None:
        return None, pc.status
    cam = pc.camera
    got = seats_angle(reader, frame, cam, white)
    if got.angle_deg is None:
        return None, got.status
    plan = reader._plan_for(cam, got.angle_deg, frame.shape, registration, stream, frame, white)
    pix = np.take(frame.reshape(-1, 3), plan.idx, axis=0)
    lab = linear_to_lab(_LUT[pix], white)
    status = f"{roof_status}; the seats placed by their print and the disc's zero mark"
    fault = reader.colour_check.problem(white, code, lab[plan.seg % _PARTS == 0])
    if fault:
        return MonsieurReading(fault, roof_status=status, registration=registration, camera=cam), ""
    seats = reader._seats(plan, pix, lab, white)
    die = reader._die(frame, cam, plan.angle_deg, white, plan, stream)
    return MonsieurReading("ok", seats=seats, die=die.colour, roof_status=status, registration=registration,
                           camera=cam, die_status=die.status, seat_reasons=reader.seat_reasons,
                           seats_angle_deg=plan.angle_deg), ""


def print_beyond_seat(plan: _SeatPlan, seg: np.ndarray, strict: np.ndarray, is_print: np.ndarray,
                      chroma: np.ndarray, light: np.ndarray, n_seats: int, parts: int, share: float = 0.5,
                      min_samples: int = 5, margin: float = 0.3, ring_ratio: float = 0.7,
                      groups: _SampleGroups | None = None, ratio: np.ndarray | None = None) -> np.ndarray:
    """Per seat (``n_seats`` bool): does the seat's own print colour reach beyond its edge?

    The wood around each seat (19-23 mm from its centre, off every seat: the plan's fifth part,
    in 8 sectors) shows the disc's wood. A sector is something of the print's colour over the
    seat and its surroundings (a sleeve of that hue, which would pass for the print in the
    seat's ring, middle and behind a token's place alike) when, of at least ``min_samples``:

    * ``share`` or more show the seat's print colour as saturated as no token, nor the wood
      (a natural wood token's colour), can look (the reader's strict print test);
    * that share is ``margin`` more than the median sector's around the seat of the same colour
      across the disc (seat ``k + 6``, 170 mm away: one sleeve does not cover both), where a
      warm lamp making the wood itself pass the test for a yellow or orange seat shows too;
    * its median chroma / lightness is at least ``ring_ratio`` of the seat's print as seen on
      its clear ring (a warm lamp's wood, 0.75 where the orange print reads 1.1 on
      monsieur_024, stays under it).

    Such a seat cannot be read (``unknown``). Glare makes the wood less saturated and a shadow
    keeps its ratio, so neither passes.

    Args:
        plan: the seats' plan (``plan.sector``: each sample's sector of the wood, -1 elsewhere).
        seg: ``N`` each sample's segment (``parts * seat + part``; unused samples beyond).
        strict: ``N`` bool, the sample shows its seat's print colour more saturated than any
            token of a near hue could (``MonsieurReader._strict_cl``).
        is_print: ``N`` bool, the sample shows its seat's print colour (the reader's test).
        chroma, light: ``N`` C*ab and L* of the samples.
        n_seats: seats on the disc; ``parts``: segments per seat.
        groups: the samples' groups for ``seg`` (``monsieur._SampleGroups``: its wood samples,
            their keys and counts, the ring's samples, each sample's seat), with ``ratio``
            (``N`` float32, ``chroma / max(light, 1)``): the same answers, computed once.

    Returns:
        ``n_seats`` bool.
    """
    from companion.vision.monsieur import _group_median

    if groups is not None and ratio is not None:
        wood, key, count = groups.wood, groups.wood_key, groups.wood_count
    else:
        wood = (plan.sector >= 0) & (seg < parts * n_seats)
        key = (seg[wood] // parts) * 8 + plan.sector[wood]
        count = np.bincount(key, minlength=n_seats * 8)[: n_seats * 8]
        ratio = chroma / np.maximum(light, 1.0)
    hits = np.bincount(key, weights=strict[wood], minlength=n_seats * 8)[: n_seats * 8]
    seen = (count >= min_samples).reshape(n_seats, 8)
    frac = np.where(seen, (hits / np.maximum(count, 1)).reshape(n_seats, 8), 0.0)
    other = (np.arange(n_seats) + n_seats // 2) % n_seats  # (np.roll's, the seat across the disc)
    # each seat's opposite's median sector (np.median's values: the middle one, or the two
    # middle ones' mean, (a + b) / 2), all rows from one sort, the unseen sectors last
    rows = np.sort(np.where(seen, frac, np.inf)[other], axis=1)
    cnt = seen.sum(axis=1)[other]
    i = np.arange(n_seats)
    mid = rows[i, cnt // 2]
    below = rows[i, np.maximum(cnt // 2 - 1, 0)]
    ref = np.where(cnt == 0, 0.0, np.where(cnt % 2 == 1, mid, (below + mid) / 2.0))
    sector_ratio = _group_median(key, ratio[wood], n_seats * 8, None if groups is None else groups.wood_groups())[0]
    sector_ratio = sector_ratio.reshape(n_seats, 8)
    if groups is not None:
        ring = groups.ring & is_print
        own = _group_median(groups.seat[ring], ratio[ring], n_seats, keep=False)[0]
    else:
        ring = (seg % parts == 0) & is_print & (seg < parts * n_seats)
        own = _group_median(seg[ring] // parts, ratio[ring], n_seats)[0]
    sat = np.where(np.isfinite(own)[:, None], sector_ratio >= ring_ratio * own[:, None], False)
    return ((frac >= share) & (frac >= ref[:, None] + margin) & sat).any(axis=1)
