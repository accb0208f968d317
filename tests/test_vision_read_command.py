"""``companion read carrousel IMAGE... [--overlay OUT]``."""

from __future__ import annotations

import json
from pathlib import Path

import cv2

from companion.cli import main

PHOTO = Path(__file__).parent / "data" / "carrousel-table" / "images" / "carrousel_024.jpg"
TRUTH = Path(__file__).parent / "data" / "carrousel-table" / "truth" / "carrousel_024.json"


def test_read_prints_json_matching_the_truth_and_writes_an_overlay(tmp_path, capsys):
    out = tmp_path / "read.png"
    assert main(["read", "carrousel", str(PHOTO), "--overlay", str(out)]) == 0
    obj = json.loads(capsys.readouterr().out)
    truth = json.loads(TRUTH.read_text())
    assert obj["status"] == "ok" and obj["image"] == str(PHOTO)
    assert obj["spaces"] == truth["space_list"]
    assert obj["cards"]["south"]["triple"] == next(c["triple"] for c in truth["cards"] if c["position"] == "south")
    img = cv2.imread(str(out))
    assert img is not None and img.shape == (480, 640, 3)


def test_several_images_give_json_lines_and_an_overlay_folder(tmp_path, capsys):
    second = PHOTO.with_name("carrousel_027.jpg")
    assert main(["read", "carrousel", str(PHOTO), str(second), "--overlay", str(tmp_path / "o")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [json.loads(x)["image"] for x in lines] == [str(PHOTO), str(second)]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["carrousel_024_overlay.png", "carrousel_027_overlay.png"]


def test_corrupt_and_missing_images_are_reported_and_the_rest_is_read(tmp_path, capsys):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8 not really a jpeg")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    assert main(["read", "carrousel", str(bad), str(tmp_path / "none.jpg"), str(empty), str(PHOTO)]) == 1
    captured = capsys.readouterr()
    objs = [json.loads(x) for x in captured.out.strip().splitlines()]
    assert [o["status"].split(":")[0] for o in objs] == ["error", "error", "error", "ok"]
    assert "no such file" in objs[1]["status"]
    assert str(bad) in captured.err


def test_bad_calibration_file_is_one_line_error(tmp_path, capsys):
    geo = tmp_path / "g.json"
    geo.write_text("[]")
    assert main(["read", "carrousel", str(PHOTO), "--geometry", str(geo)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion: error:") and "g.json" in err and len(err.strip().splitlines()) == 1


def test_read_a_rendered_frame_and_a_real_photo_without_our_markers(tmp_path, capsys):
    import numpy as np

    from companion.vision.sim import Conditions, TableRenderer

    spaces = ("red", "empty", "empty", "black", "yellow", "blue", "green")
    cards = {"east": ("green", "red", "black")}
    image, _truth = TableRenderer().render(spaces, cards, Conditions(tilt_deg=25, azimuth_deg=200, kelvin=2900),
                                           np.random.default_rng(8))
    frame = tmp_path / "rendered.png"
    cv2.imwrite(str(frame), image)
    real = Path(__file__).parent / "data" / "aruco" / "singlemarkersoriginal.jpg"
    assert main(["read", "carrousel", str(frame), str(real), "--overlay", str(tmp_path / "o")]) == 0
    rendered, photo = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    assert rendered["spaces"] == list(spaces)
    assert rendered["cards"]["east"]["triple"] == list(cards["east"])
    assert photo["status"].startswith("board not visible") and photo["spaces"] == ["unknown"] * 7
    assert (tmp_path / "o" / "singlemarkersoriginal_overlay.png").is_file()


def test_intrinsics_option_is_used_and_a_missing_file_is_one_line(tmp_path, capsys):
    cam = tmp_path / "camera.json"
    K = [[554.26, 0, 319.5], [0, 554.26, 239.5], [0, 0, 1]]  # the photos' pinhole camera, no distortion
    cam.write_text(json.dumps({"camera_matrix": K, "dist_coeffs": [0, 0, 0, 0, 0], "image_size": [640, 480]}))
    assert main(["read", "carrousel", str(PHOTO), "--intrinsics", str(cam)]) == 0
    assert json.loads(capsys.readouterr().out)["spaces"] == json.loads(TRUTH.read_text())["space_list"]
    assert main(["read", "carrousel", str(PHOTO), "--intrinsics", str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err
