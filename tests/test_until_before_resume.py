"""`companion run --until S` on a resumed game already past S: one line says so, nothing is
played and the journal keeps the game as it was (it once ended in silence, "stopped at t=101.4 s")."""

from __future__ import annotations

from pathlib import Path

from companion.cli import main
from companion.journal import Journal


def _config(tmp_path: Path) -> str:
    config = tmp_path / "companion.toml"
    config.write_text('[web]\nenabled = false\n[service]\npin_factory = "mock"\n[speech]\nenabled = false\n')
    return str(config)


def test_until_before_the_resumed_games_time_is_said_and_plays_nothing(tmp_path, capsys):
    journal = tmp_path / "j.db"
    args = ["--config", _config(tmp_path), "run", "--journal", str(journal), "--speed", "1000", "--quiet-moves"]
    assert main([*args, "--new", "--until", "40"]) == 0
    capsys.readouterr()
    with Journal(journal, readonly=True) as j:
        before = len(list(j.entries(j.sessions()[-1].id)))
    assert main([*args, "--until", "5"]) == 0
    err = capsys.readouterr().err
    assert "companion: --until 5: the resumed game of session 1 is already at t=" in err
    assert "nothing was played (give a later time, or --new)" in err
    with Journal(journal, readonly=True) as j:
        session = j.sessions()[-1]
        assert session.id == 1 and not session.finished
        assert len(list(j.entries(session.id))) == before
