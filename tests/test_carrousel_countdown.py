"""Carrousel: the last seconds before the dead end counted down on request (the referee's
``countdown_s`` option, ``[carrousel] countdown_s``; docs/vocabulary.md, Carrousel). Time only
comes with the observations."""

from __future__ import annotations

import pytest

from companion.config import validate
from companion.events import Tick
from companion.games import referee_from_config
from companion.games.carrousel import (
    Board,
    CarrouselReferee,
    Claim,
    Countdown,
    DeadEnd,
    GameStart,
    Position,
)
from tests.test_carrousel_rules import make_deck

START = Position.from_text(".gbyrk.")  # first three black, red, yellow; green is last


def start(countdown_s=5, dead_end_s=20.0, obs_countdown=None):
    ref = CarrouselReferee(countdown_s=countdown_s)
    obs = GameStart(t=0.0, players=("Ana", "Ben"), spaces=START.spaces, seed=1,
                    dead_end_s=dead_end_s, countdown_s=obs_countdown)
    state, calls = ref.apply(ref.initial_state(), obs)
    assert not [c for c in calls if c.TYPE == "invalid_observation"]
    return ref, state


def follow_deadlines(ref, state, until):
    """Tick at every deadline the referee asks for, like the service loop, until ``until``."""
    calls = []
    while (deadline := ref.next_deadline(state)) is not None and deadline <= until:
        state, more = ref.apply(state, Tick(t=deadline))
        calls += more
    return state, calls


def test_countdown_calls_the_last_five_seconds_at_their_times_then_the_dead_end():
    ref, state = start(countdown_s=5)
    assert ref.next_deadline(state) == 15.0
    state, calls = follow_deadlines(ref, state, 30.0)
    assert [(c.TYPE, c.t) for c in calls] == [
        ("countdown", 15.0), ("countdown", 16.0), ("countdown", 17.0), ("countdown", 18.0),
        ("countdown", 19.0), ("dead_end", 20.0),
    ]
    assert [c.seconds_left for c in calls[:5]] == [5, 4, 3, 2, 1]
    assert ref.next_deadline(state) is None  # waiting for the dead-end move


def test_off_by_default_nothing_changes():
    ref, state = start(countdown_s=0)
    assert ref.next_deadline(state) == 20.0
    state, calls = follow_deadlines(ref, state, 30.0)
    assert [c.TYPE for c in calls] == ["dead_end"]


def test_a_tick_between_seconds_calls_nothing_and_each_second_is_called_once():
    ref, state = start(countdown_s=3)
    state, calls = ref.apply(state, Tick(t=16.5))
    assert calls == []
    state, calls = ref.apply(state, Tick(t=17.0))
    assert calls == [Countdown(t=17.0, seconds_left=3)]
    state, calls = ref.apply(state, Tick(t=17.0))
    assert calls == []
    assert ref.next_deadline(state) == 18.0


def test_a_late_observation_calls_the_missed_seconds_at_their_own_times_first():
    ref, state = start(countdown_s=3)
    state, calls = ref.apply(state, Board(t=18.5, spaces=Position.from_text(".gbykr.").spaces))
    assert [(c.TYPE, c.t) for c in calls[:2]] == [("countdown", 17.0), ("countdown", 18.0)]
    assert calls[2].TYPE == "move"
    # The move does not restart the clock: the last second is still to come.
    assert ref.next_deadline(state) == 19.0


def test_a_rejected_observation_does_not_call_a_second_twice():
    ref, state = start(countdown_s=3)
    state, calls = ref.apply(state, Claim(t=17.2, player="Zed"))  # unknown player: rejected
    assert [c.TYPE for c in calls] == ["countdown", "invalid_observation"]
    state, calls = ref.apply(state, Tick(t=17.5))
    assert calls == []


def test_a_point_restarts_the_countdown_with_the_clock():
    ben = ("red", "black", "yellow")  # one swap (red, black) away from the start
    ref = CarrouselReferee(countdown_s=5)
    obs = GameStart(t=0.0, players=("Ana", "Ben"), spaces=START.spaces,
                    deck=tuple(tuple(c) for c in make_deck([], [ben])))
    state, _ = ref.apply(ref.initial_state(), obs)
    state, calls = follow_deadlines(ref, state, 16.0)
    assert [c.seconds_left for c in calls] == [5, 4]
    state, _ = ref.apply(state, Board(t=16.1, spaces=Position.from_text(".gbykr.").spaces))
    state, calls = ref.apply(state, Claim(t=16.2, player="Ben"))
    assert [c.TYPE for c in calls] == ["point"]
    assert ref.next_deadline(state) == pytest.approx(31.2)
    state, calls = follow_deadlines(ref, state, 36.2)
    assert [c.seconds_left for c in calls if c.TYPE == "countdown"] == [5, 4, 3, 2, 1]
    assert isinstance(calls[-1], DeadEnd) and calls[-1].t == pytest.approx(36.2)


def test_a_dead_end_shorter_than_the_countdown_counts_only_the_seconds_after_the_start():
    ref, state = start(countdown_s=5, dead_end_s=3.0)
    state, calls = follow_deadlines(ref, state, 10.0)
    assert [(c.TYPE, c.t) for c in calls] == [("countdown", 1.0), ("countdown", 2.0), ("dead_end", 3.0)]
    assert [c.seconds_left for c in calls[:2]] == [2, 1]


def test_game_start_may_set_the_countdown_for_the_session():
    ref, state = start(countdown_s=0, obs_countdown=2)
    assert ref.next_deadline(state) == 18.0


@pytest.mark.parametrize("bad", [-1, 11, 2.5, True])
def test_the_referee_refuses_a_countdown_out_of_range(bad):
    with pytest.raises(ValueError, match="countdown_s"):
        CarrouselReferee(countdown_s=bad)


def test_the_configuration_key_reaches_the_referee():
    ref = referee_from_config("carrousel", validate({"carrousel": {"countdown_s": 4}}))
    assert ref.initial_state().countdown_s == 4
    assert validate({}).values["carrousel"]["countdown_s"] == 0
    with pytest.raises(Exception, match="countdown_s"):
        validate({"carrousel": {"countdown_s": 11}})
