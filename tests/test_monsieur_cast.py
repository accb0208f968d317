"""The Monsieur Carrousel reader under a colour cast that clips one channel of the markers'
paper (companion/vision/monsieur_cast.py): the seats are read against the white as measured and
against the white with the clipped channel as bright as the markers' edges allow, and a seat the
two read differently is unknown (a blue cast made a lilac token read as its purple seat's print)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import monsieur
from companion.vision.monsieur import EMPTY, KID, MonsieurReader
from companion.vision.monsieur_cast import DISAGREE

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/monsieur-table")
photos = pytest.mark.skipif(not (DATA / "truth.json").is_file(), reason="monsieur-table photographs not present")


def _truth(name: str) -> dict:
    return next(t for t in json.loads((DATA / "truth.json").read_text())["images"] if t["image"] == name)


def _cast(frame: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    """The codes times a gain per channel (B, G, R), rounded and clipped: a white balance gone wrong."""
    return np.clip(np.rint(frame.astype(np.float32) * np.asarray(gains, np.float32)), 0, 255).astype(np.uint8)


@photos
def test_a_blue_cast_clipping_the_paper_leaves_no_lilac_kid_read_empty(monkeypatch):
    """monsieur_003 with its codes x (1.35, 1.0, 0.75): the paper's blue clips at 255 while its
    red is 184; against that white the lilac kid on purple seat 11 read as the seat's print
    (empty). Read against both ends of the white's blue it is not read empty, and no seat is wrong."""
    t = _truth("monsieur_003.jpg")
    img = _cast(cv2.imread(str(DATA / "images" / "monsieur_003.jpg")), (1.35, 1.0, 0.75))
    reader = MonsieurReader()
    got = reader.read(img)
    assert got.status == "ok"
    occupied = [s["occupied"] for s in t["seats"]]
    assert all((s == KID) == occupied[k] for k, s in enumerate(got.seats) if s in (KID, EMPTY))
    assert got.seats[11] != EMPTY
    assert sum(s in (KID, EMPTY) for s in got.seats) >= 1
    assert reader.seat_reasons[11] == DISAGREE or got.seats[11] == KID
    # the white as measured alone (no bound for the clipped channel): seat 11 read empty
    monkeypatch.setattr(monsieur, "white_upper_bound", lambda *a, **k: None)
    assert MonsieurReader().read(img).seats[11] == EMPTY


@photos
def test_an_unclipped_photograph_reads_as_before(monkeypatch):
    """monsieur_030 (no channel of its paper clipped): no upper bound, the same seats."""
    img = cv2.imread(str(DATA / "images" / "monsieur_030.jpg"))
    reader = MonsieurReader()
    got = reader.read(img)
    assert reader._white_hi is None
    monkeypatch.setattr(monsieur, "white_upper_bound", lambda *a, **k: None)
    assert MonsieurReader().read(img).seats == got.seats


def _blurred(frame: np.ndarray, sigma: float) -> np.ndarray:
    """A lens blur (Gaussian, sigma px) on the codes, then JPEG 92 (what a user's copy is)."""
    img = np.clip(np.rint(cv2.GaussianBlur(frame.astype(np.float32), (0, 0), sigma)), 0, 255).astype(np.uint8)
    buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 92])[1]
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


@photos
def test_the_markers_edges_measure_the_blur():
    """monsieur_051 as photographed (0.6-0.7 px: the pixels' and the sampling's own spread) and
    blurred more: the estimate grows with the blur and the guard applies only to the blurred."""
    from companion.vision.monsieur_cast import BLUR_GUARD, CALIBRATED_EDGE_SIGMA_PX
    frame = cv2.imread(str(DATA / "images" / "monsieur_051.jpg"))
    reader = MonsieurReader()
    sigmas = []
    for s in (0.0, 1.2, 1.6):
        reader.read(frame if s == 0 else _blurred(frame, s))
        sigmas.append(reader._edge_sigma_px)
    assert 0.5 < sigmas[0] < BLUR_GUARD * CALIBRATED_EDGE_SIGMA_PX < sigmas[1] < sigmas[2] < 2.0


@photos
def test_a_blurred_glyph_is_not_read_as_a_kid(monkeypatch):
    """monsieur_051 (its roof under a hand: the seats placed by their print) blurred by sigma
    1.6 px: the orange seat 7's dark x, mixed with its print, read pale and light in its middle
    and its head's place, a kid (truth empty). With the blurred glyph's mixes also read as
    glyph, the seat is not read kid and no seat is wrong."""
    t = _truth("monsieur_051.jpg")
    img = _blurred(cv2.imread(str(DATA / "images" / "monsieur_051.jpg")), 1.6)
    reader = MonsieurReader()
    got = reader.read(img)
    assert got.status == "ok"
    occupied = [s["occupied"] for s in t["seats"]]
    assert not occupied[7] and got.seats[7] != KID
    assert all((s == KID) == occupied[k] for k, s in enumerate(got.seats) if s in (KID, EMPTY))
    assert sum(s in (KID, EMPTY) for s in got.seats) >= 5
    # without the blur's guard the seat reads kid
    monkeypatch.setattr(monsieur, "edge_blur_px", lambda *a, **k: None)
    assert MonsieurReader().read(img).seats[7] == KID


def test_a_green_cast_clipping_the_paper_leaves_the_die_unknown_not_wrong(monkeypatch):
    """A rendered table (58 degree lens) under a green cast on the codes (B, G, R x 0.83, 1.01,
    0.79) at x1.4: the paper's green clips, the white is too dark in green and the yellow top
    read green. Against both ends of the white's green the die is not read wrong."""
    from companion.vision.sim_monsieur import (
        MonsieurConditions,
        MonsieurRenderer,
        MonsieurScene,
    )
    scene = MonsieurScene(angle_deg=115.47, kids=("pastel_sky", "pastel_mint", None, "pastel_pink", "natural_wood",
                                                  "pastel_lilac", "pastel_sky", "natural_wood", "natural_wood",
                                                  "pastel_mint", "natural_wood", None),
                          die="yellow", die_xy_mm=(-106.48, 84.39), die_yaw_deg=21.47)
    cond = MonsieurConditions(height_mm=554.3, tilt_deg=11.75, azimuth_deg=29.08, roll_deg=1.48, look_mm=(5.42, -3.84),
                              light=1.143, kelvin=4739.0, gradient=0.0759, vignetting=0.344, noise_sigma=2.63,
                              jpeg_quality=85, lamp_xy=(0.048, -0.348), gradient_deg=27.39, tone="srgb", code_gain=1.4,
                              channel_gains=(0.832, 1.011, 0.790))
    img, truth = MonsieurRenderer(hfov_deg=58.0).render(scene, cond, np.random.default_rng(3))
    got = MonsieurReader().read(img)
    assert got.status == "ok"
    assert got.die in ("unknown", "yellow")
    assert all(s == truth.seats[k] for k, s in enumerate(got.seats) if s in (KID, EMPTY))
    # the white as measured alone: the die read green
    monkeypatch.setattr(monsieur, "white_upper_bound", lambda *a, **k: None)
    assert MonsieurReader().read(img).die == "green"
