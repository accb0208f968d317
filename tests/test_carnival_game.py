"""Whole games of Carnival: random legal games played to a winner on the simulated table, the
``companion referee carnival --events`` contract, and the simulated table as a source."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest

from companion.cli import main
from companion.events import InvalidObservation
from companion.games import referee_for
from companion.games.carnival import RIDES_TO_WIN, CarnivalReferee, Roll, Winner
from companion.sim.carnival import SimulatedCarnivalTable, carnival_game


def referee_game(observations):
    ref = CarnivalReferee()
    state = ref.initial_state()
    calls = []
    for obs in observations:
        state, more = ref.apply(state, obs)
        calls += more
    return ref, state, calls


@pytest.mark.parametrize(
    "seed,players",
    [(1, ("Ana", "Ben")), (2, ("Ana", "Ben", "Caio")), (3, ("Ana", "Ben", "Caio", "Dora")), (4, ("Ana", "Ben"))],
)
def test_random_legal_game_plays_to_a_winner(seed, players):
    """A seeded random game (dice, deck, choices) is legal throughout and ends with a winner
    holding four complete rides (Fim de Jogo)."""
    observations = list(carnival_game(seed, players))
    ref, state, calls = referee_game(observations)
    assert not [c for c in calls if isinstance(c, InvalidObservation)]
    assert ref.is_over(state)
    winners = [c for c in calls if isinstance(c, Winner)]
    assert len(winners) == 1 and winners[0] is calls[-1]
    assert state.player(state.winner).complete_rides >= RIDES_TO_WIN
    kinds = Counter(c.type for c in calls)
    assert kinds["rolled"] > 0 and kinds["action_done"] > 0 and kinds["built"] > 0
    times = [o.t for o in observations]
    assert times == sorted(times)


def test_many_seeds_all_reach_a_winner():
    """Twenty more games, 2 to 4 players: every one ends with a winner, none refused."""
    for seed in range(10, 30):
        players = ("A", "B", "C", "D")[: 2 + seed % 3]
        _, state, calls = referee_game(carnival_game(seed, players))
        assert state.phase == "over", seed
        assert not any(isinstance(c, InvalidObservation) for c in calls), seed


@pytest.mark.parametrize("seed,players", [(179, ("A", "B", "C")), (287, ("A", "B", "C"))])
def test_simulated_midway_trade_never_offers_a_wild_the_victim_cannot_hold(seed, players):
    """Seeds where the simulated player once chose a Midway Trade whose only gift was a wild the
    victim's Midway could not take (the referee refused it, Carnival's "Midway Trade"): the game
    now plays to a winner with every observation accepted."""
    _, state, calls = referee_game(carnival_game(seed, players))
    assert state.phase == "over"
    assert not any(isinstance(c, InvalidObservation) for c in calls)


def test_simulated_game_is_deterministic_and_exercises_the_rules():
    a = [o.to_line() for o in carnival_game(5)]
    b = [o.to_line() for o in carnival_game(5)]
    assert a == b
    c = [o.to_line() for o in carnival_game(6)]
    assert a != c
    # Over a few games, the rare rules come up: blocks, triples, unreadable dice, loose wilds,
    # natural sets.
    kinds = Counter()
    for seed in range(5):
        _, _, calls = referee_game(carnival_game(seed, unreadable_rate=0.2))
        kinds.update(c.type for c in calls)
    for kind in ("action_blocked", "dice_unreadable", "wild_moved", "natural_set", "wild_exchanged"):
        assert kinds[kind] > 0, kind
    assert any(isinstance(o, Roll) and len(set(o.dice)) == 1 for s in range(5) for o in carnival_game(s))


def test_sim_rejects_wrong_player_count():
    with pytest.raises(ValueError, match="2 to 4"):
        list(carnival_game(1, ("Solo",)))


def test_simulated_table_as_a_scheduled_source():
    """The adapter the service loop uses: next_time/advance emit the stream in order."""
    table = SimulatedCarnivalTable(seed=3, start_t=100.0)
    got = []
    table.start(got.append, clock=None)
    assert table.next_time() == 100.0
    table.advance(100.0)
    assert [o.type for o in got] == ["game_start"] and got[0].t == 100.0
    while table.next_time() is not None:
        table.advance(table.next_time())
    expected = list(carnival_game(3))
    assert len(got) == len(expected) and got[-1].t == expected[-1].t + 100.0
    table.stop()
    assert table.next_time() is None


def test_registered_in_games():
    assert isinstance(referee_for("carnival"), CarnivalReferee)


def test_referee_command_jsonl_round_trip(tmp_path, capsys):
    """``companion referee carnival --events FILE``: observations in, calls out, deterministic;
    a bad line is a call naming its line and the game goes on."""
    lines = [o.to_line() for o in carnival_game(7, ("Ana", "Ben"))]
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"type": "roll", "t": 9999.0, "player": "Ana", "dice": [1, 2]}))
    events = tmp_path / "game.jsonl"
    events.write_text("# a simulated game\n" + "\n".join(lines) + "\n")
    assert main(["--config", str(_empty_config(tmp_path)), "referee", "carnival", "--events", str(events)]) == 0
    out, err = capsys.readouterr()
    calls = [json.loads(x) for x in out.splitlines()]
    bad = [c for c in calls if c["type"] == "invalid_observation"]
    assert [c["line"] for c in bad][:1] == [5]  # the comment is line 1
    assert "not valid JSON" in bad[0]["reason"]
    assert calls[-1]["type"] == "winner"
    assert "line 5" in err
    # Same input, same output.
    assert main(["--config", str(_empty_config(tmp_path)), "referee", "carnival", "--events", str(events)]) == 0
    assert capsys.readouterr().out == out


def test_referee_command_reads_standard_input(tmp_path, capsys, monkeypatch):
    text = "\n".join(o.to_line() for o in carnival_game(8)) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["--config", str(_empty_config(tmp_path)), "referee", "carnival", "--events", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert json.loads(out[0])["type"] == "game_started" and json.loads(out[-1])["type"] == "winner"


def _empty_config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("")
    return path


def test_simulated_table_resumes_a_journaled_game():
    """After a restart the same seed's game carries on where the journal stopped."""
    full = list(carnival_game(9))
    table = SimulatedCarnivalTable(seed=9)
    got = []
    table.start(got.append, clock=None)
    _, state40, _ = referee_game(full[:40])
    table.resume(state40, t=500.0)
    assert table.next_time() == 500.0
    while table.next_time() is not None:
        table.advance(table.next_time())
    assert [o.type for o in got] == [o.type for o in full[40:]]
    ref, state, calls = referee_game(full[:40] + got)
    assert ref.is_over(state) and not any(isinstance(c, InvalidObservation) for c in calls)


# Bad input never raises: any observation, at any point of a game, gives calls (an
# invalid_observation for a refusal, with the state unchanged), never an exception.
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import dataclasses  # noqa: E402

from companion.games import carnival as cv  # noqa: E402

_GAME = list(carnival_game(11, ("Ana", "Ben", "Caio")))
_NAMES = st.sampled_from(["Ana", "Ben", "Caio", "Zoe", ""])
_CARDS = st.sampled_from(list(cv.ALL_CARDS) + ["carousel:roof", "", "wild "])
_RIDES = st.one_of(st.none(), st.sampled_from(list(cv.RIDES) + ["hand", "castle"]))
_OBS = st.one_of(
    st.builds(cv.RefillDiscard, t=st.just(0.0), card=_CARDS),
    st.builds(cv.Discard, t=st.just(0.0), player=_NAMES, cards=st.lists(_CARDS, max_size=3).map(tuple)),
    st.builds(cv.WildExchange, t=st.just(0.0), player=_NAMES, wild_from=st.sampled_from(["hand", "swings", "x"]),
              cards=st.lists(_CARDS, max_size=3).map(tuple)),
    st.builds(cv.Roll, t=st.just(0.0), player=_NAMES,
              dice=st.lists(st.one_of(st.integers(-1, 8), st.just("unknown")), max_size=4).map(tuple)),
    st.builds(cv.Assign, t=st.just(0.0), player=_NAMES, dice=st.lists(st.integers(0, 7), max_size=3).map(tuple)),
    st.builds(cv.Declare, t=st.just(0.0), player=_NAMES, die=st.integers(0, 7), target=st.one_of(st.none(), _NAMES)),
    st.builds(cv.Ticket, t=st.just(0.0), player=_NAMES),
    st.builds(cv.Action, t=st.just(0.0), player=_NAMES, take=st.one_of(st.none(), _CARDS), take_ride=_RIDES,
              give=st.one_of(st.none(), _CARDS), give_ride=_RIDES, discard=st.one_of(st.none(), _CARDS)),
    st.builds(cv.MoveWild, t=st.just(0.0), player=_NAMES, from_ride=_RIDES, to_ride=_RIDES),
    st.builds(cv.Build, t=st.just(0.0), player=_NAMES, ride=st.sampled_from(list(cv.RIDES) + ["x"]),
              cards=st.lists(_CARDS, max_size=4).map(tuple)),
    st.builds(cv.EndTurn, t=st.just(0.0), player=_NAMES),
)


def _states():
    ref = CarnivalReferee()
    state, out = ref.initial_state(), []
    for obs in _GAME:
        state, _ = ref.apply(state, obs)
        out.append(state)
    return out


_STATES = _states()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.integers(0, len(_GAME) - 2), observations=st.lists(_OBS, min_size=1, max_size=4))
def test_any_observation_at_any_point_never_raises(prefix, observations):
    ref = CarnivalReferee()
    state = _STATES[prefix]
    for obs in observations:
        obs = dataclasses.replace(obs, t=state.last_t)
        new, calls = ref.apply(state, obs)
        refused = [c for c in calls if isinstance(c, InvalidObservation)]
        if refused:
            assert new is state and len(calls) == 1 and refused[0].reason
        state = new
