"""A colour fault never reads as a board: the Carrousel reader's colour check
(companion.vision.colour.ColourCheck) on the path-traced table photos (tests/data/carrousel-table,
a copy of ../shared/data/carrousel-table) made grayscale, cast, under- and over-exposed, and a
frozen camera."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrousel import CarrouselReader
from companion.vision.colour import ColourCheck, lamp_locus, srgb_to_linear

ROOT = Path(__file__).parent / "data" / "carrousel-table"
PHOTOS = sorted(p.stem for p in (ROOT / "images").glob("*.jpg"))
#: a few photos of every light of the set: warm lamp, daylight, dim, bright, mixed
SOME = ["carrousel_000", "carrousel_003", "carrousel_012", "carrousel_021", "carrousel_036", "carrousel_048"]


@pytest.fixture(scope="module")
def reader():
    return CarrouselReader()


def photo(name):
    frame = cv2.imread(str(ROOT / "images" / f"{name}.jpg"))
    assert frame is not None, name
    return frame


def relit(frame, gains_bgr):
    """The frame under other light: linear-light channel gains, back to 8-bit sRGB, clipped."""
    lin = srgb_to_linear(frame) * np.asarray(gains_bgr, np.float32)
    lin = np.clip(lin, 0.0, 1.0)
    out = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return np.clip(np.rint(out * 255), 0, 255).astype(np.uint8)


def assert_colour_lost(reading, what, or_not_visible=False):
    """Every region unknown, with the colour check's status (or, for a frame so far off that
    the markers are lost too, the registration's)."""
    ok = ("colour lost", "board not visible") if or_not_visible else ("colour lost",)
    assert reading.status.startswith(ok), (reading.status, what)
    assert reading.labels == ("unknown",) * 7
    doc = reading.to_json()
    assert doc["spaces"] == ["unknown"] * 7 and "cards" not in doc


def test_every_photo_of_the_set_passes_the_check(reader):
    """No normal frame is refused: all 20 photographs (the 18 never used for calibration too)."""
    for name in PHOTOS:
        assert reader.read(photo(name)).status == "ok", name


@pytest.mark.parametrize("name", SOME)
def test_a_grayscale_copy_is_colour_lost(reader, name):
    """Without the check a grayscale frame reads as empty and black spaces, confidence 1."""
    grey = cv2.cvtColor(cv2.cvtColor(photo(name), cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    reading = reader.read(grey)
    assert_colour_lost(reading, name)
    # a grayscale copy of a bright photo is clipped white as well
    assert "no colour" in reading.status or "over-exposed" in reading.status


@pytest.mark.parametrize("name", SOME)
@pytest.mark.parametrize("cast", ["green", "magenta", "blue"])
def test_a_strong_colour_cast_is_colour_lost(reader, name, cast):
    """A coloured light (green, magenta: off the lamps' locus; deep blue: far beyond daylight)."""
    gains = {"green": (0.35, 1.0, 0.35), "magenta": (1.0, 0.35, 1.0), "blue": (1.0, 0.25, 0.06)}[cast]
    reading = reader.read(relit(photo(name), gains))
    assert_colour_lost(reading, (name, cast))
    # the cast's weak channel may fall below the exposure bound first (the dim photo, deep blue)
    assert "beyond the calibrated range" in reading.status or "too dark" in reading.status
    if name != "carrousel_012" and cast != "blue":
        assert "beyond the calibrated range" in reading.status


def test_a_lamp_within_the_range_still_reads_and_never_wrongly(reader):
    """Daylight turned into a warm lamp (along the locus, 6500 K -> 3000 K): still read, and
    every space read is the same as under daylight or unknown."""
    frame = photo("carrousel_036")
    d65, warm = lamp_locus(np.array([6500.0, 3000.0]))
    shift = np.exp(warm - d65)  # (R/G, B/G) of the warm lamp against daylight
    before = reader.read(frame)
    after = reader.read(relit(frame, (shift[1] * 0.8, 0.8, shift[0] * 0.8)))
    assert after.status == "ok"
    for a, b in zip(before.labels, after.labels):
        assert b in (a, "unknown")
    assert sum(b != "unknown" for b in after.labels) >= 5


@pytest.mark.parametrize("name", SOME)
def test_under_exposure_is_colour_lost(reader, name):
    reading = reader.read(relit(photo(name), (0.03, 0.03, 0.03)))
    assert_colour_lost(reading, name, or_not_visible=True)
    assert "too dark" in reading.status or name == "carrousel_012"  # the dim one: markers lost too


@pytest.mark.parametrize("name", SOME)
def test_over_exposure_is_colour_lost(reader, name):
    frame = photo(name)
    gain = 3.0 / reader.read(frame).white_level  # every channel of the white well past full scale
    reading = reader.read(relit(frame, (gain, gain, gain)))
    assert_colour_lost(reading, name, or_not_visible=True)
    assert "over-exposed" in reading.status or reading.status.startswith("board not visible")


def test_exposure_bounds_come_from_the_darkest_reference(reader):
    """The too-dark bound: the black horse (L* 27.2 in the references) must stay 8 levels
    above black in every channel, so the white needs about 61 of 255."""
    check = reader.colour_check
    assert 55 < check.min_white_code() < 68
    lab = reader.space_classifier.references.lab
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    assert check.least_chroma == pytest.approx(float(chroma[chroma > 10].min()))  # the green horse, 45
    # darker references (cards' black, L* 12) demand more light
    darker = ColourCheck(reader.card_classifier.references)
    assert darker.min_white_code() > check.min_white_code()


def test_the_lamp_locus_runs_from_warm_to_daylight():
    """Kang et al. (2002) locus in a daylight-balanced camera: D65 is neutral, a warm lamp has
    more red and less blue."""
    d65, warm, cool = lamp_locus(np.array([6504.0, 2700.0, 10000.0]))
    assert np.abs(d65).max() < 0.06
    assert warm[0] > 0.5 and warm[1] < -1.0 and cool[1] > 0.2


def test_a_frozen_camera_is_reported_and_a_changing_one_is_not(reader):
    """The same frame for more than frozen_s (3 s) is not the table as it is now."""
    r = CarrouselReader(frozen_s=3.0)
    frame = photo("carrousel_009")
    statuses = [r.read(frame, stream=True, t=t).status for t in np.arange(0.0, 5.0, 0.5)]
    assert statuses[:7] == ["ok"] * 7  # up to 3.0 s
    assert all(s.startswith("camera frozen") for s in statuses[7:]), statuses
    assert r.read(photo("carrousel_024"), stream=True, t=5.0).status == "ok"  # the picture moves again
    rng = np.random.default_rng(0)
    noisy = [np.clip(frame.astype(np.int16) + rng.integers(-2, 3, frame.shape), 0, 255).astype(np.uint8)
             for _ in range(2)]
    live = CarrouselReader(frozen_s=1.0)
    assert all(live.read(noisy[i % 2], stream=True, t=i * 0.5).status == "ok" for i in range(10))
    with pytest.raises(ValueError, match="frozen_s"):
        CarrouselReader(frozen_s=0)
