"""``companion read GAME``: camera-sized photographs, the same fields in every case, and the
calibration files said and checked (the lens's image size, a lens from another camera)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.images import READER_SIDE_PX, to_reader_size

HERE = Path(__file__).parent
PHOTO = HERE / "data" / "carrousel-table" / "images" / "carrousel_000.jpg"
SHARED = HERE.resolve().parents[1] / "shared" / "data"
MONSIEUR = SHARED / "monsieur-table" / "images" / "monsieur_012.jpg"
CARROSSEL = SHARED / "carrossel-table" / "images" / "carrossel_012.jpg"


@pytest.fixture(autouse=True)
def _no_user_files(tmp_path, monkeypatch):
    """No configuration or calibration folder of the machine's user."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


def _read(capsys, *argv: str) -> list[dict]:
    main(["read", *argv])
    return [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]


def _upscaled(tmp_path: Path, photo: Path, width: int) -> Path:
    """A bicubic upscale of ``photo`` (4:3) to ``width`` px, as the tester made them."""
    frame = cv2.imread(str(photo))
    out = tmp_path / f"{photo.stem}_{width}.png"
    cv2.imwrite(str(out), cv2.resize(frame, (width, width * 3 // 4), interpolation=cv2.INTER_CUBIC),
                [cv2.IMWRITE_PNG_COMPRESSION, 1])
    return out


def test_to_reader_size_keeps_small_frames_and_brings_large_ones_to_640():
    small = np.zeros((480, 640, 3), np.uint8)
    assert to_reader_size(small)[0] is small
    big, scale = to_reader_size(np.zeros((1944, 2592, 3), np.uint8))
    assert big.shape == (480, 640, 3) and scale == pytest.approx(640 / 2592)
    wide, _ = to_reader_size(np.zeros((1080, 1920, 3), np.uint8))
    assert wide.shape == (360, READER_SIDE_PX, 3)


@pytest.mark.parametrize("width", [2592, 4056])
def test_a_camera_sized_carrousel_photo_reads_as_at_640(tmp_path, capsys, width):
    base, = _read(capsys, "carrousel", str(PHOTO))
    big, = _read(capsys, "carrousel", str(_upscaled(tmp_path, PHOTO, width)))
    assert base["status"] == "ok" and "unknown" not in base["spaces"]
    assert big["status"] == "ok", big["status"]
    assert big["spaces"] == base["spaces"]
    assert {s: c["triple"] for s, c in big["cards"].items()} == {s: c["triple"] for s, c in base["cards"].items()}
    assert big["read_size_px"] == [640, 480]


@pytest.mark.skipif(not MONSIEUR.exists() or not CARROSSEL.exists(), reason="the shared photographs are not here")
def test_camera_sized_monsieur_and_carrossel_photos_read_as_at_640(tmp_path, capsys):
    for game, photo, keys in (("monsieur-carrousel", MONSIEUR, ("carousel_angle_deg", "die", "pointed_seat")),
                              ("carrossel", CARROSSEL, ("board_angle_deg", "facing"))):
        base, = _read(capsys, game, str(photo))
        big, = _read(capsys, game, str(_upscaled(tmp_path, photo, 2592)))
        assert base["status"] == "ok" and big["status"] == "ok", (game, big["status"])
        for key in keys:
            if key.endswith("_deg"):
                assert big[key] == pytest.approx(base[key], abs=0.5)
            else:
                assert big[key] == base[key], (game, key)


def _grey(tmp_path: Path) -> Path:
    out = tmp_path / "grey.png"
    cv2.imwrite(str(out), np.full((480, 640, 3), 128, np.uint8))
    return out


@pytest.mark.parametrize("game,photo", [("carrousel", PHOTO), ("monsieur-carrousel", MONSIEUR),
                                        ("carrossel", CARROSSEL)])
def test_a_photo_without_the_board_has_every_field_of_a_read_one(tmp_path, capsys, game, photo):
    if not photo.exists():
        pytest.skip("the shared photographs are not here")
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8 not a jpeg")
    read, blind, bad = _read(capsys, game, str(photo), str(_grey(tmp_path)), str(broken))
    assert read["status"].startswith("ok") and blind["status"].startswith("board not visible")
    assert bad["status"].startswith("error:")
    assert list(blind) == list(read) == list(bad)
    for key, value in read.items():
        if isinstance(value, dict) and key in ("cards", "facing", "slots"):
            assert set(blind[key]) == set(value), key
        if isinstance(value, list) and key in ("spaces", "space_details", "seats", "zones"):
            assert len(blind[key]) == len(value), key
    if game == "carrousel":
        assert all(c["triple"] == "unknown" and len(c["discs"]) == 3 for c in blind["cards"].values())
        assert all(d["label"] == "unknown" and d["reason"] == blind["status"] for d in blind["space_details"])
    if game == "carrossel":
        assert set(blind["unknown_because"]) == set(blind["slots"])
    assert blind["markers"] == []


def _camera_json(tmp_path: Path, size: tuple[int, int], dist: list[float]) -> Path:
    out = tmp_path / f"camera_{size[0]}.json"
    f = 0.83 * size[0]
    out.write_text(json.dumps({"image_size": list(size), "camera_matrix": [[f, 0, size[0] / 2], [0, f, size[1] / 2],
                                                                           [0, 0, 1]],
                               "dist_coeffs": dist, "rms_px": 0.2}))
    return out


def test_the_calibration_field_says_which_files_and_from_where(tmp_path, capsys):
    geometry = tmp_path / "board.json"
    geometry.write_bytes((HERE.parent / "companion" / "data" / "calibration" / "carrousel-board.json").read_bytes())
    obj, = _read(capsys, "carrousel", str(PHOTO), "--geometry", str(geometry))
    cal = obj["calibration"]
    assert cal["geometry"] == {"file": str(geometry), "from": "--geometry"}
    assert cal["colours"]["from"] == "shipped" and cal["colours"]["file"].endswith("carrousel-colours.json")
    assert cal["intrinsics"] is None


def test_intrinsics_of_another_size_are_not_used_and_said_once(tmp_path, capsys):
    lens = _camera_json(tmp_path, (1280, 960), [-0.3, 0.15, 0, 0, 0])
    main(["read", "carrousel", str(PHOTO), str(PHOTO), "--intrinsics", str(lens)])
    captured = capsys.readouterr()
    objs = [json.loads(line) for line in captured.out.strip().splitlines()]
    assert all(o["calibration"]["intrinsics"]["used"] is False for o in objs)
    assert "1280 x 960" in objs[0]["calibration"]["intrinsics"]["why"]
    assert objs[0]["spaces"] == ["empty", "green", "blue", "yellow", "red", "black", "empty"]
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(lens) in warnings[0] and "1280 x 960" in warnings[0]


def test_intrinsics_of_the_photo_size_are_scaled_with_it(tmp_path, capsys):
    """A distortion-free camera.json at 2592 x 1944 on a 2592 x 1944 photo: used, scaled to
    640 x 480 (an unscaled matrix would put the centre far off and the fit would fail)."""
    lens = _camera_json(tmp_path, (2592, 1944), [0.0, 0.0, 0.0, 0.0, 0.0])
    obj, = _read(capsys, "carrousel", str(_upscaled(tmp_path, PHOTO, 2592)), "--intrinsics", str(lens))
    assert obj["calibration"]["intrinsics"]["used"] is True
    assert obj["status"] == "ok" and "warning" not in obj["calibration"]["intrinsics"]
    assert "unknown" not in obj["spaces"]


def test_a_lens_from_another_camera_is_warned_about(tmp_path, capsys):
    """The OpenCV chessboard camera's distortion (tests/data/chessboard, k1 = -0.30) on the
    Carrousel photographs (a distortion-free render): the fit is twice as bad with it."""
    lens = _camera_json(tmp_path, (640, 480), [-0.2992, 0.1527, 0.0, 0.0, 0.0])
    main(["read", "carrousel", str(PHOTO), "--intrinsics", str(lens)])
    captured = capsys.readouterr()
    obj = json.loads(captured.out)
    entry = obj["calibration"]["intrinsics"]
    assert entry["used"] is True and "another camera" in entry["warning"]
    assert entry["residual_px_without"] < obj["residual_px"]
    assert "another camera" in captured.err


def test_calibrate_colours_takes_a_camera_sized_photo(tmp_path, capsys):
    """The README's step 3 on a 2592 x 1944 photo of the table: every colour measured."""
    out = tmp_path / "colours.json"
    rc = main(["calibrate", "colours", str(_upscaled(tmp_path, PHOTO, 2592)), "--spaces", ".gbyrk.",
               "--card", "south=blue,black,green", "--card", "east=yellow,blue,black", "--card", "west=yellow,red,black",
               "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    colours = json.loads(out.read_text())
    assert set(colours["horses"]) == set(colours["cards"]) == {"black", "blue", "green", "red", "yellow"}
