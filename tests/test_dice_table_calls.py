"""The dice camera's own calls (a die is cocked, the wrong number of dice): a sentence in every
catalogue for every variant, a light and buzzer entry, and the source telling them only when a
roll is expected and the settled tray is no roll."""

from __future__ import annotations

import pytest

from companion.announcers.signals import Signals
from companion.announcers.speech import Catalogue
from companion.readers.dice import COCKED, UNKNOWN, DieReading, roll_values
from companion.sources.dice_camera import DiceCocked, DiceCount, dice_status, tray_call

LANGS = ["en", "fr", "pt-BR"]


def _dice(*values):
    return [DieReading((10.0 * i, 0.0, 10.0 * i + 8, 8.0), v) for i, v in enumerate(values)]


def test_tray_call_says_what_is_wrong_and_nothing_for_a_roll():
    assert tray_call(1.0, "Ana", _dice(1, 2, 3)) is None
    assert tray_call(1.0, "Ana", _dice(1, UNKNOWN, 3)) is None  # the referee answers dice_unreadable
    assert tray_call(1.0, "Ana", []) is None
    cocked = tray_call(2.0, "Ana", _dice(1, COCKED, 3))
    assert cocked == DiceCocked(t=2.0, player="Ana", count=1, several=False)
    assert tray_call(2.0, "Ana", _dice(COCKED, COCKED, 3)) == DiceCocked(t=2.0, player="Ana", count=2, several=True)
    assert tray_call(2.0, "Ben", _dice(1, 2, 3, 4)) == DiceCount(t=2.0, player="Ben", seen=4, needed=3, one=False)
    assert tray_call(2.0, "Ben", _dice(5)) == DiceCount(t=2.0, player="Ben", seen=1, needed=3, one=True)
    assert roll_values(_dice(1, COCKED, 3)) is None and roll_values(_dice(1, UNKNOWN, 3)) == (1, UNKNOWN, 3)
    assert dice_status(_dice(1, COCKED, 3)) == "a die is cocked: roll it again"
    assert dice_status(_dice(1, 2, 3, 4)) == "I see four dice: roll three dice"


@pytest.mark.parametrize("lang", LANGS)
def test_every_variant_has_a_sentence_in_every_catalogue(lang):
    cat = Catalogue(lang)
    calls = [DiceCocked(t=1.0, player="Ana", count=1), DiceCocked(t=1.0, player="Ana", count=2, several=True),
             DiceCount(t=1.0, player="Ana", seen=4, needed=3), DiceCount(t=1.0, player="Ana", seen=1, one=True)]
    texts = [cat.text(c, "carnival") for c in calls]
    assert all(t and "Ana" in t and "{" not in t for t in texts), texts
    assert len(set(texts)) == 4, texts  # one and several are said differently
    assert "4" in texts[2] and "3" in texts[2]
    if lang == "en":
        assert texts[0] == "Ana, a die is cocked: roll it again."
        assert texts[2] == "I see 4 dice in the tray: Ana, roll 3 dice."


def test_the_calls_have_lights_and_notes():
    sig = Signals()
    assert {"dice_cocked", "dice_count"} <= sig.types("carnival")
