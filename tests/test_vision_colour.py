"""Region colours with abstention, and the settle-time stabiliser."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.colour import (
    ColourReferences,
    RegionClassifier,
    Stabiliser,
    linear_to_lab,
    srgb_to_linear,
    white_of,
)

REFS = ColourReferences(
    ("black", "yellow", "blue", "green", "red"),
    np.array([[27, 2, -1], [87, 0, 55], [47, 21, -48], [62, -37, 26], [53, 50, 25]], float),
)


def region(parts):
    """A region of 400 Lab pixels made of (lab, count) parts, with a little noise."""
    rng = np.random.default_rng(1)
    px = np.concatenate([np.tile(np.array(lab, np.float32), (n, 1)) for lab, n in parts])
    return px + rng.normal(0, 1.5, px.shape).astype(np.float32)


BG = [97, 0, 2]


def test_white_maps_to_lightness_100_and_no_chroma():
    white = srgb_to_linear(np.array([[200, 180, 150]], np.uint8))[0]
    lab = linear_to_lab(srgb_to_linear(np.array([[200, 180, 150]], np.uint8)), white)[0]
    assert lab[0] == pytest.approx(100, abs=0.5) and abs(lab[1]) < 0.5 and abs(lab[2]) < 0.5


def test_same_surface_under_a_colour_cast_reads_the_same():
    """Von Kries: a red patch under a warm light, seen against the white under that light."""
    surface = np.array([0.10, 0.12, 0.60])  # linear BGR reflectance of a red horse
    paper = np.array([0.85, 0.88, 0.90])
    for light in (np.array([0.5, 0.8, 1.0]), np.array([1.0, 1.0, 0.9])):
        lab = linear_to_lab((surface * light).reshape(1, 3), paper * light)[0]
        ref = linear_to_lab(surface.reshape(1, 3), paper)[0]
        np.testing.assert_allclose(lab, ref, atol=0.5)


def test_white_of_too_small_patch_is_none():
    assert white_of(np.zeros((5, 3), np.uint8)) is None


def test_plain_background_is_empty():
    r = RegionClassifier(REFS).read(region([(BG, 400)]))
    assert r.label == "empty" and r.confidence > 0.9


def test_shadow_on_background_is_still_empty():
    """A soft shadow (darker, a warm or cool tint) is not a black horse."""
    r = RegionClassifier(REFS).read(region([(BG, 250), ([62, 0, -20], 150)]))
    assert r.label == "empty"


def test_horse_with_its_dark_side_reads_as_its_colour():
    r = RegionClassifier(REFS).read(region([(BG, 280), ([53, 48, 24], 80), ([25, 3, 0], 40)]))
    assert r.label == "red"


def test_black_horse():
    r = RegionClassifier(REFS).read(region([(BG, 300), ([24, 1, -2], 100)]))
    assert r.label == "black"


def test_two_colours_abstain():
    r = RegionClassifier(REFS).read(region([(BG, 240), ([53, 48, 24], 80), ([86, 0, 54], 80)]))
    assert r.label == "unknown" and "two colours" in r.reason


def test_unexplained_pixels_abstain_as_uneven():
    """A hand (skin: reddish, neither a horse nor the board) over the region."""
    r = RegionClassifier(REFS).read(region([(BG, 200), ([80, 14, 18], 200)]))
    assert r.label == "unknown" and "uneven" in r.reason


def test_region_covered_beyond_what_a_piece_covers_abstains():
    r = RegionClassifier(REFS).read(region([(BG, 20), ([47, 21, -48], 380)]))
    assert r.label == "unknown" and "covered" in r.reason


def test_too_few_pixels_abstain():
    assert RegionClassifier(REFS).read(region([(BG, 5)])).label == "unknown"


def test_clipped_pixels_count_as_background():
    r = RegionClassifier(REFS).read(region([(BG, 100)]), clipped=300)
    assert r.label == "empty"


def test_references_from_dict_name_the_bad_value():
    with pytest.raises(ValueError, match="horses: red"):
        ColourReferences.from_dict({"red": [1, 2]}, "horses")


def test_stabiliser_passes_a_reading_once_it_has_settled():
    s = Stabiliser(0.5)
    assert s.update(0.0, "A") is None
    assert s.update(0.3, "A") is None
    assert s.update(0.5, "A") == "A"
    assert s.update(0.7, "A") is None, "an unchanged reading is passed once"
    assert s.update(0.8, "B") is None
    assert s.update(1.0, "A") is None, "flicker restarts the settle time"
    assert s.update(1.2, "B") is None
    assert s.update(1.4, "B") is None
    assert s.update(1.9, "B") == "B"


def test_stabiliser_rejects_negative_settle_time():
    with pytest.raises(ValueError):
        Stabiliser(-1)
