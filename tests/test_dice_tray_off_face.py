"""The crops' pips joined to the face fitted on its plane (dice_tray.with_face_fit): a blob the
crops took for a pip that lies off the fitted face (the felt in a corner of a turned die's box)
does not make the crops' reading a disagreement."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.readers import dice_tray
from companion.readers.dice import DiceReader, roll_values
from companion.readers.dice_tray import FaceFit, with_face_fit
from test_dice_tray_face_fit import _geometry

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice-tray"
photos = pytest.mark.skipif(not (DATA / "truth.json").is_file(), reason="dice-tray photographs not present")


FRAME = np.zeros((480, 640, 3), np.uint8)
BOX = (300.0, 220.0, 330.0, 250.0)
CENTRE = (315.0, 235.0)


def _fit_one(monkeypatch, value=1, pips=(CENTRE,)):
    def fit(frame, geometry, centre_px):
        return FaceFit(value, "", CENTRE, np.array(pips, float), 0.6, -1.0)

    monkeypatch.setattr(dice_tray, "fit_face", fit)


def _px_per_mm() -> float:
    g = _geometry()
    return g.face_side_px(CENTRE) / g.die_mm


def test_a_one_and_a_blob_off_its_face_read_as_a_one(monkeypatch):
    _fit_one(monkeypatch)
    off = 9.0 * _px_per_mm()  # 9 mm from the face's centre: beyond any pip of a flat face (6.1 mm)
    crops = [np.array([CENTRE, (CENTRE[0] + off * 0.9, CENTRE[1] + off * 0.44)])] * 3
    value, reason, given, found = with_face_fit(FRAME, _geometry(), BOX, (2, "", (2, 2, 2), crops))
    assert (value, reason, given) == (1, "", (1, 1, 1)) and len(found) == 3


def test_a_blob_where_a_pip_of_the_face_may_be_is_still_a_disagreement(monkeypatch):
    _fit_one(monkeypatch)
    d = 4.3 * _px_per_mm()  # a three's corner pips: on the face
    crops = [np.array([(CENTRE[0] - d, CENTRE[1] - d), CENTRE, (CENTRE[0] + d, CENTRE[1] + d)])] * 2
    value, reason, _, _ = with_face_fit(FRAME, _geometry(), BOX, (3, "", (3, 3), crops))
    assert value is None and reason == "the pips read 3, the face's grid 1"


def test_a_crop_that_missed_the_fitted_pip_is_still_a_disagreement(monkeypatch):
    _fit_one(monkeypatch)
    off = 9.0 * _px_per_mm()
    crops = [np.array([CENTRE, (CENTRE[0] + off, CENTRE[1])]),
             np.array([(CENTRE[0] - off, CENTRE[1]), (CENTRE[0] + off, CENTRE[1])])]
    value, _, _, _ = with_face_fit(FRAME, _geometry(), BOX, (2, "", (2, 2), crops))
    assert value is None


@photos
def test_the_ivory_one_on_green_felt_completes_its_roll():
    # dice_009: a flat ivory one turned 20 degrees; the green felt in its box's corner was a
    # second dark blob, and every crop read a two.
    from bench.dice_tray_bench import geometry_of

    im = {i["image"]: i for i in json.loads((DATA / "truth.json").read_text())["images"]}["dice_009.jpg"]
    readings = DiceReader(geometry=geometry_of(im, "corners")).read(cv2.imread(str(DATA / "images" / "dice_009.jpg")))
    assert sorted(roll_values(readings)) == sorted(d["value"] for d in im["dice"])
