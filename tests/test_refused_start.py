"""A start that `--table hardware` refuses (a part missing: one line, exit 2) leaves no session
in the journal: `replay --list` does not show it and `status` names nothing to resume."""

from __future__ import annotations

import argparse

from companion.cli import main
from companion.commands import status
from companion.journal import Journal


def _run(tmp_path, *extra):
    return main(["--config", str(tmp_path / "companion.toml"), "run", "--game", "carrousel",
                 "--journal", str(tmp_path / "j.db"), *extra])


def _config(tmp_path, text=""):
    (tmp_path / "companion.toml").write_text("[web]\nenabled = false\n" + text)


def test_a_refused_start_on_this_machine_leaves_no_session(tmp_path, capsys):
    """Not a Raspberry Pi: the GPIO pins are refused (exit 2, one line); the journal has no
    session, `replay --list` shows none, status names no unfinished game."""
    _config(tmp_path)
    assert _run(tmp_path, "--table", "hardware") == 2
    errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("companion: error:")]
    assert len(errors) == 1 and "GPIO pins" in errors[0]
    with Journal(tmp_path / "j.db", readonly=True) as journal:
        assert journal.sessions() == []
    assert main(["replay", "--list", str(tmp_path / "j.db")]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == []
    lines: list[str] = []
    rc = status.run(argparse.Namespace(journal=str(tmp_path / "j.db"), timeout=0.5, json=False, config=None),
                    out=lines.append)
    assert rc == 3 and not any("resumes" in x for x in lines), lines


def test_a_refused_start_keeps_the_unfinished_game_and_its_number(tmp_path, capsys, mock_factory):
    """An unfinished simulated game, then a refused real start (a missing video file, mock GPIO
    pins): the unfinished game stays, alone; the next new session takes the next number."""
    _config(tmp_path)
    assert _run(tmp_path, "--speed", "1000", "--seed", "3", "--new", "--quiet-moves", "--until", "5") == 0
    _config(tmp_path, '[service]\npin_factory = "mock"\n[speech]\nenabled = false\n')
    assert _run(tmp_path, "--table", "hardware", "--new", "--camera", f"opencv:{tmp_path}/none.mp4") == 2
    with Journal(tmp_path / "j.db") as journal:
        (kept,) = journal.sessions()
        assert kept.id == 1 and not kept.finished and next(journal.entries(1), None) is not None
        assert journal.discard_session(1) is False  # it has entries: kept
        assert journal.start_session("carrousel", {}) == 2
        assert journal.discard_session(2) is True
        assert [s.id for s in journal.sessions()] == [1]
