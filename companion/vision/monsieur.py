"""The Monsieur Carrousel reader: the carousel's angle from its roof marker, the seat Monsieur
Carrousel points at, each seat's kid token, each seat's weather zone, from one camera frame.

Geometry is data (``calibration/monsieur-board.toml``, see
:mod:`companion.vision.monsieur_geometry`). The fixed markers register the board plane; the roof
marker, 122 mm above it, gives the carousel's angle (exact under tilt: the module notes of
``monsieur_geometry`` show why) and, with its size, the camera's projection at every height.

* **Pointed seat**: the seat whose centre is angularly nearest the finger's board angle; within
  ``seat_margin_deg`` of a line between two seats it is ``"ambiguous"`` (the DESIGN.md ruling:
  turn the carousel again); with no roof marker read it is ``"unknown"``.
* **Zones**: a seat's board angle in the sun half or the rain half; within ``zone_margin_deg``
  of the boundary ``"ambiguous"``.
* **Kids**: a seat's middle (radius ``core_mm`` at the disc top, always under a token's base,
  which stands within 2.5 mm of the centre) is compared with the seat's own print around it
  (the ring from 12 to 15.5 mm), both measured in this frame so that the light's colour and
  fall-off cancel: a token is much lighter than its seat and of another chromaticity. A seat
  that is clearly so reads ``"kid"``. Telling an empty seat apart needs more than these two
  measurements (its dark glyph and its print overlap a wooden token on a yellow seat), so no
  seat reads ``"empty"`` yet: every other seat is ``"unknown"`` (never a wrong reading).
  A seat hidden by the roof or the figure (rays traced to the camera's centre), out of the
  frame, or whose ring does not show its own colour (a hand) is ``"unknown"``.
* **Die**: not read yet: always ``"unknown"`` (the field is there for the JSON contract).
* A frame whose colour is not a colour frame of the calibrated light reads ``"colour lost: ..."``
  (the same :class:`~companion.vision.colour.ColourCheck` as the Carrousel reader, against the
  markers' white paper and the seats' printed colours): every seat and the die unknown; the
  angle, pointed seat and zones still stand (they come from marker corners, not colours).

Sources: the table, ``shared/data/monsieur-table/README.md``; the rulebook
``shared/rules/monsieur-carrousel.txt`` (Phase 2: Monsieur Carrousel points at a seat; the sun
and rain zones); DESIGN.md (Vision; the margin ruling).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.vision.colour import (
    UNKNOWN,
    ColourCheck,
    ColourReferences,
    linear_to_lab,
    srgb_to_linear,
    white_of,
)
from companion.vision.frames import check_bgr_frame
from companion.vision.monsieur_geometry import (
    MonsieurGeometry,
    RoofReading,
    TableCamera,
    read_roof,
)
from companion.vision.registration import Registrar, Registration, detect_markers

__all__ = ["AMBIGUOUS", "KID", "EMPTY", "MonsieurReading", "MonsieurReader", "draw_overlay", "seat_margin_from_table"]

AMBIGUOUS = "ambiguous"
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
            ``"colour lost: ..."``); with ``"ok"`` the angle may still be unknown (see
            ``roof_status``).
        carousel_angle_deg: the disc zero mark's board angle (degrees, 0-360) or None.
        pointed_seat: seat index 0-11, ``"ambiguous"`` or ``"unknown"``.
        pointed_offset_deg: signed degrees from the finger to the pointed seat's centre, or None.
        seats: 12 of ``"kid"``, ``"empty"``, ``"unknown"``.
        zones: 12 of ``"sun"``, ``"rain"``, ``"ambiguous"``, ``"unknown"``.
        die: the die's top colour or ``"unknown"``.
        roof_status: ``""`` when the roof marker was read, else why not.
        registration: the board registration used, or None.
        camera: the frame's camera model, or None.
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
        if self.registration is not None:
            out["markers"] = list(self.registration.marker_ids)
        return out


class MonsieurReader:
    """Reads Monsieur Carrousel frames.

    Args:
        geometry: the table (default: ``monsieur-board.toml`` of the calibration folder).
        seat_margin_deg: a finger closer than this (degrees) to the line between two seats
            points at ``"ambiguous"`` (default 4.0, ``monsieur_carrousel.toml`` [board]).
        zone_margin_deg: a seat closer than this to the sun/rain boundary is ``"ambiguous"``.
        registrar: the fixed markers' registrar (e.g. with the lens from ``companion calibrate
            intrinsics``); default one built from the geometry, lens distortion-free.
        core_mm: radius (mm) of a seat's middle, always under a token's base (base radius 9
            minus the token's 2.5 mm placement tolerance, less a 2 mm registration allowance).
        kid_lightness: a token's middle is at least this many times as light (luminance) as
            the seat's own print around it (pastel and wooden tokens against saturated print).
        kid_chromaticity: and its chromaticity (r, g, b shares) differs from the print's by at
            least this (Euclidean, 0-1).
        min_visible: fraction (0-1) of a seat's sample points that must be in the frame and not
            hidden by the roof or the figure.
        min_own_ring: fraction (0-1) of a seat's visible ring that must show the seat's own
            colour (else something covers the seat: a hand).

    The two kid bounds come from the print and token colours of the table (the lightest
    print, yellow, against the darkest token, wood, at equal light), not from the photographs.
    """

    def __init__(self, geometry: MonsieurGeometry | None = None, seat_margin_deg: float = 4.0,
                 zone_margin_deg: float = 6.0, registrar: Registrar | None = None,
                 core_mm: float = 4.5, kid_lightness: float = 1.3, kid_chromaticity: float = 0.18,
                 min_visible: float = 0.6, min_own_ring: float = 0.3):
        self.geometry = g = geometry if geometry is not None else MonsieurGeometry.load()
        self.seat_margin_deg = float(seat_margin_deg)
        self.zone_margin_deg = float(zone_margin_deg)
        self.registrar = registrar if registrar is not None else Registrar(g.markers, g.dictionary)
        self.kid_lightness = float(kid_lightness)
        self.kid_chromaticity = float(kid_chromaticity)
        self.min_visible = float(min_visible)
        self.min_own_ring = float(min_own_ring)
        self._core = _disc(core_mm)
        self._ring = _disc(g.seat_diameter_mm / 2.0 - 1.5, inner=12.0)
        half = g.marker_size_mm / 2.0 + (g.marker_paper_mm - g.marker_size_mm) / 4.0
        u = np.arange(-half, half + 1e-9, 1.0)
        xx, yy = np.meshgrid(u, u)
        sq = np.stack([xx.ravel(), yy.ravel()], axis=1)
        self._paper = sq[np.abs(sq).max(axis=1) >= half - 0.5]
        names = tuple(g.print_srgb)
        self.references = ColourReferences(names, np.array([_lab_of_print(g.print_srgb[n], g.paper_srgb) for n in names]))
        self.colour_check = ColourCheck(self.references)

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
    def read(self, frame: np.ndarray, stream: bool = False) -> MonsieurReading:
        """Read one frame.

        Args:
            frame: ``H x W x 3 uint8`` BGR.
            stream: frames of one video stream: keep the fixed markers' registration between
                frames (:meth:`Registrar.update`); the roof marker is detected on every frame.

        Returns:
            The :class:`MonsieurReading`.

        Raises:
            ValueError: a frame that is not ``H x W x 3 uint8``.
        """
        check_bgr_frame(frame)
        g = self.geometry
        reg = self.registrar.update(frame) if stream else self.registrar.register(frame)
        if reg is None:
            return MonsieurReading(self.registrar.status or "board not visible")
        found = detect_markers(frame, detector=self.registrar._detector)
        roof: RoofReading = read_roof(g, reg, found.get(g.roof_marker_id))
        white, code = self._white(frame, reg)
        if white is None:
            return MonsieurReading("board not visible: the markers' white paper is out of the frame", registration=reg)
        if roof.camera is None:
            fault = self.colour_check.problem(white, code, np.zeros((0, 3), np.float32))
            return MonsieurReading(fault or "ok", roof_status=roof.status, registration=reg)
        cam = roof.camera
        angle = float(roof.angle_deg)  # type: ignore[arg-type]
        samples = self._seat_samples(frame, cam, angle)
        every = np.concatenate([s[1][s[3]] for s in samples if s[3].any()] or [np.zeros((0, 3), np.uint8)])
        lab = linear_to_lab(srgb_to_linear(every[::2]), white)
        fault = self.colour_check.problem(white, code, lab)
        pointed, offset = self.pointed(angle)
        if fault:  # the angle is geometry (marker corners), not colour: it stands
            return MonsieurReading(fault, angle, pointed, offset, zones=self.zones(angle), registration=reg, camera=cam)
        seats = tuple(self._seat_state(k, s) for k, s in enumerate(samples))
        return MonsieurReading("ok", angle, pointed, offset, seats, self.zones(angle), UNKNOWN, "", reg, cam)

    def _white(self, frame: np.ndarray, reg: Registration) -> tuple[np.ndarray | None, np.ndarray]:
        """The white reference: the fixed markers' paper margins (linear BGR median, 8-bit median)."""
        g = self.geometry
        pts = np.concatenate([g.markers[i].mean(axis=0) + self._paper for i in reg.marker_ids])
        px = np.rint(reg.to_image(pts)).astype(int)
        h, w = frame.shape[:2]
        ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h)
        pix = frame[px[ok, 1], px[ok, 0]]
        return white_of(pix), (np.median(pix, axis=0) if len(pix) else np.zeros(3))

    def _hidden(self, cam: TableCamera, pts: np.ndarray, z: float) -> np.ndarray:
        """Points (``N x 2`` at height ``z``) whose ray to the camera passes through the roof
        or the figure (cylinders; the roof's cone is inside its skirt's cylinder)."""
        g = self.geometry
        ax = np.asarray(g.axis_mm)
        hidden = np.zeros(len(pts), dtype=bool)
        for zz in np.linspace(g.roof_bottom_z_mm, g.roof_top_z_mm, 4):
            hidden |= np.hypot(*(cam.ray_at(pts, z, zz) - ax).T) <= g.roof_radius_mm + 1.0
        for zz in np.linspace(z, g.figure_top_z_mm, 6):
            hidden |= np.hypot(*(cam.ray_at(pts, z, zz) - np.asarray(g.figure_mm)).T) <= g.figure_radius_mm + 1.0
        return hidden

    def _seat_samples(self, frame: np.ndarray, cam: TableCamera, angle: float) -> list[tuple[Any, ...]]:
        g = self.geometry
        h, w = frame.shape[:2]
        z = g.disc_top_z_mm
        nc = len(self._core)
        out = []
        for k in range(g.n_seats):
            c = g.seat_centre(k, angle)
            pts = np.concatenate([c + self._core, c + self._ring])
            px = np.rint(cam.to_image(pts, z)).astype(int)
            ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < w) & (px[:, 1] < h) & ~self._hidden(cam, pts, z)
            pix = np.zeros((len(pts), 3), np.uint8)
            pix[ok] = frame[px[ok, 1], px[ok, 0]]
            out.append((nc, pix, px, ok))
        return out

    def _seat_state(self, k: int, sample: tuple[Any, ...]) -> str:
        nc, pix, _px, ok = sample
        if ok[:nc].mean() < self.min_visible or ok[nc:].mean() < self.min_visible:
            return UNKNOWN
        lin = srgb_to_linear(pix)
        core, ring = lin[:nc][ok[:nc]], lin[nc:][ok[nc:]]
        # the ring's own colour: pixels whose chromaticity is near the print's
        own = self.geometry.print_srgb[self.geometry.seat_colours[k]]
        own_lin = srgb_to_linear(np.array([own[2], own[1], own[0]], np.uint8)).astype(np.float64)
        own_chrom = own_lin / own_lin.sum()
        ring_white = np.median(ring, axis=0)
        rc = ring / np.maximum(ring.sum(axis=1, keepdims=True), 1e-6)
        # seen against the ring's median the print's chromaticity is shifted by the light:
        # compare each ring pixel with the ring's median, and the median with the print
        # (a cast moves both; a hand moves the median away from the print by a lot)
        med = np.median(rc, axis=0)
        if np.linalg.norm(med - own_chrom) > 0.25:
            return UNKNOWN
        if np.mean(np.linalg.norm(rc - med, axis=1) < 0.1) < self.min_own_ring:
            return UNKNOWN
        y = np.array([0.0722, 0.7152, 0.2126])
        ratio = float(np.median(core @ y) / max(float(ring_white @ y), 1e-6))
        cc = core / np.maximum(core.sum(axis=1, keepdims=True), 1e-6)
        chrom = float(np.linalg.norm(np.median(cc, axis=0) - med))
        if ratio >= self.kid_lightness and chrom >= self.kid_chromaticity:
            return KID
        return UNKNOWN


def draw_overlay(frame: np.ndarray, reading: MonsieurReading, geometry: MonsieurGeometry) -> np.ndarray:
    """The frame annotated with the reading: each seat's state at its place, the pointed seat
    ringed, the angle and status written at the top. Returns a new ``H x W x 3 uint8`` image."""
    img = frame.copy()
    text = f"{reading.status}"
    if reading.carousel_angle_deg is not None:
        text += f"  angle {reading.carousel_angle_deg:.1f}  pointed {reading.pointed_seat}"
    elif reading.roof_status:
        text += f"  {reading.roof_status}"
    cv2.putText(img, text[:90], (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(img, text[:90], (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
    cam = reading.camera
    if cam is None or reading.carousel_angle_deg is None:
        return img
    colours = {KID: (0, 200, 0), EMPTY: (255, 255, 255), UNKNOWN: (0, 0, 255)}
    for k, state in enumerate(reading.seats):
        c = geometry.seat_centre(k, reading.carousel_angle_deg)
        u, v = np.rint(cam.to_image(c[None, :], geometry.disc_top_z_mm)[0]).astype(int)
        r = 14 if reading.pointed_seat == k else 9
        cv2.circle(img, (int(u), int(v)), r, colours.get(state, (0, 0, 255)), 2, cv2.LINE_AA)
        cv2.putText(img, f"{k}{state[0]}", (int(u) - 8, int(v) + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.35,
                    (0, 0, 0), 1, cv2.LINE_AA)
    return img
