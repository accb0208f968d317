"""`companion replay --list`: the result column of a finished game of every game."""

from __future__ import annotations

import pytest

from companion.cli import main
from companion.journal import Journal


@pytest.mark.parametrize("game,expected", [
    ("carrousel", "winner "),
    ("monsieur-carrousel", "the table "),
    ("carrossel", "winner"),
    ("carnival", "winner "),
])
def test_a_finished_game_shows_its_result(tmp_path, capsys, game, expected):
    """Each game's simulated table played to its end at full speed, then listed: the result
    column names the outcome (a winner and the scores, or the whole table's win or loss)."""
    path = tmp_path / "j.db"
    config = tmp_path / "companion.toml"
    config.write_text("[web]\nenabled = false\n")  # no port of this machine's to share with other tests
    assert main(["--config", str(config), "run", "--game", game, "--speed", "1000", "--seed", "3", "--journal", str(path), "--new",
                 "--quiet-moves", "--next-game", "exit"]) == 0
    with Journal(path, readonly=True) as journal:
        (session,) = journal.sessions()
        assert session.finished
    capsys.readouterr()
    assert main(["replay", "--list", str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert game in row and "finished" in row
    result = row.split("finished", 1)[1].strip()
    assert result.startswith(expected), row
    if game == "monsieur-carrousel":
        assert "sunbeams" in result and "raindrops" in result
    else:
        assert any(ch.isdigit() for ch in result), row  # the scores (complete rides for Carnival)
