"""The Carrousel reader's checks of a space against its own print and of the board as a whole
(companion/vision/carrousel_checks.py), on the path-traced photographs with what a camera or a
table does to them painted in: a small hand over a horse, a soft shadow over a space, sensor
noise, a brighter exposure; and on rendered frames with small palms and soft shadows.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrousel import CarrouselReader
from companion.vision.carrousel_checks import distinct_colours
from companion.vision.colour import UNKNOWN, RegionReading
from companion.vision.sim import COLOURS, TableRenderer, random_conditions

ROOT = Path(__file__).parent / "data" / "carrousel-table"


@pytest.fixture(scope="module")
def reader():
    return CarrouselReader()


def photo(name: str) -> tuple[np.ndarray, dict]:
    return cv2.imread(str(ROOT / "images" / f"{name}.jpg")), json.loads((ROOT / "truth" / f"{name}.json").read_text())


def _lin(img: np.ndarray) -> np.ndarray:
    x = img.astype(np.float64) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def _srgb(lin: np.ndarray) -> np.ndarray:
    x = np.clip(lin, 0, 1)
    return np.clip(np.where(x <= 0.0031308, x * 12.92, 1.055 * x ** (1 / 2.4) - 0.055) * 255 + 0.5, 0, 255).astype(np.uint8)


def small_hand(img: np.ndarray, centre, r: int, skin_rgb, seed: int = 0) -> np.ndarray:
    """A skin-coloured palm of radius ``r`` px over ``centre`` with four fingers and an arm to
    the nearest edge, shaded 0.75-1.0 across it, edges blurred (as a hand's blur)."""
    h, w = img.shape[:2]
    rng = np.random.default_rng(seed)
    mask = np.zeros((h, w), np.uint8)
    cx, cy = int(centre[0]), int(centre[1])
    cv2.ellipse(mask, (cx, cy), (r, int(r * 0.8)), rng.uniform(0, 180), 0, 360, 255, -1)
    ends = {(0, cy): cx, (w - 1, cy): w - cx, (cx, 0): cy, (cx, h - 1): h - cy}
    cv2.line(mask, (cx, cy), min(ends, key=ends.get), 255, int(r * 1.2))
    for _ in range(4):
        a = rng.uniform(0, 2 * np.pi)
        cv2.line(mask, (cx, cy), (int(cx + 1.8 * r * np.cos(a)), int(cy + 1.8 * r * np.sin(a))), 255, max(3, r // 4))
    m = cv2.GaussianBlur(mask, (0, 0), 1.5).astype(np.float64)[..., None] / 255
    yy, xx = np.mgrid[0:h, 0:w]
    shade = 0.75 + 0.25 * np.cos((xx - cx) / (3 * r)) * np.cos((yy - cy) / (3 * r))
    col = np.array(skin_rgb[::-1], np.float64)[None, None, :] * shade[..., None] + rng.normal(0, 3, (h, w, 3))
    return np.clip(img * (1 - m) + col * m, 0, 255).astype(np.uint8)


PALE, LIGHT = (236, 200, 180), (214, 166, 132)


@pytest.mark.parametrize(("name", "space", "skin", "r"), [
    ("carrousel_000", 3, PALE, 10), ("carrousel_000", 3, LIGHT, 10), ("carrousel_000", 4, PALE, 10),
    ("carrousel_000", 5, PALE, 10), ("carrousel_030", 6, PALE, 10), ("carrousel_009", 2, LIGHT, 10),
    ("carrousel_006", 0, LIGHT, 14),
])
def test_a_horse_under_a_small_hand_is_never_empty(reader, name, space, skin, r):
    """A palm that hides the whole horse shows no horse colour and counts as background (its
    chroma against the board is as low as the print's); before the check these read empty at
    confidence 1.0. The space's centre must show the print of its own rim."""
    frame, truth = photo(name)
    assert truth["space_list"][space] != "empty"
    painted = small_hand(frame, truth["projections_px"]["space_centres_board_top"][space], r, skin, seed=space)
    got = reader.read(painted).spaces[space]
    assert got.label in (UNKNOWN, truth["space_list"][space]), got
    if got.label == UNKNOWN:
        assert got.reason


def test_an_empty_space_shows_its_print(reader):
    """The calibration photograph's two empty spaces still read empty: their centres show the
    fill of their rims."""
    frame, truth = photo("carrousel_000")
    got = reader.read(frame)
    for k, label in enumerate(truth["space_list"]):
        if label == "empty":
            assert got.spaces[k].label == "empty", got.spaces[k]


def test_print_seen_names_what_is_off(reader):
    frame, truth = photo("carrousel_000")
    reg = reader.read(frame).registration
    painted = small_hand(frame, truth["projections_px"]["space_centres_board_top"][0], 12, LIGHT)
    why = reader.checks.print_seen(painted, reg, 0)
    assert "print is not seen" in why
    assert reader.checks.print_seen(frame, reg, 0) == ""


def shadow(img: np.ndarray, centre, r: int, depth: float) -> np.ndarray:
    """A soft shadow (an ellipse r x 0.7 r px, blurred by r / 3): the light under its middle
    ``1 - depth`` of the rest, in linear light."""
    h, w = img.shape[:2]
    m = np.zeros((h, w), np.uint8)
    cv2.ellipse(m, (int(centre[0]), int(centre[1])), (r, int(r * 0.7)), 30, 0, 360, 255, -1)
    m = cv2.GaussianBlur(m, (0, 0), r / 3).astype(np.float64)[..., None] / 255
    return _srgb(_lin(img) * (1 - depth * m))


def test_a_coloured_horse_in_a_deep_shadow_is_not_black(reader):
    """carrousel_015's yellow horse under a soft shadow (x0.15 at its middle) read black at 0.74:
    against the light on its own rim it is not black."""
    frame, truth = photo("carrousel_015")
    assert truth["space_list"][3] == "yellow"
    got = reader.read(shadow(frame, truth["projections_px"]["space_centres_board_top"][3], 30, 0.85)).spaces[3]
    assert got.label in (UNKNOWN, "yellow"), got


def test_a_black_horse_in_even_light_stays_black(reader):
    frame, truth = photo("carrousel_000")
    k = truth["space_list"].index("black")
    assert reader.read(frame).spaces[k].label == "black"


@pytest.mark.parametrize("sigma", [6, 12])
def test_noise_on_a_black_horse_does_not_read_a_colour(reader, sigma):
    """carrousel_054's black horse (space 6) under Gaussian noise read blue at 0.27: a colour must
    lead black's votes, and the piece's median colour point to its hue."""
    frame, truth = photo("carrousel_054")
    assert truth["space_list"][6] == "black"
    noisy = np.clip(frame + np.random.default_rng(1).normal(0, sigma, frame.shape), 0, 255).astype(np.uint8)
    reg = reader.read(frame).registration  # the markers as the clean frame gives them (OpenCV 4 and 5 alike)
    got = reader.read(noisy, registration=reg).spaces[6]
    assert got.label in (UNKNOWN, "black"), got


def test_no_colour_is_given_below_half_confidence(reader):
    frame, _ = photo("carrousel_039")
    brighter = np.clip(frame.astype(np.float64) * 1.5 + 0.5, 0, 255).astype(np.uint8)
    got = reader.read(brighter)
    assert got.spaces[0].label in (UNKNOWN, "black"), got.spaces[0]
    for rd in got.spaces:
        if rd.label not in (UNKNOWN, "empty", "black"):
            assert rd.confidence >= reader.checks.MIN_CONFIDENCE


def test_a_colour_read_twice_reads_unknown_on_both_spaces():
    rd = [RegionReading("yellow", 0.9), RegionReading("empty", 1.0), RegionReading("yellow", 0.6),
          RegionReading("red", 1.0)]
    out = distinct_colours(rd)
    assert [r.label for r in out] == [UNKNOWN, "empty", UNKNOWN, "red"]
    assert "spaces 0, 2" in out[0].reason and "one yellow horse" in out[2].reason
    assert distinct_colours(rd[1:2] + rd[3:]) == rd[1:2] + rd[3:]


def test_no_board_reading_holds_a_colour_twice(reader):
    frame, _ = photo("carrousel_039")
    for gain in (1.0, 1.3, 1.5):
        got = reader.read(np.clip(frame.astype(np.float64) * gain + 0.5, 0, 255).astype(np.uint8))
        colours = [x for x in got.labels if x not in (UNKNOWN, "empty")]
        assert len(colours) == len(set(colours)), got.labels


def test_rendered_small_palms_and_shadows_read_nothing_wrong(reader):
    """The renderer's ``covers`` kind: one or two small shaded palms low over single spaces and
    a soft shadow over another, noise up to 8 levels, JPEG 30-95."""
    renderer = TableRenderer()
    rng = np.random.default_rng(7)
    hidden_seen = 0
    for i in range(5):
        start = int(rng.integers(7))
        spaces = ["empty"] * 7
        for j, colour in enumerate(rng.permutation(COLOURS)):
            spaces[(start + j) % 7] = str(colour)
        cards = {seat: ("black", "yellow", "blue") for seat in ("south", "east", "north", "west")}
        cond = random_conditions(rng, "covers")
        assert cond.palms and cond.shadows
        frame, truth = renderer.render(spaces, cards, cond, rng, layout_seed=i)
        hidden_seen += len(truth.hidden)
        got = reader.read(frame)
        for k, (label, want) in enumerate(zip(got.labels, spaces)):
            assert label in (UNKNOWN, want), f"frame {i} space {k}: {label} for {want} ({got.spaces[k]})"
    assert hidden_seen >= 5
