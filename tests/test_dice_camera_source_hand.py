"""A hand over the dice tray: no roll, the table told (companion/readers/dice_cover.py and its use
in companion/sources/dice_camera.py's roll decision).

Rendered trays (companion/sim/dice_render.py: light, shading, tilt, blur, noise, hands of four
skin tones) with the hand's label image as the truth; the rule's figures come from skin's CIE
hue and chroma and the calibration's die size, not from these frames."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from companion.games.carnival import Roll
from companion.readers.dice import DieReading
from companion.readers.dice_cover import tray_cover
from companion.sim.dice_render import HAND_LABEL, TrayRenderer, random_scene
from companion.sources.dice_camera import DiceCameraSource, HandOverTray, dice_status, tray_call


def _with_hand(scene, rng, over=0):
    """The scene with a hand hovering over die ``over`` (the renderer's own hand: palm and arm)."""
    target = scene.dice[over].centre_mm[:2]
    return dataclasses.replace(scene, hand=(float(target[0]), float(target[1]), float(rng.uniform(34, 60)),
                                            float(math.atan2(target[1], target[0])), 95.0, 80.0))


@pytest.fixture(scope="module")
def trays():
    """Three rendered trays of three dice, each with and without a hand over a die."""
    renderer = TrayRenderer(supersample=1)
    out = []
    for seed in (101, 102, 103):
        rng = np.random.default_rng(seed)
        scene = dataclasses.replace(random_scene(rng, n_dice=3), hand=None)
        bare, _, _ = renderer.render(scene)
        handed, labels, _ = renderer.render(_with_hand(scene, rng))
        out.append((scene, bare, handed, labels))
    return out


def test_a_hand_over_the_tray_is_found_and_a_bare_tray_is_not(trays):
    for scene, bare, handed, labels in trays:
        geo = scene.geometry
        roi = geo.roi()
        x0, y0, x1, y1 = roi
        assert (labels[y0:y1, x0:x1] == HAND_LABEL).sum() > geo.face_px_range()[1] ** 2  # the hand is over the felt
        assert tray_cover(handed, roi, geo).covered, (scene.seed, scene.felt, scene.skin, scene.lighting)
        assert not tray_cover(bare, roi, geo).covered, (scene.seed, scene.felt, scene.lighting)


def test_without_a_calibration_there_is_no_hand_check(trays):
    """Without the tray's floor outline the box holds its walls and rim, as skin-coloured as a
    hand: a bare tray read so was called covered (12 of 20 rendered trays), and no roll would
    ever be given. Without a calibration nothing is called covered; with it, the arm is."""
    frame = np.full((240, 320, 3), (52, 84, 36), np.uint8)  # BGR dark green felt
    frame[20:140, 60:100] = (132, 166, 214)  # skin (sRGB 214, 166, 132) from the box's top edge: 3 faces
    assert not tray_cover(frame, (20, 20, 300, 220), die_px=(22, 40)).covered
    for scene, bare, handed, _ in trays:
        roi = scene.geometry.roi()
        assert not tray_cover(bare, roi, None, die_px=scene.geometry.face_px_range()).covered
        assert not tray_cover(handed, roi, None, die_px=scene.geometry.face_px_range()).covered
        assert tray_cover(handed, roi, scene.geometry).covered


def test_the_source_gives_no_roll_while_a_hand_is_over_the_tray(trays):
    """The dice camera with the real reader on a still tray: under a hand, the table is told
    and no roll goes to the referee; once the hand is gone (motion, then still), the roll."""
    scene, bare, handed, _ = trays[0]
    calls, statuses = [], []
    source = DiceCameraSource(_Frames(), {"settle_s": 0.3}, tray=scene.geometry.roi(), geometry=scene.geometry,
                              on_call=calls.append, on_status=statuses.append)
    source.announce(_Turn(), {"phase": "playing", "player": "Ana", "step": "choose"})
    out = []
    t = 0.0
    for _ in range(6):
        out += source.step(t, handed)
        t += 0.1
    assert [o for o in out if isinstance(o, Roll)] == []
    assert [type(c) for c in calls] == [HandOverTray] and calls[0].player == "Ana"
    assert statuses[-1] == "a hand is over the tray: take it away"
    for _ in range(6):
        out += source.step(t, bare)
        t += 0.1
    rolls = [o for o in out if isinstance(o, Roll)]
    assert len(rolls) == 1 and rolls[0].player == "Ana" and len(rolls[0].dice) == 3


def test_the_words_and_the_call_put_the_hand_first():
    three = [DieReading((0, 0, 10, 10), v) for v in (5, 2, 5)]
    assert dice_status(three, covered=True) == "a hand is over the tray: take it away"
    assert tray_call(1.0, "Ana", three, covered=True) == HandOverTray(t=1.0, player="Ana")
    assert tray_call(1.0, "Ana", three) is None
    assert dice_status(three[:2]) == "I see two dice: roll three dice"


@pytest.mark.parametrize("lang", ["en", "fr", "pt-BR"])
def test_the_call_has_a_sentence_and_a_signal(lang):
    from companion.announcers.speech import Catalogue

    text = Catalogue(lang).text(HandOverTray(t=1.0, player="Ana"), "carnival")
    assert text and "Ana" in text and "{" not in text
    import tomllib
    from pathlib import Path

    import companion

    signals = tomllib.loads((Path(companion.__file__).parent / "data" / "signals.toml").read_text())
    assert "hand_over_tray" in signals["carnival"]


class _Turn:
    type = TYPE = "turn"
    player = "Ana"


class _Frames:
    def read(self):
        return None

    def close(self):
        pass


def test_the_dice_command_gives_no_roll_under_a_hand(trays, tmp_path, capsys):
    """``companion dice`` on a photo with a hand over the tray: the dice it sees, no roll."""
    import json

    from companion.cli import main
    from companion.vision.images import write_image

    scene, bare, handed, _ = trays[0]
    cal = tmp_path / "dice-tray.toml"
    cal.write_text(scene.geometry.to_toml(), encoding="utf-8")
    image = tmp_path / "hand.png"
    write_image(image, handed, "photo")
    cfg = tmp_path / "c.toml"
    cfg.write_text('[service]\npin_factory = "mock"\n', encoding="utf-8")
    assert main(["--config", str(cfg), "dice", "--calibration", str(cal), str(image)]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert out["roll"] is None and out["covered"] == "a hand is over the tray"
