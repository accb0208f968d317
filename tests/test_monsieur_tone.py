"""The Monsieur Carrousel seats under a gain applied after the camera's tone curve
(companion/vision/monsieur_tone.py): the photographs' codes scaled down read no wrong seat (the
glyph of an empty seat passed for a token's head at x0.35), and the second decoding undoes
such a gain."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.monsieur import KID, UNKNOWN
from companion.vision.monsieur_tone import (
    AGREE_ABOVE,
    gain_floor,
    relit,
    srgb_decode,
    srgb_encode,
)
from tests.monsieur_fixtures import reader, renderer  # noqa: F401  (pytest fixtures)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/monsieur-table")
photos = pytest.mark.skipif(not (DATA / "truth.json").is_file(), reason="monsieur-table photographs not present")


def _truth(name: str) -> dict:
    return next(t for t in json.loads((DATA / "truth.json").read_text())["images"] if t["image"] == name)


def _scaled(frame: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(np.rint(frame.astype(np.float32) * gain), 0, 255).astype(np.uint8)


@photos
@pytest.mark.parametrize("name, gain", [("monsieur_030.jpg", 0.35), ("monsieur_030.jpg", 0.25),
                                        ("monsieur_051.jpg", 0.35), ("monsieur_027.jpg", 0.5)])
def test_codes_scaled_down_read_no_wrong_seat(reader, name, gain):  # noqa: F811
    # each of these read an empty seat as a kid before (monsieur_030 seats 7 and 8 at x0.35,
    # seat 7 at x0.25; monsieur_051 seat 7 at x0.35 through the seats read without the roof;
    # monsieur_027 seat 1 at x0.5)
    truth = _truth(name)
    got = reader.read(_scaled(cv2.imread(str(DATA / "images" / name)), gain))
    assert got.status == "ok"
    wrong = [k for k, s in enumerate(got.seats) if s != UNKNOWN and (s == KID) != truth["seats"][k]["occupied"]]
    assert wrong == []


@photos
def test_a_seat_the_decodings_disagree_on_says_why(reader):  # noqa: F811
    got = reader.read(_scaled(cv2.imread(str(DATA / "images" / "monsieur_030.jpg")), 0.35))
    assert got.seats[7] == UNKNOWN and got.seats[8] == UNKNOWN  # both read kid on the first decoding alone
    assert "gain" in got.seat_reasons[7] and "gain" in got.seat_reasons[8]


def test_the_second_decoding_undoes_a_gain_after_the_curve():
    rng = np.random.default_rng(3)
    codes = rng.integers(60, 236, size=(500, 3)).astype(np.float64)
    white_code = np.array([200.0, 220.0, 236.0])
    white = srgb_decode(white_code).astype(np.float32)
    plain = relit(codes.astype(np.uint8), white, 1.0)
    assert np.allclose(plain, np.minimum(srgb_decode(codes) / srgb_decode(white_code), 1.0), atol=1e-6)
    s = 0.35
    dim_white = srgb_decode(white_code * s).astype(np.float32)
    assert gain_floor(dim_white) == pytest.approx(236.0 * s / 255.0, abs=1e-4)
    # the dimmed codes, read as sRGB, lift their dark values against the light ones ...
    dim = np.rint(codes * s).astype(np.uint8)
    as_is = relit(dim, dim_white, 1.0)
    dark = codes < 100
    assert np.median((as_is / plain)[dark]) > 1.3  # (a glyph's codes: 40-80)
    # ... decoded with the gain, they are the original ratios within the codes' rounding
    undone = relit(dim, dim_white, s)
    assert np.median(np.abs(undone / plain - 1.0)) < 0.05


def test_a_white_at_full_scale_leaves_no_gain():
    assert gain_floor(srgb_decode(np.array([250.0, 252.0, 255.0])).astype(np.float32)) >= AGREE_ABOVE
    assert np.allclose(srgb_encode(srgb_decode(np.arange(256.0))), np.arange(256.0), atol=1e-9)


def test_the_renderer_codes_a_gain_after_an_srgb_curve(renderer):  # noqa: F811
    import dataclasses

    from companion.vision.sim_monsieur import MonsieurConditions, random_scene

    scene = random_scene(np.random.default_rng(4), renderer.geometry)
    plain = MonsieurConditions(noise_sigma=0.0, jpeg_quality=0, tone="srgb", focus_sigma_px=1.0)
    full, _ = renderer.render(scene, plain, np.random.default_rng(1))
    dim, _ = renderer.render(scene, dataclasses.replace(plain, code_gain=0.35), np.random.default_rng(1))
    # the codes times the gain, cut to 8 bits (the frame's own quantisation)
    assert np.abs(dim.astype(np.float64) - full * 0.35).max() <= 1.0
    power, _ = renderer.render(scene, dataclasses.replace(plain, tone="power"), np.random.default_rng(1))
    dark = (power > 20) & (power < 90)
    # (sRGB's offset curve codes the shadows a few levels under a 2.2 power law)
    assert np.mean(full[dark] < power[dark]) > 0.9
    with pytest.raises(ValueError, match="tone"):
        renderer.render(scene, dataclasses.replace(plain, tone="log"), np.random.default_rng(1))


def test_rendered_dim_frames_read_no_wrong_seat(reader, renderer):  # noqa: F811
    from companion.vision.sim_monsieur import (
        compare,
        random_monsieur_conditions,
        random_scene,
    )

    rng = np.random.default_rng(77)
    read = 0
    for _ in range(6):
        scene = random_scene(rng, renderer.geometry)
        cond = random_monsieur_conditions(rng, "exposure")
        image, truth = renderer.render(scene, cond, rng)
        scores = compare(reader.read(image), truth, reader.seat_margin_deg)
        assert scores["seats"][0] == 0 and scores["die"][0] == 0 and scores["pointed"][0] == 0
        read += scores["seats"][1]
    assert read > 0  # some seats are read on them: the check is not of unknowns alone
