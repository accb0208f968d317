"""The journal: every observation and call of every session, appended to SQLite as it happens.

One file (WAL mode), two tables:

* ``sessions``: one row per game played (game name, start time, the options it was started
  with, whether it has finished and how);
* ``entries``: the observations and calls, in order, as their JSON text. Triggers refuse any
  UPDATE or DELETE, so the table is append-only.

Each observation is appended together with the calls it caused, in one transaction, before
any of those calls is announced; so a process killed at any moment (SIGKILL, a crash) loses
nothing that was announced, and the journal never holds an observation without its calls.

Power cuts: with ``sync="full"`` every transaction is on the disk (fsync) before it is
announced, which costs an fsync per observation (milliseconds on an SD card). With
``sync="normal"`` (the default) commits are not synced one by one; instead a background
checkpoint every ``checkpoint_s`` seconds syncs the write-ahead log, so a power cut loses at
most that last interval, and SQLite keeps the file consistent either way. ``companion replay`` re-applies a
session's observations to a fresh referee and compares the calls with the journaled ones;
``companion run`` resumes an unfinished session the same way.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from companion.events import Event

__all__ = ["Journal", "JournalError", "Session", "Entry"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id          INTEGER PRIMARY KEY,
    game        TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    options     TEXT NOT NULL,
    finished    INTEGER NOT NULL DEFAULT 0,
    result      TEXT,
    table_settings TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS entries (
    id       INTEGER PRIMARY KEY,
    session  INTEGER NOT NULL REFERENCES sessions(id),
    kind     TEXT NOT NULL CHECK (kind IN ('observation', 'call')),
    t        REAL NOT NULL,
    type     TEXT NOT NULL,
    body     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_session ON entries(session, id);
CREATE TRIGGER IF NOT EXISTS entries_append_only_update BEFORE UPDATE ON entries
BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS entries_append_only_delete BEFORE DELETE ON entries
BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
"""


class JournalError(Exception):
    """The journal file cannot be opened or is not a journal (the message names the file)."""


@dataclass(frozen=True)
class Session:
    """One game in the journal.

    Attributes:
        id: session number.
        game: game name (``carrousel``...).
        started_at: wall-clock start, ISO 8601 UTC.
        options: the referee options it was started with.
        finished: True once it ended (a winner, or stopped by the user).
        result: a JSON-able summary when finished.
        table: the table's settings (players, simulation seed), see :meth:`Journal.set_table`.
    """

    id: int
    game: str
    started_at: str
    options: dict[str, Any]
    finished: bool
    result: Any
    table: dict[str, Any]


@dataclass(frozen=True)
class Entry:
    """One journaled message: ``kind`` is ``"observation"`` or ``"call"``; ``body`` its JSON."""

    id: int
    kind: Literal["observation", "call"]
    t: float
    type: str
    body: dict[str, Any]


class Journal:
    """An append-only SQLite journal.

    Args:
        path: the database file; its folder is created. ``":memory:"`` for tests.
        sync: ``"full"`` (an fsync per append) or ``"normal"`` (survives a crash of the
            process; a power cut loses at most the last ``checkpoint_s`` seconds).
        checkpoint_s: with ``"normal"``, seconds between background checkpoints that sync
            the log to disk; None for none.

    Raises:
        JournalError: the file cannot be created or is not a journal.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        sync: str = "normal",
        checkpoint_s: float | None = 1.0,
        readonly: bool = False,
        lock: bool = False,
    ):
        self.path = str(path)
        self._checkpointer: threading.Thread | None = None
        self._closing = threading.Event()
        self._lock_file: Any = None
        if self.path != ":memory:":
            self.path = str(Path(self.path).expanduser())
        if readonly:
            self._db = self._open_readonly()
            return
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            if lock:
                self._take_lock()
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._check_is_journal(allow_empty=True)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if sync == 'full' else 'NORMAL'}")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(sessions)")}
            if "table_settings" not in columns:  # a journal written by version 0.1.0
                self._db.execute("ALTER TABLE sessions ADD COLUMN table_settings TEXT NOT NULL DEFAULT '{}'")
        except (sqlite3.Error, OSError) as exc:
            self._release_lock()
            raise JournalError(f"{self.path}: cannot open the journal: {exc}") from None
        except JournalError:
            self._release_lock()
            raise
        if sync == "normal" and checkpoint_s and self.path != ":memory:":
            self._checkpointer = threading.Thread(
                target=self._checkpoint_loop, args=(checkpoint_s,), name="journal-checkpoint", daemon=True
            )
            self._checkpointer.start()

    def _open_readonly(self) -> sqlite3.Connection:
        """Open an existing journal without changing anything in it."""
        if not Path(self.path).is_file():
            raise JournalError(f"{self.path}: no such journal file")
        last: Exception | None = None
        for query in ("mode=ro", "mode=ro&immutable=1"):  # immutable: a read-only folder
            try:
                db = sqlite3.connect(f"file:{self.path}?{query}", uri=True, isolation_level=None,
                                     check_same_thread=False)
                self._db = db
                self._check_is_journal(allow_empty=False)
                return db
            except sqlite3.Error as exc:
                last = exc
        raise JournalError(f"{self.path}: cannot read the journal: {last}")

    def _check_is_journal(self, allow_empty: bool) -> None:
        """Refuse a database that is something else than a journal (and touch nothing)."""
        try:
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{self.path}: not a journal (not an SQLite database: {exc})") from None
        if not tables and allow_empty:
            return
        if not {"sessions", "entries"} <= tables:
            raise JournalError(
                f"{self.path}: not a journal (an SQLite database with the tables {', '.join(sorted(tables)) or 'none'})"
            )
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(sessions)")}
        if not {"id", "game", "started_at", "options", "finished", "result"} <= columns:
            raise JournalError(f"{self.path}: not a journal (its sessions table has other columns)")

    def _take_lock(self) -> None:
        """One service a journal: an exclusive lock on ``PATH.lock`` (released at exit, even
        a SIGKILL, by the kernel)."""
        import fcntl

        f = open(self.path + ".lock", "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            pid = f.read().strip() or "?"
            f.close()
            raise JournalError(
                f"{self.path}: in use by another `companion run` (process {pid}); stop it first, "
                "or give this one another --journal"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        self._lock_file = f

    def _release_lock(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def _checkpoint_loop(self, every_s: float) -> None:
        """Sync the write-ahead log to disk every ``every_s`` seconds (own connection)."""
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while not self._closing.wait(every_s):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass  # busy now: the next round will do it
        finally:
            db.close()

    def close(self) -> None:
        """Checkpoint, stop the background sync and close (appends after this raise
        sqlite3.ProgrammingError)."""
        self._closing.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
            self._checkpointer = None
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass
        self._db.close()
        self._release_lock()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions ----------------------------------------------------------------------

    def start_session(self, game: str, options: dict[str, Any]) -> int:
        """Open a new session and return its id."""
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        cur = self._db.execute(
            "INSERT INTO sessions (game, started_at, options) VALUES (?, ?, ?)",
            (game, now, json.dumps(options)),
        )
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def set_table(self, session: int, table: dict[str, Any]) -> None:
        """Record the table's settings (players, simulation seed) of a session, so that a
        restart resumes the same table."""
        self._db.execute("UPDATE sessions SET table_settings = ? WHERE id = ?", (json.dumps(table), session))

    def finish_session(self, session: int, result: Any) -> None:
        """Mark a session as ended, with a JSON-able result."""
        self._db.execute(
            "UPDATE sessions SET finished = 1, result = ? WHERE id = ?",
            (json.dumps(result), session),
        )

    def sessions(self) -> list[Session]:
        """All sessions, oldest first."""
        rows = self._db.execute(
            "SELECT id, game, started_at, options, finished, result, table_settings FROM sessions ORDER BY id"
        ).fetchall()
        return [
            Session(r[0], r[1], r[2], json.loads(r[3]), bool(r[4]), json.loads(r[5]) if r[5] else None,
                    json.loads(r[6]))
            for r in rows
        ]

    def session(self, session: int) -> Session:
        """One session by id. Raises JournalError when there is none."""
        for s in self.sessions():
            if s.id == session:
                return s
        raise JournalError(f"{self.path}: no session {session}")

    def unfinished(self, game: str) -> Session | None:
        """The most recent unfinished session of ``game`` (to resume), or None."""
        for s in reversed(self.sessions()):
            if s.game == game and not s.finished:
                return s
        return None

    # -- entries -------------------------------------------------------------------------

    def append(self, session: int, kind: Literal["observation", "call"], event: Event) -> None:
        """Append one message in its own transaction (durable when this returns)."""
        self._db.execute(
            "INSERT INTO entries (session, kind, t, type, body) VALUES (?, ?, ?, ?, ?)",
            (session, kind, event.t, event.TYPE, event.to_line()),
        )

    def append_step(self, session: int, observation: Event, calls: list[Event]) -> None:
        """Append an observation and the calls it caused in one transaction: after a crash
        the journal holds both or neither, so a replay always matches it."""
        rows = [(session, "observation", observation.t, observation.TYPE, observation.to_line())]
        rows += [(session, "call", c.t, c.TYPE, c.to_line()) for c in calls]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO entries (session, kind, t, type, body) VALUES (?, ?, ?, ?, ?)", rows
            )

    def append_many(
        self, session: int, kind: Literal["observation", "call"], events: list[Event]
    ) -> None:
        """Append several messages in one transaction."""
        if not events:
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO entries (session, kind, t, type, body) VALUES (?, ?, ?, ?, ?)",
                [(session, kind, e.t, e.TYPE, e.to_line()) for e in events],
            )

    def entries(self, session: int) -> Iterator[Entry]:
        """The session's messages in the order they were appended.

        Raises:
            JournalError: an entry whose text is not JSON (naming the entry).
        """
        cur = self._db.execute(
            "SELECT id, kind, t, type, body FROM entries WHERE session = ? ORDER BY id", (session,)
        )
        for r in cur:
            try:
                body = json.loads(r[4])
            except (ValueError, RecursionError) as exc:
                raise JournalError(f"{self.path}: entry {r[0]} of session {session} is not JSON: {exc}") from None
            yield Entry(r[0], r[1], r[2], r[3], body)

    def observation(self, entry: Entry, vocabulary: Any) -> Any:
        """Parse a journaled observation with a game's vocabulary.

        Raises:
            JournalError: the entry is not a valid observation of that game (naming it).
        """
        from companion.events import EventError

        try:
            return vocabulary.observation(entry.body)
        except EventError as exc:
            raise JournalError(f"{self.path}: entry {entry.id} is not a valid observation: {exc}") from None
