"""A camera or calibration path that exists but is not a file says what it is (a directory, a
device), not "no such file"."""

from __future__ import annotations

import argparse

import pytest

from companion.cli import UsageError
from companion.commands.dice import _calibration
from companion.vision.frames import FrameSourceError, OpenCVSource


@pytest.mark.parametrize("target, said", [("/dev/null", "not a video file (a device or special file)"),
                                          ("DIR", "a directory, not a video file")])
def test_a_camera_path_that_is_not_a_video_file_says_what_it_is(tmp_path, target, said):
    target = str(tmp_path) if target == "DIR" else target
    with pytest.raises(FrameSourceError) as info:
        OpenCVSource(target)
    assert str(info.value) == f"{target}: {said}"
    assert "no such" not in str(info.value)


def test_a_missing_video_file_is_still_no_such_file(tmp_path):
    with pytest.raises(FrameSourceError, match="no such video file"):
        OpenCVSource(str(tmp_path / "gone.mp4"))


def test_dice_calibration_given_a_directory_names_the_file_expected_in_it(tmp_path):
    with pytest.raises(UsageError) as info:
        _calibration(argparse.Namespace(calibration=str(tmp_path)), None, None)
    assert f"--calibration {tmp_path}: a directory" in str(info.value)
    assert str(tmp_path / "dice-tray.toml") in str(info.value) and "no such" not in str(info.value)
    with pytest.raises(UsageError, match="no such file"):
        _calibration(argparse.Namespace(calibration=str(tmp_path / "gone.toml")), None, None)
