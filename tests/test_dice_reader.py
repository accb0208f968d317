"""The dice reader on real photos (tests/data/dice: four train-split photos of
nell-byler/dice_detection, BSD-3-Clause) and on images that must give ``unknown``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.readers.dice import (
    MODEL_ALONE,
    MODEL_PATH,
    MODEL_WITH_PIPS,
    UNKNOWN,
    DiceReader,
    DieReading,
    FaceModel,
    RollSettler,
    decide,
    die_patch,
    read_patch,
    roll_values,
)

DATA = Path(__file__).parent / "data" / "dice"
NAMES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
READER = DiceReader()
PIPS_ONLY = DiceReader(model=None)


def labelled():
    """[(file name, frame, box px, value)] of the labelled dice."""
    out = []
    frames = {}
    with open(DATA / "labels.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            name = row["filename"]
            if name not in frames:
                frames[name] = cv2.imread(str(DATA / name))
                assert frames[name] is not None, name
            box = tuple(float(row[k]) * 640 for k in ("xmin", "ymin", "xmax", "ymax"))
            out.append((name, frames[name], box, NAMES[row["class_text"]]))
    return out


def test_the_tests_photos_were_never_trained_on():
    """The face classifier's training record lists the tests' photos as held out, so the
    tests below measure it on dice it has not seen."""
    record = json.loads(MODEL_PATH.with_suffix(".json").read_text())
    photos = {name for name, *_ in labelled()}
    assert photos <= set(record["held_out"])


@pytest.mark.parametrize("reader", [READER, PIPS_ONLY], ids=["with face classifier", "pips only"])
def test_labelled_dice_are_read_right_or_unknown_never_wrong(reader):
    """Every labelled die of the four photos: the right value, or ``unknown``; never wrong,
    and most of them read."""
    right = 0
    dice = labelled()
    for name, frame, box, value in dice:
        got, reason = reader.read_die(frame, box)
        assert got in (None, value), (name, box, value, got)
        if got is None:
            assert reason
        right += got == value
    # 19 dice: at most 5 unknown. With the classifier, 3 faces it is unsure of (the classifier
    # trained for dice trays too, issue 16, is less sure of a three no pip crop reads), a six one
    # crop of the pips reads as a three (the readers disagree: unknown, never a value), and a label
    # box 11 px short of its die (a box over part of a die: unknown); the pips alone 5 as well.
    assert right >= len(dice) - 5


def test_face_model_gives_probabilities_of_seven_classes():
    name, frame, box, value = next(d for d in labelled() if d[0] == "IMG_20191208_112847.jpg" and d[3] == 3)
    patches = np.stack([die_patch(frame, box), frame[100:148, 100:148]])  # a die, the bare floor
    p8 = READER.model.probabilities(patches)
    p1 = READER.model.probabilities(patches, views=1)
    for p in (p8, p1):
        assert p.shape == (2, 7) and p.dtype == np.float32
        assert np.allclose(p.sum(axis=1), 1, atol=1e-4)
        assert p[0].argmax() == value and p[1].argmax() == 0  # "not one die" on the floor
    assert READER.model.probabilities(np.zeros((0, 48, 48, 3), np.uint8)).shape == (0, 7)
    with pytest.raises(ValueError, match="48 x 48 x 3"):
        READER.model.probabilities(np.zeros((1, 32, 32, 3), np.uint8))
    with pytest.raises(ValueError, match="views"):
        READER.model.probabilities(patches, views=4)


def test_die_patch_is_a_square_around_the_box():
    frame = np.zeros((100, 100, 3), np.uint8)
    frame[40:60, 30:50] = 255  # a 20 px white square
    patch = die_patch(frame, (30, 40, 50, 60))
    assert patch.shape == (48, 48, 3) and patch.dtype == np.uint8
    # The box grown by 15 % a side: the square fills the middle 1/1.3 of the patch.
    inner = patch[:, :, 0] > 128
    side = inner.any(axis=0).sum()
    assert abs(side - 48 / 1.3) <= 2 and inner[24, 24]


def test_decide_takes_agreement_and_confidence_and_abstains_otherwise():
    """The classifier and the pips together (decide's rules): agreement, a confident classifier
    alone, else unknown with the reason."""

    def probs(best, p):
        q = np.full(7, (1 - p) / 6, np.float32)
        q[best] = p
        return q

    assert decide(probs(4, MODEL_WITH_PIPS + 1e-3), 4) == (4, "")
    assert decide(probs(4, MODEL_ALONE + 1e-3), None, "no pip seen") == (4, "")
    value, reason = decide(probs(4, MODEL_ALONE - 0.05), None, "no pip seen")
    assert value is None and "no pip seen" in reason and "unsure" in reason
    value, reason = decide(probs(5, 0.99), 6)
    assert value is None and "pips read 6" in reason and "5" in reason
    value, reason = decide(probs(3, MODEL_WITH_PIPS - 0.05), 3)
    assert value is None and "unsure" in reason
    value, reason = decide(probs(0, 0.45), 2)  # "not one die" wins, even below one half
    assert value is None and "pips read 2" in reason and "no single die" in reason
    assert decide(None, 2) == (2, "")
    assert decide(None, None, "two faces fit") == (None, "two faces fit")
    # Not probabilities of the seven classes, or a pip count no die shows: refused.
    for bad in (np.eye(10)[9], np.array([0, 0, 0.9]), np.array([-5, 0, 0, 0, 0, 0, 9.0]), np.full(7, np.nan)):
        with pytest.raises(ValueError, match="probs"):
            decide(bad, None)
    with pytest.raises(ValueError, match="pip_value"):
        decide(None, 9)


def test_bad_boxes_trays_and_sizes_are_refused_with_the_field_named():
    frame = cv2.imread(str(DATA / "IMG_20191208_112847.jpg"))
    for box in ((10, 10, 10, 40), (40, 10, 10, 40), (float("nan"), 0, 10, 10), (0, 0, float("inf"), 10), (1, 2, 3)):
        with pytest.raises(ValueError, match="box"):
            die_patch(frame, box)
    for tray in ((-50, -50, -10, -10), (10, 10, 5, 5), (0, 0, 10.5, 10), (0, 0, 10)):
        with pytest.raises(ValueError, match="tray"):
            DiceReader(tray=tray, model=None)
    for die_px in ((float("nan"),) * 2, (22, float("inf")), (22,), ("a", "b"), (0.5, 1), (40, 20)):
        with pytest.raises(ValueError, match="die_px"):
            DiceReader(die_px=die_px, model=None)
    with pytest.raises(ValueError, match="outside the 640 x 640 px frame"):
        DiceReader(tray=(700, 0, 800, 100), model=None).read(frame)
    with pytest.raises(ValueError, match="empty"):
        READER.read(np.zeros((0, 0, 3), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        READER.model.probabilities(np.zeros((1, 48, 48, 3), np.float32))


def test_a_die_the_pips_read_but_the_classifier_rejects_stays_as_unknown():
    """The classifier's "not one die" alone does not remove a region the pips read as a die:
    it stays an ``unknown`` reading, so the tray's count of dice stays right and the referee
    asks to show the dice again."""
    frame = cv2.imread(str(DATA / "IMG_20191208_112847.jpg"))

    class Refusing:
        def probabilities(self, patches, views=8):
            p = np.zeros((len(patches), 7), np.float32)
            p[:, 0] = 1.0
            return p

    reader = DiceReader(tray=(0, 70, 640, 555), model=Refusing())
    readings = reader.read(frame)
    assert len(readings) == 3 and all(r.value == UNKNOWN for r in readings)
    assert all("no single die" in r.reason for r in readings)


def test_a_missing_or_broken_model_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="none.onnx"):
        FaceModel(tmp_path / "none.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(ValueError, match="broken.onnx"):
        FaceModel(broken)


def test_touching_dice_the_erosion_cannot_part_are_found_by_the_classifier():
    """IMG_20191208_112942: a six and a five lie against each other. The pips alone report one
    ``unknown`` region ("dice touching"); the classifier's search finds and reads both."""
    frame = cv2.imread(str(DATA / "IMG_20191208_112942.jpg"))
    tray = (0, 70, 640, 555)
    alone = DiceReader(tray=tray, model=None).read(frame)
    assert any(r.reason == "dice touching" and r.box[0] < 100 < r.box[2] for r in alone)
    readings = DiceReader(tray=tray).read(frame)
    near = sorted((r for r in readings if r.box[1] < 262 < r.box[3] and r.box[2] < 160), key=lambda r: r.box[0])
    assert [r.value for r in near] == [6, 5]
    assert not any(r.reason == "dice touching" for r in readings)


def test_three_dice_of_a_roll_found_and_read_in_the_whole_frame():
    """A tray with three dice, as after a Carnival roll: found and read without boxes given."""
    frame = cv2.imread(str(DATA / "IMG_20191208_112847.jpg"))
    readings = DiceReader(tray=(0, 70, 640, 555)).read(frame)
    assert sorted(r.value for r in readings) == [1, 3, 5]
    values = roll_values(readings)
    assert values is not None and sorted(values) == [1, 3, 5]


def test_whole_frame_reading_is_never_wrong():
    reader = DiceReader(tray=(0, 70, 640, 555))
    for name in ("IMG_20191208_112710.jpg", "IMG_20191209_095604.jpg", "IMG_20191208_112942.jpg"):
        frame = cv2.imread(str(DATA / name))
        truth = [(box, v) for n, _, box, v in labelled() if n == name]
        for r in reader.read(frame):
            if r.value == UNKNOWN:
                continue
            cx, cy = r.centre
            match = [v for (x0, y0, x1, y1), v in truth if x0 <= cx <= x1 and y0 <= cy <= y1]
            assert match == [r.value], (name, r)


def test_bare_tray_floor_is_not_a_die():
    frame = cv2.imread(str(DATA / "IMG_20191208_112847.jpg"))
    floor = frame[300:340, 300:340]
    value, reason = read_patch(cv2.resize(floor, (72, 72)))
    assert value is None and reason


def test_blurred_die_gives_unknown():
    """A die too blurred to show its pips (motion, focus) is ``unknown``, not a guess."""
    name, frame, box, value = labelled()[3]
    blurred = cv2.GaussianBlur(frame, (0, 0), 6)
    got, _ = READER.read_die(blurred, box)
    assert got is None


def test_die_covered_by_a_hand_gives_unknown():
    name, frame, box, value = labelled()[3]
    covered = frame.copy()
    x0, y0, x1, y1 = (int(v) for v in box)
    covered[y0 : (y0 + y1) // 2 + 4, x0 - 2 : x1 + 2] = (150, 170, 210)  # skin tone, BGR
    got, _ = READER.read_die(covered, box)
    assert got in (None, value)


def test_touching_dice_region_is_one_unknown_reading():
    reader = PIPS_ONLY
    frame = np.full((200, 300, 3), 190, np.uint8)
    cv2.rectangle(frame, (40, 60), (200, 120), (40, 40, 200), -1)  # a long red bar: not a die
    cv2.rectangle(frame, (220, 60), (256, 96), (40, 40, 200), -1)
    readings = reader.read(frame)
    single = [r for r in readings if r.reason != "dice touching"]
    assert len(single) == 1 and single[0].value == UNKNOWN  # a blank red square has no pips


def test_bad_frame_is_refused():
    with pytest.raises(ValueError, match="H x W x 3 uint8"):
        READER.read(np.zeros((10, 10), np.uint8))
    with pytest.raises(ValueError, match="H x W x 3 uint8"):
        READER.read(np.zeros((10, 10, 3), np.float32))
    with pytest.raises(ValueError, match="die_px"):
        DiceReader(die_px=(40, 20))


def test_roll_values_needs_exactly_three_dice():
    a = DieReading((0, 0, 10, 10), 4)
    b = DieReading((20, 0, 30, 10), UNKNOWN, "no face fits the pips")
    assert roll_values([a, b, a]) == (4, UNKNOWN, 4)
    assert roll_values([a, b]) is None
    assert a.centre == (5.0, 5.0)


def test_roll_reported_once_after_the_settle_time():
    """A roll is reported once the same three values have been read for settle_s; a die that
    moves a little keeps the reading; a new roll is reported again."""
    settler = RollSettler(settle_s=0.5)
    a, b, c = (DieReading((x, 0, x + 10, 10), v) for x, v in ((0, 3), (20, 5), (40, 5)))
    tumbling = [DieReading((0, 0, 10, 10), UNKNOWN, "no pip seen")]
    assert settler.update(0.0, tumbling) is None
    assert settler.update(0.1, [a, b, c]) is None
    assert settler.update(0.4, [b, a, c]) is None  # order changed, same dice
    assert settler.update(0.61, [a, b, c]) == (3, 5, 5)
    assert settler.update(0.9, [a, b, c]) is None  # reported once
    assert settler.update(1.0, tumbling) is None
    d = DieReading((60, 0, 70, 10), 2)
    assert settler.update(1.2, [a, b, d]) is None
    assert settler.update(1.7, [a, b, d]) == (3, 5, 2)
    with pytest.raises(ValueError, match="settle_s"):
        RollSettler(-1)


def test_dice_command_prints_each_image_as_json(capsys, tmp_path):
    from companion.cli import main

    cfg = tmp_path / "config.toml"
    cfg.write_text("[dice]\ntray = [0, 70, 640, 555]\n")
    image = str(DATA / "IMG_20191208_112847.jpg")
    assert main(["--config", str(cfg), "dice", image]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["image"] == image and sorted(out["roll"]) == [1, 3, 5] and len(out["dice"]) == 3
    # The overlay: the same image with the three dice boxed and labelled.
    overlay = tmp_path / "read.png"
    assert main(["--config", str(cfg), "dice", image, "--overlay", str(overlay)]) == 0
    capsys.readouterr()
    drawn, original = cv2.imread(str(overlay)), cv2.imread(image)
    band = drawn.shape[0] - original.shape[0]  # the status band, added above the image
    assert drawn.shape[1:] == original.shape[1:] and 15 <= band <= 60 and not drawn[:band].any(axis=2).all()
    for die in out["dice"]:
        x0, y0, x1, y1 = (int(round(v)) for v in die["box"])
        assert tuple(drawn[band + y0 + (y1 - y0) // 2, x0]) == (40, 170, 40)  # green box edge: a value
    assert main(["--config", str(cfg), "dice", image, "--overlay", str(tmp_path / "no" / "x.png")]) == 2
    assert "cannot write the overlay" in capsys.readouterr().err
    # An unreadable image is one line on stderr; the others are still read.
    assert main(["--config", str(cfg), "dice", str(tmp_path / "none.jpg"), image]) == 2
    captured = capsys.readouterr()
    assert "none.jpg: no such file" in captured.err and json.loads(captured.out)["roll"] is not None
    assert main(["--config", str(cfg), "dice", "--tray", "1,2,3", image]) == 2
    assert "--tray" in capsys.readouterr().err
    assert main(["--config", str(cfg), "dice", "--tray", "700,700,900,900", image]) == 2
    assert "--tray 700,700,900,900: outside the 640 x 640 px image" in capsys.readouterr().err
    cfg.write_text("[dice]\ntray = [5, 5, 1, 1]\n")
    assert main(["--config", str(cfg), "dice", image]) == 2
    assert "[dice] tray" in capsys.readouterr().err
