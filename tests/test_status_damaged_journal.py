"""`companion status` (no service running) says what `companion run` will do with a damaged
journal: run refuses to resume an unfinished game whose entries are lost or damaged ("cannot be
resumed exactly"), so status says that, with the same damage (the same check,
:func:`companion.service.resume_damage`) and the `companion journal check` / `salvage` commands,
where it said "unfinished: it resumes when the service starts"."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
from pathlib import Path

import pytest

from companion.cli import main
from companion.commands import status
from companion.games import referee_for
from companion.journal import Journal, JournalError
from companion.service import open_session
from tests.test_journal_check_sessions import _config, _journal
from tests.test_journal_faults import _killed_copy
from tests.test_status_resumes import DEMO, _played


def _drop_entry(path: Path, entry: int) -> None:
    """One entry gone from the middle of the journal (its page lost), the rest as it was."""
    with sqlite3.connect(path) as db:
        trigger = db.execute("SELECT sql FROM sqlite_master WHERE name = 'entries_append_only_delete'").fetchone()[0]
        db.execute("DROP TRIGGER entries_append_only_delete")
        db.execute("DELETE FROM entries WHERE id = ?", (entry,))
        db.execute(trigger)


def _middle_lost(tmp_path: Path) -> Path:
    path = _journal(tmp_path)
    _drop_entry(path, 5)
    return path


def _wal_deleted(tmp_path: Path) -> Path:
    path = _killed_copy(tmp_path)
    os.remove(str(path) + "-wal")
    return path


def _status(path: Path) -> tuple[int, list[str]]:
    lines: list[str] = []
    rc = status.run(argparse.Namespace(journal=str(path), timeout=0.5, json=False, config=None), out=lines.append)
    return rc, lines


@pytest.mark.parametrize("damaged", [_middle_lost, _wal_deleted])
def test_status_says_run_will_not_resume_a_damaged_game(tmp_path, capsys, damaged):
    path = damaged(tmp_path)
    rc, lines = _status(path)
    assert rc == 3
    said = [line for line in lines if line.startswith(f"last game in {path}: session ")]
    assert len(said) == 1 and "resumes when the service starts" not in "\n".join(lines), lines
    head, _, how = said[0].partition(" UTC, unfinished: ")
    assert how.startswith("it cannot be resumed exactly: ") and "`companion run` refuses to resume it" in how, how
    assert f"`companion journal check {path}`" in how and f"`companion journal salvage {path} " in how, how
    damage = how.removeprefix("it cannot be resumed exactly: ").split("; `companion run` refuses")[0]
    assert "lost" in damage and damage[0].isdigit(), damage

    # run refuses the same game, naming the same damage
    assert main(["--config", _config(tmp_path), "run", "--journal", str(path), "--until", "1"]) == 2
    err = capsys.readouterr().err
    assert f"cannot be resumed exactly: {damage}; " in err, err

    state = status.journal_state(path)
    assert state["last_session"]["damage"] == damage
    assert [u["damage"] for u in state["unfinished"]] == [damage]
    assert json.dumps(state)  # still JSON-ready for status --json


def test_only_the_damaged_game_is_said_to_be_refused(tmp_path):
    """The damage of one game's entries does not stop another game's resume, in run or status."""
    path = tmp_path / "journal.db"
    with Journal(path, checkpoint_s=None) as j:
        _played(j, "carrousel", [json.loads(x) for x in DEMO.read_text().splitlines()[:8]])
        _played(j, "monsieur-carrousel", [{"type": "game_start", "t": 0.0, "players": ["Zoe", "Yann"]}])
    _drop_entry(path, 4)  # a Carrousel entry
    rc, lines = _status(path)
    assert lines[1].endswith(" UTC, unfinished: it resumes when the service starts"), lines  # Monsieur Carrousel
    assert lines[-1].startswith("unfinished Carrousel game: session 1, started ")
    assert "; it cannot be resumed exactly: 1 entry lost " in lines[-1], lines[-1]
    state = status.journal_state(path)
    assert {u["game"]: u["damage"] is None for u in state["unfinished"]} == {
        "carrousel": False, "monsieur-carrousel": True}
    with Journal(path) as j:  # what run does with each game
        assert open_session(referee_for("monsieur-carrousel"), j, {}, {}).resumed
        with pytest.raises(JournalError, match="cannot be resumed exactly: 1 entry lost "):
            open_session(referee_for("carrousel"), j, {}, {})
