"""The dice reader with the tray's geometry, issue 16: a face is read on its own plane where the
crops' pips show it (the fitted face joined to the crops' reading: a disagreement is no value, a
one read by the fit alone is no value), and a die that the finder's closing joins to the wall's
shading band is still found. The joining rules are checked with a stand-in fit (no photographs
needed); the finder and the reading on the path-traced dice-tray photographs (exact truth)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.readers import dice_tray
from companion.readers.dice import UNKNOWN, DiceReader
from companion.readers.dice_tray import FaceFit, TrayGeometry, with_face_fit

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice-tray"
photos = pytest.mark.skipif(not (DATA / "truth.json").is_file(), reason="dice-tray photographs not present")


def _geometry() -> TrayGeometry:
    """A camera 450 mm straight above a 220 x 160 mm floor (640 x 480 px, 60 degrees across)."""
    f = 320 / np.tan(np.radians(30))
    K = [[f, 0, 319.5], [0, f, 239.5], [0, 0, 1]]
    R = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]
    floor = [[-110, -80], [110, -80], [110, 80], [-110, 80]]
    return TrayGeometry.from_camera(K, R, [0.0, 0.0, 450.0], (640, 480), floor)


def _fake_fit(value, centres):
    """A stand-in for fit_face that reads ``value`` and notes where it was asked to fit."""

    def fit(frame, geometry, centre_px):
        centres.append(tuple(float(v) for v in centre_px))
        pips = np.array([[centre_px[0], centre_px[1]]]) if value else np.zeros((0, 2))
        return FaceFit(value, "" if value else "no face stands out", tuple(centre_px), pips, 0.6, -1.0)

    return fit


FRAME = np.zeros((480, 640, 3), np.uint8)
BOX = (300.0, 220.0, 330.0, 250.0)


def test_the_crops_value_and_another_fitted_face_is_no_value(monkeypatch):
    centres = []
    monkeypatch.setattr(dice_tray, "fit_face", _fake_fit(2, centres))
    crops = [np.array([[310.0, 230.0], [316.0, 236.0], [322.0, 242.0]])] * 2
    value, reason, given, _ = with_face_fit(FRAME, _geometry(), BOX, (3, "", (3, 3), crops))
    assert value is None and reason == "the pips read 3, the face's grid 2" and 2 in given
    assert centres[0] == pytest.approx((316.0, 236.0))  # fitted where the crops' pips are


def test_no_crop_value_and_a_fitted_face_gives_the_fitted_value_and_its_pips(monkeypatch):
    monkeypatch.setattr(dice_tray, "fit_face", _fake_fit(4, []))
    value, reason, given, found = with_face_fit(FRAME, _geometry(), BOX, (None, "no face fits the pips", (), []))
    assert (value, reason, given) == (4, "", (4,)) and len(found) == 1


def test_crops_disagreeing_are_settled_only_by_a_fitted_face(monkeypatch):
    monkeypatch.setattr(dice_tray, "fit_face", _fake_fit(None, []))
    evidence = (None, "readings disagree", (1, 2), [np.array([[312.0, 232.0]]), np.array([[310.0, 230.0], [320.0, 240.0]])])
    assert with_face_fit(FRAME, _geometry(), BOX, evidence) is evidence  # nothing fits: unchanged
    monkeypatch.setattr(dice_tray, "fit_face", _fake_fit(5, []))
    assert with_face_fit(FRAME, _geometry(), BOX, evidence)[0] == 5


def test_a_one_read_by_the_fit_alone_is_no_value_but_a_die_is_seen(monkeypatch):
    monkeypatch.setattr(dice_tray, "fit_face", _fake_fit(1, []))
    value, reason, given, found = with_face_fit(FRAME, _geometry(), BOX, (None, "no face fits the pips", (2,), []))
    assert value is None and "flatness not seen" in reason
    assert given == () and len(found) == 1  # pips found, no crop's value: the reader keeps the die
    value, _, _, _ = with_face_fit(FRAME, _geometry(), BOX, (None, "one crop", (1,), [np.array([[315.0, 235.0]])]))
    assert value == 1  # a crop read the one too


@pytest.fixture(scope="module")
def truth():
    return {im["image"]: im for im in json.loads((DATA / "truth.json").read_text())["images"]}


def _reader(im, cls=DiceReader):
    cam = im["camera"]
    floor = np.array(im["tray"]["inner_polygon_mm"])[:, :2]
    return cls(geometry=TrayGeometry.from_camera(cam["K"], cam["R_world_to_cam"], cam["t_world_to_cam_mm"],
                                                 (640, 480), floor))


def _by_die(im, readings) -> dict:
    labels = cv2.imread(str(DATA / "masks" / im["image"].replace(".jpg", ".png")), cv2.IMREAD_UNCHANGED)
    out = {}
    for r in readings:
        v = int(labels[int((r.box[1] + r.box[3]) / 2), int((r.box[0] + r.box[2]) / 2)])
        assert 10 <= v < 10 + len(im["dice"]), r  # no reading on the felt or the wall
        out[v - 10] = r
    return out


@photos
def test_a_die_joined_to_the_walls_shading_by_the_closing_is_found_and_read(truth):
    """dice_018: the blue one lies 1.5 dice from the wall; the closing joins it to the wall's
    shading band (a region several dice long). Found in the foreground before the closing."""
    im = truth["dice_018.jpg"]
    frame = cv2.imread(str(DATA / "images" / im["image"]))
    reader = _reader(im)
    regions, _, _ = reader._regions(frame)
    x0, y0, x1, y1 = im["dice"][1]["bbox_visible_px_xyxy"]
    assert any(single and b[0] <= (x0 + x1) / 2 <= b[2] and b[1] <= (y0 + y1) / 2 <= b[3] for b, single in regions)
    by_die = _by_die(im, reader.read(frame))
    assert {k: r.value for k, r in by_die.items()} == {k: d["value"] for k, d in enumerate(im["dice"])}


@photos
def test_faces_the_crops_misread_or_miss_are_read_on_their_plane_never_another_value(truth):
    """dice_021: a black two whose box-centred fit read a one (the fit is now where the crops'
    pips are), a yellow five and a black six no crop pair read; the cocked green die has no value."""
    im = truth["dice_021.jpg"]
    by_die = _by_die(im, _reader(im).read(cv2.imread(str(DATA / "images" / im["image"]))))
    for k in (0, 3, 4):
        assert by_die[k].value == im["dice"][k]["value"], (k, by_die[k])
    for k, r in by_die.items():
        assert r.value in (UNKNOWN, "cocked", im["dice"][k]["value"]), (k, r)


@photos
def test_the_reference_reader_finds_the_die_in_the_wall_band_the_same(truth):
    """tests/dice_reference.py carries the same finder change: the fast reader's readings on
    dice_018 with its geometry are the reference's."""
    import dice_reference as ref

    from companion.readers import dice

    im = truth["dice_018.jpg"]
    frame = cv2.imread(str(DATA / "images" / im["image"]))
    old = _reader(im, ref.ReferenceDiceReader)
    old.model._net = dice._load_net(old.model.path)
    key = [(r.box, r.value, r.reason) for r in _reader(im).read(frame)]
    assert key == [(r.box, r.value, r.reason) for r in old.read(frame)]
    assert len(key) == 3


def test_the_wall_band_lies_along_the_wall_and_not_over_the_floor():
    g = _geometry()
    roi = g.roi()
    band = g.wall_band_mask(roi, 8.0)

    def at(x_mm, y_mm):
        u, v = g.project(np.array([[x_mm, y_mm, 0.0]]))[0]
        return int(band[int(round(v)) - roi[1], int(round(u)) - roi[0]])

    assert at(0, 0) == 0 and at(100, 0) == 0 and at(0, -70) == 0  # 10 mm in: the floor
    assert at(106, 0) == 1 and at(0, 76) == 1 and at(-108, -78) == 1  # within 8 mm of the wall
    assert band[0, 0] == 1  # outside the floor
    with pytest.raises(ValueError, match="width_mm"):
        g.wall_band_mask(roi, -1.0)


def test_the_floor_colour_is_taken_over_three_dice_with_a_geometry():
    g = _geometry()
    reader = DiceReader(geometry=g, model=None)
    lo, hi = g.die_px_range()
    assert reader._floor_aperture() == max(5, min(31, int(round(3 * np.sqrt(lo * hi) / 4)) | 1))
    assert reader._floor_aperture() < 31
    assert DiceReader(model=None)._floor_aperture() == 31  # no geometry: as before


def test_a_flat_dies_box_holds_its_body_at_every_yaw():
    g = _geometry()
    c = g.project(np.array([[40.0, 20.0, g.die_mm]]))[0]
    x0, y0, x1, y1 = g.flat_die_box_px(c)
    for yaw in (0.0, 20.0, 45.0, 70.0):
        side = g.die_side_px(c, yaw)
        assert side <= max(x1 - x0, y1 - y0) + 1e-6
    assert x0 < c[0] < x1 and y0 < c[1] < y1


@photos
def test_a_die_against_the_wall_is_read_though_the_walls_shading_touches_it(truth):
    """dice_036: the yellow five lies against the wall; its foreground joins the wall's shading
    band, which the finder's floor colour (over three dice) and the partial test's wall band
    leave aside: read 5. The cocked white die is still `cocked`."""
    im = truth["dice_036.jpg"]
    by_die = _by_die(im, _reader(im).read(cv2.imread(str(DATA / "images" / im["image"]))))
    assert by_die[3].value == 5 and by_die[4].value == "cocked"
    for k, r in by_die.items():
        assert r.value in (UNKNOWN, "cocked", im["dice"][k]["value"]), (k, r)


def test_a_cocked_die_showing_a_one_is_not_a_one():
    """A rendered tray (seed 20000088): a red die cocked against the wall shows a one and a five
    at about 45 degrees each; its pips and the classifier read a one, but its foreground reaches
    beyond any flat die's box around that pip: unknown."""
    from companion.sim.dice_render import TrayRenderer, random_scene

    scene = random_scene(np.random.default_rng(20_000_088))
    frame, labels, dice = TrayRenderer().render(scene)
    k = next(i for i, d in enumerate(dice) if d.state == "cocked")
    readings = DiceReader(geometry=scene.geometry).read(frame)
    on = [r for r in readings if labels[int((r.box[1] + r.box[3]) / 2), int((r.box[0] + r.box[2]) / 2)] == 10 + k]
    assert on and all(r.value in (UNKNOWN, "cocked") for r in on), on
    assert any("more than a flat die's body" in r.reason for r in on)


@pytest.mark.parametrize("shrink,expect", [(1.0, 5), (0.97, 5), (0.91, UNKNOWN)])
def test_a_face_whose_pips_lie_short_of_a_flat_face_gives_no_value(shrink, expect):
    """A five tilted about 25 degrees (leaning on another die) shows its pips 9 % short along
    the tilt: within the cocked test's tolerance and the flat grid's fit, but beyond FLAT_SURE:
    unknown, never the value. A flat five (or 3 % off, the pips' scatter) is read."""
    from companion.readers.dice import FLAT_SURE, FLAT_TOLERANCE

    g = _geometry()
    u = 4.3
    mm = np.array([[-u, -u], [-u, u], [u, -u], [u, u], [0, 0]]) * [shrink, 1.0] + [30.0, -20.0]
    px = g.project(np.column_stack([mm, np.full(5, g.die_mm)]))
    reader = DiceReader(geometry=g, model=None)
    off = reader.flatness([px])
    assert (off > FLAT_SURE) == (expect == UNKNOWN) and off < FLAT_TOLERANCE
    c = px.mean(0)
    box = (c[0] - 15, c[1] - 15, c[0] + 15, c[1] + 15)
    got = reader._judge(box, (5, "", (5, 5), [px, px]), None, 0)
    assert got.value == expect, got
    if expect == UNKNOWN:
        assert "may not lie flat" in got.reason


@photos
def test_a_lone_pip_fitted_as_a_one_is_tried_as_a_corner_pip_of_a_larger_face(truth):
    """dice_003: the black four on grey felt shows its grey top face hardly at all against the
    felt; the finder's box is its shadowed side, and the face fitted there is one corner pip
    read as a one. Fitted again from the places a face's centre lies from a corner pip, the
    four (the same pip among its pips) is read, and the classifier votes 4 on that face."""
    from companion.readers.dice_tray import _face_around_pip

    im = truth["dice_003.jpg"]
    frame = cv2.imread(str(DATA / "images" / im["image"]))
    by_die = _by_die(im, _reader(im).read(frame))
    assert by_die[2].value == 4 and by_die[0].value == 1 and by_die[1].value == 4
    reader = _reader(im)
    corner = np.array(im["dice"][2]["top_pips_px"])[0]
    fit = _face_around_pip(frame, reader.geometry, corner)
    assert fit is not None and fit.value == 4
    one = np.array(im["dice"][0]["top_pips_px"])[0]  # the green one's pip: no larger face has it
    assert _face_around_pip(frame, reader.geometry, one) is None
