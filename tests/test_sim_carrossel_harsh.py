"""The simulated Carrossel camera at its worst (sim_carrossel.EXTRA_KINDS, "harsh": noise sigma
10-20, JPEG 25-40, hands): drawn only when asked, and read without a wrong slot."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.carrossel import CarrosselReader
from companion.vision.sim_carrossel import (
    CONDITION_KINDS,
    EXTRA_KINDS,
    CarrosselRenderer,
    random_carrossel_conditions,
    random_tiles,
    score_reading,
)


def test_harsh_is_drawn_only_when_asked():
    assert "harsh" in EXTRA_KINDS and "harsh" not in CONDITION_KINDS
    cond = random_carrossel_conditions(np.random.default_rng(3), "harsh", ("A1", "A2"))
    assert 10 <= cond.noise_sigma <= 20 and 25 <= cond.jpeg_quality <= 40
    with pytest.raises(ValueError, match="unknown condition kind"):
        random_carrossel_conditions(np.random.default_rng(3), "grainy")


def test_harsh_frames_read_no_wrong_slot():
    renderer, reader = CarrosselRenderer(), CarrosselReader()
    g = renderer.geometry
    for i in range(3):
        rng = np.random.default_rng([7, i])
        cond = random_carrossel_conditions(rng, "harsh", g.cell_names)
        tiles = random_tiles(rng, g)
        angle = (90.0 * int(rng.integers(4)) + rng.uniform(-12, 12)) % 360.0
        image, truth = renderer.render(angle, tiles, cond, rng, layout_seed=i)
        s = score_reading(reader.read(image), truth)
        assert s["slot_wrong"] == 0 and s["slot_covered_wrong"] == 0 and s["facing_wrong"] == 0, (i, s)
