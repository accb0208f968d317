"""`companion journal check` names every problem `companion run` refuses a journal on: a session
row whose options, result or table settings are not JSON is damaged (exit 1), and salvage copies
the journal without that row's settings so that a run goes on with it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from companion.cli import main
from companion.games import referee_for
from companion.journal import Journal

DEMO = Path(__file__).resolve().parents[1] / "docs" / "examples" / "carrousel-demo.jsonl"


def _journal(tmp_path: Path) -> Path:
    path = tmp_path / "typ.db"
    referee = referee_for("carrousel")
    state = referee.initial_state()
    with Journal(path, checkpoint_s=None) as j:
        session = j.start_session("carrousel", {}, {"players": ["Ana", "Ben"], "seed": 1})
        for line in DEMO.read_text().splitlines()[:6]:
            obs = referee.vocabulary.observation(json.loads(line))
            state, calls = referee.apply(state, obs)
            j.append_step(session, obs, calls)
    return path


def _config(tmp_path: Path) -> str:
    config = tmp_path / "companion.toml"
    config.write_text('[web]\nenabled = false\n[service]\npin_factory = "mock"\n[speech]\nenabled = false\n')
    return str(config)


@pytest.mark.parametrize("column, value, said", [
    ("options", "[1,2", "its options are not JSON"),
    ("table_settings", "{players", "its table settings are not JSON"),
    ("result", "nope", "its result is not JSON"),
])
def test_a_session_row_run_refuses_is_damaged_for_check(tmp_path, capsys, column, value, said):
    path = _journal(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE sessions SET {column} = ?", (value,))
    assert main(["journal", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "1 damaged session" in out.splitlines()[0], out
    assert f"session 1 is damaged ({said}" in out and "salvage" in out, out
    # run refuses the same journal, naming the same session
    assert main(["--config", _config(tmp_path), "run", "--journal", str(path), "--until", "1"]) != 0
    assert "session 1 is damaged" in capsys.readouterr().err
    # salvage leaves the row's settings out and keeps its entries: check passes, run resumes
    new = tmp_path / "new.db"
    assert main(["journal", "salvage", str(path), str(new)]) == 1
    capsys.readouterr()
    assert main(["journal", "check", str(new)]) == 0, capsys.readouterr().out
    with Journal(new, readonly=True) as j:
        assert [s.id for s in j.sessions()] == [1] and len(list(j.entries(1))) > 0


def test_a_whole_journal_still_checks_whole(tmp_path, capsys):
    path = _journal(tmp_path)
    assert main(["journal", "check", str(path)]) == 0
    assert "damaged session" not in capsys.readouterr().out
