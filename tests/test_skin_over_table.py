"""Skin over the table is never read as the table's print (companion/vision/skin.py): a hand
brighter than the markers' white in every channel (nearer the lamp, in a dim frame) keeps its
hue, so it is not an empty Carrossel cell's white."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from companion.vision.colour import srgb_to_linear
from companion.vision.skin import brighter_than_white, median_chroma, skin_like, unclipped_lab
from test_carrossel_hand import _painted, read_photo

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "carrossel-table"
photos = pytest.mark.skipif(not (DATA / "truth.json").exists(), reason="the Carrossel photographs are not here")
#: the attacker's light skin, sRGB (214, 166, 132), as BGR
LIGHT_SKIN_BGR = (132, 166, 214)


def test_a_hand_brighter_than_the_white_keeps_its_hue():
    white = srgb_to_linear(np.array([[90, 100, 110]], np.uint8))[0]  # a dim, warm paper
    skin = np.array([[LIGHT_SKIN_BGR] * 4], np.uint8)
    assert brighter_than_white(skin, white).all()
    lab = unclipped_lab(skin, white)
    assert lab[..., 0].max() <= 100.0 + 1e-3
    assert skin_like(lab).all()
    assert median_chroma(skin, white)[0] > 12.0
    # the paper itself, and the same paper twice as bright, are neutral
    paper = np.array([[[90, 100, 110]] * 4, [[128, 141, 155]] * 4], np.uint8)
    assert (median_chroma(paper, white) < 1.0).all()
    # only the pixels brighter than the white in every channel, when asked
    mixed = np.array([[LIGHT_SKIN_BGR, (90, 100, 110), (90, 100, 110)]], np.uint8)
    assert median_chroma(mixed, white, brighter_only=True)[0] > 12.0
    assert median_chroma(mixed, white)[0] < 1.0


@pytest.fixture(scope="module")
def dim_photo():
    """carrossel_027 (dim light: the markers' paper near code 100), its truth and the reader."""
    return read_photo("carrossel_027.jpg")


@photos
def test_a_tile_under_skin_brighter_than_the_white_is_not_empty(dim_photo):
    """carrossel_027 B7 and B8 (a green dragon and fish) under a skin blob read ``empty`` when
    the blob, brighter than the dim frame's paper, was clipped to the white."""
    frame, cells, reader, reading = dim_photo
    tiles = [n for n, t in cells.items() if t is not None and t["standee"] is None][:3]
    empties = [n for n, t in cells.items() if t is None][:2]
    for name in tiles + empties:
        got = reader.read(_painted(frame, reader, reading, name, LIGHT_SKIN_BGR)).slots[name]
        assert got.label == "unknown", (name, got)
    # the paper's own colour 1.4 times as bright over an empty cell is still the print's white
    # (a lamp's fall-off): the rule is the hue, not the brightness
    from companion.vision.carrossel import _sample, _white_of
    view, _angle = reader._pose
    white = _white_of(_sample(frame.reshape(-1, 3), frame.shape, view.registration.to_image(reader._paper)))
    lin = np.clip(1.4 * white, 0.0, 1.0)
    code = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055) * 255
    for name in empties:
        bright_white = reader.read(_painted(frame, reader, reading, name, tuple(np.round(code)))).slots[name]
        assert bright_white.label == "empty", (name, bright_white)
