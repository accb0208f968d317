"""The Monsieur Carrousel table's geometry (data in ``calibration/monsieur-board.toml``) and the
camera model the reader builds on it: the board-plane homography from the fixed markers, lifted
to any height by the roof marker.

Why the roof marker's angle needs no camera model: the fixed markers give the homography ``H``
of the board plane. The roof marker lies in a horizontal plane at height ``z``; mapped through
``H^-1`` its corners land where the camera's rays through them meet the board, and for a pinhole
camera the central projection of one horizontal plane onto a parallel one is a homothety
(a uniform scale about the camera's foot). A homothety keeps directions, so the back-projected
marker's "up" edge has the carousel's angle exactly, at any tilt; the marker's size and place
then give the third column of the projection matrix (``P = [h1 h2 p3 h3]``), which places every
point of the table at its own height (the seats at z = 10, a kid's head at z = 32, the die's top
at z = 16, the roof) and the camera's centre (for what the roof hides).

Sources: R. Hartley and A. Zisserman, Multiple View Geometry, 2nd ed., sections 6.1 (the
projective camera ``P``; its centre is its right null vector) and 8.1 (plane homographies);
the table: ``shared/data/monsieur-table/README.md``.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from companion.calibration_checks import between, expect, positive, within_turn
from companion.calibration_dir import calibration_path
from companion.vision.registration import Registration, distort, project, undistort

__all__ = ["GEOMETRY_FILE", "MonsieurGeometry", "RoofReading", "TableCamera", "square_corners", "read_roof"]

GEOMETRY_FILE = "monsieur-board.toml"


def square_corners(centre: tuple[float, float], size: float, up_deg: float = 90.0) -> np.ndarray:
    """Corners (TL, TR, BR, BL; OpenCV's ArUco order) of a square marker, ``4 x 2 float64`` mm.

    Args:
        centre: (x, y) mm.
        size: side, mm.
        up_deg: board angle of the marker's "up" (its TL->TR edge's outward normal); 90 = +y.
    """
    a = np.radians(up_deg)
    up = np.array([np.cos(a), np.sin(a)])
    right = np.array([np.sin(a), -np.cos(a)])
    h = size / 2.0
    c = np.asarray(centre, dtype=np.float64)
    return np.array([c + h * (up - right), c + h * (up + right), c + h * (-up + right), c + h * (-up - right)])


@dataclasses.dataclass(frozen=True)
class MonsieurGeometry:
    """The table (board mm, heights mm above the board's top, angles degrees CCW from +x).

    Built by :meth:`load` from ``monsieur-board.toml`` (its comments say where each value comes
    from). Attributes mirror the file: ``markers`` (id -> ``4 x 2`` corners), ``marker_size_mm``,
    ``marker_paper_mm``, ``marker_z_mm``, ``axis_mm``, ``disc_radius_mm``, ``disc_top_z_mm``,
    ``pole_radius_mm``, ``pole_top_z_mm``, ``roof_radius_mm``, ``roof_bottom_z_mm``,
    ``roof_top_z_mm``, ``roof_marker_id``, ``roof_marker_size_mm``, ``roof_marker_z_mm``,
    ``roof_marker_up_deg``, ``n_seats``, ``seat_ring_radius_mm``, ``seat_diameter_mm``,
    ``seat_first_deg``, ``seat_pitch_deg``, ``seat_colours`` (one per seat), ``glyph_mm``,
    ``print_srgb`` (colour -> sRGB), ``kid_base_radius_mm``, ``kid_height_mm``,
    ``kid_max_offset_mm``, ``kid_srgb`` (token colour -> sRGB), ``figure_mm``,
    ``figure_radius_mm``, ``figure_top_z_mm``, ``arm_mm`` (shoulder and finger tip), ``finger_deg``, ``sun_from_deg``,
    ``sun_to_deg``, ``die_size_mm``, ``die_colours``, ``die_area_mm`` (x0, y0, x1, y1),
    ``paper_srgb``, ``dictionary``, ``suns_mm`` and ``sun_radius_mm`` (the printed suns), ``glyph_covers_middle``.
    """

    dictionary: str
    markers: Mapping[int, np.ndarray]
    marker_size_mm: float
    marker_paper_mm: float
    marker_z_mm: float
    paper_srgb: float
    axis_mm: tuple[float, float]
    disc_radius_mm: float
    disc_top_z_mm: float
    pole_radius_mm: float
    pole_top_z_mm: float
    roof_radius_mm: float
    roof_bottom_z_mm: float
    roof_top_z_mm: float
    roof_marker_id: int
    roof_marker_size_mm: float
    roof_marker_z_mm: float
    roof_marker_up_deg: float
    n_seats: int
    seat_ring_radius_mm: float
    seat_diameter_mm: float
    seat_first_deg: float
    seat_pitch_deg: float
    seat_colours: tuple[str, ...]
    glyph_mm: float
    print_srgb: Mapping[str, tuple[int, int, int]]
    kid_base_radius_mm: float
    kid_height_mm: float
    kid_max_offset_mm: float
    kid_srgb: Mapping[str, tuple[int, int, int]]
    figure_mm: tuple[float, float]
    figure_radius_mm: float
    figure_top_z_mm: float
    finger_deg: float
    sun_from_deg: float
    sun_to_deg: float
    die_size_mm: float
    die_colours: tuple[str, ...]
    die_area_mm: tuple[float, float, float, float]
    #: Monsieur Carrousel's arm: from the shoulder to the finger's tip, two (x, y, z) mm points
    arm_mm: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    #: the board's printed suns: centres (x, y mm) and their radius (mm), as big as a die's top
    suns_mm: tuple[tuple[float, float], ...] = ()
    sun_radius_mm: float = 0.0
    #: per seat: does its dark glyph cover the seat's very middle
    glyph_covers_middle: tuple[bool, ...] = ()

    @classmethod
    def load(cls, path: str | Path | None = None, config: Any = None) -> MonsieurGeometry:
        """Read the geometry file (default: ``monsieur-board.toml`` of the calibration folder,
        else the shipped one).

        Raises:
            ValueError: a missing file, bad TOML, or a missing or malformed field (the message
                names the file and the field).
        """
        p = Path(path) if path is not None else calibration_path(GEOMETRY_FILE, config)
        try:
            with open(p, "rb") as fh:
                d = tomllib.load(fh)
        except FileNotFoundError:
            raise ValueError(f"{p}: no such geometry file (the shipped default is companion/data/calibration/{GEOMETRY_FILE})") from None
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"{p}: cannot read the geometry: {exc}") from None

        def get(section: str, key: str) -> Any:
            try:
                return d[section][key] if section else d[key]
            except (KeyError, TypeError):
                raise ValueError(f"{p}: missing field {section + '.' if section else ''}{key}") from None

        def num(section: str, key: str) -> float:
            v = get(section, key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{p}: {section}.{key} must be a finite number, got {v!r}")
            return float(v)

        def point(section: str, key: str, n: int, what: str) -> tuple[float, ...]:
            v = get(section, key)
            if not (isinstance(v, list) and len(v) == n and all(
                    isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) for c in v)):
                raise ValueError(f"{p}: {section}.{key} must be {what} in mm, got {v!r}")
            return tuple(float(c) for c in v)

        def names(section: str, key: str) -> tuple[str, ...]:
            v = get(section, key)
            if not (isinstance(v, list) and all(isinstance(c, str) for c in v)):
                raise ValueError(f"{p}: {section}.{key} must be a list of colour names, got {v!r}")
            return tuple(v)

        def rgb_table(section: str) -> dict[str, tuple[int, int, int]]:
            t = d.get(section) if "." not in section else d.get(section.split(".")[0], {}).get(section.split(".")[1])
            if not isinstance(t, dict) or not t:
                raise ValueError(f"{p}: missing table [{section}] of name = [R, G, B]")
            out = {}
            for name, v in t.items():
                if not (isinstance(v, list) and len(v) == 3 and all(isinstance(c, int) and 0 <= c <= 255 for c in v)):
                    raise ValueError(f"{p}: [{section}] {name} must be [R, G, B] of 0-255, got {v!r}")
                out[str(name)] = (int(v[0]), int(v[1]), int(v[2]))
            return out

        size = num("markers", "size_mm")
        centres = get("markers", "centres_mm")
        if not isinstance(centres, dict) or len(centres) < 2:
            raise ValueError(f"{p}: markers.centres_mm must give at least two markers as \"id\" = [x, y]")
        try:
            markers = {int(k): square_corners((float(v[0]), float(v[1])), size) for k, v in centres.items()}
        except (ValueError, TypeError, IndexError, KeyError):
            raise ValueError(f"{p}: markers.centres_mm: each marker is \"id\" = [x, y] in mm") from None
        print_srgb = rgb_table("print_srgb")
        colours = names("seats", "colours")
        n = int(num("seats", "count"))
        if len(colours) != n:
            raise ValueError(f"{p}: seats.colours lists {len(colours)} colours for {n} seats")
        die_colours = names("die", "colours")
        for c in set(colours) | set(die_colours):
            if c not in print_srgb:
                raise ValueError(f"{p}: colour {c!r} has no [print_srgb] entry")
        covers = get("seats", "glyph_covers_middle")
        if not (isinstance(covers, list) and len(covers) == n and all(isinstance(v, bool) for v in covers)):
            raise ValueError(f"{p}: seats.glyph_covers_middle must be {n} true/false, one per seat, got {covers!r}")
        area = point("board", "die_area_mm", 4, "[x0, y0, x1, y1]")
        suns = get("board", "printed_suns_mm")
        if not (isinstance(suns, list) and all(isinstance(v, list) and len(v) == 2 for v in suns)):
            raise ValueError(f"{p}: board.printed_suns_mm must be a list of [x, y] in mm, got {suns!r}")
        axis = point("carousel", "axis_mm", 2, "[x, y]")
        fig = point("figure", "position_mm", 2, "[x, y]")
        arm = []
        for key in ("arm_from_mm", "fingertip_mm"):
            v = get("figure", key)
            if not (isinstance(v, list) and len(v) == 3 and all(isinstance(c, (int, float)) for c in v)):
                raise ValueError(f"{p}: figure.{key} must be [x, y, z] in mm, got {v!r}")
            arm.append((float(v[0]), float(v[1]), float(v[2])))
        roof_id = int(num("carousel", "roof_marker_id"))
        if roof_id in markers:
            raise ValueError(f"{p}: the roof marker id {roof_id} is also a fixed marker")
        geo = cls(
            dictionary=str(d.get("marker_dictionary", "DICT_4X4_50")), markers=markers,
            marker_size_mm=size, marker_paper_mm=num("markers", "paper_mm"), marker_z_mm=num("markers", "z_mm"),
            paper_srgb=num("markers", "paper_srgb"),
            axis_mm=(float(axis[0]), float(axis[1])), disc_radius_mm=num("carousel", "disc_radius_mm"),
            disc_top_z_mm=num("carousel", "disc_top_z_mm"), pole_radius_mm=num("carousel", "pole_radius_mm"),
            pole_top_z_mm=num("carousel", "pole_top_z_mm"), roof_radius_mm=num("carousel", "roof_radius_mm"),
            roof_bottom_z_mm=num("carousel", "roof_bottom_z_mm"), roof_top_z_mm=num("carousel", "roof_top_z_mm"),
            roof_marker_id=roof_id, roof_marker_size_mm=num("carousel", "roof_marker_size_mm"),
            roof_marker_z_mm=num("carousel", "roof_marker_z_mm"),
            roof_marker_up_deg=num("carousel", "roof_marker_up_deg"),
            n_seats=n, seat_ring_radius_mm=num("seats", "ring_radius_mm"), seat_diameter_mm=num("seats", "diameter_mm"),
            seat_first_deg=num("seats", "first_angle_deg"), seat_pitch_deg=num("seats", "pitch_deg"),
            seat_colours=colours, glyph_mm=num("seats", "glyph_mm"), print_srgb=print_srgb,
            kid_base_radius_mm=num("kids", "base_radius_mm"), kid_height_mm=num("kids", "height_mm"),
            kid_max_offset_mm=num("kids", "max_offset_mm"), kid_srgb=rgb_table("kids.srgb"),
            figure_mm=(float(fig[0]), float(fig[1])), figure_radius_mm=num("figure", "radius_mm"),
            figure_top_z_mm=num("figure", "top_z_mm"), finger_deg=num("figure", "finger_deg"),
            sun_from_deg=num("zones", "sun_from_deg"), sun_to_deg=num("zones", "sun_to_deg"),
            die_size_mm=num("die", "size_mm"), die_colours=die_colours,
            die_area_mm=(float(area[0]), float(area[1]), float(area[2]), float(area[3])),
            arm_mm=(arm[0], arm[1]),
            suns_mm=tuple((float(v[0]), float(v[1])) for v in suns), sun_radius_mm=num("board", "printed_sun_radius_mm"),
            glyph_covers_middle=tuple(covers),
        )
        _check_ranges(geo, p, d)
        return geo

    def seat_disc_angle(self, k: int) -> float:
        """Seat ``k``'s centre on the disc, degrees from the disc's zero mark."""
        return self.seat_first_deg + self.seat_pitch_deg * k

    def seat_centre(self, k: int, carousel_deg: float) -> np.ndarray:
        """Seat ``k``'s centre on the board (``2`` mm) with the carousel at ``carousel_deg``."""
        a = np.radians(carousel_deg + self.seat_disc_angle(k))
        r = self.seat_ring_radius_mm
        return np.array([self.axis_mm[0] + r * np.cos(a), self.axis_mm[1] + r * np.sin(a)])

    def zone_of(self, board_deg: float) -> str:
        """``"sun"`` or ``"rain"`` for a board angle (the sun zone runs CCW from
        ``sun_from_deg`` to ``sun_to_deg``)."""
        span = (self.sun_to_deg - self.sun_from_deg) % 360.0
        return "sun" if (board_deg - self.sun_from_deg) % 360.0 < span else "rain"

    def zone_boundary_distance(self, board_deg: float) -> float:
        """Degrees from ``board_deg`` to the nearer zone boundary."""
        def d(b: float) -> float:
            return abs((board_deg - b + 180.0) % 360.0 - 180.0)
        return min(d(self.sun_from_deg), d(self.sun_to_deg))


def _check_ranges(g: MonsieurGeometry, p: Path, d: Mapping[str, Any]) -> None:
    """What each value of ``monsieur-board.toml`` means on a real table (after the type checks
    of :meth:`MonsieurGeometry.load`): sizes above 0, the carousel's parts within the disc and
    the board, heights in their order (disc top < roof bottom <= roof top <= roof marker), the
    seats' ring within the disc and the seats' pitch within one turn, angles within one turn.

    Raises:
        ValueError: one line naming the file, the field and the range expected.
    """
    board = d.get("board", {}).get("size_mm") if isinstance(d.get("board"), dict) else None
    if board is not None:
        expect(p, "board.size_mm", isinstance(board, list) and len(board) == 2
               and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in board),
               "[width, height] in mm, both above 0", board)
        half_w, half_h = float(board[0]) / 2, float(board[1]) / 2
    else:  # no board size: the fixed markers' extent bounds the board
        pts = np.concatenate(list(g.markers.values()))
        half_w, half_h = (float(v) for v in np.abs(pts).max(axis=0))
    limit = f"within the {2 * half_w:g} x {2 * half_h:g} mm board"

    def on_board(field: str, xy: Any) -> None:
        x, y = float(xy[0]), float(xy[1])
        expect(p, field, abs(x) <= half_w and abs(y) <= half_h, f"a point {limit}", [x, y])

    size = positive(p, "markers.size_mm", g.marker_size_mm, at_most=min(half_w, half_h), limit=limit)
    positive(p, "markers.paper_mm", g.marker_paper_mm)
    expect(p, "markers.paper_mm", g.marker_paper_mm >= size, f"at least markers.size_mm ({size:g} mm): the "
           "paper around the black square", g.marker_paper_mm)
    between(p, "markers.z_mm", g.marker_z_mm, 0.0, g.disc_top_z_mm, why="the board's top to the disc's top")
    between(p, "markers.paper_srgb", g.paper_srgb, 0.0, 255.0, unit="(sRGB 0-255)", low_open=True)
    for k, corners in g.markers.items():
        on_board(f"markers.centres_mm.{k}", corners.mean(axis=0))
    on_board("carousel.axis_mm", g.axis_mm)
    disc = positive(p, "carousel.disc_radius_mm", g.disc_radius_mm, at_most=min(half_w, half_h), limit=limit)
    disc_z = positive(p, "carousel.disc_top_z_mm", g.disc_top_z_mm)
    positive(p, "carousel.pole_radius_mm", g.pole_radius_mm, at_most=disc, limit="carousel.disc_radius_mm")
    between(p, "carousel.pole_top_z_mm", g.pole_top_z_mm, disc_z, math.inf, low_open=True, why="above carousel.disc_top_z_mm")
    positive(p, "carousel.roof_radius_mm", g.roof_radius_mm, at_most=min(half_w, half_h), limit=limit)
    between(p, "carousel.roof_bottom_z_mm", g.roof_bottom_z_mm, disc_z, math.inf, low_open=True,
            why="above carousel.disc_top_z_mm")
    between(p, "carousel.roof_top_z_mm", g.roof_top_z_mm, g.roof_bottom_z_mm, math.inf,
            why="at least carousel.roof_bottom_z_mm")
    between(p, "carousel.roof_marker_z_mm", g.roof_marker_z_mm, g.roof_top_z_mm, g.roof_top_z_mm + 10.0,
            why="on the roof's top, carousel.roof_top_z_mm, or up to 10 mm above")
    positive(p, "carousel.roof_marker_size_mm", g.roof_marker_size_mm, at_most=g.roof_radius_mm * math.sqrt(2.0),
             limit="a square within carousel.roof_radius_mm")
    expect(p, "carousel.roof_marker_id", g.roof_marker_id >= 0 and float(d["carousel"]["roof_marker_id"]).is_integer(),
           "a marker id (a whole number from 0)", d["carousel"]["roof_marker_id"])
    within_turn(p, "carousel.roof_marker_up_deg", g.roof_marker_up_deg)
    expect(p, "seats.count", 1 <= g.n_seats <= 72 and float(d["seats"]["count"]).is_integer(),
           "a whole number of seats from 1 to 72", d["seats"]["count"])
    seat_d = positive(p, "seats.diameter_mm", g.seat_diameter_mm, at_most=disc, limit="carousel.disc_radius_mm")
    positive(p, "seats.ring_radius_mm", g.seat_ring_radius_mm, at_most=disc - seat_d / 2,
             limit="the seats within the disc: carousel.disc_radius_mm - seats.diameter_mm / 2")
    within_turn(p, "seats.first_angle_deg", g.seat_first_deg)
    pitch = g.seat_pitch_deg
    expect(p, "seats.pitch_deg", pitch != 0 and abs(pitch) * g.n_seats <= 360.0 + 1e-6,
           f"a non-zero angle with {g.n_seats} seats within one turn (at most {360.0 / g.n_seats:g} deg)", pitch)
    positive(p, "seats.glyph_mm", g.glyph_mm, at_most=seat_d, limit="seats.diameter_mm")
    positive(p, "kids.base_radius_mm", g.kid_base_radius_mm, at_most=seat_d, limit="seats.diameter_mm")
    positive(p, "kids.height_mm", g.kid_height_mm)
    between(p, "kids.max_offset_mm", g.kid_max_offset_mm, 0.0, seat_d / 2, why="within the seat: seats.diameter_mm / 2")
    on_board("figure.position_mm", g.figure_mm)
    positive(p, "figure.radius_mm", g.figure_radius_mm, at_most=min(half_w, half_h), limit=limit)
    positive(p, "figure.top_z_mm", g.figure_top_z_mm)
    if g.arm_mm is not None:
        for key, pt in zip(("arm_from_mm", "fingertip_mm"), g.arm_mm):
            expect(p, f"figure.{key}", abs(pt[0]) <= half_w and abs(pt[1]) <= half_h and 0 <= pt[2] <= g.figure_top_z_mm,
                   f"[x, y, z] {limit}, z from 0 to figure.top_z_mm", list(pt))
    within_turn(p, "figure.finger_deg", g.finger_deg)
    within_turn(p, "zones.sun_from_deg", g.sun_from_deg)
    within_turn(p, "zones.sun_to_deg", g.sun_to_deg)
    expect(p, "zones.sun_to_deg", (g.sun_to_deg - g.sun_from_deg) % 360.0 != 0.0,
           "an angle other than zones.sun_from_deg (the zones' two boundaries)", g.sun_to_deg)
    positive(p, "die.size_mm", g.die_size_mm, at_most=min(half_w, half_h), limit=limit)
    x0, y0, x1, y1 = g.die_area_mm
    expect(p, "board.die_area_mm", x0 < x1 and y0 < y1 and max(abs(x0), abs(x1)) <= half_w
           and max(abs(y0), abs(y1)) <= half_h, f"[x0, y0, x1, y1] with x0 < x1, y0 < y1, {limit}", list(g.die_area_mm))
    for i, sun in enumerate(g.suns_mm):
        on_board(f"board.printed_suns_mm[{i}]", sun)
    between(p, "board.printed_sun_radius_mm", g.sun_radius_mm, 0.0, min(half_w, half_h), why=limit)


@dataclasses.dataclass(frozen=True)
class TableCamera:
    """The projective camera of one frame: ``P = [h1 h2 p3 h3]`` on (x, y, z - z0, 1).

    Attributes:
        registration: the board-plane registration (``H`` of the plane z = ``z0_mm``).
        p3: ``3`` float64, the image of the vertical direction (undistorted pixels per mm up).
        z0_mm: the height of the registered plane (the fixed markers' print, 0.12 mm).
        centre_mm: ``3`` float64, the camera's centre (x, y, z) in board mm.
    """

    registration: Registration
    p3: np.ndarray
    z0_mm: float
    centre_mm: np.ndarray

    @property
    def matrix(self) -> np.ndarray:
        """``3 x 4`` projection matrix on (x, y, z - z0, 1), to undistorted pixels."""
        h = self.registration.board_to_image
        return np.column_stack([h[:, 0], h[:, 1], self.p3, h[:, 2]])

    def plane_homography(self, z_mm: float) -> np.ndarray:
        """``3 x 3`` homography from the horizontal plane at ``z_mm`` (x, y mm) to undistorted pixels."""
        h = np.array(self.registration.board_to_image, dtype=np.float64)
        h[:, 2] = h[:, 2] + (z_mm - self.z0_mm) * self.p3
        return h

    def to_image(self, xy_mm: np.ndarray, z_mm: float) -> np.ndarray:
        """Points of the plane at ``z_mm`` (``N x 2`` mm) to image pixels (``N x 2 float64``;
        with the lens distortion applied when the registration has a lens)."""
        pts = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        h = self.plane_homography(z_mm)
        und = _dehomogenise(pts @ h[:, :2].T + h[:, 2])  # (registration.project's arithmetic)
        lens = self.registration.lens
        return und if lens is None else distort(und, *lens)

    def to_image_at(self, xy_mm: np.ndarray, z_mm: float, upper: slice, upper_z_mm: float) -> np.ndarray:
        """:meth:`to_image` of points (``N x 2`` mm) at ``z_mm``, but those of the slice
        ``upper`` at ``upper_z_mm``, in one projection (``N x 2 float64``, the same values)."""
        pts = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        low, high = self.plane_homography(z_mm), self.plane_homography(upper_z_mm)
        xy = pts @ low[:, :2].T  # (the first two columns do not depend on the height)
        xy[:upper.start] += low[:, 2]
        xy[upper] += high[:, 2]
        xy[upper.stop:] += low[:, 2]
        und = _dehomogenise(xy)
        lens = self.registration.lens
        return und if lens is None else distort(und, *lens)

    def to_plane(self, points_px: np.ndarray, z_mm: float) -> np.ndarray:
        """Image pixels (``N x 2``) to the plane at ``z_mm`` (``N x 2`` mm)."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        lens = self.registration.lens
        if lens is not None:
            pts = undistort(pts, *lens)
        return project(np.linalg.inv(self.plane_homography(z_mm)), pts)

    def ray_at(self, xy_mm: np.ndarray, z_mm: float, at_z_mm: float) -> np.ndarray:
        """Where the rays from points (``N x 2``) at ``z_mm`` to the camera pass height
        ``at_z_mm``: ``N x 2`` mm."""
        c = self.centre_mm
        p = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        s = (at_z_mm - z_mm) / max(c[2] - z_mm, 1e-6)
        return p + s * (c[:2] - p)


def _dehomogenise(xy: np.ndarray) -> np.ndarray:
    """``N x 3`` homogeneous points to ``N x 2`` (each of the first two columns divided by the
    third: the values of ``xy[:, :2] / xy[:, 2:3]``, a column at a time, which numpy does
    several times faster than the broadcast)."""
    out = np.empty((len(xy), 2))
    w = np.ascontiguousarray(xy[:, 2])
    np.divide(xy[:, 0], w, out=out[:, 0])
    np.divide(xy[:, 1], w, out=out[:, 1])
    return out


@dataclasses.dataclass(frozen=True)
class RoofReading:
    """The roof marker in one frame.

    Attributes:
        angle_deg: the carousel's angle (degrees 0-360, the disc zero mark CCW from +x), or None.
        status: ``""`` when read, else why not (``"roof marker not seen"``, ...).
        spread_deg: how much the marker's four edges disagree on the angle (degrees).
        camera: the frame's camera model (None when the angle was not read).
    """

    angle_deg: float | None
    status: str
    spread_deg: float = 0.0
    camera: TableCamera | None = None


def read_roof(geometry: MonsieurGeometry, registration: Registration, corners_px: np.ndarray | None,
              max_spread_deg: float = 3.0, max_size_error: float = 0.12,
              camera_z_range_mm: tuple[float, float] = (200.0, 3000.0),
              max_fit_px: float = 2.0) -> RoofReading:
    """The carousel's angle from the roof marker's four image corners.

    The corners are mapped to the board plane through the registration (a homothety of the
    true square, see the module notes), so the angle needs no focal length; the marker's
    size there and the image corners then give the projection's third column ``p3`` (least
    squares on the four corners, the roof at ``roof_marker_z_mm``) and the camera's centre.

    Args:
        geometry: the table.
        registration: the fixed markers' registration of this frame.
        corners_px: ``4 x 2`` roof marker corners (TL, TR, BR, BL) in pixels, or None.
        max_spread_deg: the four edges' directions (each taken to its "up") must agree within
            this (degrees); more is a marker seen wrong (half covered, blurred by motion).
        max_size_error: the back-projected marker's sides must agree within this fraction.
        camera_z_range_mm: the camera centre's height implied by the marker's scale must lie
            in this range (mm), else the detection is not the roof marker at its height.
        max_fit_px: RMS residual (pixels) of the roof corners through the fitted camera.

    Returns:
        A :class:`RoofReading` (angle None with a status when the marker cannot be used).
    """
    if corners_px is None:
        return RoofReading(None, "roof marker not seen (a hand over the roof, or the roof out of view)")
    img = np.asarray(corners_px, dtype=np.float64).reshape(4, 2)
    q = registration.to_board(img)  # homothetic image of the roof square on the board plane
    tl, tr, br, bl = q
    # each edge gives the "up" direction: top and bottom edges are along "right", the left and
    # right edges along "down"/"up"
    dirs = [tr - tl, br - bl, tl - bl, tr - br]
    turn = [-90.0, -90.0, 0.0, 0.0]  # rotate "right" by +90 to get "up"
    angles = np.array([np.degrees(np.arctan2(v[1], v[0])) - t for v, t in zip(dirs, turn)])
    ref = angles[0]
    wrapped = (angles - ref + 180.0) % 360.0 - 180.0 + ref
    spread = float(np.ptp(wrapped))
    up = float(np.mean(wrapped))
    if spread > max_spread_deg:
        return RoofReading(None, f"roof marker seen askew (its edges disagree by {spread:.1f} deg): moving or covered", spread)
    sides = np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1)
    if np.ptp(sides) > max_size_error * np.mean(sides):
        return RoofReading(None, "roof marker seen out of shape (covered or moving)", spread)
    k = float(np.mean(sides)) / geometry.roof_marker_size_mm
    zr = geometry.roof_marker_z_mm - geometry.marker_z_mm
    if k <= 1.0:
        return RoofReading(None, "roof marker not above the board (is the carousel's roof on?)", spread)
    cam_z = k * zr / (k - 1.0)
    if not camera_z_range_mm[0] <= cam_z <= camera_z_range_mm[1]:
        return RoofReading(None, f"roof marker at the wrong scale (camera {cam_z:.0f} mm above the board implied)", spread)
    angle = (up - geometry.roof_marker_up_deg) % 360.0
    world = square_corners(geometry.axis_mm, geometry.roof_marker_size_mm, angle + geometry.roof_marker_up_deg)
    p3 = _fit_p3(registration, world, img, zr)
    if p3 is None:
        return RoofReading(None, "roof marker does not fit a camera", spread)
    cam = _camera(registration, p3, geometry.marker_z_mm)
    if cam is None or not camera_z_range_mm[0] <= cam.centre_mm[2] <= camera_z_range_mm[1]:
        return RoofReading(None, "roof marker does not fit a camera above the table", spread)
    fit = cam.to_image(world, geometry.roof_marker_z_mm)
    rms = float(np.sqrt(np.mean(np.sum((fit - img) ** 2, axis=1))))
    if rms > max_fit_px:
        return RoofReading(None, f"roof marker does not fit a camera (residual {rms:.1f} px)", spread)
    return RoofReading(angle, "", spread, cam)


def _fit_p3(reg: Registration, world_xy: np.ndarray, image_px: np.ndarray, dz: float) -> np.ndarray | None:
    """Least-squares ``p3`` from points at height ``dz`` above the registered plane:
    ``x_i ~ H [X_i, Y_i, 1] + dz p3`` (the cross product with ``x_i`` vanishes)."""
    pts = image_px if reg.lens is None else undistort(image_px, *reg.lens)
    h = reg.board_to_image
    rows, rhs = [], []
    for (x, y), (u, v) in zip(world_xy, pts):
        hx = h @ np.array([x, y, 1.0])
        m = np.array([[0.0, -1.0, v], [1.0, 0.0, -u]])  # two rows of [x_i]_x
        rows.append(dz * m)
        rhs.append(-m @ hx)
    a = np.vstack(rows)
    b = np.concatenate(rhs)
    sol, *_ = np.linalg.lstsq(a, b, rcond=None)
    return sol if np.all(np.isfinite(sol)) else None


def _camera(reg: Registration, p3: np.ndarray, z0: float) -> TableCamera | None:
    h = reg.board_to_image
    p = np.column_stack([h[:, 0], h[:, 1], p3, h[:, 2]])
    _, _, vt = np.linalg.svd(p)
    c = vt[-1]
    if abs(c[3]) < 1e-12:
        return None
    c = c[:3] / c[3]
    centre = np.array([c[0], c[1], c[2] + z0])
    return TableCamera(reg, np.asarray(p3, dtype=np.float64), z0, centre)
