"""Dice never wrong: readers that disagree, a box over part of a die, the default tray, a frame
that lost its colour (tests/data/dice: held-out photos of nell-byler/dice_detection)."""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.readers.dice import UNKNOWN, DiceReader, decide, roll_values

DATA = Path(__file__).parent / "data" / "dice"
NAMES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
READER = DiceReader()
PIPS_ONLY = DiceReader(model=None)


def probs(best, p):
    q = np.full(7, (1 - p) / 6, np.float32)
    q[best] = p
    return q


def labelled(name):
    with open(DATA / "labels.csv", newline="") as fh:
        return [(tuple(float(r[k]) * 640 for k in ("xmin", "ymin", "xmax", "ymax")), NAMES[r["class_text"]])
                for r in csv.DictReader(fh) if r["filename"] == name]


def test_a_pip_crop_that_reads_another_value_than_the_classifier_is_unknown():
    """The pips abstain as a whole (their crops disagree, or only one crop read), the classifier
    is sure: a crop that read another value is a disagreement, never a value."""
    sure = probs(6, 0.95)
    assert decide(sure, None, "no face fits the pips") == (6, "")  # the classifier alone, pips silent
    value, reason = decide(sure, None, "readings disagree", pip_values=(3, 6))
    assert value is None and "disagree" in reason and "3" in reason
    value, reason = decide(sure, None, "no face fits the pips", pip_values=(3,))
    assert value is None and "pips read 3" in reason and "6" in reason
    assert decide(sure, None, "unsure", pip_values=(6,)) == (6, "")  # the one crop agrees
    # without a model the pips' crops must agree among themselves
    assert decide(None, None, "readings disagree", pip_values=(2, 4))[0] is None
    with pytest.raises(ValueError, match="pip_values"):
        decide(sure, None, "", pip_values=(7,))


@pytest.mark.parametrize("reader", [READER, PIPS_ONLY], ids=["with face classifier", "pips only"])
def test_a_box_over_part_of_a_die_is_unknown(reader):
    """Half a die's box, or its box moved half a die aside: unknown ("part of a die"), though
    the square read around it would show the whole face."""
    name = "IMG_20191209_095604.jpg"
    frame = cv2.imread(str(DATA / name))
    parts = 0
    for (x0, y0, x1, y1), value in labelled(name):
        w, h = x1 - x0, y1 - y0
        boxes = [(x0, y0, x0 + w / 2, y1), (x0 + w / 2, y0, x1, y1), (x0, y0, x1, y0 + h / 2),
                 (x0 + w / 2, y0, x1 + w / 2, y1), (x0, y0 - h / 2, x1, y1 - h / 2)]
        for box in boxes:
            got, reason = reader.read_die(frame, box)
            assert got is None, (box, value, got)
            parts += "part of a die" in reason
    assert parts >= 20  # of 25: the rest abstain for another reason
    # the finder's own boxes hold whole dice
    readings = reader.read(frame)
    assert sorted(r.value for r in readings if r.value != UNKNOWN) == sorted(v for _, v in labelled(name)) or (
        reader is PIPS_ONLY)
    assert not any("part of a die" in r.reason for r in readings)


def test_the_default_tray_leaves_out_what_is_not_the_tray():
    """No tray given: the mounting holes of the tray's stand below the floor (grey discs of a
    die's size) were read as two unknown dice; the floor the frame is centred on is the tray."""
    name = "IMG_20191208_112847.jpg"
    frame = cv2.imread(str(DATA / name))
    readings = READER.read(frame)
    assert roll_values(readings) is not None, readings  # exactly the three dice
    assert sorted(r.value for r in readings) == sorted(v for _, v in labelled(name))
    assert all(r.centre[1] < 520 for r in readings)  # the holes are at y 556-602
    inside = READER.floor_region(cv2.cvtColor(frame, cv2.COLOR_BGR2LAB)[::4, ::4], (640, 640))
    assert inside is not None and inside[300, 320] and not inside[580, 60] and not inside[580, 585]
    # a frame with no floor in its middle (one flat colour everywhere) reads the whole frame
    flat = np.zeros((200, 200, 3), np.uint8) + np.array([60, 120, 160], np.uint8)  # a brown table
    assert READER.read(flat) == []


@pytest.mark.parametrize("fault", ["grayscale", "dark", "clipped"])
def test_a_frame_that_lost_its_colour_reads_no_die(fault):
    """A grayscale camera, a frame too dark for any pip to stand out, a clipped floor: one
    unknown reading over the tray, naming the fault; never a value (and no roll)."""
    frame = cv2.imread(str(DATA / "IMG_20191208_112942.jpg"))
    if fault == "grayscale":
        bad = cv2.cvtColor(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    elif fault == "dark":
        bad = (frame.astype(np.float32) * 0.12).astype(np.uint8)
    else:
        bad = np.clip(frame.astype(np.float32) * 2.5, 0, 255).astype(np.uint8)
    for reader in (READER, DiceReader(tray=(0, 70, 640, 555))):
        readings = reader.read(bad)
        assert len(readings) == 1 and readings[0].value == UNKNOWN, readings
        assert readings[0].reason.startswith("colour lost"), readings[0].reason
        got, reason = reader.read_die(bad, (69, 246, 110, 287))
        assert got is None and reason.startswith("colour lost")
    assert READER.colour_problem(frame) == ""
