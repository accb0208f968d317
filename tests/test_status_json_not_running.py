"""`companion status --json` when no service runs: one JSON object, exit status 3."""

from __future__ import annotations

import argparse
import json

from companion.commands import status
from companion.journal import Journal


def _status_json(journal):
    lines: list[str] = []
    rc = status.run(argparse.Namespace(journal=str(journal), timeout=0.5, json=True, config=None), out=lines.append)
    return rc, json.loads("\n".join(lines))


def test_no_journal_yet(tmp_path):
    rc, doc = _status_json(tmp_path / "journal.db")
    assert rc == status.NOT_RUNNING == 3
    assert doc["running"] is False
    assert "no companion service is listening" in doc["reason"]
    assert doc["last_session"] is None and doc["unfinished"] == []
    assert doc["error"].startswith("no journal at ")


def test_last_session_and_what_each_game_resumes(tmp_path):
    """An older Carrousel game left unfinished, a finished Carnival game last: the last session
    is the finished one with its result; the unfinished list names the Carrousel one and how it resumes."""
    path = tmp_path / "journal.db"
    with Journal(path, checkpoint_s=None) as j:
        j.start_session("carrousel", {})
        carnival = j.start_session("carnival", {})
        j.finish_session(carnival, {"phase": "over", "complete_rides": {"Ana": 2, "Ben": 1}, "winner": "Ana"})
    rc, doc = _status_json(path)
    assert rc == 3 and doc["running"] is False and doc["error"] is None
    last = doc["last_session"]
    assert last["session"] == 2 and last["game"] == "carnival" and last["finished"] is True
    assert last["summary"]["winner"] == "Ana" and last["resumes"] is None
    (unfinished,) = doc["unfinished"]
    assert unfinished["session"] == 1 and unfinished["game"] == "carrousel"
    assert unfinished["resumes"] == "it resumes when the service starts"
