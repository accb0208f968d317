"""A camera whose colour channels come in another order (the classic red/blue swap of a camera
driver) never gives a wrong reading: the Carrossel reader tells it from the booth roofs'
printed hues (colour.PrintCheck) and reads ``colour lost``; normal frames (the path-traced
photographs, rendered dim, warm, cool, glare and hand frames) are not refused. The full sets
(20 photographs of each table, 264 rendered frames) are in bench/colour_swap.py."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrossel import BOOTH_PRINT_SRGB, CarrosselReader
from companion.vision.colour import CHANNEL_ORDERS, COLOUR_LOST, PrintCheck
from companion.vision.sim_carrossel import (
    CONDITION_KINDS,
    CarrosselRenderer,
    random_carrossel_conditions,
    random_tiles,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "carrossel-table"
BOOTHS = PrintCheck.from_print(BOOTH_PRINT_SRGB, (236, 236, 236))


def _permuted(order):
    return BOOTHS.expected[:, list(order)]


def test_the_print_itself_passes():
    assert BOOTHS.problem(BOOTHS.expected) == ""


@pytest.mark.parametrize(("order", "words"), CHANNEL_ORDERS[1:])
def test_every_wrong_channel_order_of_the_booths_is_named(order, words):
    got = BOOTHS.problem(_permuted(order))
    assert got.startswith(f"{COLOUR_LOST}: {words}"), got


def test_a_camera_that_washes_colours_out_keeps_the_hue():
    # the photographs' tone curve gives the booths about 0.4 of their printed chromaticity:
    # the direction (hue) is what is compared, so a paler print still tells
    pale = BOOTHS.expected ** 0.4
    assert BOOTHS.problem(pale) == ""
    assert "red and blue" in BOOTHS.problem(pale[:, ::-1])


def test_one_booth_covered_by_a_hand_decides_nothing():
    skin = np.array([0.25, 0.33, 0.62])  # linear BGR of a light skin over the white: orange-red
    normal = BOOTHS.expected.copy()
    normal[1] = skin  # the blue booth under a hand looks like a swapped blue booth
    assert BOOTHS.problem(normal) == ""
    swapped = BOOTHS.expected[:, ::-1].copy()
    swapped[0] = skin  # the swapped red booth (blue) under a hand
    assert "red and blue" in BOOTHS.problem(swapped)


def test_places_not_seen_or_grey_do_not_vote():
    m = np.full_like(BOOTHS.expected, np.nan)
    assert BOOTHS.problem(m) == ""
    m[0] = BOOTHS.expected[0, ::-1]  # one booth seen, swapped: not enough places
    assert BOOTHS.problem(m) == ""
    grey = np.full_like(BOOTHS.expected, 0.5)
    assert BOOTHS.problem(grey) == ""
    assert not BOOTHS.votes(grey).any()


def test_a_print_with_green_equal_to_blue_cannot_tell_that_swap():
    # a dark red print (G = B): a green/blue swap leaves it as it is
    check = PrintCheck.from_print({f"p{k}": (110, 52, 52) for k in range(4)}, (232, 232, 226))
    e = check.expected
    assert check.problem(e[:, [1, 0, 2]]) == ""
    assert "red and blue" in check.problem(e[:, ::-1])


def test_a_bad_print_is_refused_in_one_line():
    with pytest.raises(ValueError, match="PrintCheck: expected 2 x 3"):
        PrintCheck(np.ones((3, 3)), ("a", "b"))


@pytest.fixture(scope="module")
def reader():
    return CarrosselReader()


@pytest.fixture(scope="module")
def rendered():
    """One frame of each kind: the first of seeds 1000 + 100 k + i whose fixed markers all
    lie in the frame (a frame of a marker cut off reads "board not visible", not this test's
    matter)."""
    ren, g = CarrosselRenderer(), CarrosselReader().geometry
    frames = []
    for kind in ("normal", "dim", "warm", "cool", "glare", "hands"):
        for i in range(10):
            rng = np.random.default_rng(1000 + 100 * CONDITION_KINDS.index(kind) + i)
            cond = random_carrossel_conditions(rng, kind, g.cell_names)
            img, truth = ren.render(float(rng.uniform(0, 360)), random_tiles(rng, g), cond, rng)
            if set(g.markers) <= set(truth.markers_visible):
                frames.append((kind, img))
                break
    assert len(frames) == 6
    return frames


def test_rendered_frames_read_and_their_swapped_copies_are_colour_lost(reader, rendered):
    for kind, img in rendered:
        assert reader.read(img).status == "ok", kind
        swapped = reader.read(np.ascontiguousarray(img[:, :, ::-1]))
        assert swapped.status.startswith(f"{COLOUR_LOST}: the camera's red and blue look swapped"), (kind, swapped.status)
        assert swapped.board_angle_deg is None and not swapped.slots


@pytest.mark.skipif(not (DATA / "truth.json").exists(), reason="the Carrossel photographs are not here")
@pytest.mark.parametrize("name", ["carrossel_000.jpg", "carrossel_009.jpg", "carrossel_024.jpg", "carrossel_054.jpg"])
def test_photographs_read_and_their_swapped_copies_are_colour_lost(reader, name):
    # 000 warm lamp, 009 the booth hues nearest to a rotated order, 024 and 054 a booth far off
    # its print (a hand or the glare over it)
    im = cv2.imread(str(DATA / "images" / name))
    assert not reader.read(im).status.startswith(COLOUR_LOST)
    got = reader.read(np.ascontiguousarray(im[:, :, ::-1])).status
    assert got.startswith(f"{COLOUR_LOST}: the camera's red and blue look swapped"), got
