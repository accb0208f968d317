"""The printable Carrousel mat at true scale: a vector PDF drawn from the board geometry.

What the mat shows, all from ``calibration/carrousel-board.json`` (board millimetres, origin at
the mat centre, x right, y up seen from above):

* the mat's outline (``mat_size_mm``) and the board disc's edge (``board_diameter_mm``);
* the 7 spaces: circles of ``diameter_mm`` drawn as the black outline the reader looks for
  (``space_outline_width_mm`` wide, inside the space's diameter), numbered 0-6 outside the
  circle; the white-reference annulus is left blank on purpose;
* each ArUco marker's place (a square at its ``corners_mm`` with its id and its top edge), or
  the marker itself printed in place (``print_markers=True``);
* each seat's card place (``size_mm``, long side along ``reading_direction``) with its three
  colour discs, labelled for the player who sits there;
* two 100 mm rulers (one along x, one along y: a printer may scale the two directions apart).

A mat larger than the paper is tiled on several pages that overlap by ``overlap_mm``; the
seams are drawn as dashed lines with alignment crosses on both pages of a seam. A page size
that holds the whole mat (A2 and larger, or ``"fit"``) gives one page.

Source: PDF 1.4 reference (Adobe, 2001): ``cm`` concatenates a matrix, so everything here is
drawn in millimetres under one scale of 72/25.4 points per millimetre; ``re W n`` clips each
page to its part of the mat; the standard Helvetica font needs no embedding. ISO 216 (A sizes)
and ANSI/ASME Y14.1 (Letter, Tabloid) for the paper sizes.

Example::

    from companion.vision.mat import mat_pdf
    Path("mat.pdf").write_bytes(mat_pdf(paper="a4"))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.calibration_dir import calibration_path
from companion.vision.carrousel import CarrouselGeometry
from companion.vision.colour import load_json
from companion.vision.registration import dictionary

__all__ = ["PAPER_MM", "MatPage", "MatLayout", "load_mat_layout", "mat_pages", "mat_pdf", "marker_places"]

#: Paper sizes (width, height) in millimetres, portrait. ``"fit"`` (not listed) is a page of the
#: mat's size plus the margins, for a large-format printer or a print shop.
PAPER_MM: Mapping[str, tuple[float, float]] = {
    "a4": (210.0, 297.0),
    "letter": (215.9, 279.4),
    "a3": (297.0, 420.0),
    "tabloid": (279.4, 431.8),
    "a2": (420.0, 594.0),
    "a1": (594.0, 841.0),
}

_PT_PER_MM = 72.0 / 25.4
_KAPPA = 0.5522847498  # Bezier control distance of a quarter circle of radius 1


@dataclasses.dataclass(frozen=True)
class MatPage:
    """One printed page of the mat.

    Attributes:
        number: 1-based page number (row by row from the mat's top-left).
        row, col: 0-based position in the grid of pages (row 0 at the mat's top, +y).
        rows, cols: the grid's size.
        size_mm: (width, height) of the page, mm.
        region_mm: (left, bottom, right, top) of the mat area shown, in board mm (x right,
            y up); it may extend past the mat's edge.
        origin_mm: where the region's top-left corner sits on the page, mm from the page's
            top-left corner (the page margin).
    """

    number: int
    row: int
    col: int
    rows: int
    cols: int
    size_mm: tuple[float, float]
    region_mm: tuple[float, float, float, float]
    origin_mm: tuple[float, float]

    def to_page_mm(self, x_mm: float, y_mm: float) -> tuple[float, float]:
        """A board point (mm, y up) as page millimetres from the page's top-left (y down)."""
        left, _bottom, _right, top = self.region_mm
        return (self.origin_mm[0] + x_mm - left, self.origin_mm[1] + top - y_mm)


@dataclasses.dataclass(frozen=True)
class MatLayout:
    """What the mat draws, read from the board geometry file (all board millimetres).

    Attributes:
        mat_mm: side of the square mat.
        board_diameter_mm: the board disc's diameter.
        space_centres_mm: ``7 x 2`` float64, spaces 0-6.
        space_diameter_mm, space_outline_mm: each space's diameter and outline width.
        markers: id -> ``4 x 2`` corners (TL, TR, BR, BL; the TL-TR edge is the top edge).
        dictionary: the markers' ArUco dictionary name.
        cards: per seat, (seat name, centre ``(2,)``, reading direction ``(2,)`` unit vector,
            (length along the reading direction, depth), disc centres ``3 x 2``, disc diameter).
        white_reference: (centre, inner radius, outer radius) of the annulus left blank.
        source: the geometry file.
    """

    mat_mm: float
    board_diameter_mm: float
    space_centres_mm: np.ndarray
    space_diameter_mm: float
    space_outline_mm: float
    markers: Mapping[int, np.ndarray]
    dictionary: str
    cards: tuple[tuple[str, np.ndarray, np.ndarray, tuple[float, float], np.ndarray, float], ...]
    white_reference: tuple[tuple[float, float], float, float]
    source: str


def load_mat_layout(path: str | Path | None = None) -> MatLayout:
    """Read what the mat draws from a board geometry file (default
    ``calibration/carrousel-board.json``).

    Raises:
        ValueError: a missing file, bad JSON, or a missing/ill-shaped field (``mat_size_mm``,
            ``board_diameter_mm``, ``cards[i].size_mm`` ...), naming the file and the field.
    """
    p = Path(path) if path is not None else calibration_path("carrousel-board.json")
    geo = CarrouselGeometry.load(p)  # validates markers, spaces, cards and names the field
    doc: Any = load_json(p)

    def positive(key: str, obj: Any = doc, where: str = "") -> float:
        try:
            v = float(obj[key])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{p}: {where}{key}: missing or not a number (millimetres)") from None
        if not v > 0 or not math.isfinite(v):
            raise ValueError(f"{p}: {where}{key}: expected a positive length in mm, got {obj[key]!r}")
        return v

    mat = positive("mat_size_mm")
    cards = []
    for i, (slot, raw) in enumerate(zip(geo.cards, doc["cards"])):
        try:
            length, depth = (float(v) for v in raw["size_mm"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{p}: cards[{i}].size_mm: expected [length along the reading direction, depth] "
                             "in mm") from None
        d = np.asarray(slot.reading_direction, float)
        if not np.linalg.norm(d) > 0:
            raise ValueError(f"{p}: cards[{i}].reading_direction: must not be [0, 0]")
        cards.append((slot.seat, np.asarray(slot.centre_mm, float), d / np.linalg.norm(d), (length, depth),
                      np.asarray(slot.disc_centres_mm, float), float(slot.disc_diameter_mm)))
    return MatLayout(
        mat_mm=mat,
        board_diameter_mm=positive("board_diameter_mm"),
        space_centres_mm=np.asarray(geo.space_centres_mm, float),
        space_diameter_mm=float(geo.space_diameter_mm),
        space_outline_mm=float(doc.get("space_outline_width_mm", 3.0)),
        markers={k: np.asarray(v, float) for k, v in geo.markers.items()},
        dictionary=geo.dictionary,
        cards=tuple(cards),
        white_reference=geo.white_reference,
        source=str(p),
    )


def marker_places(layout: MatLayout) -> dict[int, str]:
    """Where each marker goes, in words a person can follow with a ruler.

    Returns:
        id -> e.g. ``"north-west corner of the mat: centre 30 mm from the left edge and 30 mm
        from the top edge (x -180, y 180 mm); top edge towards north (+y)"``.
    """
    half = layout.mat_mm / 2
    out = {}
    for mid, c in sorted(layout.markers.items()):
        cx, cy = c.mean(axis=0)
        ns = "north" if cy > half / 3 else ("south" if cy < -half / 3 else "")
        ew = "east" if cx > half / 3 else ("west" if cx < -half / 3 else "")
        where = f"{ns}-{ew} corner" if ns and ew else (f"{ns or ew} edge" if ns or ew else "centre")
        up = c[1] - c[2]  # TR - BR: from the bottom edge to the top edge
        out[mid] = (f"{where} of the mat: centre {cx + half:g} mm from the left edge and {half - cy:g} mm from the "
                    f"top edge (x {cx:g}, y {cy:g} mm); top edge towards {_compass(up)}")
    return out


def _compass(v: np.ndarray) -> str:
    ang = math.degrees(math.atan2(v[1], v[0])) % 360
    names = {0: "east (+x)", 90: "north (+y)", 180: "west (-x)", 270: "south (-y)"}
    for a, n in names.items():
        if min(abs(ang - a), 360 - abs(ang - a)) < 1:
            return n
    return f"{ang:.0f} degrees counter-clockwise from east"


def mat_pages(mat_mm: float, paper: str = "a4", margin_mm: float = 10.0, overlap_mm: float = 10.0) -> list[MatPage]:
    """Cut a square mat of ``mat_mm`` into pages of ``paper``.

    The mat is centred on the grid of pages. Each page shows the paper less ``margin_mm`` on
    every side (printers cannot print to the edge); neighbouring pages share ``overlap_mm`` of
    the mat, where the seam's alignment crosses are. Portrait or landscape, whichever needs
    fewer pages (portrait on a tie).

    Args:
        mat_mm: side of the square mat, mm.
        paper: a key of :data:`PAPER_MM` or ``"fit"`` (one page of the mat plus the margins).
        margin_mm: unprinted border of each page, mm (>= 0).
        overlap_mm: mat shared by two neighbouring pages, mm (>= 0, less than a page).

    Raises:
        ValueError: an unknown paper name, or margins and overlap that leave no room.
    """
    if paper == "fit":
        w = h = mat_mm + 2 * margin_mm
    elif paper in PAPER_MM:
        w, h = PAPER_MM[paper]
    else:
        raise ValueError(f"--paper {paper!r}: expected one of {', '.join([*PAPER_MM, 'fit'])}")

    def grid(pw: float, ph: float) -> tuple[int, int, float, float, float, float]:
        aw, ah = pw - 2 * margin_mm, ph - 2 * margin_mm
        if aw <= overlap_mm or ah <= overlap_mm:
            raise ValueError(f"{paper}: margins of {margin_mm:g} mm and an overlap of {overlap_mm:g} mm leave no room")
        cols = 1 if aw >= mat_mm else math.ceil((mat_mm - aw) / (aw - overlap_mm)) + 1
        rows = 1 if ah >= mat_mm else math.ceil((mat_mm - ah) / (ah - overlap_mm)) + 1
        return cols, rows, aw, ah, pw, ph

    options = [grid(w, h), grid(h, w)]
    cols, rows, aw, ah, pw, ph = min(options, key=lambda g: g[0] * g[1])
    pages = []
    # one page: the mat centred on the page; several: the grid of page areas centred on the mat
    step_x, step_y = aw - overlap_mm, ah - overlap_mm
    span_x = aw if cols == 1 else (cols - 1) * step_x + aw
    span_y = ah if rows == 1 else (rows - 1) * step_y + ah
    left0, top0 = -span_x / 2, span_y / 2
    for r in range(rows):
        for c in range(cols):
            left = left0 + c * step_x
            top = top0 - r * step_y
            pages.append(MatPage(number=r * cols + c + 1, row=r, col=c, rows=rows, cols=cols, size_mm=(pw, ph),
                                 region_mm=(left, top - ah, left + aw, top), origin_mm=(margin_mm, margin_mm)))
    return pages


class _Ops:
    """PDF content operators in board millimetres (y up) once the page's ``cm`` is applied."""

    def __init__(self) -> None:
        self.ops: list[str] = []

    def add(self, s: str) -> None:
        self.ops.append(s)

    def width(self, w_mm: float, dash_mm: Sequence[float] = ()) -> None:
        self.add(f"{w_mm:.3f} w [{' '.join(f'{d:.2f}' for d in dash_mm)}] 0 d")

    def line(self, x1: float, y1: float, x2: float, y2: float) -> None:
        self.add(f"{x1:.3f} {y1:.3f} m {x2:.3f} {y2:.3f} l S")

    def rect(self, x: float, y: float, w: float, h: float, fill: bool) -> None:
        self.add(f"{x:.4f} {y:.4f} {w:.4f} {h:.4f} re {'f' if fill else 'S'}")

    def polygon(self, pts: np.ndarray, fill: bool) -> None:
        path = " ".join(f"{x:.3f} {y:.3f} {'m' if i == 0 else 'l'}" for i, (x, y) in enumerate(pts))
        self.add(f"{path} h {'f' if fill else 'S'}")

    def circle(self, cx: float, cy: float, r: float) -> None:
        k = _KAPPA * r
        self.add(f"{cx + r:.3f} {cy:.3f} m "
                 f"{cx + r:.3f} {cy + k:.3f} {cx + k:.3f} {cy + r:.3f} {cx:.3f} {cy + r:.3f} c "
                 f"{cx - k:.3f} {cy + r:.3f} {cx - r:.3f} {cy + k:.3f} {cx - r:.3f} {cy:.3f} c "
                 f"{cx - r:.3f} {cy - k:.3f} {cx - k:.3f} {cy - r:.3f} {cx:.3f} {cy - r:.3f} c "
                 f"{cx + k:.3f} {cy - r:.3f} {cx + r:.3f} {cy - k:.3f} {cx + r:.3f} {cy:.3f} c S")

    def text(self, x: float, y: float, size_mm: float, s: str, direction: Sequence[float] = (1.0, 0.0),
             centred: bool = False) -> None:
        """``s`` with its baseline starting at (x, y) along ``direction`` (centred on it if asked)."""
        dx, dy = direction
        if centred:  # Helvetica's mean advance is about 0.55 em
            half = 0.55 * size_mm * len(s) / 2
            x, y = x - dx * half, y - dy * half
        s = s.encode("ascii", "replace").decode().replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        self.add(f"BT /F1 {size_mm:.2f} Tf {dx:.4f} {dy:.4f} {-dy:.4f} {dx:.4f} {x:.3f} {y:.3f} Tm ({s}) Tj ET")


def _draw_mat(layout: MatLayout, print_markers: bool, seams_x: Sequence[float], seams_y: Sequence[float],
              span: tuple[float, float, float, float]) -> list[str]:
    """The whole mat's drawing in board mm (y up), the same for every page."""
    o = _Ops()
    half = layout.mat_mm / 2
    o.add("0 g 0 G 1 J 1 j")
    o.width(0.3)
    o.rect(-half, -half, layout.mat_mm, layout.mat_mm, fill=False)
    o.width(0.35, (3, 2))
    o.circle(0.0, 0.0, layout.board_diameter_mm / 2)
    o.width(0.3)
    o.line(-3, 0, 3, 0)
    o.line(0, -3, 0, 3)
    # spaces: the outline lies inside the space's diameter, as the reader fits it (radius d/2 - w/2)
    o.width(layout.space_outline_mm)
    r_mid = layout.space_diameter_mm / 2 - layout.space_outline_mm / 2
    for (x, y) in layout.space_centres_mm:
        o.circle(x, y, r_mid)
    for k, (x, y) in enumerate(layout.space_centres_mm):
        u = np.array([x, y]) / (np.hypot(x, y) or 1.0)
        p = np.array([x, y]) + u * (layout.space_diameter_mm / 2 + 6)
        o.text(p[0] - 1.0, p[1] - 1.5, 4.0, str(k))
    # markers: their places (square, id, top edge) or the markers themselves
    d = dictionary(layout.dictionary)
    bits = int(d.markerSize)
    for mid, c in sorted(layout.markers.items()):
        tl, tr, br, bl = c
        if print_markers:
            img = cv2.aruco.generateImageMarker(d, mid, bits + 2)  # one pixel per cell
            ex, ey = (tr - tl) / (bits + 2), (bl - tl) / (bits + 2)  # one cell along the row, down the column
            o.add(f"q {ex[0]:.6f} {ex[1]:.6f} {ey[0]:.6f} {ey[1]:.6f} {tl[0]:.4f} {tl[1]:.4f} cm")
            for row in range(bits + 2):
                for col in range(bits + 2):
                    if img[row, col] < 128:
                        o.rect(col, row, 1, 1, fill=True)
            o.add("Q")
        else:
            o.width(0.3)
            o.polygon(c, fill=False)
            centre = c.mean(axis=0)
            right = (tr - tl) / np.linalg.norm(tr - tl)
            up = (tl - bl) / np.linalg.norm(tl - bl)
            o.text(*(centre - up * 2.5), 7.0, f"id {mid}", direction=right, centred=True)
            o.text(*(centre - up * 10), 3.0, f"{layout.dictionary}", direction=right, centred=True)
            o.text(*(tl + tr) / 2 - up * 5, 3.0, "top edge", direction=right, centred=True)
            m = (tl + tr) / 2
            o.polygon(np.array([m + up * 4, m + up * 1 - right * 3, m + up * 1 + right * 3]), fill=True)
    # cards: the card's place, its three discs, the seat's name for its player
    for seat, centre, rd, (length, depth), discs, disc_d in layout.cards:
        up = np.array([-rd[1], rd[0]])  # away from the player
        corners = np.array([centre + sx * rd * length / 2 + sy * up * depth / 2
                            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        o.width(0.5)
        o.polygon(corners, fill=False)
        o.width(0.25, (1.5, 1.5))
        for (x, y) in discs:
            o.circle(x, y, disc_d / 2)
        o.text(*(centre + up * (depth / 2 - 8)), 4.0, f"card: seat {seat}", direction=rd, centred=True)
        o.text(*(centre - up * (depth / 2 - 5)), 2.8, f"{length:g} x {depth:g} mm, colours read left to right",
               direction=rd, centred=True)
    # rulers along x (south edge, left) and y (east edge, low), 100 mm each
    o.width(0.2)
    x0, y0 = -half + 55, -half + 4
    o.line(x0, y0, x0 + 100, y0)
    for mm in range(101):
        t = 5.0 if mm % 10 == 0 else (3.5 if mm % 5 == 0 else 2.0)
        o.line(x0 + mm, y0, x0 + mm, y0 + t)
        if mm % 10 == 0:
            o.text(x0 + mm - 0.8 * len(str(mm)), y0 + 6, 2.5, str(mm))
    o.text(x0, y0 + 10, 3.0, "100 mm: check with a real ruler (print at 100 %, no fit to page)")
    xr, yr = half - 4, -half + 55
    o.line(xr, yr, xr, yr + 100)
    for mm in range(101):
        t = 5.0 if mm % 10 == 0 else (3.5 if mm % 5 == 0 else 2.0)
        o.line(xr, yr + mm, xr - t, yr + mm)
        if mm % 10 == 0:
            o.text(xr - 6, yr + mm - 0.8 * len(str(mm)), 2.5, str(mm), direction=(0, 1))
    o.text(xr - 10, yr, 3.0, "100 mm along y", direction=(0, 1))
    o.text(x0, y0 + 20, 3.5, "Carousel Companion: Carrousel mat")
    o.text(x0, y0 + 15, 3.0, f"{layout.mat_mm:g} x {layout.mat_mm:g} mm, north (+y) up")
    # seams: dashed lines, crosses every 50 mm and where seams meet
    left, bottom, right, top = span
    if seams_x or seams_y:
        o.width(0.2, (2, 2))
        for x in seams_x:
            o.line(x, bottom, x, top)
        for y in seams_y:
            o.line(left, y, right, y)
        o.width(0.25)
        pts = [(x, y) for x in seams_x for y in seams_y]
        pts += [(x, 50.0 * n) for x in seams_x for n in range(math.ceil(bottom / 50), math.floor(top / 50) + 1)]
        pts += [(50.0 * n, y) for y in seams_y for n in range(math.ceil(left / 50), math.floor(right / 50) + 1)]
        for x, y in sorted(set(pts)):
            o.line(x - 3, y, x + 3, y)
            o.line(x, y - 3, x, y + 3)
            o.circle(x, y, 1.5)
    return o.ops


def mat_pdf(geometry: str | Path | MatLayout | None = None, paper: str = "a4", print_markers: bool = False,
            margin_mm: float = 10.0, overlap_mm: float = 10.0) -> bytes:
    """The Carrousel mat as a vector PDF at true scale (exact when printed at 100 %).

    Args:
        geometry: a board geometry file, an already read :class:`MatLayout`, or None for
            ``calibration/carrousel-board.json``.
        paper: a key of :data:`PAPER_MM` (tiled when the mat is larger) or ``"fit"``.
        print_markers: print the ArUco markers in their places instead of their outlines.
        margin_mm, overlap_mm: as :func:`mat_pages`.

    Returns:
        The PDF file's bytes: one page per :func:`mat_pages` page, in that order.

    Raises:
        ValueError: a bad geometry file (naming the field), an unknown paper, or
            ``print_markers`` with a seam across a marker (naming the marker and the fix).
    """
    layout = geometry if isinstance(geometry, MatLayout) else load_mat_layout(geometry)
    pages = mat_pages(layout.mat_mm, paper, margin_mm, overlap_mm)
    rows, cols = pages[0].rows, pages[0].cols
    # seams at the left edge of each page but the first column, the top edge of each but the first row
    seams_x = sorted({p.region_mm[0] for p in pages if p.col > 0})
    seams_y = sorted({p.region_mm[3] for p in pages if p.row > 0})
    if print_markers:
        for mid, c in layout.markers.items():
            lo, hi = c.min(axis=0), c.max(axis=0)
            # the page laid over its neighbour shows the mat from the seam on: a marker across a
            # seam would be made of two sheets
            cut = [x for x in seams_x if lo[0] < x < hi[0]] + [y for y in seams_y if lo[1] < y < hi[1]]
            if cut:
                raise ValueError(f"marker {mid} would be cut by a page seam on {paper}: print the mat without "
                                 "--print-markers and stick the markers from `companion calibrate markers`, "
                                 "or use --paper a1 / fit")
    span = (min(p.region_mm[0] for p in pages), min(p.region_mm[1] for p in pages),
            max(p.region_mm[2] for p in pages), max(p.region_mm[3] for p in pages))
    drawing = "\n".join(_draw_mat(layout, print_markers, seams_x, seams_y, span))
    s = _PT_PER_MM
    streams = []
    for p in pages:
        w, h = p.size_mm
        left, bottom, right, top = p.region_mm
        ox, oy = p.origin_mm
        # board (x, y) -> page points: x_pt = s (x - left + ox), y_pt = s (y - top + h - oy)
        head = (f"q {s:.6f} 0 0 {s:.6f} {s * (ox - left):.4f} {s * (h - oy - top):.4f} cm "
                f"{left:.4f} {bottom:.4f} {right - left:.4f} {top - bottom:.4f} re W n")
        notes = _Ops()
        notes.add(f"{s:.6f} 0 0 {s:.6f} 0 0 cm 0 g")
        label = f"Carrousel mat {layout.mat_mm:g} mm square, page {p.number} of {len(pages)}"
        if len(pages) > 1:
            label += f" (row {p.row + 1} of {rows}, column {p.col + 1} of {cols})"
        label += ". Print at 100 % (actual size, no fit to page)."
        steps = []
        if p.col > 0:
            steps.append(f"trim the left margin, lay this page over page {p.number - 1}")
        if p.row > 0:
            steps.append(f"trim the top margin, lay it over page {p.number - cols}")
        how = ("; ".join(steps) + "; match the + marks and tape.") if steps else \
            ("The other pages go over this one: match the + marks and tape." if len(pages) > 1 else "")
        how = how[:1].upper() + how[1:]
        notes.text(ox, oy / 2 - 1.0, 2.6, label)  # y from the page's bottom here: the bottom margin
        if how:
            notes.text(ox, h - oy / 2 - 1.0, 2.6, how)
        streams.append((w * s, h * s, f"{head}\n{drawing}\nQ\nq {' '.join(notes.ops)} Q".encode("latin-1")))
    return _pdf(streams)


def _pdf(pages: Sequence[tuple[float, float, bytes]]) -> bytes:
    """A PDF 1.4 file of the given pages (width pt, height pt, content stream), Helvetica as /F1."""
    n = len(pages)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        ("<< /Type /Pages /Kids [" + " ".join(f"{4 + 2 * i} 0 R" for i in range(n)) + f"] /Count {n} >>").encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, (w, h, content) in enumerate(pages):
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.3f} {h:.3f}] "
                       f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode())
        objects.append(b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
