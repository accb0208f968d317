"""`enter --status` names the game's own players: those of its ``game_start``, not the table's
configured four (a real Carrossel table started with Ana and Ben listed Cleo and Dev too)."""

from __future__ import annotations

from types import SimpleNamespace

from companion.commands.run import _players_in_play
from companion.games import referee_for


def test_the_status_lists_the_players_of_the_game_start_not_the_configured_ones():
    referee = referee_for("carrossel")
    configured = ["Ana", "Ben", "Cleo", "Dev"]
    waiting = SimpleNamespace(state=referee.initial_state(), players=configured)
    assert _players_in_play(waiting) == configured  # no game_start yet: the table's own
    vocabulary = referee.vocabulary
    state, _ = referee.apply(referee.initial_state(), vocabulary.observation(
        {"type": "game_start", "t": 0.0, "players": ["Ana", "Ben"], "seed": 1}))
    assert _players_in_play(SimpleNamespace(state=state, players=configured)) == ["Ana", "Ben"]


def test_every_game_state_gives_its_players_names():
    for game, start in (("carrousel", {"spaces": ["empty", "green", "blue", "yellow", "black", "red", "empty"],
                                       "seed": 3}),
                        ("monsieur-carrousel", {"layout": "1A"})):
        referee = referee_for(game)
        state, calls = referee.apply(referee.initial_state(), referee.vocabulary.observation(
            {"type": "game_start", "t": 0.0, "players": ["Zoe", "Yann"], **start}))
        assert _players_in_play(SimpleNamespace(state=state, players=["A", "B", "C"])) == ["Zoe", "Yann"], game
