"""One card read at two places in the same frame (the tester's video showed blue-black-red in
front of Ben and of Cleo; the deck holds it once): the camera takes neither reading and says so
once, instead of "Ben's card is blue-black-red, not ..." followed by "Observation refused:
card: blue-black-red is Ben's card in play" for Cleo's."""

from __future__ import annotations

import logging

from companion.clock import ManualClock
from companion.games.carrousel import CardSeen, CarrouselReferee, GameStart, Position
from companion.sources.carrousel_camera import CarrouselCameraSource
from companion.vision.sim import Conditions, SimulatedCamera

PLAYERS = ("Ana", "Ben", "Cleo", "Dev")
SEATS = ("south", "east", "north", "west")


def _steps(src, clock, n, dt=0.1):
    out = []
    for _ in range(n):
        out += src.step(clock.now()) or []
        clock.advance(dt)
    return out


def test_a_card_read_at_two_places_is_taken_for_neither_and_said_once(caplog):
    ref = CarrouselReferee()
    start = GameStart(t=0.0, players=PLAYERS, spaces=Position.from_text(".gbyrk.").spaces, seed=3)
    state, (started, *_) = ref.apply(ref.initial_state(), start)
    dealt = started.cards
    twice = ("blue", "black", "red")
    assert twice not in dealt.values()
    cam = SimulatedCamera(seed=1, conditions=Conditions(tilt_deg=10, azimuth_deg=20, roll_deg=90))
    cam.set_table(spaces=start.spaces, cards={s: dealt[p] for p, s in zip(PLAYERS, SEATS)})
    clock = ManualClock()
    src = CarrouselCameraSource(cam, players=PLAYERS, seats=SEATS, settle_s=0.2)
    first = [o for o in _steps(src, clock, 4) if isinstance(o, CardSeen)]
    assert {o.player: o.card for o in first} == dealt
    # Ben's and Cleo's places now both show blue-black-red; Ana's shows another card
    cam.set_table(cards={"south": ("yellow", "green", "blue"), "east": twice, "north": twice, "west": dealt["Dev"]})
    caplog.set_level(logging.INFO)
    later = [o for o in _steps(src, clock, 4) if isinstance(o, CardSeen)]
    assert [(o.player, o.card) for o in later] == [("Ana", ("yellow", "green", "blue"))]
    said = [r.getMessage() for r in caplog.records if "blue-black-red" in r.getMessage()]
    assert said == ["camera: the card blue-black-red is read at Ben's and Cleo's places; the deck holds it "
                    "once, so neither reading is taken: check those cards"]
    calls = []
    for obs in later:
        state, out = ref.apply(state, obs)
        calls += out
    assert [c.TYPE for c in calls] == ["card_corrected"] and calls[0].player == "Ana"
    # Cleo's card put right: Ben's reading is taken, and nothing more is said about it
    cam.set_table(cards={"south": ("yellow", "green", "blue"), "east": twice, "north": dealt["Cleo"],
                         "west": dealt["Dev"]})
    caplog.clear()
    again = [o for o in _steps(src, clock, 4) if isinstance(o, CardSeen)]
    assert [(o.player, o.card) for o in again] == [("Ben", twice)]
    assert not [r for r in caplog.records if "read at" in r.getMessage()]
