"""The SQLite journal: WAL mode, append-only, sessions."""

from __future__ import annotations

import sqlite3

import pytest

from companion.games.carrousel import Claim, Penalty
from companion.journal import Journal, JournalError


def test_entries_are_kept_in_order_and_round_trip(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        s = j.start_session("carrousel", {"dead_end_s": 20.0})
        obs = Claim(t=1.0, player="Ana")
        call = Penalty(t=1.0, player="Ana", card=("black", "red", "blue"), first_three=("red", "black", "blue"))
        j.append_step(s, obs, [call])
        entries = list(j.entries(s))
    assert [(e.kind, e.type) for e in entries] == [("observation", "claim"), ("call", "penalty")]
    assert entries[0].body == obs.to_json() and entries[1].body == call.to_json()


def test_journal_uses_wal_and_is_append_only(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        s = j.start_session("carrousel", {})
        j.append(s, "observation", Claim(t=1.0, player="Ana"))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE entries SET body = '{}'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM entries")
    assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == 1


def test_unfinished_and_finished_sessions(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        a = j.start_session("carrousel", {})
        b = j.start_session("carrousel", {})
        j.finish_session(b, {"winner": "Ana"})
        assert j.unfinished("carrousel").id == a
        assert j.session(b).result == {"winner": "Ana"}
        assert j.unfinished("carnival") is None


def test_a_file_that_is_not_a_journal_is_a_clear_error(tmp_path):
    p = tmp_path / "notes.db"
    p.write_text("these are not SQLite pages " * 100)
    with pytest.raises(JournalError, match="notes.db"):
        Journal(p)


def test_a_second_service_on_the_same_journal_is_refused(tmp_path):
    """Two services writing one journal would interleave two games: the second is refused."""
    first = Journal(tmp_path / "j.db", lock=True)
    with pytest.raises(JournalError, match="in use by another `companion run`"):
        Journal(tmp_path / "j.db", lock=True)
    first.close()
    Journal(tmp_path / "j.db", lock=True).close()  # free again once the first is closed


def test_another_sqlite_database_is_not_touched(tmp_path):
    p = tmp_path / "other.db"
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE sessions (name TEXT)")
    db.commit()
    db.close()
    before = p.read_bytes()
    with pytest.raises(JournalError, match="not a journal"):
        Journal(p)
    with pytest.raises(JournalError, match="not a journal"):
        Journal(p, readonly=True)
    assert p.read_bytes() == before


def test_readonly_open_changes_nothing(tmp_path):
    p = tmp_path / "j.db"
    with Journal(p) as j:
        j.append(j.start_session("carrousel", {}), "observation", Claim(t=1.0, player="Ana"))
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(JournalError, match="not a journal"):
        Journal(empty, readonly=True)
    assert empty.read_bytes() == b""
    with Journal(p, readonly=True) as j:
        assert len(list(j.entries(1))) == 1


def test_a_damaged_entry_is_named(tmp_path):
    from companion.games.carrousel import VOCABULARY

    p = tmp_path / "j.db"
    with Journal(p) as j:
        s = j.start_session("carrousel", {})
        j._db.execute("INSERT INTO entries (session, kind, t, type, body) VALUES (?, 'observation', 1, 'x', ?)",
                      (s, '{"type":"warp","t":1}'))
        entry = next(j.entries(s))
        with pytest.raises(JournalError, match=r"entry 1 is not a valid observation: unknown observation type 'warp'"):
            j.observation(entry, VOCABULARY)
