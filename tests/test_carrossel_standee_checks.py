"""A Carrossel "standee" must be a standee (companion/vision/standee_checks.py): a letter still
matched as well as the reader reads letters is seen, so no standee's body is over it (noise or
JPEG only took the margin over the second letter); a colour in the disc's middle that reaches
the tile's corners beyond the figure's place is a hand, not the figure's paint."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import standee_checks
from companion.vision.carrossel import CarrosselReader

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "carrossel-table"
photos = pytest.mark.skipif(not (DATA / "truth.json").exists(), reason="the Carrossel photographs are not here")
DARK_SKIN_BGR = (60, 82, 120)


def test_paint_beyond_counts_the_middles_colour_on_visible_corners_only():
    middle = np.array([[[60.0, 15.0, 20.0]] * 5])
    tile = np.array([[45.0, -40.0, 25.0]])  # a green print
    corners = np.array([[[45.0, -40.0, 25.0]] * 6 + [[62.0, 14.0, 22.0]] * 4])
    visible = np.ones((1, 10), bool)
    assert standee_checks.paint_beyond(corners, visible, middle, tile)[0] == pytest.approx(0.4)
    visible[0, 6:] = False  # those four inside the figure's region
    assert standee_checks.paint_beyond(corners, visible, middle, tile)[0] == 0.0
    assert standee_checks.paint_beyond(corners, np.zeros((1, 10), bool), middle, tile)[0] == 0.0


def _photo(name):
    im = next(i for i in json.loads((DATA / "truth.json").read_text())["images"] if i["image"] == name)
    frame = cv2.imread(str(DATA / "images" / name))
    standees = {f"{c['sector_label']}{c['slot']}" for c in im["cells"] if c["tile"] and c["tile"]["standee"]}
    tiles = {f"{c['sector_label']}{c['slot']}": c for c in im["cells"] if c["tile"]}
    return frame, standees, tiles, im


@photos
def test_a_noisy_letter_is_not_a_standee():
    """carrossel_027 (dim) with Gaussian noise of 20 levels: its swans' letters matched at r 0.86
    (the next 0.78) read as standees."""
    frame, standees, tiles, _im = _photo("carrossel_027.jpg")
    noisy = np.clip(frame + np.random.default_rng(1).normal(0, 20, frame.shape), 0, 255).astype(np.uint8)
    reading = CarrosselReader().read(noisy)
    assert reading.status == "ok"
    said = {n for n, s in reading.slots.items() if s.standee}
    assert not said - standees, sorted(said - standees)
    seen = [s for s in reading.slots.values() if "the letter is seen" in (s.reason or "")]
    assert seen, "no tile was held back by the letter's match"


def _hand(img, centre, r, skin_bgr, seed):
    """A hand seen from above: a palm (ellipse r x 0.8 r), four fingers (1.8 r long, r / 4 wide)
    and the arm (1.2 r wide) to the nearest edge of the frame, its skin's shading varying by
    20 %, its outline blurred by 1.5 px; saved as JPEG of quality 95."""
    h, w = img.shape[:2]
    rng = np.random.default_rng(seed)
    mask = np.zeros((h, w), np.uint8)
    cx, cy = int(centre[0]), int(centre[1])
    cv2.ellipse(mask, (cx, cy), (r, int(r * 0.8)), float(rng.uniform(0, 180)), 0, 360, 255, -1)
    ends = {(0, cy): cx, (w - 1, cy): w - cx, (cx, 0): cy, (cx, h - 1): h - cy}
    cv2.line(mask, (cx, cy), min(ends, key=ends.get), 255, int(r * 1.2))
    for _ in range(4):
        a = rng.uniform(0, 2 * np.pi)
        cv2.line(mask, (cx, cy), (int(cx + 1.8 * r * np.cos(a)), int(cy + 1.8 * r * np.sin(a))), 255, max(3, r // 4))
    m = cv2.GaussianBlur(mask, (0, 0), 1.5).astype(np.float32)[..., None] / 255
    col = np.empty(img.shape, np.float32)
    col[:] = np.array(skin_bgr, np.float32)
    col *= 0.8 + 0.2 * rng.random((h, w, 1), np.float32)
    out = np.clip(img * (1 - m) + col * m, 0, 255).astype(np.uint8)
    return cv2.imdecode(cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 95])[1], cv2.IMREAD_COLOR)  # as saved


@photos
@pytest.mark.parametrize("photo, skin", [("carrossel_015.jpg", (132, 166, 214)), ("carrossel_018.jpg", (180, 200, 236))])
def test_skin_reaching_past_the_figure_is_a_hand(photo, skin):
    """A hand over each tile without a standee (light skin on carrossel_015, pale on 018), no
    tile it covers read with a standee: its middle under a finger or the arm is one even colour,
    as a standee's, but that colour reaches the tile's corners."""
    frame, standees, tiles, im = _photo(photo)
    reader = CarrosselReader()
    wrong, read = [], 0
    for i, cell in enumerate(im["cells"]):
        name = f"{cell['sector_label']}{cell['slot']}"
        if name not in tiles or name in standees:
            continue
        centre = im["projections_px"]["cell_centres_board_top"][i]
        reading = reader.read(_hand(frame, centre, 11, skin, i))
        if reading.status != "ok":
            continue
        read += 1
        # the palm's tile and the tiles its fingers and arm cross
        wrong += [(name, n) for n, got in reading.slots.items() if got.standee and n not in standees]
    assert read >= 5
    assert not wrong, wrong
