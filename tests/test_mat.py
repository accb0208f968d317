"""The printable Carrousel mat: true page sizes, true marker and ruler sizes, tiles that line up.

The PDF is read back by a small interpreter of the operators the mat uses (q/Q, cm, re, f, S,
W n, m/l/c) and its filled rectangles are rasterised at 5 px/mm, so the markers are found by
OpenCV's own ArUco detector on the printed result, not on the geometry we meant to draw.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.mat import PAPER_MM, load_mat_layout, mat_pages, mat_pdf, marker_places
from companion.vision.registration import detect_markers

REPO = Path(__file__).parents[1]
BOARD = REPO / "companion" / "data" / "calibration" / "carrousel-board.json"
PT = 72.0 / 25.4
PX_PER_MM = 5.0


def pdf_pages(pdf: bytes) -> list[tuple[tuple[float, float], bytes]]:
    """(MediaBox width and height in mm, content stream) of each page, in /Kids order."""
    objs = {int(n): body for n, body in re.findall(rb"(\d+) 0 obj\n(.*?)\nendobj\n", pdf, re.S)}
    kids = re.search(rb"/Kids \[([^\]]*)\]", objs[2]).group(1)
    out = []
    for ref in re.findall(rb"(\d+) 0 R", kids):
        page = objs[int(ref)]
        box = [float(v) for v in re.search(rb"/MediaBox \[([^\]]*)\]", page).group(1).split()]
        content = objs[int(re.search(rb"/Contents (\d+) 0 R", page).group(1))]
        stream = content.split(b"stream\n", 1)[1].rsplit(b"\nendstream", 1)[0]
        out.append(((box[2] / PT, box[3] / PT), stream))
    return out


def interpret(stream: bytes, page_mm: tuple[float, float]):
    """Rasterise the filled rectangles (clipped) and collect the stroked straight segments.

    Returns:
        (ink ``H x W bool`` at PX_PER_MM with row 0 at the page's top, segments as
        ``((x1, y1), (x2, y2))`` in page mm from the bottom-left).
    """
    w, h = page_mm
    size = (int(round(h * PX_PER_MM)), int(round(w * PX_PER_MM)))
    layers: dict = {}
    segments = []
    ctm = np.eye(3)
    clip = None
    stack = []
    operands: list[float] = []
    pending_rect = None
    path_pts: list = []
    in_text = False
    for tok in re.findall(rb"\[[^\]]*\]|\([^)]*\)|\S+", stream):
        t = tok.decode("latin-1")
        if in_text:
            in_text = t != "ET"
            continue
        try:
            operands.append(float(t))
            continue
        except ValueError:
            pass
        if t == "BT":
            in_text = True
        elif t == "q":
            stack.append((ctm.copy(), clip))
        elif t == "Q":
            ctm, clip = stack.pop()
        elif t == "cm":
            a, b, c, d, e, f = operands[-6:]
            ctm = ctm @ np.array([[a, c, e], [b, d, f], [0, 0, 1]])  # the new matrix applies first
        elif t == "re":
            x, y, rw, rh = operands[-4:]
            pts = np.array([[x, y, 1], [x + rw, y, 1], [x + rw, y + rh, 1], [x, y + rh, 1]]) @ ctm.T
            pending_rect = pts[:, :2] / PT  # page mm
        elif t == "W":
            lo, hi = pending_rect.min(axis=0), pending_rect.max(axis=0)
            clip = (lo[0], lo[1], hi[0], hi[1]) if clip is None else (
                max(lo[0], clip[0]), max(lo[1], clip[1]), min(hi[0], clip[2]), min(hi[1], clip[3]))
        elif t == "f" and pending_rect is not None:
            layer = layers.setdefault(clip, np.zeros(size, np.uint8))
            poly = np.round(np.column_stack([pending_rect[:, 0], h - pending_rect[:, 1]]) * PX_PER_MM * 16)
            cv2.fillPoly(layer, [poly.astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
        elif t in ("m", "l"):
            p = np.array([operands[-2], operands[-1], 1]) @ ctm.T
            path_pts.append((t, p[:2] / PT))
        elif t == "S":
            for (k1, p1), (k2, p2) in zip(path_pts, path_pts[1:]):
                if k2 == "l":
                    segments.append((tuple(p1), tuple(p2)))
        if t.isalpha() or t in ("'", '"'):
            operands = []
            if t in ("f", "S", "n", "h"):
                pending_rect = None if t != "h" else pending_rect
            if t in ("f", "S", "n"):
                path_pts = []
    ink = np.zeros(size, bool)
    for c, layer in layers.items():
        mask = layer.astype(bool)
        if c is not None:
            keep = np.zeros(size, bool)
            x0, y0, x1, y1 = (int(round(v * PX_PER_MM)) for v in (c[0], h - c[3], c[2], h - c[1]))
            keep[max(y0, 0):y1, max(x0, 0):x1] = True
            mask &= keep
        ink |= mask
    return ink, segments


def compose(pdf: bytes, paper: str, mat_mm: float = 420.0) -> tuple[np.ndarray, tuple[float, float]]:
    """The pages taped together as the page notes say (each laid over the earlier ones).

    Returns:
        (``H x W uint8`` white-on-black-ink image of the whole mat area at PX_PER_MM, the
        board coordinates (x, y) of its top-left pixel).
    """
    pages = mat_pages(mat_mm, paper)
    left = min(p.region_mm[0] for p in pages)
    top = max(p.region_mm[3] for p in pages)
    right = max(p.region_mm[2] for p in pages)
    bottom = min(p.region_mm[1] for p in pages)
    canvas = np.full((int(round((top - bottom) * PX_PER_MM)), int(round((right - left) * PX_PER_MM))), 255, np.uint8)
    for page, (size_mm, stream) in zip(pages, pdf_pages(pdf)):
        ink, _ = interpret(stream, size_mm)
        l, b, r, t = page.region_mm
        ox, oy = (int(round(v * PX_PER_MM)) for v in page.origin_mm)
        cx, cy = int(round((l - left) * PX_PER_MM)), int(round((top - t) * PX_PER_MM))
        pw, ph = int(round((r - left) * PX_PER_MM)) - cx, int(round((top - b) * PX_PER_MM)) - cy
        canvas[cy:cy + ph, cx:cx + pw] = np.where(ink[oy:oy + ph, ox:ox + pw], 0, 255)
    return canvas, (left, top)


def found_markers_mm(image: np.ndarray, top_left: tuple[float, float]) -> dict[int, np.ndarray]:
    """ArUco markers found in a composed image, corners in board mm."""
    found = detect_markers(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), "DICT_4X4_50")
    out = {}
    for mid, corners in found.items():
        px = np.asarray(corners, float).reshape(4, 2) + 0.5  # pixel centres
        out[int(mid)] = np.column_stack([top_left[0] + px[:, 0] / PX_PER_MM, top_left[1] - px[:, 1] / PX_PER_MM])
    return out


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_pages_are_the_paper_size_and_the_markers_true_across_the_seams(paper):
    pdf = mat_pdf(BOARD, paper, print_markers=True)
    pages = pdf_pages(pdf)
    assert len(pages) == 6
    for size_mm, _ in pages:
        assert sorted(size_mm) == pytest.approx(sorted(PAPER_MM[paper]), abs=0.01)
    image, top_left = compose(pdf, paper)
    found = found_markers_mm(image, top_left)
    want = load_mat_layout(BOARD).markers
    assert sorted(found) == sorted(want) == [0, 1, 2, 3]
    for mid, corners in want.items():
        # every corner within a pixel (0.2 mm) of where the geometry file says, so each side 40 mm
        np.testing.assert_allclose(found[mid], corners, atol=0.3)
        assert np.linalg.norm(found[mid][1] - found[mid][0]) == pytest.approx(40.0, abs=0.3)


def test_one_large_page_holds_the_whole_mat_at_true_scale():
    (size_mm, stream), = pdf_pages(mat_pdf(BOARD, "fit", print_markers=True))
    assert size_mm == pytest.approx((440.0, 440.0), abs=0.01)
    ink, segments = interpret(stream, size_mm)
    page = mat_pages(420.0, "fit")[0]
    found = found_markers_mm(np.where(ink, 0, 255).astype(np.uint8), (page.region_mm[0] - page.origin_mm[0],
                                                                        page.region_mm[3] + page.origin_mm[1]))
    assert found[2] == pytest.approx(load_mat_layout(BOARD).markers[2], abs=0.3)
    # the x ruler: 101 ticks from one baseline, 1.000 mm apart, 100 mm end to end
    def tick(length_mm: float) -> bool:
        return min(abs(length_mm - t) for t in (2.0, 3.5, 5.0)) < 1e-3

    ticks = sorted(p1[0] for p1, p2 in segments if abs(p1[0] - p2[0]) < 1e-6 and tick(abs(p2[1] - p1[1]))
                   and abs(p1[1] - (10 + 4)) < 1e-3)
    assert len(ticks) == 101
    assert np.diff(ticks) == pytest.approx(np.ones(100), abs=1e-3)
    # the y ruler: the same along y (a printer may scale x and y apart)
    yticks = sorted(p1[1] for p1, p2 in segments if abs(p1[1] - p2[1]) < 1e-6 and tick(abs(p1[0] - p2[0]))
                    and abs(p1[0] - (440 - 10 - 4)) < 1e-3)
    assert len(yticks) == 101 and yticks[-1] - yticks[0] == pytest.approx(100.0, abs=1e-3)


def test_default_mat_draws_the_places_not_the_markers(tmp_path, capsys):
    out = tmp_path / "mat.pdf"
    assert main(["calibrate", "mat", "--out", str(out)]) == 0
    pdf = out.read_bytes()
    assert "6 a4 page(s)" in capsys.readouterr().err
    image, top_left = compose(pdf, "a4")
    assert found_markers_mm(image, top_left) == {}
    text = b"".join(s for _, s in pdf_pages(pdf))
    for label in (b"(id 0)", b"(id 3)", b"(card: seat south)", b"(card: seat west)", b"(6)"):
        assert label in text


def test_space_outlines_are_where_the_reader_fits_them():
    (size_mm, stream), = pdf_pages(mat_pdf(BOARD, "fit"))
    layout = load_mat_layout(BOARD)
    # a 3 mm wide stroke on the circle of radius 26 - 1.5 mm around each space centre
    widths = re.findall(rb"([\d.]+) w \[\] 0 d\n((?:[-\d. ]+ m [^\n]* c S\n)+)", stream)
    space_block = [b for w, b in widths if float(w) == layout.space_outline_mm]
    assert len(space_block) == 1
    starts = [tuple(map(float, line.split()[:2])) for line in space_block[0].strip().split(b"\n")]
    assert len(starts) == 7
    for (x, y), c in zip(starts, layout.space_centres_mm):
        assert (x - 24.5, y) == pytest.approx(tuple(c), abs=1e-3)


def test_a_seam_across_a_printed_marker_is_refused_naming_it(tmp_path, capsys):
    doc = json.loads(BOARD.read_text())
    doc["markers"]["1"]["corners_mm"] = [[70, 200], [110, 200], [110, 160], [70, 160]]  # across x = 85
    geo = tmp_path / "board.json"
    geo.write_text(json.dumps(doc))
    assert main(["calibrate", "mat", "--geometry", str(geo), "--print-markers", "--out", str(tmp_path / "m.pdf")]) == 2
    err = capsys.readouterr().err
    assert "marker 1" in err and "--paper a1 / fit" in err and "Traceback" not in err
    assert main(["calibrate", "mat", "--geometry", str(geo), "--print-markers", "--paper", "fit",
                 "--out", str(tmp_path / "m.pdf")]) == 0


def test_a_geometry_without_the_mat_size_names_the_field(tmp_path, capsys):
    doc = json.loads(BOARD.read_text())
    del doc["mat_size_mm"]
    geo = tmp_path / "board.json"
    geo.write_text(json.dumps(doc))
    assert main(["calibrate", "mat", "--geometry", str(geo), "--out", str(tmp_path / "m.pdf")]) == 2
    assert "mat_size_mm: missing" in capsys.readouterr().err


def test_unknown_paper_and_non_pdf_are_one_line_errors(tmp_path, capsys):
    assert main(["calibrate", "mat", "--paper", "b5", "--out", str(tmp_path / "m.pdf")]) == 2
    assert "a4, letter" in capsys.readouterr().err
    assert main(["calibrate", "mat", "--out", str(tmp_path / "m.png")]) == 2
    assert "expected a .pdf" in capsys.readouterr().err


def test_pdf_cross_reference_is_exact():
    pdf = mat_pdf(BOARD, "letter")
    xref = int(re.search(rb"startxref\n(\d+)", pdf).group(1))
    offsets = [int(m) for m in re.findall(rb"(\d{10}) 00000 n", pdf[xref:])]
    assert len(offsets) == 3 + 2 * 6
    for n, off in enumerate(offsets, start=1):
        assert pdf[off:].startswith(f"{n} 0 obj".encode())


def test_marker_places_say_where_each_marker_goes():
    places = marker_places(load_mat_layout(BOARD))
    assert places[0].startswith("north-west corner of the mat: centre 30 mm from the left edge and 30 mm from the top")
    assert places[2].startswith("south-east corner") and "390 mm from the top edge" in places[2]
    assert all(p.endswith("top edge towards north (+y)") for p in places.values())


def test_the_marker_sheet_says_where_each_marker_goes(tmp_path):
    out = tmp_path / "markers.pdf"
    assert main(["calibrate", "markers", "--out", str(out)]) == 0
    text = out.read_bytes()
    assert b"(id 0: north-west corner of the mat: centre 30 mm from the left edge and 30 mm from the top edge" in text
    assert b"(id 3: south-west corner of the mat" in text
