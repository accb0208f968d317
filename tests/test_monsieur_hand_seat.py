"""A hand above an empty Monsieur Carrousel seat, hiding the token's head place and the print
behind it but not the glyph in its middle, is no kid (companion/vision/monsieur.py: a kid told
by the print behind its token shows the glyph on less than ``behind_core_dark`` of its middle)."""

from __future__ import annotations

import numpy as np

from companion.vision.monsieur import KID
from companion.vision.sim_monsieur import MonsieurConditions, MonsieurRenderer, MonsieurScene
from tests.monsieur_fixtures import reader  # noqa: F401  (a pytest fixture)


def test_a_hand_over_an_empty_seats_head_place_is_no_kid(reader):  # noqa: F811
    # a rendered frame of bench/monsieur_rendered.py (seed 902, the hands kind) read seat 11 kid
    scene = MonsieurScene(angle_deg=29.77, kids=("pastel_mint", None, None, None, None, None, None, "pastel_sky",
                                                 "pastel_lemon", None, None, None),
                          die="orange", die_xy_mm=(-74.56, -119.62), die_yaw_deg=128.55)
    cond = MonsieurConditions(height_mm=588.5, tilt_deg=16.76, azimuth_deg=140.23, roll_deg=173.69,
                              look_mm=(-10.97, 20.0), light=0.92, kelvin=5833.0, gradient=0.17, vignetting=0.33,
                              noise_sigma=1.84, jpeg_quality=87, lamp_xy=(-0.338, -0.284), hands=("roof", "seat:2"),
                              gradient_deg=168.37)
    image, truth = MonsieurRenderer(hfov_deg=52.0).render(scene, cond, np.random.default_rng(0))
    assert truth.seats[11] == "empty"
    got = reader.read(image)
    assert got.seats[11] != KID
    wrong = [k for k, s in enumerate(got.seats) if s != "unknown" and s != truth.seats[k]]
    assert wrong == []
    # and the rule it rests on: without it the seat read kid
    keep = reader.behind_core_dark
    try:
        reader.behind_core_dark = 1.01
        assert reader.read(image).seats[11] == KID
    finally:
        reader.behind_core_dark = keep
