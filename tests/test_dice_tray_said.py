"""Carnival's dice tray said where it is missing or wrong: ``companion dice`` without a
calibration warns, a ``--tray`` box outside the image is refused in one line, the camera's
warning gives today's ``calibrate tray --corners`` form, and ``companion doctor --game
carnival`` has a line for the tray."""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion import config as config_mod
from companion.cli import main
from companion.commands import doctor


def _config(tmp_path: Path, text: str = "") -> Path:
    f = tmp_path / "config.toml"
    f.write_text(f'[service]\njournal = "{tmp_path}/j/journal.db"\n[calibration]\ndir = "{tmp_path / "cal"}"\n' + text)
    return f


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    out = tmp_path / "tray.png"
    cv2.imwrite(str(out), np.full((480, 640, 3), 90, np.uint8))
    return out


def test_dice_without_a_calibration_warns_once(tmp_path, photo, capsys):
    assert main(["--config", str(_config(tmp_path)), "dice", str(photo), str(photo)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "warning: no tray calibration" in err[0], err
    assert "dice-tray.toml" in err[0] and "--corners" in err[0] and "--box" not in err[0]


def test_dice_with_a_tray_box_does_not_warn(tmp_path, photo, capsys):
    assert main(["--config", str(_config(tmp_path)), "dice", "--tray", "60,90,600,470", str(photo)]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("where", ["option", "config"])
def test_a_tray_box_outside_the_image_is_one_line(tmp_path, photo, capsys, where):
    if where == "option":
        rc = main(["--config", str(_config(tmp_path)), "dice", "--tray", "0,70,640,555", str(photo)])
        name = "--tray"
    else:
        rc = main(["--config", str(_config(tmp_path, "[dice]\ntray = [0, 70, 640, 555]\n")), "dice", str(photo)])
        name = "[dice] tray"
    captured = capsys.readouterr()
    assert rc == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"companion: error: {name} 0,70,640,555: outside the 640 x 480")


def _doctor(cfg: Path) -> list[str]:
    lines: list[str] = []
    doctor.run(argparse.Namespace(game="carnival", config=str(cfg)), out=lines.append)
    return [line for line in lines if line.split(None, 1)[1].startswith("dice tray:")]


def test_doctor_carnival_has_a_dice_tray_line(tmp_path, photo):
    missing, = _doctor(_config(tmp_path))
    assert missing.startswith("missing") and "dice-tray.toml" in missing and "--corners" in missing
    assert "not needed" not in missing
    boxed, = _doctor(_config(tmp_path, "[dice]\ntray = [60, 90, 600, 470]\n"))
    assert boxed.startswith("ok") and "60,90,600,470" in boxed
    cfg = _config(tmp_path)
    assert main(["--config", str(cfg), "calibrate", "tray", str(photo), "--box", "60,90,600,470"]) == 0
    calibrated, = _doctor(cfg)
    assert calibrated.startswith("ok") and str(tmp_path / "cal" / "dice-tray.toml") in calibrated
    (tmp_path / "cal" / "dice-tray.toml").write_text("[tray]\nbox = 3\n")
    broken, = _doctor(cfg)
    assert broken.startswith("missing") and "dice-tray.toml" in broken


def test_doctor_other_games_do_not_need_the_tray(tmp_path):
    cfg = config_mod.load(_config(tmp_path))
    assert "dice tray" in doctor.needs("carnival", cfg)
    assert "dice tray" not in doctor.needs("carrousel", cfg)


def test_the_dice_camera_without_a_tray_suggests_corners(tmp_path, caplog):
    from companion.sources.dice_camera import dice_source_from_config

    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f0.png"), np.full((480, 640, 3), 90, np.uint8))
    cfg = config_mod.load(_config(tmp_path, f'[camera]\nsource = "folder:{frames}"\n'))
    with caplog.at_level("WARNING"):
        source = dice_source_from_config(cfg)
    try:
        text = " ".join(r.getMessage() for r in caplog.records)
        assert "no tray calibration" in text and "--corners" in text and "--box" not in text
    finally:
        source.close()


def test_doctor_refuses_intrinsics_of_another_size_than_the_camera(tmp_path):
    import json

    lens = tmp_path / "camera.json"
    lens.write_text(json.dumps({"image_size": [1280, 960], "camera_matrix": [[1000, 0, 640], [0, 1000, 480], [0, 0, 1]],
                                "dist_coeffs": [0, 0, 0, 0, 0]}))
    lines: list[str] = []
    doctor.run(argparse.Namespace(game="carrousel", config=str(_config(tmp_path, f'[camera]\nintrinsics = "{lens}"\n'))),
               out=lines.append)
    line, = [x for x in lines if x.split(None, 1)[1].startswith("camera intrinsics:")]
    assert line.startswith("missing") and "1280 x 960" in line and "640 x 480" in line
    lines.clear()
    doctor.run(argparse.Namespace(game="carrousel", config=str(_config(
        tmp_path, f'[camera]\nintrinsics = "{lens}"\nwidth = 1280\nheight = 960\n'))), out=lines.append)
    line, = [x for x in lines if x.split(None, 1)[1].startswith("camera intrinsics:")]
    assert line.startswith("ok")


def test_an_image_far_smaller_than_the_calibration_is_one_line_about_its_size(tmp_path, photo, capsys):
    """A tray calibrated on 640 x 480 frames and an 8 x 6 px image: one line saying the dice
    are too small at that size with that calibration, not a [dice] die_px the user never set."""
    cfg = _config(tmp_path)
    assert main(["--config", str(cfg), "calibrate", "tray", str(photo), "--corners", "120,120;520,120;520,400;120,400",
                 "--size-mm", "200x140", "--hfov-deg", "62"]) == 0
    capsys.readouterr()
    tiny = tmp_path / "tiny.png"
    cv2.imwrite(str(tiny), np.full((6, 8, 3), 90, np.uint8))
    assert main(["--config", str(cfg), "dice", str(tiny)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("companion: error: 8 x 6 px image: the dice are too small to read anywhere")
    assert "die_px" not in lines[0] and str(tmp_path / "cal" / "dice-tray.toml") in lines[0]
