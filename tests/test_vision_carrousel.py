"""The Carrousel reader on the path-traced table photographs (tests/data/carrousel-table)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrousel import CarrouselGeometry, CarrouselReader, draw_overlay, load_references

ROOT = Path(__file__).parent / "data" / "carrousel-table"
#: The two photos the reference colours were captured from (calibration/carrousel-colours.json).
CALIBRATION = {"carrousel_000", "carrousel_036"}
PHOTOS = sorted(p.stem for p in (ROOT / "images").glob("*.jpg") if p.stem not in CALIBRATION)


@pytest.fixture(scope="module")
def reader():
    return CarrouselReader()


@pytest.fixture(scope="module")
def readings(reader):
    out = {}
    for name in PHOTOS:
        frame = cv2.imread(str(ROOT / "images" / f"{name}.jpg"))
        out[name] = (reader.read(frame), json.loads((ROOT / "truth" / f"{name}.json").read_text()))
    return out


def test_eighteen_photos_not_used_for_calibration():
    assert len(PHOTOS) == 18


@pytest.mark.parametrize("name", PHOTOS)
def test_no_wrong_space_reading(readings, name):
    """Each space is its true colour/empty, or unknown; never another colour."""
    reading, truth = readings[name]
    assert reading.status == "ok"
    for k, (got, want) in enumerate(zip(reading.labels, truth["space_list"])):
        assert got in (want, "unknown"), f"space {k}: read {got}, truth {want}"


@pytest.mark.parametrize("name", PHOTOS)
def test_no_wrong_card_reading(readings, name):
    reading, truth = readings[name]
    for card in truth["cards"]:
        got = reading.cards[card["position"]].triple
        assert got is None or list(got) == card["triple"], card["position"]


def test_a_space_mostly_under_a_hand_is_never_read_as_empty(readings):
    """The dangerous mistake: a hidden horse called "empty"."""
    hidden = 0
    for reading, truth in readings.values():
        for k in truth["occluded"]:
            if truth["space_visibility"][str(k)]["hand_occluded_fraction"] >= 0.5:
                hidden += 1
                assert reading.labels[k] in (truth["space_list"][k], "unknown")
                if truth["space_list"][k] != "empty":
                    assert reading.labels[k] != "empty"
    assert hidden >= 4


def test_most_spaces_in_plain_view_are_read(readings):
    """Abstention is for hands, glare and shadows, not a way of never answering."""
    seen = read = 0
    for reading, truth in readings.values():
        for k, got in enumerate(reading.labels):
            if k not in truth["occluded"]:
                seen += 1
                read += got != "unknown"
    assert read / seen >= 0.9


def test_cards_in_full_view_are_read(readings):
    full = read = 0
    for reading, truth in readings.values():
        for card in truth["cards"]:
            if card["visibility"]["visible_fraction"] >= 1.0:
                full += 1
                read += reading.cards[card["position"]].triple is not None
    assert read / full >= 0.9


def test_covered_card_is_unknown(readings):
    reading, truth = readings["carrousel_042"]  # a hand over the west card
    assert reading.cards["west"].triple is None


def test_frame_without_markers_is_board_not_visible(reader):
    reading = reader.read(np.full((480, 640, 3), 128, np.uint8))
    assert reading.status.startswith("board not visible")
    assert reading.labels == ("unknown",) * 7
    assert json.loads(json.dumps(reading.to_json()))["spaces"] == ["unknown"] * 7


def test_not_a_frame_is_a_clear_error(reader):
    with pytest.raises(ValueError, match="H x W x 3 uint8"):
        reader.read(np.zeros((10, 10), np.float32))


def test_overlay_is_an_annotated_copy(reader):
    frame = cv2.imread(str(ROOT / "images" / "carrousel_009.jpg"))
    reading = reader.read(frame)
    out = draw_overlay(frame, reading, reader.geometry)
    assert out.shape == frame.shape and out.dtype == np.uint8
    assert (out != frame).any(axis=2).mean() > 0.02
    assert (frame == cv2.imread(str(ROOT / "images" / "carrousel_009.jpg"))).all()


def test_geometry_file_errors_name_the_field(tmp_path):
    good = json.loads((Path(__file__).parents[1] / "companion" / "data" / "calibration" / "carrousel-board.json").read_text())
    good["spaces"] = good["spaces"][:6]
    p = tmp_path / "board.json"
    p.write_text(json.dumps(good))
    with pytest.raises(ValueError, match=r"board.json: spaces: expected a list of 7"):
        CarrouselGeometry.load(p)
    p.write_text("{ not json")
    with pytest.raises(ValueError, match="line 1"):
        CarrouselGeometry.load(p)
    with pytest.raises(ValueError, match="no such file"):
        load_references(tmp_path / "missing.json")


def test_calibration_file_of_another_board_says_board_not_visible(tmp_path):
    """Markers 10-13 expected, 0-3 on the table: a clear status naming the ids seen."""
    doc = json.loads((Path(__file__).parents[1] / "companion" / "data" / "calibration" / "carrousel-board.json").read_text())
    doc["markers"] = {str(int(k) + 10): v for k, v in doc["markers"].items()}
    p = tmp_path / "other-board.json"
    p.write_text(json.dumps(doc))
    reader = CarrouselReader(CarrouselGeometry.load(p))
    reading = reader.read(cv2.imread(str(ROOT / "images" / "carrousel_027.jpg")))
    assert reading.status.startswith("board not visible")
    assert "not on this board" in reading.status and reading.labels == ("unknown",) * 7
