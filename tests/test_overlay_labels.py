"""Overlays people can read: the status on a black band (no thick copy running past the text),
labels white on black boxes that never cover one another, on light and dark photos alike."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.images import LabelPlacer, draw_header

HERE = Path(__file__).parent
CARROUSEL = HERE / "data" / "carrousel-table" / "images" / "carrousel_033.jpg"
MONSIEUR = HERE.resolve().parents[1] / "shared" / "data" / "monsieur-table" / "images" / "monsieur_012.jpg"


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_labels_at_one_place_are_stacked_without_overlap_inside_the_image():
    img = np.full((200, 160, 3), 200, np.uint8)
    placer = LabelPlacer(img, top_px=18)
    boxes = [placer.put(f"{k}:yellow 1.00", (80, 60), (0, 255, 255)) for k in range(5)]
    assert all(not _overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all(b[0] >= 0 and b[1] >= 18 and b[2] < 160 and b[3] < 200 for b in boxes)
    x0, y0, x1, y1 = boxes[0]
    inside = img[y0 + 1:y1, x0 + 1:x1]
    assert (inside.max(axis=2) < 60).mean() > 0.5 and inside.max() > 200  # black box, white text


def test_the_header_has_nothing_past_its_text():
    img = np.full((100, 400, 3), 128, np.uint8)
    draw_header(img, "ok  angle 85.5  pointed 9  die orange")
    (w, _), _ = cv2.getTextSize("ok  angle 85.5  pointed 9  die orange", cv2.FONT_HERSHEY_SIMPLEX, 0.4, 1)
    band = img[:14]
    assert band[:, w + 8:].max() == 0  # the band is black after the text: no stray letter
    assert band[:, :w + 4].max() > 200


def _label_boxes(monkeypatch, draw) -> list[tuple[int, int, int, int]]:
    seen: list = []
    original = LabelPlacer.put

    def put(self, text, centre, colour):
        box = original(self, text, centre, colour)
        seen.append(box)
        return box

    monkeypatch.setattr(LabelPlacer, "put", put)
    draw()
    return seen


def test_carrousel_labels_do_not_overlap(monkeypatch):
    from companion.vision.carrousel import (
        CarrouselGeometry,
        CarrouselReader,
        draw_overlay,
    )

    geometry = CarrouselGeometry.load()
    frame = cv2.imread(str(CARROUSEL))
    reading = CarrouselReader(geometry).read(frame)
    assert reading.status == "ok"
    boxes = _label_boxes(monkeypatch, lambda: draw_overlay(frame, reading, geometry))
    assert len(boxes) == len(reading.registration.marker_ids) + 7 + 4  # marker ids, spaces, cards
    assert all(not _overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


@pytest.mark.skipif(not MONSIEUR.exists(), reason="the Monsieur Carrousel photographs are not here")
def test_monsieur_header_and_seat_labels_are_readable_on_a_dim_photo(monkeypatch):
    from companion.vision.monsieur import MonsieurReader, draw_overlay
    from companion.vision.monsieur_geometry import MonsieurGeometry

    geometry = MonsieurGeometry.load()
    frame = cv2.imread(str(MONSIEUR))
    reading = MonsieurReader(geometry).read(frame)
    assert reading.carousel_angle_deg is not None
    out: list = []
    boxes = _label_boxes(monkeypatch, lambda: out.append(draw_overlay(frame, reading, geometry)))
    img = out[0]
    assert len(boxes) == geometry.n_seats
    assert all(not _overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    for x0, y0, x1, y1 in boxes:  # white text on black, not black text on the dark photo
        inside = img[y0 + 1:y1, x0 + 1:x1]
        assert inside.max() > 200 and (inside.max(axis=2) < 60).mean() > 0.4
    first = (reading.status + f"  angle {reading.carousel_angle_deg:.1f}  pointed {reading.pointed_seat}"
             f"  die {reading.die}")  # the band's first line (a legend follows on the next)
    (w, _), _ = cv2.getTextSize(first, cv2.FONT_HERSHEY_SIMPLEX, 0.4, 1)
    assert img[:14, w + 8:].max() == 0  # the status band: black past its text, no stray letter


def test_a_status_longer_than_the_image_is_wrapped_not_cut(monkeypatch):
    """A narrow image (a cropped frame) and a long status: every word is drawn, on as many
    lines as it takes, and the band the labels keep free grows with them."""
    text = "ok  angle 85.5  pointed 9  die orange  roof marker hidden: seats read from the print"
    img = np.full((120, 220, 3), 128, np.uint8)
    band = draw_header(img, text)
    one = draw_header(np.full((120, 640, 3), 128, np.uint8), "ok")
    assert band >= 3 * (one - 3)  # three lines at least
    assert (img[:band] == 0).mean() > 0.7 and img[band - 6:band - 1].max() > 200  # text on the last line
    assert (img[band + 1:] == 128).all()  # under the band the frame is untouched
    written = []  # the words, line by line, as drawn: the same words in the same order
    original = cv2.putText

    def put_text(image, line, *args, **kwargs):
        written.append(line)
        return original(image, line, *args, **kwargs)

    monkeypatch.setattr(cv2, "putText", put_text)
    draw_header(np.full((120, 220, 3), 128, np.uint8), text)
    assert " ".join(written).split() == text.split()
