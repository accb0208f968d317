"""The Monsieur Carrousel reader's white when some markers' paper is clipped
(companion/vision/monsieur_white.py): the unclipped markers' paper is the reference, so a bright
frame that was refused as colour lost is read, with no seat wrong; all papers clipped still is."""

from __future__ import annotations

import numpy as np
import pytest

import companion.vision.monsieur as monsieur
from companion.vision.monsieur import EMPTY, KID, MonsieurReader
from companion.vision.monsieur_white import unclipped_papers
from companion.vision.sim_monsieur import MonsieurConditions, MonsieurRenderer, MonsieurScene

SCENE = MonsieurScene(angle_deg=91.77, kids=("pastel_mint", "pastel_lilac", "pastel_pink", "pastel_pink", "natural_wood",
                                             "pastel_lemon", "pastel_lilac", "pastel_mint", None, "natural_wood",
                                             "pastel_lilac", "natural_wood"),
                      die="orange", die_xy_mm=(-127.91, 37.49), die_yaw_deg=225.28)


def test_the_clipped_markers_paper_is_left_out_while_another_is_not():
    pix = np.concatenate([np.full((20, 3), 252, np.uint8), np.full((20, 3), 230, np.uint8)])
    marker = np.repeat([0, 1], 20)
    got = unclipped_papers(pix, marker)
    assert got.shape == (20, 3) and np.all(got == 230)


def test_all_papers_clipped_or_none_clipped_keeps_every_pixel():
    marker = np.repeat([0, 1], 20)
    for level in (250, 230):
        pix = np.full((40, 3), level, np.uint8)
        assert len(unclipped_papers(pix, marker)) == 40
    # a marker with too few pixels seen does not count as an unclipped measurement
    pix = np.concatenate([np.full((20, 3), 252, np.uint8), np.full((5, 3), 230, np.uint8)])
    assert len(unclipped_papers(pix, np.repeat([0, 1], [20, 5]))) == 25


@pytest.mark.parametrize("noise_seed", [1, 2])
def test_a_bright_frame_with_one_marker_unclipped_is_read_not_refused(noise_seed, monkeypatch):
    """A lamp's light rising across the frame (x 1.0 to 1.2 in each direction): three markers'
    paper clips at 255, the one in least light stays near 231; the frame was refused as colour
    lost and is now read, with no seat or die wrong."""
    renderer = MonsieurRenderer()
    cond = MonsieurConditions(height_mm=600.0, tilt_deg=8.0, azimuth_deg=50.0, gradient=0.0, vignetting=0.0)
    img, truth = renderer.render(SCENE, cond, np.random.default_rng(noise_seed))
    h, w = img.shape[:2]
    ramp = np.linspace(1.0, 1.2, w)[None, :, None] * np.linspace(1.0, 1.2, h)[:, None, None]
    img = np.clip(img * ramp, 0, 255).astype(np.uint8)
    got = MonsieurReader().read(img)
    assert got.status == "ok"
    read = [k for k, s in enumerate(got.seats) if s in (KID, EMPTY)]
    assert len(read) >= 8
    assert all(got.seats[k] == truth.seats[k] for k in read)
    assert got.die in ("unknown", truth.die)
    # every paper taken as it is (the reader before this): the frame is refused as colour lost
    monkeypatch.setattr(monsieur, "unclipped_papers", lambda pix, marker, min_pixels=10: pix)
    assert MonsieurReader().read(img).status.startswith("colour lost")


def test_every_paper_clipped_is_still_refused():
    renderer = MonsieurRenderer()
    img, _ = renderer.render(SCENE, MonsieurConditions(tilt_deg=8.0, gradient=0.0, vignetting=0.0), np.random.default_rng(1))
    img = np.clip(img * 1.4, 0, 255).astype(np.uint8)
    assert MonsieurReader().read(img).status.startswith("colour lost")
