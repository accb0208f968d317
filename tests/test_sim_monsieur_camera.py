"""The simulated Monsieur Carrousel camera: rendered frames with exact truth, read by the
Monsieur reader with no wrong reading; the carousel's motion over time (a spin, the swing back,
the rest)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.vision.sim_monsieur import (
    CONDITION_KINDS,
    MonsieurConditions,
    MonsieurScene,
    SimulatedMonsieurCamera,
    angle_error,
    compare,
    random_monsieur_conditions,
    random_scene,
    truth_pointed,
)
from tests.monsieur_fixtures import reader, renderer  # noqa: F401 (fixtures)


def test_rendered_frames_are_read_with_no_wrong_reading(renderer, reader):
    rng = np.random.default_rng(12)
    totals = {"pointed": [0, 0, 0], "seats": [0, 0, 0], "die": [0, 0, 0]}
    errors = []
    for i in range(2 * len(CONDITION_KINDS)):
        scene = random_scene(rng, renderer.geometry)
        image, truth = renderer.render(scene, random_monsieur_conditions(rng, CONDITION_KINDS[i % len(CONDITION_KINDS)]), rng)
        assert image.shape == (480, 640, 3) and image.dtype == np.uint8
        reading = reader.read(image)
        for name, v in compare(reading, truth, reader.seat_margin_deg).items():
            totals[name] = [a + b for a, b in zip(totals[name], v)]
        if (e := angle_error(reading, truth)) is not None:
            errors.append(e)
    assert totals["pointed"][0] == 0 and totals["seats"][0] == 0 and totals["die"][0] == 0, totals
    # the roof marker at its height is where the reader expects it: the angle within 2 degrees
    assert len(errors) >= 16 and max(errors) < 2.0, errors
    wrong, right, eligible = totals["pointed"]
    assert eligible >= 8 and right >= 0.8 * eligible, totals  # the rest abstain (askew under tilt)
    assert totals["seats"][1] > 0  # the kid tokens are drawn where the reader looks for them


def test_truth_follows_the_geometry(renderer):
    g = renderer.geometry
    # the data README: the pointed seat is the one nearest board angle 0, its offset in -15..15
    assert truth_pointed(g, 5.0) == (11, pytest.approx(-10.0), pytest.approx(5.0))
    k, offset, boundary = truth_pointed(g, 100.0)
    assert abs(offset) <= 15 and boundary == pytest.approx(15 - abs(offset))
    assert ((100.0 + g.seat_disc_angle(k)) - offset) % 360 == pytest.approx(g.finger_deg % 360, abs=1e-9)
    scene = MonsieurScene(angle_deg=40.0, kids=("natural_wood",) + (None,) * 11, die="red")
    _, truth = renderer.render(scene, MonsieurConditions(tilt_deg=0.0), np.random.default_rng(0))
    assert truth.seats == ("kid",) + ("empty",) * 11 and truth.die == "red" and truth.roof_visible
    assert truth.markers_visible == (4, 5, 6, 7)


def test_a_hand_over_the_roof_hides_the_angle_and_a_cocked_die_has_no_colour(renderer, reader):
    rng = np.random.default_rng(3)
    scene = MonsieurScene(angle_deg=77.0, die="edge", die_xy_mm=(150.0, -110.0))
    image, truth = renderer.render(scene, MonsieurConditions(hands=("roof",)), rng)
    assert not truth.roof_visible and truth.die == "unknown"
    reading = reader.read(image)
    assert reading.carousel_angle_deg is None and reading.pointed_seat == "unknown"
    assert reading.die == "unknown"


def test_a_spin_turns_swings_back_and_rests_and_fast_frames_smear(renderer, reader):
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=5, conditions=MonsieurConditions(tilt_deg=5.0), clock=lambda: now[0],
                                  renderer=renderer, scene=MonsieurScene(angle_deg=10.0))
    rest = cam.spin(1.0, 400.0, 2.0, rock_back_deg=1.0)
    assert rest == pytest.approx(3.3)
    assert cam.angle_at(0.5) == 10.0
    assert cam.angle_at(3.0) == pytest.approx(411.0)  # past the stop by the swing back
    assert cam.angle_at(3.3) == pytest.approx(410.0)
    now[0] = 1.1
    fast = cam.read()
    assert fast.truth.speed_dps > 300  # 400 degrees in 2 s from rest: 360 degrees/s at the start
    now[0] = 3.5
    still = cam.read()
    assert still.truth.speed_dps == 0.0 and still.truth.carousel_angle_deg == pytest.approx(50.0)
    assert cam.scene.angle_deg == pytest.approx(50.0)
    r = reader.read(still.image)
    assert r.carousel_angle_deg is not None and abs((r.carousel_angle_deg - 50.0 + 180) % 360 - 180) < 1.5


def test_the_same_seed_renders_the_same_frames(renderer):
    def frames(seed):
        cam = SimulatedMonsieurCamera(seed=seed, kind="any", clock=lambda: 0.0, renderer=renderer)
        return cam.read().image, cam.read().image

    a, b = frames(9), frames(9)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], a[1])  # the sensor's noise differs frame to frame
    assert dataclasses.is_dataclass(random_monsieur_conditions(np.random.default_rng(0), "any"))
