"""Calibration: chessboard intrinsics, marker sheet, board geometry, reference colours."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.calibration import (
    Intrinsics,
    calibrate_intrinsics,
    corner_spacing_px,
    find_chessboard,
    marker_sheet_pdf,
    marker_sheet_png,
    subpixel_half_window,
)
from companion.vision.registration import detect_markers

DATA = Path(__file__).parent / "data"
VIEWS = sorted((DATA / "chessboard").glob("left*.jpg"))
REPO = Path(__file__).parents[1]


def opencv_reference_rms(paths, pattern=(9, 6)):
    """OpenCV's own recipe, as in its test modules/python/test/test_calibration.py: default
    findChessboardCorners, cornerSubPix with winSize (5, 5) (an 11 x 11 px window) and
    termination 30 iterations or 0.1 px, calibrateCamera with flags 0."""
    objp = np.zeros((np.prod(pattern), 3), np.float32)
    objp[:, :2] = np.indices(pattern).T.reshape(-1, 2)
    obj, img = [], []
    for p in paths:
        g = cv2.imread(str(p), cv2.IMREAD_GRAYSCALE)
        ok, c = cv2.findChessboardCorners(g, pattern)
        assert ok
        cv2.cornerSubPix(g, c, (5, 5), (-1, -1), (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 30, 0.1))
        obj.append(objp)
        img.append(c.reshape(-1, 2))
    rms, *_ = cv2.calibrateCamera(obj, img, g.shape[::-1], None, None, flags=0)
    return rms


def test_chessboard_rms_matches_opencv_within_a_hundredth_of_a_pixel():
    """On OpenCV's left01-07 views: OpenCV's recipe 0.1905 px, ours 0.1870 px (a fixed
    winSize of (11, 11), the old one, gave 0.4905 px)."""
    assert [v.name for v in VIEWS] == [f"left0{i}.jpg" for i in range(1, 8)]
    lines = []
    ours = calibrate_intrinsics(VIEWS, (9, 6), 25.0, progress=lines.append)
    reference = opencv_reference_rms(VIEWS)
    assert reference == pytest.approx(0.1905, abs=0.002)  # the recipe itself, on these views
    assert abs(ours.rms_px - reference) < 0.01
    assert 500 < ours.camera_matrix[0, 0] < 580 and abs(ours.camera_matrix[0, 2] - 320) < 40
    assert len(ours.views) == 7 and ours.half_windows_px == (5, 4, 7, 6, 5, 5, 5)
    assert len(lines) == 8 and lines[-1].startswith("RMS reprojection error")
    assert "left02.jpg: 54 corners, sub-pixel window 9 x 9 px" in lines[1]


def test_subpixel_window_follows_the_corner_spacing():
    """The window is sized from the detected corners: the same view at twice the size gets
    about twice the half-window, and a tiny board the smallest one."""
    view = cv2.imread(str(VIEWS[0]), cv2.IMREAD_GRAYSCALE)
    ok, corners = cv2.findChessboardCorners(view, (9, 6))
    assert ok
    spacing = corner_spacing_px(corners, (9, 6))
    assert 28 < spacing < 30  # left01: the closest neighbours are 28.8 px apart
    assert subpixel_half_window(spacing) == 5
    big = cv2.resize(view, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)
    ok, big_corners = cv2.findChessboardCorners(big, (9, 6))
    assert ok and subpixel_half_window(corner_spacing_px(big_corners, (9, 6))) == 11
    assert subpixel_half_window(4.0) == 2
    grid = np.stack(np.meshgrid(np.arange(9) * 10.0, np.arange(6) * 7.0), axis=-1).reshape(-1, 1, 2)
    assert corner_spacing_px(grid, (9, 6)) == pytest.approx(7.0)
    with pytest.raises(ValueError, match="9 x 6 corners"):
        corner_spacing_px(grid[:10], (9, 6))
    refined = find_chessboard(view, (9, 6))
    assert refined.shape == (54, 1, 2) and np.abs(refined.reshape(-1, 2) - corners.reshape(-1, 2)).max() < 2.0


def test_intrinsics_file_round_trip_and_cli(tmp_path, capsys):
    out = tmp_path / "camera.json"
    assert main(["calibrate", "intrinsics", *map(str, VIEWS), "--out", str(out)]) == 0
    back = Intrinsics.from_json(json.loads(out.read_text()))
    assert back.image_size == (640, 480) and back.dist_coeffs.shape == (5,)
    assert "[7/7] left07.jpg: 54 corners" in capsys.readouterr().err


def test_too_few_chessboard_views_is_a_clear_error(tmp_path, capsys):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640), 200, np.uint8))
    assert main(["calibrate", "intrinsics", str(blank), str(VIEWS[0]), "--out", str(tmp_path / "c.json")]) == 2
    assert "at least 3" in capsys.readouterr().err


def test_marker_sheet_png_is_true_scale_and_detectable():
    png = marker_sheet_png([0, 1, 2, 3], "DICT_4X4_50", 40.0, dpi=200)
    assert png[37:41] == b"pHYs" and int.from_bytes(png[41:45], "big") == round(200 / 0.0254)
    page = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    found = detect_markers(page, "DICT_4X4_50")
    assert sorted(found) == [0, 1, 2, 3]
    side_px = np.linalg.norm(found[0][1] - found[0][0])
    assert side_px == pytest.approx(40 / 25.4 * 200, abs=2)


def test_marker_sheet_pdf_is_well_formed():
    pdf = marker_sheet_pdf([0, 1, 2, 3], "DICT_4X4_50", 40.0, "title")
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    xref = int(re.search(rb"startxref\n(\d+)", pdf).group(1))
    offsets = [int(m) for m in re.findall(rb"(\d{10}) 00000 n", pdf[xref:])]
    for n, off in enumerate(offsets, start=1):
        assert pdf[off:].startswith(f"{n} 0 obj".encode())
    # a 40 mm marker is 6 cells of 40/6 mm = 18.9 pt
    assert b" 18.898 18.898 re f" in pdf


def test_geometry_fit_finds_the_printed_spaces(tmp_path, capsys):
    out = tmp_path / "board.json"
    photo = DATA / "carrousel-table" / "images" / "carrousel_039.jpg"
    assert main(["calibrate", "geometry", str(photo), "--out", str(out)]) == 0
    fitted = np.array([s["centre_mm"] for s in json.loads(out.read_text())["spaces"]])
    nominal = np.array([s["centre_mm"] for s in json.loads((REPO / "companion" / "data" / "calibration" / "carrousel-board.json").read_text())["spaces"]])
    assert np.abs(fitted - nominal).max() < 2.0
    assert capsys.readouterr().err.count("outline contrast") == 7


def test_colours_from_two_photos_reproduce_the_calibration_file(tmp_path):
    root = DATA / "carrousel-table"
    names = ["carrousel_000", "carrousel_036"]
    out = tmp_path / "colours.json"
    argv = ["calibrate", "colours", *[str(root / "images" / f"{n}.jpg") for n in names],
            "--truth", *[str(root / "truth" / f"{n}.json") for n in names], "--out", str(out)]
    assert main(argv) == 0
    got = json.loads(out.read_text())
    want = json.loads((REPO / "companion" / "data" / "calibration" / "carrousel-colours.json").read_text())
    for kind in ("horses", "cards"):
        assert sorted(got[kind]) == ["black", "blue", "green", "red", "yellow"]
        for colour, lab in want[kind].items():
            np.testing.assert_allclose(got[kind][colour], lab, atol=0.5)


def test_colours_needs_to_know_what_the_photos_show(capsys):
    photo = DATA / "carrousel-table" / "images" / "carrousel_000.jpg"
    assert main(["calibrate", "colours", str(photo)]) == 2
    assert "--spaces" in capsys.readouterr().err
