"""Whole Carrossel games: random legal games to the end, their invariants (hypothesis), the
rotation calls on the simulated board, the game data file, and the command line."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.cli import main
from companion.config import validate
from companion.events import InvalidObservation
from companion.games import referee_from_config
from companion.games.carrossel import (
    DEFAULT_DATA,
    AbilityUsed,
    BoardTurned,
    BoardTurnedOk,
    CarrosselReferee,
    GameDataError,
    GameOver,
    GameStart,
    IllegalPlay,
    PlayObserved,
    Scored,
    TurnBoard,
    WrongTurn,
    check_invariants,
    final_scores,
    load_game_data,
    table_from_json,
    table_json,
)
from companion.sim.carrossel import CarrosselSimulation, generate_game

REF = CarrosselReferee()
DATA = REF.data
NAMES = ("Ana", "Ben", "Cleo", "Dev")


def run_game(observations):
    """Apply a stream; check every invariant after every observation; return (state, calls)."""
    state = REF.initial_state()
    out = []
    awarded: dict[str, list[int]] = {}
    for obs in observations:
        before = state
        state, calls = REF.apply(state, obs)
        out += calls
        if state.phase == "waiting":
            continue
        # 56 tiles conserved, one tile a slot, every client in one place (check_invariants).
        check_invariants(DATA, state)
        side = DATA.boards[state.side]
        # Standees only on free tiles at the time of scoring: an awarded tile carries exactly
        # the standees awarded on it now.
        now: dict[int, list[int]] = {}
        for c in calls:
            if isinstance(c, Scored):
                for client, where in c.awards.items():
                    cell_name, owner = where.split(">")
                    now.setdefault(side.by_name[cell_name], []).append(int(client))
                    awarded.setdefault(owner, []).append(int(client))
            if isinstance(c, AbilityUsed) and c.ability == "single_ticket":
                client = int(re.search(r"client #(\d+)", c.detail).group(1))
                awarded.setdefault(c.player, []).append(client)
                now.setdefault(side.by_name[c.detail.split(" sits on ")[1]], []).append(client)
        for cell, clients in now.items():
            assert sorted(state.standees[cell]) == sorted(clients), side.cells[cell].name
        if before.phase != "waiting":
            # A tile never changes once placed.
            assert all(b is None or b == a for b, a in zip(before.tiles, state.tiles))
    return state, out, awarded


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 4),
    ability_rate=st.sampled_from([0.0, 0.3, 1.0]),
    faults=st.booleans(),
)
def test_random_legal_games_keep_the_invariants(seed, n, ability_rate, faults):
    """END of the game is reached by every random legal game, and on the way: 56 tiles
    conserved, at most one tile per slot, standees only on free tiles when scoring, VP totals
    equal to the cards won plus the objectives."""
    rates = dict(wrong_turn_rate=0.3, uncertain_rate=0.2, illegal_play_rate=0.2) if faults else {}
    obs = generate_game(seed, NAMES[:n], ability_rate=ability_rate, **rates)
    state, calls, awarded = run_game(obs)
    assert REF.is_over(state)
    over = [c for c in calls if isinstance(c, GameOver)]
    assert len(over) == 1 and over[0] is calls[-1]
    assert not [c for c in calls if isinstance(c, InvalidObservation)]
    if not faults:
        assert not [c for c in calls if isinstance(c, (IllegalPlay, WrongTurn))]
    table = over[0].table
    for p, row in zip(state.players, table["players"]):
        assert Counter(p.won) == Counter(awarded.get(p.name, []))
        assert row["clients_vp"] == sum(DATA.clients[c].vp for c in p.won)
        assert row["total"] == row["clients_vp"] + sum(row["objectives"].values())
        assert over[0].scores[p.name] == row["total"]
    best = max((r["total"], r["clients"], r["standees"]) for r in table["players"])
    assert set(over[0].winners) == {
        r["player"] for r in table["players"] if (r["total"], r["clients"], r["standees"]) == best
    }


def test_simulated_game_is_deterministic():
    """The simulated table: the same seed gives the same stream."""
    a = [o.to_line() for o in generate_game(11, NAMES[:3], wrong_turn_rate=0.5)]
    b = [o.to_line() for o in generate_game(11, NAMES[:3], wrong_turn_rate=0.5)]
    c = [o.to_line() for o in generate_game(12, NAMES[:3], wrong_turn_rate=0.5)]
    assert a == b and a != c


@pytest.mark.parametrize("n", [2, 3, 4])
def test_rotation_calls_on_the_simulated_board(n):
    """Phase 3 - Rotate on the simulated board: every wrongly turned board is called, then the
    correct turn is accepted; uncertain readings are not judged."""
    sim = CarrosselSimulation(seed=5, players=NAMES[:n], wrong_turn_rate=1.0, uncertain_rate=1.0)
    obs = list(sim.observations())
    _, calls, _ = run_game(obs)
    turns = [c for c in calls if isinstance(c, TurnBoard)]
    wrong = [c for c in calls if isinstance(c, WrongTurn)]
    ok = [c for c in calls if isinstance(c, BoardTurnedOk)]
    uncertain = [o for o in obs if isinstance(o, BoardTurned) and o.uncertain]
    assert turns and len(wrong) == len(turns) and len(uncertain) == len(turns)
    assert len(ok) == len(turns)  # every turn asked for is finally made and accepted
    for w in wrong:
        assert w.reason in ("wrong_direction", "wrong_amount")
    if n == 2:
        assert all(abs(t.turn_deg) == 180 for t in turns)


def test_table_file_round_trip_gives_the_same_scores():
    """companion score reads back the table the engine writes, to the same final scores."""
    state, calls, _ = run_game(generate_game(3, NAMES))
    again = table_from_json(DATA, json.loads(json.dumps(table_json(DATA, state))))
    assert final_scores(DATA, again) == calls[-1].table


# ------------------------------------------------------------------------- the data file


def test_changing_the_data_file_changes_the_game(tmp_path):
    """calibration/carrossel.toml is the game: another first-round rule, without code."""
    text = DEFAULT_DATA.read_text(encoding="utf-8").replace(
        "first_round = [4, 5, 9, 10]", "first_round = [1, 2]"
    )
    path = tmp_path / "carrossel.toml"
    path.write_text(text, encoding="utf-8")
    ref = CarrosselReferee(data=str(path))
    state, _ = ref.apply(ref.initial_state(), GameStart(t=0, players=NAMES, seed=1))
    _, calls = ref.apply(state, PlayObserved(t=1, player="Ana", slot=1, animals=("fish",)))
    assert not [c for c in calls if isinstance(c, IllegalPlay)]
    _, calls = REF.apply(
        REF.apply(REF.initial_state(), GameStart(t=0, players=NAMES, seed=1))[0],
        PlayObserved(t=1, player="Ana", slot=1, animals=("fish",)),
    )
    assert [c for c in calls if isinstance(c, IllegalPlay)]


def test_bad_data_file_names_the_key(tmp_path):
    """A wrong value in the data file is an error naming the file and the key."""
    path = tmp_path / "bad.toml"
    path.write_text(
        DEFAULT_DATA.read_text(encoding="utf-8").replace('animal = "dragon"', 'animal = "unicorn"'),
        encoding="utf-8",
    )
    with pytest.raises(GameDataError, match=r"bad.toml: \[clients\] card 37.*animal"):
        load_game_data(path)
    with pytest.raises(GameDataError, match="cannot read"):
        load_game_data(tmp_path / "missing.toml")


def test_geometry_of_the_shipped_board():
    """Game Components: 4 sectors of 12 numbered slots; the 3-player side has 12 un-numbered."""
    four, three = DATA.boards["four"], DATA.boards["three"]
    assert len(four.cells) == 48 and all(c.slot is not None for c in four.cells)
    assert sum(1 for c in three.cells if c.slot is None) == 12 and len(three.sectors) == 3
    assert len(DATA.clients) == 37 and len(DATA.objectives) == 14
    assert {o.kind for o in DATA.objectives.values()} == {
        "clients_set",
        "clients_three",
        "clients_pair",
        "tiles_line",
        "tiles_diagonal",
        "tiles_l",
    }
    assert sum(DATA.per_colour.values()) * 4 == 56


def test_configuration_section_reaches_the_referee(tmp_path):
    """[carrossel] keys are the referee's options."""
    cfg = validate({"carrossel": {"turn_tolerance_deg": 10.0}})
    ref = referee_from_config("carrossel", cfg)
    assert ref.turn_tolerance_deg == 10.0


# ---------------------------------------------------------------------- the command line


def write_game(tmp_path: Path, seed: int = 3) -> Path:
    path = tmp_path / "game.jsonl"
    path.write_text(
        "\n".join(o.to_line() for o in generate_game(seed, NAMES)) + "\n", encoding="utf-8"
    )
    return path


def test_cli_referee_carrossel_events(tmp_path, capsys):
    """companion referee carrossel --events: JSON Lines in, the calls out, ending game_over."""
    path = write_game(tmp_path)
    assert main(["referee", "carrossel", "--events", str(path)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "game_started" and lines[-1]["type"] == "game_over"
    assert not [x for x in lines if x["type"] == "invalid_observation"]


def test_cli_score_prints_the_table(tmp_path, capsys):
    """companion score carrossel STATE.json prints every objective, the totals and the winner."""
    state, calls, _ = run_game(generate_game(3, NAMES))
    path = tmp_path / "end.json"
    path.write_text(json.dumps(table_json(DATA, state)), encoding="utf-8")
    assert main(["score", "carrossel", str(path)]) == 0
    out = capsys.readouterr().out
    for oid in state.objectives:
        assert f"#{oid} " in out
    winner = calls[-1].winners[0]
    assert f"*{winner}" in out
    assert main(["score", "carrossel", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == calls[-1].table
    assert main(["score", "carrossel", "--events", str(write_game(tmp_path))]) == 0
    assert f"*{winner}" in capsys.readouterr().out


def test_cli_score_rejects_a_broken_state_file(tmp_path, capsys):
    """Bad input: a state file that breaks the invariants is a one-line error naming the field
    (exit 2), never a traceback or a silent repair."""
    path = tmp_path / "end.json"
    path.write_text(
        json.dumps(
            {
                "players": [
                    {"name": "Ana", "colour": "red", "won": [6]},
                    {"name": "Ben", "colour": "blue", "won": [6]},
                ],
                "objectives": [1, 2, 3, 4],
            }
        )
    )
    assert main(["score", "carrossel", str(path)]) == 2
    err = capsys.readouterr().err
    assert "end.json: players: client(s) [6] won by two players" in err and "Traceback" not in err
    path.write_text("{not json")
    assert main(["score", "carrossel", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_legal_plays_and_can_play_agree_through_a_game():
    """Phase 1 - Play / END of the game: at every round start each player's list of legal
    plays is non-empty exactly when the engine says they can play, and every listed play is
    accepted while a play on an occupied slot is not (python-chess style: legal_moves and
    is_legal agree)."""
    from companion.games.carrossel import can_play, check_play, legal_plays, placement

    state = REF.initial_state()
    checked = 0
    for obs in generate_game(8, NAMES[:3], ability_rate=0.5):
        if state.phase == "play" and not state.plays:
            for p in state.players:
                plays = legal_plays(DATA, state, p.name)
                assert bool(plays) == can_play(DATA, state, p.name)
                assert all(check_play(DATA, state, x) is None for x in plays)
                occupied = [
                    s for s in p.slots if isinstance(placement(DATA, state, p.name, s, False), str)
                ]
                assert not [x for x in plays if x.slot in occupied and x.ability is None]
                checked += 1
        state, _ = REF.apply(state, obs)
    assert checked >= 9


def test_summary_is_json_and_names_the_sectors():
    """The status view: phase, round, VP, sectors in front of each player, direction."""
    obs = generate_game(4, NAMES)
    state = REF.initial_state()
    for o in obs[:3]:
        state, _ = REF.apply(state, o)
    summary = json.loads(json.dumps(REF.summary(state)))
    assert summary["phase"] == "play" and summary["sectors"]["Ana"] == ["A"]
    assert summary["waiting_for"] == ["Cleo", "Dev"] and REF.next_deadline(state) is None


def test_journaled_game_replays_exactly(tmp_path):
    """A Carrossel session in the SQLite journal replays to the same calls."""
    from companion.commands.replay import replay_session
    from companion.journal import Journal

    with Journal(tmp_path / "j.db") as journal:
        sid = journal.start_session("carrossel", {})
        state = REF.initial_state()
        for obs in generate_game(6, NAMES[:2], wrong_turn_rate=0.5):
            journal.append(sid, "observation", obs)
            state, calls = REF.apply(state, obs)
            for c in calls:
                journal.append(sid, "call", c)
        result = replay_session(journal, journal.session(sid))
    assert result.identical and result.calls[-1]["type"] == "game_over"


def test_cli_bad_game_data_file_is_one_line(tmp_path, capsys):
    """A configured data file that cannot be read is a one-line error (exit 2)."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('[carrossel]\ndata = "/nonexistent/carrossel.toml"\n', encoding="utf-8")
    events = write_game(tmp_path)
    assert main(["--config", str(cfg), "referee", "carrossel", "--events", str(events)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("companion: error: /nonexistent/carrossel.toml: cannot read")
        and "Traceback" not in err
    )


def test_simulated_table_is_a_scheduled_source():
    """The simulated table serves a whole game through start / next_time / advance on a
    manual clock, at the stream's times shifted to the start."""
    from companion.clock import ManualClock
    from companion.sim.carrossel import SimulatedCarrosselTable

    clock = ManualClock(origin=100.0)
    table = SimulatedCarrosselTable(seed=4, players=NAMES[:3])
    got = []
    table.start(got.append, clock)
    while (t := table.next_time()) is not None:
        clock.set(t)
        table.advance(clock.now())
    expected = generate_game(4, NAMES[:3])
    assert [o.t - 100.0 for o in got] == pytest.approx([o.t for o in expected])
    assert [o.type for o in got] == [o.type for o in expected]
    state, calls, _ = run_game([o for o in got])
    assert REF.is_over(state)
    table.stop()
    assert table.next_time() is None
