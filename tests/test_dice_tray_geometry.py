"""The tray's geometry (companion/readers/dice_tray.py): from four floor corners to a die's size
and shape in pixels anywhere in the tray, checked against the exact camera of the path-traced
dice-tray photographs; `companion calibrate tray --corners` writes it and `companion dice` uses it
with no die size set."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pytest

from companion.readers.dice_tray import MIN_FACE_PX, TrayGeometry, TrayGeometryError

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice-tray"
pytestmark = pytest.mark.skipif(not (DATA / "truth.json").is_file(), reason="dice-tray photographs not present")


@pytest.fixture(scope="module")
def truth():
    return {im["image"]: im for im in json.loads((DATA / "truth.json").read_text())["images"]}


def _camera(im) -> TrayGeometry:
    cam = im["camera"]
    floor = np.array(im["tray"]["inner_polygon_mm"])[:, :2]
    return TrayGeometry.from_camera(cam["K"], cam["R_world_to_cam"], cam["t_world_to_cam_mm"], (640, 480), floor)


def _corners(im, noise_px: float = 0.0) -> tuple[np.ndarray, tuple[float, float]]:
    wx, wy = im["tray"]["inner_size_mm"]
    c = np.array([[-wx / 2, -wy / 2, 0], [wx / 2, -wy / 2, 0], [wx / 2, wy / 2, 0], [-wx / 2, wy / 2, 0]])
    px = _camera(im).project(c) + np.random.default_rng(1).normal(0, noise_px, (4, 2))
    return px, (wx, wy)


def _face_px(die) -> float:
    p = np.array(die["top_face_polygon_px"], float)
    return float(np.sqrt(0.5 * abs(np.dot(p[:, 0], np.roll(p[:, 1], 1)) - np.dot(p[:, 1], np.roll(p[:, 0], 1)))))


def test_the_truth_camera_projects_the_top_faces_where_the_photographs_show_them(truth):
    for name in ("dice_018.jpg", "dice_036.jpg"):
        im = truth[name]
        g = _camera(im)
        for die in im["dice"]:
            if die["state"] != "flat":
                continue
            uv = g.project(np.array([die["top_face_centre_mm"]]))[0]
            assert np.hypot(*(uv - die["top_face_centre_px"])) < 0.05
            # the flat die's top face 16 mm above the floor, as the renderer drew it (rounded
            # corners make the drawn face a little smaller than the 16 mm square)
            assert 0.93 < _face_px(die) / g.face_side_px(die["top_face_centre_px"]) < 1.01


@pytest.mark.parametrize("name", ["dice_018.jpg", "dice_021.jpg", "dice_051.jpg"])
def test_four_floor_corners_give_each_die_its_size_within_three_percent(truth, name):
    im = truth[name]
    px, size = _corners(im, noise_px=1.0)
    g = TrayGeometry.from_corners(px, size, (640, 480))
    assert g.focal_from == "homography"
    exact = _camera(im)
    for die in im["dice"]:
        c = die["top_face_centre_px"]
        assert g.face_side_px(c) == pytest.approx(exact.face_side_px(c), rel=0.03)
    # corners given the other way round describe the same tray
    g2 = TrayGeometry.from_corners(px[::-1], size, (640, 480))
    c = im["dice"][0]["top_face_centre_px"]
    assert g2.face_side_px(c) == pytest.approx(g.face_side_px(c), rel=0.01)
    assert g.camera_centre_mm[2] == pytest.approx(im["camera"]["height_above_floor_mm"], rel=0.15)


def test_a_camera_straight_down_needs_the_lens_field_of_view(truth):
    im = truth["dice_009.jpg"]  # tilted 2 degrees
    px, size = _corners(im)
    with pytest.raises(TrayGeometryError, match="--hfov-deg"):
        TrayGeometry.from_corners(px, size, (640, 480))
    g = TrayGeometry.from_corners(px, size, (640, 480), hfov_deg=60.0)
    for die in im["dice"]:
        assert g.face_side_px(die["top_face_centre_px"]) == pytest.approx(_face_px(die), rel=0.06)


def test_bad_corners_are_one_line():
    with pytest.raises(TrayGeometryError, match="convex quadrilateral"):
        TrayGeometry.from_corners([(0, 0), (100, 100), (100, 0), (0, 100)], (220, 160), (640, 480), hfov_deg=60)
    with pytest.raises(TrayGeometryError, match="four x,y points"):
        TrayGeometry.from_corners([(0, 0), (1, 1)], (220, 160), (640, 480))


def test_the_file_round_trips_and_scales_to_more_pixels(truth, tmp_path):
    im = truth["dice_018.jpg"]
    px, size = _corners(im)
    g = TrayGeometry.from_corners(px, size, (640, 480))
    path = tmp_path / "dice-tray.toml"
    path.write_text(g.to_toml("x.jpg", px, size))
    back = TrayGeometry.from_toml(path)
    c = im["dice"][0]["top_face_centre_px"]
    assert back.face_side_px(c) == pytest.approx(g.face_side_px(c), rel=1e-5)
    big = back.for_size((1280, 960))
    assert big.face_side_px(np.array(c) * 2 + 0.5) == pytest.approx(2 * g.face_side_px(c), rel=0.01)
    assert big.roi()[2] > 640
    with pytest.raises(TrayGeometryError, match="another shape"):
        back.for_size((640, 640))
    path.write_text(path.read_text().replace("R = [[", "R = [[9, "))
    with pytest.raises(TrayGeometryError, match=r"\[geometry\] R"):
        TrayGeometry.from_toml(path)


def test_dice_too_small_at_this_resolution_are_said_to_be(truth):
    g = _camera(truth["dice_000.jpg"])  # faces 12-15 px
    text = g.too_small()
    assert "too small to read anywhere in the tray" in text and "[camera] width/height" in text
    assert g.for_size((1280, 960)).too_small() == ""
    assert _camera(truth["dice_045.jpg"]).too_small() == ""  # faces 25-27 px
    assert MIN_FACE_PX == 18


def test_empty_corners_are_one_line_naming_them(tmp_path):
    """`--corners ""` (the shell's empty word) is refused like any bad corners, not a traceback."""
    from companion.commands import calibrate_tray

    args = argparse.Namespace(image=str(DATA / "images" / "dice_033.jpg"), corners="", box=None, size_mm="220x160",
                              hfov_deg=None, round_mm=None, die_mm=16.0, out=str(tmp_path / "t.toml"), overlay=None,
                              config=None)
    with pytest.raises(ValueError, match="--corners : expected four corners"):
        calibrate_tray.run(args)
    assert not (tmp_path / "t.toml").exists()


def test_calibrate_tray_writes_the_geometry_and_dice_reads_with_it(truth, tmp_path, capsys):
    from companion.commands import calibrate_tray
    from companion.sources.dice_camera import load_tray_geometry

    im = truth["dice_018.jpg"]
    px, size = _corners(im)
    out = tmp_path / "dice-tray.toml"
    corners = ";".join(f"{x:.1f},{y:.1f}" for x, y in px)
    args = argparse.Namespace(image=str(DATA / "images" / im["image"]), corners=corners, box=None,
                              size_mm=f"{size[0]:g}x{size[1]:g}", hfov_deg=None, round_mm=None, die_mm=16.0,
                              out=str(out), overlay=None, config=None)
    assert calibrate_tray.run(args) == 0
    err = capsys.readouterr().err
    assert re.search(r"a die.s top face is 1[78]-2[45] px across", err)
    box, geometry = load_tray_geometry(out, (640, 480))
    assert geometry is not None and box == geometry.roi()
    with pytest.raises(ValueError, match="--size-mm"):
        calibrate_tray.run(argparse.Namespace(**{**vars(args), "size_mm": None}))
    with pytest.raises(ValueError, match="outside the 640 x 480 px photo"):
        calibrate_tray.run(argparse.Namespace(**{**vars(args), "corners": "1,1;700,1;700,400;1,400"}))

    from companion.commands import dice as dice_cmd

    cfg = tmp_path / "companion.toml"
    cfg.write_text("[dice]\ndie_px_min = 400\ndie_px_max = 500\n")  # ignored: the geometry gives the size
    code = dice_cmd.run(argparse.Namespace(images=[args.image], calibration=str(out), tray=None, overlay=None,
                                           config=str(cfg)))
    assert code == 0
    line = json.loads(capsys.readouterr().out.splitlines()[0])
    assert len(line["dice"]) >= 2 and any(d["value"] == 2 for d in line["dice"])


USER_057 = [(505, 425), (174, 462), (141, 233), (454, 167)]  # clicked on dice_057, the other turning sense


def test_corners_in_the_other_turning_sense_give_the_camera_above_the_tray(truth):
    """Corners clockwise on the photo mirror the floor's frame: the pose is found in the mirrored
    frame (mirroring the rotation alone put the camera some 30 m away and a die under 1 px)."""
    im = truth["dice_057.jpg"]
    exact = _camera(im)
    for hfov in (None, 60.0):
        g = TrayGeometry.from_corners(USER_057, (220, 160), (640, 480), hfov_deg=hfov)
        assert g.camera_centre_mm[2] == pytest.approx(im["camera"]["height_above_floor_mm"], rel=0.03)
        assert g.tilt_deg == pytest.approx(im["camera"]["tilt_deg"], abs=1.0)
        for die in im["dice"]:
            c = die["top_face_centre_px"]
            assert g.face_side_px(c) == pytest.approx(exact.face_side_px(c), rel=0.03)
    # every first corner, either sense: the same die sizes
    px, size = _corners(im)
    for k in range(4):
        for pts in (np.roll(px, -k, axis=0), np.roll(px[::-1], -k, axis=0)):
            first = float(np.hypot(*(pts[1] - pts[0])))
            second = float(np.hypot(*(pts[2] - pts[1])))
            sides = size if (first > second) == (size[0] > size[1]) else size[::-1]
            g = TrayGeometry.from_corners(pts, sides, (640, 480))
            for die in im["dice"]:
                c = die["top_face_centre_px"]
                assert g.face_side_px(c) == pytest.approx(exact.face_side_px(c), rel=0.02)


def test_a_round_tray_with_a_square_card_either_sense(truth):
    im = truth["dice_030.jpg"]  # round tray, camera tilted 7.6 degrees
    exact = _camera(im)
    card = np.array([[-50, -50, 0], [50, -50, 0], [50, 50, 0], [-50, 50, 0]], float)
    a = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    floor = np.column_stack([np.cos(a), np.sin(a)]) * 100
    px = np.round(exact.project(card))
    for pts in (px, px[::-1]):
        for hfov in (None, 60.0):
            g = TrayGeometry.from_corners(pts, (100, 100), (640, 480), hfov_deg=hfov, floor_mm=floor)
            assert g.face_px_range() == pytest.approx(exact.face_px_range(), rel=0.04)
            assert g.die_px_range()[0] > 4


def test_a_rectangle_no_camera_can_see_is_refused_in_one_line():
    # the sides swapped: no pinhole over the floor maps a 160 x 220 rectangle onto these corners
    with pytest.raises(TrayGeometryError, match=r"^corners: .*--size-mm.*--hfov-deg") as info:
        TrayGeometry.from_corners(USER_057, (160, 220), (640, 480))
    assert "\n" not in str(info.value)


def test_the_documented_corners_examples_survive_the_shell():
    """Every ``--corners`` example in ``calibrate tray --help`` and docs/carnival.md is quoted:
    unquoted, the shell ends the command at the first ``;``."""
    import shlex

    from companion.commands import calibrate, calibrate_tray

    docs = Path(__file__).resolve().parents[1] / "docs" / "carnival.md"
    lines = [ln.strip() for text in (calibrate_tray.__doc__, calibrate.__doc__, docs.read_text(encoding="utf-8"))
             for ln in text.splitlines() if ln.strip().startswith("companion calibrate tray") and "--corners" in ln]
    assert len(lines) >= 5
    for line in lines:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)  # ";" ends a command, as in sh
        lex.whitespace_split = True
        words = list(lex)
        assert ";" not in words, line
        value = words[words.index("--corners") + 1]
        assert value == "..." or len(calibrate_tray.parse_corners(value)) == 4, line
    with pytest.raises(ValueError, match="in quotes"):
        calibrate_tray.parse_corners("101,96")  # what the shell leaves of an unquoted --corners


def test_a_die_seen_only_by_its_pips_is_a_box_centred_on_them(truth):
    """A red die on burgundy felt shows its pips and no die region: the pips' group becomes a
    square of the die's side centred on them; a group wider than a face, or beside a die already
    found, does not."""
    from companion.readers.dice_tray import speck_faces

    g = _camera(truth["dice_042.jpg"])
    c = g.project(np.array([[0.0, 0.0, g.die_mm]]))[0]
    face = g.face_side_px(c)
    raw = np.zeros((480, 640), np.uint8)
    for a, b in ((-1, -1), (-1, 1), (1, -1), (1, 1), (0, 0)):  # a five, pips 4.3 mm apart
        x, y = (c + np.array([a, b]) * face * 4.3 / 16).round().astype(int)
        raw[y - 1 : y + 2, x - 1 : x + 2] = 1
    group = (c[0] - face, c[1] - face, c[0] + face, c[1] + face)
    (box,) = speck_faces((raw, 0, 0), [group], [], g)
    side = 0.5 * (g.die_side_px(c, 0.0) + g.die_side_px(c, 45.0))
    assert abs((box[0] + box[2]) / 2 - c[0]) < 1 and abs((box[1] + box[3]) / 2 - c[1]) < 1
    assert abs((box[2] - box[0]) - side) < 0.05 * side
    assert speck_faces((raw, 0, 0), [group], [box], g) == []  # a die already found there
    wide = raw.copy()
    x, y = (c + [1.5 * face, 0]).round().astype(int)
    wide[y - 1 : y + 2, x - 1 : x + 2] = 1  # a speck a face and a half away: two dice, or texture
    assert speck_faces((wide, 0, 0), [(c[0] - face, c[1] - face, c[0] + 2 * face, c[1] + face)], [], g) == []


def test_a_flat_face_is_read_on_its_own_plane_and_the_bare_felt_is_no_face(truth):
    """fit_face: the die's top face resampled on the plane a die's height above the floor, its
    pips against the six layouts; the felt beside the die reads no value."""
    import cv2

    from companion.readers.dice_tray import face_centre_in_box, fit_face

    im = truth["dice_036.jpg"]
    frame = cv2.imread(str(DATA / "images" / im["image"]))
    g = _camera(im)
    six = im["dice"][0]  # a flat six
    fit = fit_face(frame, g, np.array(six["top_face_centre_px"]) + [1.5, -1.0])
    assert fit.value == 6 and fit.pips_px.shape == (6, 2), fit
    assert np.hypot(*(np.mean(fit.pips_px, 0) - six["top_face_centre_px"])) < 1.5
    # from the finder's box of the whole die (side faces too) to its top face's centre
    box = six["bbox_visible_px_xyxy"]
    c = face_centre_in_box(g, box)
    assert np.hypot(c[0] - six["top_face_centre_px"][0], c[1] - six["top_face_centre_px"][1]) < 3.0
    felt = g.project(np.array([[0.0, -40.0, g.die_mm]]))[0]  # bare felt in this photograph
    assert fit_face(frame, g, felt).value is None
