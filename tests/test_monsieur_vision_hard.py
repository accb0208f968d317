"""The Monsieur Carrousel reader on rendered frames it once read wrong: a die on its edge (its
second face up a thin strip beyond the ridge, beside a printed sun, or seen from above along
the ridge), a lamp's glare over an empty seat (its glyph grey, its print washed to a token's
pastel), a seats' angle a degree or two off the roof marker's, and the print behind a token
from an oblique camera. Each reads ``unknown`` or right, never a wrong colour or seat."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.monsieur import EMPTY, KID
from companion.vision.sim_monsieur import MonsieurConditions, MonsieurScene
from tests.monsieur_fixtures import reader, renderer  # noqa: F401 (fixtures)

#: seed 7, frame 197 of bench/monsieur_rendered.py: a die cocked on its edge (yellow face
#: towards a camera 26 degrees off, orange beyond the ridge) beside the printed sun at
#: (-112, 104); it read yellow
EDGE_BY_SUN = (
    MonsieurScene(angle_deg=104.11, kids=(None, None, None, "pastel_pink", "pastel_lemon", "pastel_lemon",
                                          "pastel_sky", None, "natural_wood", "pastel_lemon", None, "pastel_lemon"),
                  die="edge", die_xy_mm=(-104.15, 120.96), die_yaw_deg=353.05),
    MonsieurConditions(height_mm=547.65, tilt_deg=26.05, azimuth_deg=233.91, roll_deg=0.44, look_mm=(4.17, 4.72),
                       light=1.187, kelvin=6140.9, gradient=0.333, vignetting=0.452, noise_sigma=2.63, blur_px=2.48,
                       jpeg_quality=60, lamp_xy=(-0.342, 0.292), gradient_deg=171.86),
)

#: seed 13, frame 108: a lamp's glare (0.64 at its centre) over the empty purple seat 5,
#: its star glyph grey and its print lilac; it read a kid
GLARE = (
    MonsieurScene(angle_deg=137.42, kids=(None, None, "pastel_pink", None, None, None, "natural_wood", None, None,
                                          None, None, None),
                  die="red", die_xy_mm=(-134.17, -54.66), die_yaw_deg=314.23),
    MonsieurConditions(height_mm=646.91, tilt_deg=5.56, azimuth_deg=175.33, roll_deg=79.46, look_mm=(-11.74, -19.47),
                       light=1.079, kelvin=4841.9, gradient=0.017, vignetting=0.353, noise_sigma=2.29, blur_px=0.0,
                       jpeg_quality=80, lamp_xy=(-0.215, -0.051), glare=0.638, glare_xy_mm=(71.23, -108.04),
                       gradient_deg=196.12),
)


def wrong_seats(reading, truth) -> list[int]:
    return [k for k, (r, t) in enumerate(zip(reading.seats, truth.seats)) if r in (KID, EMPTY) and r != t]


@pytest.mark.parametrize("noise_seed", [1, 2, 3])
def test_a_die_on_its_edge_beside_a_printed_sun_is_unknown(reader, renderer, noise_seed):
    scene, cond = EDGE_BY_SUN
    image, truth = renderer.render(scene, cond, np.random.default_rng(noise_seed))
    assert truth.die == "unknown"  # cocked: no face up
    reading = reader.read(image)
    assert reading.status == "ok"
    assert reading.die == "unknown", reading.die_status
    assert "edge" in reading.die_status or "sun" in reading.die_status, reading.die_status


@pytest.mark.parametrize("yaw", [0.0, 35.0, 80.0, 125.0])
def test_a_die_on_its_edge_from_above_is_unknown(reader, renderer, yaw):
    # a camera nearly overhead: the two faces up look alike, on any side of the ridge
    scene = MonsieurScene(angle_deg=20.0, die="edge", die_xy_mm=(150.0, -80.0), die_yaw_deg=yaw)
    image, truth = renderer.render(scene, MonsieurConditions(tilt_deg=2.0, height_mm=650.0), np.random.default_rng(4))
    assert truth.die == "unknown"
    reading = reader.read(image)
    assert reading.die == "unknown", reading.die_status


def test_a_flat_die_is_still_read(reader, renderer):
    # the checks for a die on its edge leave a flat die away from the suns read, from above
    # and from oblique cameras
    for yaw, tilt, xy in ((10.0, 2.0, (150.0, -80.0)), (60.0, 20.0, (150.0, -80.0)), (300.0, 25.0, (150.0, -80.0)),
                          (200.0, 30.0, (-150.0, -60.0))):
        scene = MonsieurScene(angle_deg=20.0, die="blue", die_xy_mm=xy, die_yaw_deg=yaw)
        image, truth = renderer.render(scene, MonsieurConditions(tilt_deg=tilt, azimuth_deg=yaw),
                                       np.random.default_rng(5))
        assert truth.die == "blue" and truth.die_visible
        assert reader.read(image).die == "blue", (yaw, tilt, xy)


@pytest.mark.parametrize("noise_seed", [1, 2])
def test_glare_over_an_empty_seat_is_never_a_kid(reader, renderer, noise_seed):
    scene, cond = GLARE
    image, truth = renderer.render(scene, cond, np.random.default_rng(noise_seed))
    reading = reader.read(image)
    assert truth.seats[5] == EMPTY
    assert reading.seats[5] != KID
    assert wrong_seats(reading, truth) == []


def test_the_seats_angle_fits_their_prints(reader, renderer):
    # a roof marker read 1.5 degrees off: the seats' prints bring it back within half a degree
    scene = MonsieurScene(angle_deg=63.0, kids=("natural_wood", None, "pastel_mint") * 4)
    image, truth = renderer.render(scene, MonsieurConditions(tilt_deg=18.0, azimuth_deg=40.0), np.random.default_rng(6))
    reading = reader.read(image)
    white = reader._white(image, reading.registration)[0]
    for off in (-1.5, 1.5, 0.0):
        got = reader._refine_angle(image, reading.camera, truth.carousel_angle_deg + off, white)
        assert abs((got - truth.carousel_angle_deg + 180.0) % 360.0 - 180.0) <= 0.5, (off, got)


@pytest.mark.parametrize("azimuth", [0.0, 120.0, 240.0])
def test_an_oblique_camera_reads_the_print_behind_the_tokens(reader, renderer, azimuth):
    # kids on every other seat, tokens of every colour; a camera 30 degrees off: never a wrong
    # seat, and most of them read
    kids = ("natural_wood", None, "pastel_pink", None, "pastel_mint", None, "pastel_sky", None,
            "pastel_lemon", None, "pastel_lilac", None)
    scene = MonsieurScene(angle_deg=azimuth / 3.0 + 7.0, kids=kids)
    image, truth = renderer.render(scene, MonsieurConditions(tilt_deg=30.0, azimuth_deg=azimuth, height_mm=520.0),
                                   np.random.default_rng(7))
    reading = reader.read(image)
    assert wrong_seats(reading, truth) == []
    assert sum(s != "unknown" for s in reading.seats) >= 7, reading.seat_reasons
