"""Observations and calls: JSON round trip and field checking."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.events import EventError, InvalidObservation, Tick
from companion.games.carrousel import VOCABULARY, Board, Claim, GameStart

COLOUR = st.sampled_from(["black", "yellow", "blue", "green", "red", "empty", "unknown"])
T = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(T, st.lists(COLOUR, min_size=7, max_size=7))
def test_board_round_trip(t, spaces):
    obs = Board(t=t, spaces=tuple(spaces))
    assert VOCABULARY.observation(json.loads(obs.to_line())) == obs


@given(T, st.text(min_size=1, max_size=12))
def test_claim_round_trip(t, player):
    obs = Claim(t=t, player=player)
    assert VOCABULARY.observation(json.loads(obs.to_line())) == obs


def test_every_call_type_round_trips():
    """Every call class of the vocabulary survives JSON with its defaults."""
    for name, cls in VOCABULARY.calls.items():
        call = cls(t=1.5)
        assert call.type == name
        assert VOCABULARY.call(json.loads(call.to_line())) == call


def test_game_start_round_trip_with_deck():
    obs = GameStart(t=0.0, players=("Ana", "Ben"), spaces=("empty",) * 2 + ("black",) * 5, deck=(("black", "red", "blue"),))
    back = VOCABULARY.observation(obs.to_json())
    assert back == obs and isinstance(back.deck[0], tuple)


@pytest.mark.parametrize(
    "obj,message",
    [
        ({"t": 1}, "field 'type' is missing"),
        ({"type": "clam", "t": 1}, "unknown observation type 'clam' for carrousel"),
        ({"type": "claim", "player": "Ana"}, "claim: field 't' is missing"),
        ({"type": "claim", "t": "soon", "player": "Ana"}, "claim: field 't': expected a finite number, got \"soon\""),
        ({"type": "claim", "t": -1, "player": "Ana"}, "expected seconds >= 0"),
        ({"type": "claim", "t": 1, "player": 3}, "claim: field 'player': expected a string, got 3"),
        ({"type": "claim", "t": 1}, "claim: field 'player' is missing"),
        ({"type": "board", "t": 1}, "board: field 'spaces' is missing"),
        ({"type": "tick", "t": 1e400}, "expected a finite number"),
        ({"type": "claim", "t": 1, "player": "\ud800"}, "field 'player': expected a string"),
        ({"type": "claim", "t": 1, "player": "Ana", "force": 2}, "claim: unknown field 'force'"),
        ({"type": "board", "t": 1, "spaces": "black"}, "field 'spaces': expected a list of strings"),
        ({"type": "tick", "t": True}, "field 't': expected a finite number, got true"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_fields_are_named(obj, message):
    with pytest.raises(EventError) as info:
        VOCABULARY.observation(obj)
    assert message in str(info.value)


def test_events_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Tick(t=1.0).t = 2.0  # type: ignore[misc]


def test_invalid_observation_keeps_the_raw_input():
    call = InvalidObservation(t=2.0, reason="line 3: not valid JSON", line=3, observation="{oops")
    assert json.loads(call.to_line())["observation"] == "{oops"


def test_a_list_of_a_union_is_worded_without_a_broken_plural():
    """Carnival's roll takes dice as integers or "unknown": the refusal reads as English."""
    from companion.games import referee_for

    vocabulary = referee_for("carnival").vocabulary
    with pytest.raises(Exception, match=r"roll: field 'dice': expected a list, each item an integer or a string"):
        vocabulary.observation({"type": "roll", "t": 1, "player": "A", "dice": [{}]})
