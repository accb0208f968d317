"""The camera on the web page without a browser: the overlay drawn and encoded only when asked
(once per frame, whatever the number of pages), the marker placement check on simulated frames
(in place, swapped, covered, turned, not this board's), the colour capture from a held frame
written through `companion calibrate colours`' code (refused in words when the frame is not
registered or a colour is missing), and each calibration file's state."""

from __future__ import annotations

import dataclasses
import json
import types

import cv2
import numpy as np
import pytest

from companion.vision.carrousel import (
    CarrouselGeometry,
    CarrouselReader,
    load_references,
)
from companion.vision.registration import detect_markers
from companion.vision.sim import SimulatedCamera, TableRenderer
from companion.web.camera import (
    CameraView,
    CaptureError,
    calibration_files,
    marker_check,
)

GEOMETRY = CarrouselGeometry.load()
SPACES = ("empty", "black", "yellow", "blue", "green", "red", "empty")
CARDS = {"south": ("black", "yellow", "blue"), "north": ("green", "red", "black")}


def _frame(markers=None, seed=1, spaces=SPACES, cards=None):
    """A simulated frame of the table (seed 1: all four markers in view) with ``markers`` as
    the printed layout (default: the board's)."""
    g = GEOMETRY if markers is None else dataclasses.replace(GEOMETRY, markers=markers)
    cam = SimulatedCamera(seed=seed, renderer=TableRenderer(g))
    cam.set_table(spaces=spaces, cards=dict(cards or {}))
    return cam.read().image


@pytest.fixture(scope="module")
def frame():
    return _frame(cards=CARDS)


class Source:
    """A camera source as the contract has it: ``latest`` and ``reader``."""

    def __init__(self, frame, reader=None):
        self.reader = reader or CarrouselReader()
        self.latest = None
        if frame is not None:
            self.set(0.0, frame)

    def set(self, t, frame):
        self.latest = (t, frame, self.reader.read(frame))


def _state(check, mid):
    return next(m for m in check.markers if m.id == mid)


def test_every_marker_in_place_on_a_plain_frame(frame):
    check = marker_check(frame, GEOMETRY.markers, GEOMETRY.dictionary)
    assert check.registered and [m.state for m in check.markers] == ["in_place"] * 4
    assert check.summary == "4 of 4 markers in place"
    assert check.residual_px < 1.5


def test_two_swapped_markers_are_named_with_each_other():
    m = dict(GEOMETRY.markers)
    m[0], m[1] = GEOMETRY.markers[1], GEOMETRY.markers[0]  # printed 1 stuck at 0's place and back
    check = marker_check(_frame(m), GEOMETRY.markers, GEOMETRY.dictionary)
    assert (_state(check, 0).state, _state(check, 0).other) == ("swapped", 1)
    assert (_state(check, 1).state, _state(check, 1).other) == ("swapped", 0)
    assert _state(check, 2).state == _state(check, 3).state == "in_place"
    assert "markers 0 and 1 are swapped" in check.summary


def test_a_covered_marker_is_missing_where_it_belongs_and_a_foreign_one_is_named():
    m = dict(GEOMETRY.markers)
    m[7] = m.pop(3)  # marker 3's place shows another id: 3 is not there
    check = marker_check(_frame(m), GEOMETRY.markers, GEOMETRY.dictionary)
    three = _state(check, 3)
    assert three.state == "missing" and "bottom-left" in three.text and three.corners_px is not None
    seven = _state(check, 7)
    assert seven.state == "foreign" and seven.other == 3
    assert "marker 3 not seen" in check.summary


def test_a_marker_turned_in_its_place(frame):
    img = frame.copy()
    c = detect_markers(img)[1]
    x0, y0 = np.floor(c.min(axis=0)).astype(int) - 3
    x1, y1 = np.ceil(c.max(axis=0)).astype(int) + 3
    # A half turn about the marker's own centre (the box around it turned by 180 degrees).
    img[y0:y1, x0:x1] = cv2.rotate(img[y0:y1, x0:x1].copy(), cv2.ROTATE_180)
    check = marker_check(img, GEOMETRY.markers, GEOMETRY.dictionary)
    one = _state(check, 1)
    assert one.state == "turned" and "180" in one.text


def test_no_marker_at_all_is_not_registered_and_says_so():
    check = marker_check(np.full((480, 640, 3), 128, np.uint8), GEOMETRY.markers, GEOMETRY.dictionary)
    assert not check.registered
    assert all(m.state == "missing" for m in check.markers)
    assert check.summary.startswith("the board is not registered: 0 of 4 markers seen")


def test_the_overlay_is_encoded_once_per_frame_and_only_when_asked(frame):
    src = Source(frame)
    view = CameraView(src)
    assert view.encoded == 0  # a frame read, nobody looking: nothing encoded
    jpeg, info = view()
    again = view()
    assert again[0] is jpeg and view.encoded == 1  # two pages, one encoding
    shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert shown.shape == frame.shape
    # The reader's overlay (drawn by vision.carrousel.draw_overlay): its black status bar on top.
    assert shown[2:16, :].mean() < 40 < frame[2:16, :].mean()
    assert info["status"] == "ok" and [r["label"] for r in info["regions"]] == list(SPACES)
    assert (info["cards"]["south"], info["cards"]["north"]) == ("black-yellow-blue", "green-red-black")
    assert info["cards"]["east"].startswith("unknown")  # no card there: unknown, with the reason
    src.set(0.1, frame.copy())
    view()
    assert view.encoded == 2


def test_a_dice_reading_is_drawn_by_the_dice_readers_own_function():
    from companion.readers.dice import DieReading, draw_readings

    img = np.full((200, 300, 3), 90, np.uint8)
    readings = [DieReading(value=5, box=(20.0, 30.0, 60.0, 70.0))]
    src = types.SimpleNamespace(latest=(1.0, img, readings), reader=types.SimpleNamespace(tray=(10, 10, 290, 190)))
    jpeg, info = CameraView(src)()
    shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    expected = draw_readings(img, readings, (10, 10, 290, 190))
    assert np.abs(shown.astype(int) - expected.astype(int)).mean() < 3
    assert info["regions"][0]["label"] == "5"
    with pytest.raises(CaptureError, match="without markers"):
        CameraView(src).markers()


def _config(tmp_path):
    from companion.config import load

    path = tmp_path / "config.toml"
    path.write_text(f'[calibration]\ndir = "{tmp_path / "calibration"}"\n', encoding="utf-8")
    return load(str(path))


def _centre_fraction(img, k):
    reg = CarrouselReader().registrar.register(img)
    x, y = reg.to_image(GEOMETRY.space_centres_mm[k].reshape(1, 2))[0]
    return x / (img.shape[1] - 1), y / (img.shape[0] - 1)


def test_a_tapped_space_gives_its_lab_as_the_colours_file_measures_it(frame, tmp_path):
    view = CameraView(Source(frame), _config(tmp_path))
    held = view.hold()
    assert held["registered"] and held["size"] == [640, 480]
    horses, _ = load_references()
    for k in (2, 5):  # yellow, red
        got = view.sample(held["id"], *_centre_fraction(frame, k))
        assert got["kind"] == "space" and got["index"] == k and got["reader_says"] == SPACES[k]
        nearest = horses.names[int(np.argmin(np.linalg.norm(horses.lab - np.array(got["lab"]), axis=1)))]
        assert nearest == SPACES[k]  # the tapped horse's own pixels, not the board around it
    with pytest.raises(CaptureError, match="on no space and no card"):
        view.sample(held["id"], 0.01, 0.99)


def test_colours_captured_on_a_held_frame_are_written_into_the_calibration_folder(frame, tmp_path):
    config = _config(tmp_path)
    src = Source(frame)
    view = CameraView(src, config)
    held = view.hold()
    src.set(5.0, _frame(spaces=("red",) * 7))  # the table changes meanwhile: the held frame counts
    cards = {seat: list(c) for seat, c in CARDS.items()}
    with pytest.raises(CaptureError, match="no card at all"):
        view.capture_colours([{"id": held["id"], "spaces": list(SPACES), "cards": {}}])
    assert not (tmp_path / "calibration" / "carrousel-colours.json").exists()  # refused: nothing written
    done = view.capture_colours([{"id": held["id"], "spaces": list(SPACES), "cards": cards}])
    path = tmp_path / "calibration" / "carrousel-colours.json"
    assert done["path"] == str(path)
    doc = json.loads(path.read_text())
    assert sorted(doc["horses"]) == sorted(doc["cards"]) == ["black", "blue", "green", "red", "yellow"]
    assert "web page's set-up" in doc["_comment"]
    assert any(line.startswith("horse yellow: L*") for line in done["lines"])
    load_references(path)  # the reader can use it
    state = {f["name"]: f for f in calibration_files(config)["files"]}["carrousel-colours.json"]
    assert state["state"] == "yours" and state["ok"]


def test_a_frame_without_the_boards_markers_is_refused_in_words(tmp_path):
    m = {i + 40: c for i, c in GEOMETRY.markers.items()}  # another board's markers
    view = CameraView(Source(_frame(m)), _config(tmp_path))
    held = view.hold()
    assert not held["registered"] and "not registered" in held["status"]
    with pytest.raises(CaptureError, match=r"not registered \(board not visible: 0 of 4 markers found"):
        view.sample(held["id"], 0.5, 0.5)
    with pytest.raises(CaptureError, match="no colours file written"):
        view.capture_colours([{"id": held["id"], "spaces": list(SPACES), "cards": {s: list(c) for s, c in CARDS.items()}}])
    with pytest.raises(CaptureError, match="no longer held"):
        view.sample(held["id"] + 10, 0.5, 0.5)


def test_calibration_files_say_shipped_none_yours_and_invalid(tmp_path):
    config = _config(tmp_path)
    files = {f["name"]: f for f in calibration_files(config)["files"]}
    assert files["carrousel-board.json"]["state"] == "shipped default" and files["carrousel-board.json"]["ok"]
    assert files["camera.json"]["state"] == "none" and files["camera.json"]["fix"].startswith("companion calibrate")
    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / "dice-tray.toml").write_text("box = [1, 2\n", encoding="utf-8")
    (tmp_path / "calibration" / "carrousel-colours.json").write_text('{"horses": {}}', encoding="utf-8")
    files = {f["name"]: f for f in calibration_files(config)["files"]}
    tray = files["dice-tray.toml"]
    assert tray["state"] == "invalid" and not tray["ok"] and "dice-tray.toml" in tray["detail"]
    colours = files["carrousel-colours.json"]
    assert colours["state"] == "invalid" and "carrousel-colours.json" in colours["detail"]
    assert "\n" not in colours["detail"] and colours["fix"]


def _client(view):
    from starlette.testclient import TestClient

    from companion.web.app import make_app
    from companion.web.hub import Hub

    hub = Hub()
    hub.camera = view
    return TestClient(make_app(hub, entries=None, token="t" * 24), base_url="http://127.0.0.1"), "t" * 24


def test_the_set_up_routes_refuse_bad_requests_in_words(frame, tmp_path):
    client, token = _client(CameraView(Source(frame), _config(tmp_path)))
    ok = {"x-companion-token": token}
    assert client.post("/api/setup/hold").status_code == 403  # a changing request needs the token
    held = client.post("/api/setup/hold", headers=ok).json()
    assert held["ok"] and held["registered"]
    bad = client.post("/api/setup/sample", headers=ok, json={"id": held["id"], "x": "left", "y": 0.5}).json()
    assert bad == {"ok": False, "error": "tap ('left', 0.5): expected fractions of the frame's width and height"}
    missing = client.post("/api/setup/colours", headers=ok, json={"id": held["id"]})
    assert missing.status_code == 400 and "missing views" in missing.json()["error"]
    wrong = client.post("/api/setup/colours", headers=ok,
                        json={"views": [{"id": held["id"], "spaces": ["pink"] * 7, "cards": {}}]})
    assert not wrong.json()["ok"] and wrong.json()["error"].startswith("the frame: spaces: expected 7 labels")
    assert client.post("/api/setup/sample", headers=ok, content=b"[1, 2").status_code == 400
    assert client.get("/api/camera.jpg?view=thermal").status_code == 400
    assert client.get(f"/api/setup/held.jpg?id={held['id']}").headers["content-type"] == "image/jpeg"
    assert client.get("/api/setup/held.jpg?id=99").status_code == 404
    markers = client.get("/api/camera.jpg?view=markers")
    assert markers.status_code == 200 and markers.headers["content-type"] == "image/jpeg"
    assert not (tmp_path / "calibration" / "carrousel-colours.json").exists()


def test_a_table_without_a_camera_says_so_on_every_camera_route():
    client, token = _client(None)
    for path in ("/api/camera.jpg", "/api/camera.mjpg", "/api/camera/events", "/api/setup/held.jpg?id=1"):
        reply = client.get(path)
        assert reply.status_code == 404 and "no camera the page can show" in reply.text
    reply = client.post("/api/setup/hold", headers={"x-companion-token": token})
    assert reply.status_code == 404 and "no camera" in reply.json()["error"]


def test_another_readers_reading_is_drawn_by_its_own_modules_overlay_and_listed_field_by_field():
    from companion.vision.images import OverlayCanvas
    from companion.vision.monsieur import MonsieurReading, draw_overlay
    from companion.vision.monsieur_geometry import MonsieurGeometry

    img = np.full((300, 400, 3), 120, np.uint8)
    geometry = MonsieurGeometry.load()
    reading = MonsieurReading("board not visible: 0 of 4 markers found", pointed_seat=3, die="red")
    src = types.SimpleNamespace(latest=(0.5, img, reading), reader=types.SimpleNamespace(geometry=geometry))
    jpeg, info = CameraView(src)()
    shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    expected = draw_overlay(img, reading, geometry)
    plain = OverlayCanvas(img).img  # (a frame under 320 px is drawn enlarged)
    assert np.abs(expected.astype(int) - plain).mean() > 0.5  # its overlay draws something...
    assert np.abs(shown.astype(int) - expected.astype(int)).mean() < 2  # ...and that is what the page shows
    rows = {r["name"]: r["label"] for r in info["regions"]}
    assert info["status"].startswith("board not visible") and rows["die"] == "red" and rows["pointed seat"] == "3"


def test_colours_from_two_held_frames_are_written_as_from_two_photos(tmp_path):
    """Two players' cards cannot show every colour: a second frame with other cards completes
    them, as a second photo does for `companion calibrate colours`."""
    src = Source(_frame(cards={"south": CARDS["south"]}))
    view = CameraView(src, _config(tmp_path))
    first = view.hold()
    one = {"id": first["id"], "spaces": list(SPACES), "cards": {"south": list(CARDS["south"])}}
    with pytest.raises(CaptureError, match="no card shows green, red in plain view"):
        view.capture_colours([one])
    src.set(3.0, _frame(cards={"north": CARDS["north"]}))
    second = view.hold()
    two = {"id": second["id"], "spaces": ["unknown"] * 7, "cards": {"north": list(CARDS["north"])}}
    done = view.capture_colours([one, two])
    doc = json.loads((tmp_path / "calibration" / "carrousel-colours.json").read_text())
    assert sorted(doc["cards"]) == ["black", "blue", "green", "red", "yellow"] and done["path"].endswith(".json")
    assert "frames at t = 0.0 s, t = 3.0 s" in doc["_comment"]
