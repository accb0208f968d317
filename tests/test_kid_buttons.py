"""The kids' YES/NO buttons and the electronic die button on gpiozero's MockFactory."""

from __future__ import annotations

import random

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.clock import ManualClock
from companion.games.monsieur_carrousel import load_table
from companion.sources.kid_buttons import KidButtons

COLOURS = load_table().die_colours


@pytest.fixture
def rig():
    factory = MockFactory(pin_class=MockPWMPin)
    later = []
    got = []
    clock = ManualClock()
    kb = KidButtons(23, 24, 22, COLOURS, bounce_s=None, pin_factory=factory, together_s=0.3,
                    rng=random.Random(5), schedule=lambda delay, fn: later.append((delay, fn)))
    kb.start(got.append, clock)
    yield kb, factory, later, got, clock
    for pin in (22, 23, 24):
        release(factory, pin)
    kb.stop()
    factory.reset()


def press(factory, pin):
    factory.pin(pin).drive_low()


def release(factory, pin):
    factory.pin(pin).drive_high()


def test_yes_alone_is_reported_after_the_together_window(rig):
    kb, factory, later, got, clock = rig
    clock.set(4.0)
    press(factory, 23)
    assert got == [] and later[0][0] == 0.3
    release(factory, 23)
    later.pop()[1]()
    assert [(o.type, o.value, o.t) for o in got] == [("answer", "yes", 4.0)]


def test_yes_and_no_together_is_both(rig):
    kb, factory, later, got, clock = rig
    press(factory, 24)
    press(factory, 23)
    later.pop()[1]()  # the window ends: nothing more to report
    assert [o.value for o in got] == ["both"]


def test_a_button_pressed_while_the_other_is_held_is_both(rig):
    kb, factory, later, got, clock = rig
    press(factory, 23)
    later.pop()[1]()
    press(factory, 24)  # YES still held
    assert [o.value for o in got] == ["yes", "both"]


def test_die_button_rolls_a_die_colour(rig):
    kb, factory, later, got, clock = rig
    for _ in range(60):
        press(factory, 22)
        release(factory, 22)
    rolls = [o.colour for o in got]
    assert len(rolls) == 60 and set(rolls) == set(COLOURS)
    assert all(o.type == "die_rolled" for o in got)
