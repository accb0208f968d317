"""A hand above an empty Monsieur Carrousel seat, hiding the token's head place and the print
behind it but not the glyph in its middle, is no kid (companion/vision/monsieur.py: a kid told
by the print behind its token shows the glyph on less than ``behind_core_dark`` of its middle)."""

from __future__ import annotations

import numpy as np

from companion.vision.monsieur import KID
from companion.vision.sim_monsieur import (
    MonsieurConditions,
    MonsieurRenderer,
    MonsieurScene,
)
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


def test_glare_over_an_empty_seat_whose_print_shows_behind_is_no_kid(reader):  # noqa: F811
    # a rendered frame of bench/monsieur_rendered.py (seed 1202, the "any" kind, the roof out of
    # view): a glossy print's glare over empty seat 1 read its middle and head pale and light
    scene = MonsieurScene(angle_deg=325.48, kids=(None,) * 12, die="yellow", die_xy_mm=(146.19, -56.71),
                          die_yaw_deg=55.89)
    cond = MonsieurConditions(height_mm=511.67, tilt_deg=26.54, azimuth_deg=240.68, roll_deg=189.33,
                              look_mm=(-3.92, -4.06), light=1.39, kelvin=6029.0, gradient=0.332, vignetting=0.043,
                              noise_sigma=2.85, jpeg_quality=69, lamp_xy=(-0.099, -0.092), glare=0.649,
                              glare_xy_mm=(61.16, 53.58), gradient_deg=358.13, fill_kelvin=3170.9)
    image, truth = MonsieurRenderer(hfov_deg=58.0).render(scene, cond, np.random.default_rng(0))
    got = reader.read(image)
    assert got.seats[1] != KID and truth.seats[1] == "empty"
    assert [k for k, s in enumerate(got.seats) if s != "unknown" and s != truth.seats[k]] == []
    # (this frame read seat 1 kid before behind_bars_kid; the white under a clipped channel,
    # companion/vision/monsieur_cast.py, now makes it unknown on its own as well)
