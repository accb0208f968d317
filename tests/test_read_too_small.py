"""``companion read GAME`` on an image too small to read says so, with its size and the least
size the markers need (from their size and layout in the geometry), for all three readers;
never for a photograph the reader reads."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from companion.cli import main

HERE = Path(__file__).parent
SHARED = HERE.resolve().parents[1] / "shared" / "data"
PHOTOS = {"carrousel": HERE / "data" / "carrousel-table" / "images" / "carrousel_000.jpg",
          "monsieur-carrousel": SHARED / "monsieur-table" / "images" / "monsieur_012.jpg",
          "carrossel": SHARED / "carrossel-table" / "images" / "carrossel_012.jpg"}


@pytest.fixture(autouse=True)
def _no_user_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


def _read(capsys, game: str, image: Path) -> dict:
    main(["read", game, str(image)])
    return json.loads(capsys.readouterr().out.strip().splitlines()[0])


def _shrunk(tmp_path: Path, photo: Path, width: int) -> Path:
    out = tmp_path / f"{photo.stem}_{width}.png"
    frame = cv2.imread(str(photo))
    cv2.imwrite(str(out), cv2.resize(frame, (width, width * 3 // 4), interpolation=cv2.INTER_AREA))
    return out


@pytest.mark.parametrize("game, least", [("carrousel", "160 x 120"), ("monsieur-carrousel", "126 x 94"),
                                         ("carrossel", "160 x 120")])
def test_a_tiny_image_is_too_small_with_the_least_size_from_the_geometry(tmp_path, capsys, game, least):
    if not PHOTOS[game].exists():
        pytest.skip("the shared photographs are not here")
    # 8 x 6 px: the 40 mm markers of a 400 mm layout (36 of 376 x 276 for Monsieur) filling the
    # frame would be 0.6 px across; 12 px (6 cells of 2 px) needs the frame 20 times larger
    d = _read(capsys, game, _shrunk(tmp_path, PHOTOS[game], 8))
    assert d["status"].startswith("image too small: 8 x 6 px;"), d["status"]
    assert f"at least {least} px" in d["status"] and "needs 12 px" in d["status"]


@pytest.mark.parametrize("game", ["carrousel", "carrossel"])
def test_markers_found_smaller_than_the_reader_needs_say_too_small(tmp_path, capsys, game):
    if not PHOTOS[game].exists():
        pytest.skip("the shared photographs are not here")
    d = _read(capsys, game, _shrunk(tmp_path, PHOTOS[game], 160))  # markers found at 8-10 px
    assert d["status"].startswith("image too small: 160 x 120 px;") and " px across" in d["status"]
    assert "board not visible" not in d["status"]


@pytest.mark.parametrize("game", list(PHOTOS))
def test_a_photo_the_reader_reads_is_never_too_small(tmp_path, capsys, game):
    if not PHOTOS[game].exists():
        pytest.skip("the shared photographs are not here")
    for image in (PHOTOS[game], _shrunk(tmp_path, PHOTOS[game], 320)):
        d = _read(capsys, game, image)
        assert d["status"].startswith("ok"), (image, d["status"])
