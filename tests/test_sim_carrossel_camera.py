"""The simulated Carrossel camera (companion/vision/sim_carrossel.py): frames with exact truth,
the same seed the same frames, and the reader reads them with no wrong answer."""

import numpy as np
import pytest

from companion.vision.carrossel import CarrosselReader
from companion.vision.sim_carrossel import (
    CarrosselConditions,
    CarrosselRenderer,
    SimulatedCarrosselCamera,
    random_carrossel_conditions,
    random_tiles,
    score_reading,
    slot_verdict,
)


@pytest.fixture(scope="module")
def renderer():
    return CarrosselRenderer()


@pytest.fixture(scope="module")
def reader():
    return CarrosselReader()


def test_same_seed_same_frames(renderer):
    a = SimulatedCarrosselCamera(seed=5, renderer=renderer)
    b = SimulatedCarrosselCamera(seed=5, renderer=renderer)
    for cam in (a, b):
        cam.set_table(board_angle_deg=100.0, tiles={"C3": ("green", "swan", True)})
    fa, fb = a.read(), b.read()
    assert np.array_equal(fa.image, fb.image)
    assert fa.truth.slots["C3"] == {"animal": "swan", "colour": "green", "standee": True}
    assert fa.truth.slots["A1"] == "empty" and fa.truth.board_angle_deg == 100.0
    c = SimulatedCarrosselCamera(seed=6, renderer=renderer)
    c.set_table(board_angle_deg=100.0, tiles={"C3": ("green", "swan", True)})
    assert not np.array_equal(c.read().image, fa.image)


def test_truth_of_the_facing_sectors(renderer):
    img, truth = renderer.render(270.0, {}, CarrosselConditions(), np.random.default_rng(0))
    # sector s's middle is at b + 90 s: at b = 270, A faces south, B east, C north, D west
    assert {k: v[0] for k, v in truth.facing.items()} == {"south": "A", "east": "B", "north": "C", "west": "D"}
    assert img.shape == (480, 640, 3) and img.dtype == np.uint8
    assert set(truth.markers_visible) == {10, 11, 12, 13, 14}


@pytest.mark.parametrize("kind", ["normal", "dim", "warm", "tilted", "blur", "hands", "glare", "bright"])
def test_the_reader_reads_rendered_frames_with_no_wrong_answer(renderer, reader, kind):
    rng = np.random.default_rng(["normal", "dim", "warm", "tilted", "blur", "hands", "glare", "bright"].index(kind) + 40)
    cond = random_carrossel_conditions(rng, kind, renderer.geometry.cell_names)
    tiles = random_tiles(rng, renderer.geometry)
    angle = (90.0 * int(rng.integers(4)) + rng.uniform(-12, 12)) % 360.0
    img, truth = renderer.render(angle, tiles, cond, rng, layout_seed=3)
    reading = reader.read(img)
    s = score_reading(reading, truth)
    assert s["facing_wrong"] == 0 and s["slot_wrong"] == 0 and s["slot_covered_wrong"] == 0, (kind, s, reading.status)
    assert s["angle_wrong"] == 0
    if kind == "hands":
        assert truth.hidden, "the hand hides no cell"
    if kind == "bright" and reading.status.startswith("colour lost"):
        assert not reading.slots  # an over-exposed frame reads nothing rather than guess
        return
    # a reading that answers: the frames are readable, not merely abstained on
    assert reading.status == "ok", reading.status
    assert s["facing_right"] == 4
    assert s["slot_right"] >= 0.25 * (s["slot_right"] + s["slot_abstain"]), s


def test_score_counts_a_wrong_tile(renderer, reader):
    """The scoring itself: a reading of another animal is wrong, not right."""
    img, truth = renderer.render(0.0, {"A4": ("red", "tiger", False)}, CarrosselConditions(), np.random.default_rng(1))
    reading = reader.read(img)
    assert reading.slots["A4"].to_json() in ({"animal": "tiger", "colour": "red", "standee": False}, "unknown")
    wrong = dict(truth.slots)
    wrong["A4"] = {"animal": "fish", "colour": "red", "standee": False}
    import dataclasses

    s = score_reading(reading, dataclasses.replace(truth, slots=wrong))
    assert s["slot_wrong"] == (reading.slots["A4"].label == "tile")


def test_a_bad_tile_names_itself(renderer):
    with pytest.raises(ValueError, match="Z9"):
        renderer.render(0.0, {"Z9": ("red", "tiger", False)}, CarrosselConditions(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown condition kind"):
        random_carrossel_conditions(np.random.default_rng(0), "foggy")


def test_slot_verdict_judges_a_standee_reading():
    """A tile read with its animal unknown is partial when its colour and standee are the
    truth's, wrong otherwise."""
    want = {"animal": "swan", "colour": "green", "standee": True}
    assert slot_verdict({"animal": "unknown", "colour": "green", "standee": True}, want) == "partial"
    assert slot_verdict({"animal": "unknown", "colour": "red", "standee": True}, want) == "wrong"
    assert slot_verdict({"animal": "unknown", "colour": "green", "standee": True},
                        {"animal": "swan", "colour": "green", "standee": False}) == "wrong"
    assert slot_verdict({"animal": "unknown", "colour": "green", "standee": True}, "empty") == "wrong"
    assert slot_verdict("unknown", want) == "abstain" and slot_verdict(want, want) == "right"


def test_a_rendered_standee_is_told(renderer, reader):
    """A standee rendered on a tile, seen from the side, is reported with the tile's colour."""
    tiles = {"A9": ("red", "tiger", True), "B12": ("blue", "fish", True), "C10": ("green", "horse", False)}
    img, truth = renderer.render(5.0, tiles, CarrosselConditions(height_mm=520.0, tilt_deg=15.0, azimuth_deg=30.0),
                                 np.random.default_rng(3))
    reading = reader.read(img)
    assert reading.status == "ok", reading.status
    s = score_reading(reading, truth)
    assert s["slot_wrong"] == 0 and s["slot_partial"] >= 1, s
