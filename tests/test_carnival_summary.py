"""Carnival's summary for the views (companion/games/carnival.py ``summary``): the roll waiting
for the player to choose two of its three dice is in it (``rolled``), and the table page shows it
(companion/web/static/table.js) rather than "dice —"."""

from __future__ import annotations

from pathlib import Path

from companion.games.carnival import Assign, CarnivalReferee, GameStart, Roll

REF = CarnivalReferee()


def _started():
    state, _ = REF.apply(REF.initial_state(), GameStart(t=0.0, players=("Ana", "Ben"),
                                                        discard=("swings:lights", "swings:seats")))
    return state


def test_the_roll_to_choose_from_is_in_the_summary_until_two_dice_are_assigned():
    state = _started()
    assert REF.summary(state)["rolled"] == [] and REF.summary(state)["dice"] == []
    state, calls = REF.apply(state, Roll(t=1.0, player="Ana", dice=(2, 5, 6)))
    s = REF.summary(state)
    assert s["step"] == "assign" and s["rolled"] == [2, 5, 6] and s["dice"] == []
    state, calls = REF.apply(state, Assign(t=2.0, player="Ana", dice=(5, 2)))
    assert not [c for c in calls if c.TYPE == "invalid_observation"], calls
    s = REF.summary(state)
    assert s["step"] == "actions" and s["rolled"] == [] and sorted(s["dice"]) == [2, 5]


def test_three_of_a_kind_needs_no_choice():
    state, _ = REF.apply(_started(), Roll(t=1.0, player="Ana", dice=(4, 4, 4)))
    s = REF.summary(state)
    assert s["rolled"] == [] and s["dice"] == [4, 4, 4]


def test_the_table_page_shows_the_roll_to_choose_from():
    js = (Path(__file__).resolve().parents[1] / "companion" / "web" / "static" / "table.js").read_text(encoding="utf-8")
    panel = js[js.index('} else if (game === "carnival")'):]
    panel = panel[: panel.index("tick();")]
    assert "s.rolled" in panel and "choose two" in panel
