"""The simulated Monsieur Carrousel table: seeded, playable to a win or a loss, with faults."""

from __future__ import annotations

from collections import Counter

import pytest

from companion.clock import ManualClock
from companion.games.monsieur_carrousel import MonsieurCarrouselReferee, Turn, expected_observations
from companion.sim.monsieur_carrousel import MonsieurCarrouselTable, SimSettings, simulate

REF = MonsieurCarrouselReferee()


def lines(result):
    return [o.to_line() for o in result.observations]


def test_same_seed_same_game_other_seed_other_game():
    a = simulate(REF, SimSettings(seed=7))
    b = simulate(REF, SimSettings(seed=7))
    c = simulate(REF, SimSettings(seed=8))
    assert lines(a) == lines(b) and lines(a) != lines(c)
    assert [x.to_line() for x in a.calls] == [x.to_line() for x in b.calls]


def test_good_memory_and_fitting_fragments_win():
    r = simulate(REF, SimSettings(seed=2, memory=1.0, fit_rate=1.0, short_spin_rate=0.0))
    assert r.result == "won" and r.calls[-1].type == "game_won"
    assert r.state.seated == 12


def test_no_memory_and_no_fitting_fragment_lose():
    # seed 0: a game of luck can still be won (seeds 2 and 9 are, with the finger at board angle 0)
    r = simulate(MonsieurCarrouselReferee(layout="5B"), SimSettings(seed=0, memory=0.0, fit_rate=0.0, layout="5B"))
    assert r.result == "lost" and r.calls[-1].type == "game_lost"
    assert r.state.raindrops == 8 and r.state.seated < 12


def test_stream_is_valid_for_the_engine_with_every_fault_injected():
    """Faults: unreadable die, YES+NO together, a jammed spin, a misread seat; the engine
    answers each (roll_again, answer_again, spin_again no_stop, seats_mismatch) and every
    game still ends."""
    seen = Counter()
    results = Counter()
    for seed in range(12):
        r = simulate(REF, SimSettings(seed=seed, unreadable_die_rate=0.1, both_buttons_rate=0.2,
                                      stuck_spin_rate=0.1, misread_seats_rate=0.2))
        results[r.result] += 1
        seen.update(c.type for c in r.calls)
        seen.update(f"again:{c.reason}" for c in r.calls if c.type == "spin_again")
        assert seen["invalid_observation"] == 0
        times = [o.t for o in r.observations]
        assert times == sorted(times)
    for kind in ("roll_again", "answer_again", "again:no_stop", "again:short", "seats_mismatch", "memory_guess",
                 "twins_help"):
        assert seen[kind] > 0, kind
    assert set(results) <= {"won", "lost"} and sum(results.values()) == 12


def test_button_only_table_seats_the_suggested_seat():
    r = simulate(REF, SimSettings(seed=4, seat_by="button"))
    assert r.result in ("won", "lost")
    assert not [o for o in r.observations if o.type == "kid_seated"]
    last_suggested = None
    for c in r.calls:
        if c.type == "seat_kid":
            last_suggested = c.seat
        elif c.type == "kid_seated":
            assert c.seat == last_suggested
    assert [c.type for c in r.calls].count("kid_seated") == r.state.seated


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="fit_rate"):
        SimSettings(fit_rate=2)
    with pytest.raises(ValueError, match="unknown layout"):
        MonsieurCarrouselTable(SimSettings(layout="7C"))


def test_scheduled_source_emits_when_advanced_and_answers_calls():
    """The table as a scheduled source: game_start at the start, a die after a turn call."""
    got = []
    table = MonsieurCarrouselTable(SimSettings(seed=3, unreadable_die_rate=0.0))
    table.start(got.append, ManualClock(2.0))
    assert table.next_time() == 2.0 and got == []
    table.advance(2.0)
    assert got[0].type == "game_start" and got[0].players == ("Ana", "Ben", "Cleo") and got[0].t == 2.0
    assert table.next_time() is None
    table.announce(Turn(t=2.0, player="Ana", number=1, kids_left=12))
    due = table.next_time()
    assert due > 2.0
    table.advance(due - 0.01)
    assert len(got) == 1
    table.advance(due)
    assert got[1].type == "die_rolled" and got[1].colour in REF.table.die_colours and got[1].t == due
    table.stop()
    table.announce(Turn(t=due, player="Ben", number=2, kids_left=12))
    table.advance(1e9)
    assert len(got) == 2  # stopped: nothing more is emitted


def test_resume_continues_from_the_engines_phase():
    r = simulate(REF, SimSettings(seed=5))
    # replay the first half of the game, then resume a fresh table on that state
    state = REF.initial_state()
    half = r.observations[: len(r.observations) // 2]
    for obs in half:
        state, _ = REF.apply(state, obs)
    got = []
    table = MonsieurCarrouselTable(SimSettings(seed=99))
    table.resume(state, half[-1].t + 0.5)
    table.start(got.append, ManualClock(half[-1].t + 0.5))
    table.advance(1e9)
    assert got and got[0].type != "game_start"
    assert {o.type for o in got} <= set(expected_observations(state)) | {"seats_seen"}


def test_table_stops_playing_when_the_game_ends():
    from companion.games.monsieur_carrousel import GameWon, KidOnSeat

    got = []
    table = MonsieurCarrouselTable(SimSettings(seed=3))
    table.start(got.append, ManualClock())
    table.announce(KidOnSeat(t=1.0, player="Ana", kid="Lulu", seat=1, colour="red", picture="lion", seated=12))
    table.announce(Turn(t=1.0, player="Ben", number=2, kids_left=0))
    assert table.next_time() is not None
    table.announce(GameWon(t=1.0, raindrops=1, turns=12))
    assert table.next_time() is None
    table.announce(Turn(t=2.0, player="Ben", number=3, kids_left=0))
    assert table.next_time() is None
