"""The rendered dice trays (companion/sim/dice_render.py): their truth is the frame's, the dice
are the standard ones, the same seed gives the same frame."""

from __future__ import annotations

import numpy as np
import pytest

from companion.readers.dice import FLAT_TOLERANCE, DiceReader
from companion.sim.dice_render import (
    HAND_LABEL,
    TrayRenderer,
    face_layout,
    random_scene,
)


@pytest.fixture(scope="module")
def scenes():
    out = []
    renderer = TrayRenderer(supersample=1)
    for seed in (3, 11):
        scene = random_scene(np.random.default_rng(seed), n_dice=3)
        out.append((scene, *renderer.render(scene)))
    return out


def test_each_die_shows_where_its_truth_says(scenes):
    for scene, frame, labels, dice in scenes:
        assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8 and labels.shape == (480, 640)
        for k, d in enumerate(dice):
            if d.visible_fraction < 0.99 or d.state != "flat":
                continue
            x, y = (int(round(v)) for v in d.top_centre_px)
            assert labels[y, x] == 10 + k, (scene.seed, k)
            x0, y0, x1, y1 = d.box
            assert x0 <= x <= x1 and y0 <= y <= y1
            # the top face's pips lie inside its outline, and the die's side is that of a 16 mm die there
            q = d.top_quad_px
            for p in d.top_pips_px:
                assert q[:, 0].min() < p[0] < q[:, 0].max() and q[:, 1].min() < p[1] < q[:, 1].max()
            side = max(scene.geometry.die_side_px(d.top_centre_px, yaw) for yaw in (0.0, 22.5, 45.0, 67.5))
            assert 0.6 * side <= max(x1 - x0, y1 - y0) <= 1.1 * side


def test_flat_dice_fit_the_geometry_and_cocked_dice_do_not():
    # the truth's pips alone (no drawing needed): the renderer's _truth on the scene's own camera
    renderer = TrayRenderer(supersample=1)
    flat_off, cocked_off = [], []
    for seed in range(200):
        scene = random_scene(np.random.default_rng(seed))
        if not any(d.state == "cocked" for d in scene.dice):
            continue
        renderer._truth(scene, scene.geometry, np.zeros((480, 640), np.uint8))
        reader = DiceReader(geometry=scene.geometry, model=None)
        for d in scene.dice:
            # a four or a five shows both axes of its face (a six tilted along its diagonal may not)
            if len(d.top_pips_px) in (4, 5):
                (cocked_off if d.state == "cocked" else flat_off).append(reader.flatness([d.top_pips_px]))
        if len(cocked_off) >= 3 and len(flat_off) >= 5:
            break
    assert flat_off and max(flat_off) < 0.02
    assert cocked_off and min(cocked_off) > FLAT_TOLERANCE


def test_the_same_seed_gives_the_same_frame_and_the_faces_are_the_standard_ones():
    renderer = TrayRenderer(supersample=1)
    a = renderer.render(random_scene(np.random.default_rng(5)))[0]
    b = renderer.render(random_scene(np.random.default_rng(5)))[0]
    assert np.array_equal(a, b)
    assert [len(face_layout(v)) for v in range(1, 7)] == [1, 2, 3, 4, 5, 6]
    assert sorted(face_layout(2, 1)) != sorted(face_layout(2, 0))
    with pytest.raises(ValueError, match="value"):
        face_layout(7)


def test_a_hand_hides_what_is_under_it():
    renderer = TrayRenderer(supersample=1)
    for seed in range(200):
        scene = random_scene(np.random.default_rng(seed))
        if scene.hand is None:
            continue
        _, labels, dice = renderer.render(scene)
        if (labels == HAND_LABEL).any():
            assert all(0.0 <= d.visible_fraction <= 1.0 for d in dice)
            return
    pytest.fail("no scene with a hand in the frame")
