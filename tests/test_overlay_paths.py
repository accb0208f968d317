"""``--overlay`` with a path OpenCV cannot write an image to (an unknown extension, none, a
file of /proc) is one line naming the path and the extensions that work, before any image is
read; never ``cv2.error``."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.images import ImageError, check_image_path, write_image

BAD = ["out.xyz", "noext", "/proc/version"]


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    p = tmp_path / "photo.png"
    cv2.imwrite(str(p), np.full((120, 160, 3), 90, np.uint8))
    return p


@pytest.mark.parametrize("bad", BAD)
def test_check_image_path_names_the_path_and_the_extensions(bad: str) -> None:
    with pytest.raises(ImageError) as info:
        check_image_path(bad)
    msg = str(info.value)
    assert msg.startswith(f"{bad}: ") and ".png" in msg and ".jpg" in msg and "\n" not in msg


def test_good_paths_pass_and_write(tmp_path: Path) -> None:
    for name in ("a.png", "b.JPG"):
        write_image(tmp_path / name, np.zeros((8, 8, 3), np.uint8))
        assert (tmp_path / name).stat().st_size > 0
    with pytest.raises(ImageError, match="cannot write the image"):
        write_image(tmp_path / "missing" / "c.png", np.zeros((8, 8, 3), np.uint8))


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("command", [["read", "carrousel"], ["dice", "--tray", "10,10,150,110"],
                                     ["calibrate", "tray", "--box", "10,10,150,110"]])
def test_commands_refuse_the_overlay_before_reading(tmp_path: Path, photo: Path, capsys: pytest.CaptureFixture[str],
                                                    command: list[str], bad: str) -> None:
    cfg = tmp_path / "companion.toml"
    cfg.write_text(f'[calibration]\ndir = "{tmp_path / "cal"}"\n')
    extra = ["--out", str(tmp_path / "tray.toml")] if command[0] == "calibrate" else []
    # a photo that does not exist: the overlay must be refused before it is looked at
    rc = main(["--config", str(cfg), *command, str(tmp_path / "absent.png"), *extra, "--overlay", bad])
    err = capsys.readouterr().err
    assert rc != 0 and err.count("\n") == 1 and bad in err and ".png" in err, err
    assert "absent.png" not in err and "cv2.error" not in err


def test_an_existing_folder_takes_the_overlay_of_one_image(tmp_path: Path, photo: Path) -> None:
    folder = tmp_path / "annotated"
    folder.mkdir()
    cfg = tmp_path / "companion.toml"
    cfg.write_text(f'[calibration]\ndir = "{tmp_path / "cal"}"\n')
    assert main(["--config", str(cfg), "read", "carrousel", str(photo), "--overlay", str(folder)]) == 0
    assert cv2.imread(str(folder / "photo_overlay.png")).shape == (360, 480, 3)  # the 160 x 120 photo, 3 x enlarged
