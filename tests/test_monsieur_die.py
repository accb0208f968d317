"""The Monsieur die reader on rendered frames: a yellow die in the sun half (the board's own pale
yellow print) is read yellow, not as the side face beside its top; a die too small in the frame
to tell its colour reads unknown, never a guess."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.sim_monsieur import (
    MonsieurConditions,
    MonsieurRenderer,
    MonsieurScene,
)
from tests.monsieur_fixtures import reader, renderer  # noqa: F401 (fixtures)

#: a camera 513 mm up tilted 27 degrees: the die near the board's -x edge is about 13 px across
TILTED = MonsieurConditions(height_mm=513.1, tilt_deg=26.69, azimuth_deg=6.85, roll_deg=281.4,
                            look_mm=(-0.16, 19.83), light=1.096, kelvin=5059.0, gradient=0.17, vignetting=0.235,
                            noise_sigma=1.57, blur_px=0.0, jpeg_quality=88, lamp_xy=(0.224, 0.080),
                            gradient_deg=289.2)


@pytest.mark.parametrize("yaw, xy", [(295.2, (-168.0, 62.0)), (20.0, (-165.0, 40.0)), (160.0, (-168.0, 62.0)),
                                     (70.0, (-165.0, 40.0))])
def test_a_yellow_die_on_the_sun_half_is_read_yellow(reader, renderer, yaw, xy):
    # the sun half's pale yellow covers the board, so the yellow chroma floor is measured on it;
    # the die's own top must not raise that floor above itself, or a side face (orange, red,
    # green or blue by the die's yaw) is left as the only square and read
    scene = MonsieurScene(angle_deg=235.0, die="yellow", die_xy_mm=xy, die_yaw_deg=yaw)
    image, truth = renderer.render(scene, TILTED, np.random.default_rng(1))
    assert truth.die == "yellow"
    reading = reader.read(image)
    assert reading.die == "yellow", reading.die_status


def test_a_die_too_small_in_the_frame_reads_unknown(reader):
    # a 240 x 180 camera: the die's top is 6 px across, its core under 3 x 3 pixels once the
    # JPEG's half-resolution chroma at its edge is left out
    renderer = MonsieurRenderer(size=(240, 180))
    scene = MonsieurScene(angle_deg=40.0, die="orange", die_xy_mm=(150.0, -60.0))
    image, truth = renderer.render(scene, MonsieurConditions(tilt_deg=0.0, noise_sigma=0.5), np.random.default_rng(2))
    assert truth.die == "orange"
    reading = reader.read(image)
    assert reading.status == "ok"  # the table is read; only the die is not
    # unknown, never a colour: as too small, or (OpenCV 4.11 resamples the small frame a little
    # otherwise) not found at all
    assert reading.die == "unknown", reading.die_status
    assert "too small" in reading.die_status or "no die top found" in reading.die_status, reading.die_status


def test_a_die_on_its_edge_seen_across_its_ridge_reads_unknown(reader, renderer):
    # yellow and orange up, the camera 22 degrees tilted: the orange face is about square on the
    # top's plane and the yellow one, tilted away, a thin strip beyond it
    cond = MonsieurConditions(height_mm=672.8, tilt_deg=22.05, azimuth_deg=283.57, roll_deg=257.86,
                              look_mm=(-4.96, -2.85), light=1.36, kelvin=5067.0, gradient=0.039, vignetting=0.216,
                              noise_sigma=1.61, jpeg_quality=53, lamp_xy=(-0.128, -0.006), glare=0.425,
                              glare_xy_mm=(-88.2, 60.9), gradient_deg=154.2)
    scene = MonsieurScene(angle_deg=313.7, die="edge", die_xy_mm=(139.1, -81.2), die_yaw_deg=148.3)
    image, truth = renderer.render(scene, cond, np.random.default_rng(1))
    assert truth.die == "unknown"
    reading = reader.read(image)
    assert reading.die == "unknown" and "edge" in reading.die_status, reading.die_status
