"""A camera given as a video file that is not there: the fix is about the file, not the cable."""

from __future__ import annotations

import pytest

from companion.cli import main
from companion.kits import CAMERA_FIX, camera_fix
from companion.vision.frames import FrameSourceError, OpenCVSource


def test_a_missing_video_file_names_the_file_and_its_fix(tmp_path):
    path = tmp_path / "nonexist.mp4"
    with pytest.raises(FrameSourceError) as info:
        OpenCVSource(str(path))
    assert str(info.value) == f"{path}: no such video file"
    fix = camera_fix(info.value)
    assert "path" in fix and "opencv:FILE" in fix and "ribbon" not in fix


def test_a_file_that_is_not_a_video_asks_for_one(tmp_path):
    path = tmp_path / "notes.mp4"
    path.write_text("not a video\n")
    with pytest.raises(FrameSourceError) as info:
        OpenCVSource(str(path))
    assert "cannot open" in str(info.value)
    assert "video file" in camera_fix(info.value) and "ribbon" not in camera_fix(info.value)


def test_a_live_camera_keeps_the_cable_fix():
    assert camera_fix(FrameSourceError("picamera2: no camera found")) == CAMERA_FIX


@pytest.mark.parametrize("game", ["carrousel", "monsieur-carrousel", "carrossel", "carnival"])
def test_run_at_a_real_table_with_a_missing_video_file(tmp_path, capsys, game, mock_factory):
    """Every game's real table (mock GPIO pins, no speech): one line, exit 2, the file's fix."""
    config = tmp_path / "companion.toml"
    config.write_text('[service]\npin_factory = "mock"\n[speech]\nenabled = false\n[web]\nenabled = false\n'
                      f'[calibration]\ndir = "{tmp_path / "cal"}"\n')
    missing = tmp_path / "nonexist.mp4"
    rc = main(["--config", str(config), "run", "--game", game, "--table", "hardware",
               "--camera", f"opencv:{missing}", "--journal", str(tmp_path / "j.db")])
    assert rc == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("companion: error:")]
    assert f"camera: {missing}: no such video file; fix: check the video file's path" in line
    assert "ribbon" not in line


def test_doctor_gives_the_files_fix(tmp_path):
    from companion.commands import doctor
    from companion.config import load

    config = tmp_path / "companion.toml"
    config.write_text(f'[camera]\nsource = "opencv:{tmp_path}/none.avi"\n')
    c = doctor.check_camera(load(config))
    assert not c.ok and "no such video file" in c.detail
    assert "video file's path" in c.fix and "cable" not in c.fix
