"""Overlays say everything they mean: the whole status on the band (wrapped, never cut at the
image's edge), a legend for the letters on the board, the dice's whole reasons, and a picture
that can be read even of a tiny frame (drawn enlarged, and saying so)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.images import OVERLAY_MIN_SIDE_PX, OverlayCanvas

HERE = Path(__file__).parent
SHARED = HERE.resolve().parents[1] / "shared" / "data"
CARROUSEL = HERE / "data" / "carrousel-table" / "images" / "carrousel_000.jpg"
CARROSSEL = SHARED / "carrossel-table" / "images" / "carrossel_000.jpg"
MONSIEUR = SHARED / "monsieur-table" / "images" / "monsieur_000.jpg"


@pytest.fixture
def written(monkeypatch):
    """Every string ``cv2.putText`` draws, in order."""
    lines: list[str] = []
    original = cv2.putText

    def put_text(image, text, *args, **kwargs):
        lines.append(text)
        return original(image, text, *args, **kwargs)

    monkeypatch.setattr(cv2, "putText", put_text)
    return lines


def _words(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def _carrousel():
    from companion.vision.carrousel import CarrouselGeometry, CarrouselReader, draw_overlay

    geometry = CarrouselGeometry.load()
    return CarrouselReader(geometry), geometry, draw_overlay


@pytest.mark.skipif(not CARROSSEL.exists(), reason="the Carrossel photographs are not here")
def test_carrousel_status_naming_foreign_markers_is_written_whole(written):
    reader, geometry, draw_overlay = _carrousel()
    frame = cv2.imread(str(CARROSSEL))  # another game's board: its marker ids are named
    reading = reader.read(frame)
    assert reading.status.endswith("that are not on this board)")
    out = draw_overlay(frame, reading, geometry)
    assert out.shape == frame.shape
    assert " ".join(reading.status.split()) in _words(written)


def test_a_grayscale_frame_says_all_of_why_colour_is_lost(written):
    reader, geometry, draw_overlay = _carrousel()
    grey = cv2.cvtColor(cv2.cvtColor(cv2.imread(str(CARROUSEL)), cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    reading = reader.read(grey)
    assert reading.status.startswith("colour lost")
    draw_overlay(grey, reading, geometry)
    assert " ".join(reading.status.split()) in _words(written)


@pytest.mark.parametrize("size", [(160, 120), (8, 6)])
def test_a_small_frame_is_drawn_enlarged_with_its_whole_status_and_its_size(written, size):
    reader, geometry, draw_overlay = _carrousel()
    frame = cv2.resize(cv2.imread(str(CARROUSEL)), size, interpolation=cv2.INTER_AREA)
    reading = reader.read(frame)
    out = draw_overlay(frame, reading, geometry)
    assert min(out.shape[:2]) >= OVERLAY_MIN_SIDE_PX
    k = out.shape[1] // size[0]
    assert out.shape[:2] == (size[1] * k, size[0] * k)  # a whole enlargement, the aspect kept
    # below the band the frame's pixels, each a k x k block
    assert np.array_equal(out[-k:, :, :][::k, ::k], frame[-1:, :, :])
    text = _words(written)
    assert " ".join(reading.status.split()) in text
    assert f"the image is {size[0]} x {size[1]} px" in text


def test_a_one_row_frame_is_shown_under_a_black_margin_that_holds_the_status(written):
    reader, geometry, draw_overlay = _carrousel()
    frame = cv2.resize(cv2.imread(str(CARROUSEL)), (640, 1), interpolation=cv2.INTER_AREA)
    reading = reader.read(frame)
    out = draw_overlay(frame, reading, geometry)
    assert out.shape[0] == OVERLAY_MIN_SIDE_PX and out.shape[1] <= 1920
    k = out.shape[1] // 640
    assert np.array_equal(out[-1, ::k], frame[0])  # the strip itself, at the bottom
    assert " ".join(reading.status.split()) in _words(written)


def test_the_canvas_maps_frame_pixels_onto_their_enlarged_blocks():
    frame = np.zeros((6, 8, 3), np.uint8)
    frame[2, 5] = 255
    canvas = OverlayCanvas(frame)
    k = canvas.scale
    assert k == 54 and canvas.img.shape == (6 * k, 8 * k, 3)
    u, v = canvas.pt((5, 2))
    assert canvas.img[v, u].tolist() == [255, 255, 255]
    assert canvas.img[v, u + k].tolist() == [0, 0, 0]
    big = OverlayCanvas(np.zeros((480, 640, 3), np.uint8))
    assert big.scale == 1 and big.note == "" and big.pt((10.2, 20.7)) == (10, 21)


@pytest.mark.skipif(not CARROSSEL.exists(), reason="the Carrossel photographs are not here")
def test_carrossel_overlay_explains_its_letters(written):
    from companion.vision.carrossel import CarrosselGeometry, CarrosselReader, draw_overlay

    geometry = CarrosselGeometry.load()
    frame = cv2.imread(str(CARROSSEL))
    reading = CarrosselReader(geometry).read(frame)
    assert reading.board_angle_deg is not None
    draw_overlay(frame, reading, geometry)
    text = _words(written)
    for animal in set(geometry.letters.values()):
        assert f"{animal[0].upper()} {animal}" in text
    assert "?: unknown" in text and "standee" in text
    assert " ".join(reading.status.split()) in text


@pytest.mark.skipif(not MONSIEUR.exists(), reason="the Monsieur Carrousel photographs are not here")
def test_monsieur_overlay_explains_its_seat_letters_and_draws_the_finger(written):
    from companion.vision.monsieur import MonsieurReader, draw_overlay
    from companion.vision.monsieur_geometry import MonsieurGeometry

    geometry = MonsieurGeometry.load()
    frame = cv2.imread(str(MONSIEUR))
    reading = MonsieurReader(geometry).read(frame)
    assert reading.carousel_angle_deg is not None and geometry.arm_mm is not None
    out = draw_overlay(frame, reading, geometry)
    text = _words(written)
    assert "k kid" in text and "e empty" in text and "u unknown" in text and "the finger" in text
    tip = reading.camera.to_image(np.asarray(geometry.arm_mm[1][:2], float)[None, :], geometry.arm_mm[1][2])[0]
    u, v = np.rint(tip).astype(int)
    patch = out[v - 3:v + 4, u - 3:u + 4].reshape(-1, 3).astype(int)
    yellow = (patch[:, 0] < 80) & (patch[:, 1] > 180) & (patch[:, 2] > 200)
    assert yellow.any()  # the arrow's tip at the finger


def test_dice_labels_are_short_and_the_band_gives_each_reason_whole(written):
    from companion.readers.dice import COCKED, UNKNOWN, DieReading, draw_readings

    why = "too small to read here (its face 14 px across, 18 needed)"
    readings = [DieReading(value=UNKNOWN, box=(100.0, 10.0, 125.0, 35.0), reason=why),
                DieReading(value=4, box=(200.0, 200.0, 225.0, 225.0)),
                DieReading(value=UNKNOWN, box=(300.0, 300.0, 325.0, 325.0), reason="pips unsure; face classifier unsure (0.41)"),
                DieReading(value=COCKED, box=(400.0, 300.0, 425.0, 325.0))]
    img = np.full((480, 640, 3), 90, np.uint8)
    out = draw_readings(img, readings, (10, 10, 630, 470))
    text = _words(written)
    assert f"?1 unknown: {why}" in text
    assert "?2 unknown: pips unsure; face classifier unsure (0.41)" in text
    assert "4 dice: ?1, 4, ?2, cocked" in text
    labels = written[written.index("?1"):]
    assert labels[:4] == ["?1", "4", "?2", "cocked"]
    band = int(np.argmax((out[:, 600:] != 0).any(axis=(1, 2))))  # the first row under the black band
    assert band > 10
    # the band is added above the frame: the whole frame under it, no die hidden by it
    assert out.shape == (480 + band, 640, 3) and (out[band:band + 5, :5] == 90).all()
    # the first die's label would stand above its box, on the band: it goes under the box
    orange = (out == (0, 140, 255)).all(axis=2)
    assert orange[band + 36:band + 56, 100:125].sum() > 100  # its filled label under the box
    assert not orange[:band, 100:125].any()  # nothing of it on the band


def test_a_tiny_dice_frame_is_drawn_enlarged():
    from companion.readers.dice import draw_readings

    out = draw_readings(np.full((6, 8, 3), 90, np.uint8), [], None)
    assert min(out.shape[:2]) >= OVERLAY_MIN_SIDE_PX


def test_a_newline_puts_the_legend_on_a_line_of_its_own(written):
    from companion.vision.images import draw_header

    one = draw_header(np.zeros((100, 640, 3), np.uint8), "ok  angle 85.5")
    two = draw_header(np.zeros((100, 640, 3), np.uint8), "ok  angle 85.5\nseats: k kid")
    assert two == 2 * one - 3  # a line more, though both would fit on one
    assert written[-2:] == ["ok  angle 85.5", "seats: k kid"]
