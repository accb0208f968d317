"""The journal: every observation and call of every session, appended to SQLite as it happens.

One file (WAL mode), two tables:

* ``sessions``: one row per game played (game name, start time, the options it was started
  with, the table's settings, whether it has finished and how), written in one transaction;
* ``entries``: the observations and calls, in order, as their JSON text. Triggers refuse any
  UPDATE or DELETE, so the table is append-only. An ``arrival`` entry is an observation that
  came in and waits in the service's jitter buffer (camera mode); the ``observation`` entry
  that applies it later names it (column ``arrival``), so a restart applies exactly the
  arrivals that were still waiting.

Each observation is appended together with the calls it caused, in one transaction, before
any of those calls is announced; so a process killed at any moment (SIGKILL, a crash) loses
nothing that was announced, and the journal never holds an observation without its calls.

Sequence and checksum chain: an entry's ``id`` is its sequence number (1, 2, 3... over the
whole journal) and ``chain`` is ``sha256(chain of the entry before, the entry's fields)``
(first 32 hex digits, :func:`entry_chain`). After every commit the last sequence number,
its session and chain go to the tail file ``PATH.tail`` (80 bytes, rewritten in place). So a
write-ahead log that is deleted or damaged (its frames past the damage are dropped by SQLite)
shows as entries missing between the database's last entry and the tail; a damaged entry
fails its checksum; a gap inside the sequence is a loss. :mod:`companion.journal_check` finds
and names them; ``companion replay`` and a resume refuse to call such a session complete.
A service that opens a journal whose tail is ahead of it goes on numbering after the tail,
so the loss stays visible as a gap for good.

Schema creation is one transaction (a kill during the very first start leaves no table or
every table), and a journal left half-made by an older version (some of its tables, no
other) is finished, not refused.

A full disk (or any write error) does not stop the game: :meth:`Journal.append_step` keeps the
entries in memory (``backlog``) and returns False; each later append tries to write the
backlog first, in order, and the entries keep their sequence numbers and checksums. The
service tells the table once (``part_lost``, part ``journal``) and again when it is back.

Power cuts: with ``sync="full"`` every transaction is on the disk (fsync) before it is
announced, which costs an fsync per observation (milliseconds on an SD card). With
``sync="normal"`` (the default) commits are not synced one by one; instead a background
checkpoint every ``checkpoint_s`` seconds syncs the write-ahead log and the tail, so a power
cut loses at most that last interval, and the loss is named (the tail is ahead). ``companion
replay`` re-applies a session's observations to a fresh referee and compares the calls with
the journaled ones; ``companion run`` resumes an unfinished session the same way.

Sources: SQLite documentation "Write-Ahead Logging" (sections 2.3 checkpointing, 5 read-only
databases) and "How To Corrupt An SQLite Database File" (section 1.4, a deleted hot journal).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from companion.events import Event

__all__ = ["Journal", "JournalError", "Session", "Entry", "Tail", "entry_chain", "read_tail", "DAMAGED_HINT"]

log = logging.getLogger("companion.journal")

_SESSIONS = """CREATE TABLE IF NOT EXISTS sessions (
    id          INTEGER PRIMARY KEY,
    game        TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    options     TEXT NOT NULL,
    finished    INTEGER NOT NULL DEFAULT 0,
    result      TEXT,
    table_settings TEXT NOT NULL DEFAULT '{}'
)"""
_ENTRIES = """CREATE TABLE IF NOT EXISTS {name} (
    id       INTEGER PRIMARY KEY,
    session  INTEGER NOT NULL REFERENCES sessions(id),
    kind     TEXT NOT NULL CHECK (kind IN ('observation', 'call', 'arrival')),
    t        REAL NOT NULL,
    type     TEXT NOT NULL,
    body     TEXT NOT NULL,
    arrival  INTEGER,
    chain    TEXT
)"""
_INDEX_AND_TRIGGERS = (
    "CREATE INDEX IF NOT EXISTS entries_by_session ON entries(session, id)",
    "CREATE TRIGGER IF NOT EXISTS entries_append_only_update BEFORE UPDATE ON entries "
    "BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS entries_append_only_delete BEFORE DELETE ON entries "
    "BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END",
)
_TABLES = {"sessions", "entries"}
_SESSION_COLUMNS = {"id", "game", "started_at", "options", "finished", "result"}
_ENTRY_COLUMNS = {"id", "session", "kind", "t", "type", "body"}
_INSERT = "INSERT INTO entries (id, session, kind, t, type, body, arrival, chain) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_TAIL_BYTES = 80
#: What SQLite raises on a damaged file (a damaged schema's text reaches Python as bytes that
#: are not UTF-8, in the error message itself).
_DAMAGE = (sqlite3.DatabaseError, UnicodeDecodeError)

#: Appended to every message about a damaged journal.
DAMAGED_HINT = ("`companion journal check {path}` lists what is intact; "
                "`companion journal salvage {path} NEW.db` keeps it")


def _text(raw: bytes) -> str:
    """SQLite text -> str; bytes that are not UTF-8 (a flipped bit) survive as surrogates, so
    the checksum of the damaged text is computed over the bytes really stored."""
    return raw.decode("utf-8", "surrogateescape")


class JournalError(Exception):
    """The journal file cannot be opened, is not a journal, or is damaged (the message names
    the file and what to do)."""


def entry_chain(prev: str, id: int, session: int, kind: str, t: float, type: str, body: str,
                arrival: int | None) -> str:
    """The checksum of one entry, chained to the one before.

    Args:
        prev: the ``chain`` of the entry before it in the journal ("" for the first, or after
            an entry written before checksums existed).
        id, session, kind, t, type, body, arrival: the entry's columns (``t`` in seconds).

    Returns:
        32 lowercase hex digits (the first 128 bits of SHA-256, FIPS 180-4).
    """
    text = "\x1e".join((prev, str(int(id)), str(int(session)), kind, repr(float(t)), type, body,
                        "" if arrival is None else str(int(arrival))))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass(frozen=True)
class Tail:
    """What the tail file ``PATH.tail`` says: the last entry committed, its session, its chain."""

    seq: int
    session: int
    chain: str


def read_tail(path: str) -> Tail | None:
    """Read ``PATH.tail`` (the journal's ``path``); None when there is none or it is unreadable.

    Never follows a symbolic link (O_NOFOLLOW).
    """
    try:
        fd = os.open(path + ".tail", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = os.read(fd, _TAIL_BYTES)
    finally:
        os.close(fd)
    if not raw.strip():
        return None  # made, nothing committed yet
    try:
        seq, session, chain = raw.decode("ascii").split()
        return Tail(int(seq), int(session), chain)
    except (ValueError, UnicodeDecodeError):
        log.warning("%s.tail: damaged (%r); the end of the journal cannot be checked", path, raw[:40])
        return None


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
        table: the table's settings (players, simulation seed), see :meth:`Journal.start_session`.
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
    """One journaled message.

    Attributes:
        id: its sequence number in the journal.
        kind: ``"observation"``, ``"call"`` or ``"arrival"`` (an observation waiting in the
            jitter buffer, see the module text).
        t: session time, seconds.
        type: the message's type (``claim``, ``penalty``...).
        body: its JSON, parsed.
        arrival: for an observation applied from the jitter buffer, the id of its arrival.
    """

    id: int
    kind: Literal["observation", "call", "arrival"]
    t: float
    type: str
    body: dict[str, Any]
    arrival: int | None = None


class Journal:
    """An append-only SQLite journal with a sequence and checksum chain.

    Args:
        path: the database file; its folder is created. ``":memory:"`` for tests.
        sync: ``"full"`` (an fsync per append) or ``"normal"`` (survives a crash of the
            process; a power cut loses at most the last ``checkpoint_s`` seconds).
        checkpoint_s: with ``"normal"``, seconds between background checkpoints that sync
            the log to disk; None for none.
        readonly: open an existing journal without writing anything (not even in its folder:
            a read-only folder works, the write-ahead log included).
        lock: take the service's lock ``PATH.lock`` (never following a symbolic link).

    Attributes:
        backlog: entries kept in memory because the disk refused them (full disk).
        problem: the last write error while there is a backlog, else None.
        loss_at_open: a line naming entries found lost when the journal was opened, or None.
        index_rebuilt: a line saying the index of entries by session was found damaged and
            rebuilt from the entries themselves (nothing lost), or None.

    Raises:
        JournalError: the file cannot be created, is not a journal, or is damaged.
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
        self.sync = sync
        self.readonly = readonly
        self._checkpointer: threading.Thread | None = None
        self._closing = threading.Event()
        self._lock_fd: int | None = None
        self._tail_fd: int | None = None
        self._copy_dir: str | None = None
        self._backlog: list[tuple[Any, ...]] = []
        self.problem: str | None = None
        self.loss_at_open: str | None = None
        self.index_rebuilt: str | None = None
        self._index_damaged = False
        self.end_unchecked: str | None = None  # see losses()
        self._next_seq = 1
        self._next_session = 1
        self._prev_chain = ""
        if self.path != ":memory:":
            expanded = os.path.expanduser(self.path)
            if expanded.startswith("~"):
                user = expanded.split("/", 1)[0]
                raise JournalError(f"{self.path}: {user} is not a user of this machine (expected the journal's path)")
            self.path = expanded
        if self.path != ":memory:" and os.path.isdir(self.path):
            raise JournalError(f"{self.path}: a folder, not a journal file (expected a file such as "
                               f"{os.path.join(self.path, 'journal.db')})")
        if readonly:
            self._db = self._open_readonly()
            return
        try:
            if self.path != ":memory:":
                folder = Path(self.path).parent
                blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
                if blocker is not None and not blocker.is_dir():
                    raise JournalError(f"{self.path}: {blocker} is a file, not a folder "
                                       "(expected the folder the journal lives in)")
                folder.mkdir(parents=True, exist_ok=True)
            if lock:
                self._take_lock()
            self._db = self._connect(self.path)
            self._check_is_journal(allow_empty=True)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if sync == 'full' else 'NORMAL'}")
            self._finish_schema()
            if not self._index_agrees():
                self.rebuild_index("it holds another number of rows than the entries table")
            self._open_tail()
        except sqlite3.OperationalError as exc:
            self._release_lock()
            raise JournalError(f"{self.path}: cannot open the journal: {exc}"
                               + ("; free some space on its disk" if _is_full(exc) else "")) from None
        except _DAMAGE as exc:
            self._release_lock()
            raise JournalError(self._damaged(exc)) from None
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

    # -- opening -----------------------------------------------------------------------

    @staticmethod
    def _connect(target: str, uri: bool = False) -> sqlite3.Connection:
        db = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False)
        db.text_factory = _text
        return db

    def _damaged(self, exc: BaseException) -> str:
        return f"{self.path}: the journal is damaged ({exc}); " + DAMAGED_HINT.format(path=self.path)

    def _open_readonly(self) -> sqlite3.Connection:
        """Open an existing journal without changing anything in it or in its folder.

        ``mode=ro`` first (SQLite reads the write-ahead log; it needs the ``-shm`` index,
        which it creates in a writable folder). In a read-only folder without ``-shm``:
        with no write-ahead log, ``immutable=1`` reads the file as it is; with one, the file
        and its log are copied to a private temporary folder and read there, so nothing the
        log holds is missed (``immutable`` would ignore it).
        """
        if not Path(self.path).is_file():
            raise JournalError(f"{self.path}: no such journal file")
        try:
            db = self._connect(f"file:{_uri_path(self.path)}?mode=ro", uri=True)
            self._db = db
            self._check_is_journal(allow_empty=False)
            self._index_damaged = not self._index_agrees()
            return db
        except JournalError:
            raise
        except _DAMAGE as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise JournalError(self._damaged(exc)) from None
            first: Exception = exc
        wal = Path(self.path + "-wal")
        try:
            if wal.exists() and wal.stat().st_size > 0:
                self._copy_dir = tempfile.mkdtemp(prefix="companion-journal-")
                copy = os.path.join(self._copy_dir, "journal.db")
                shutil.copyfile(self.path, copy)
                shutil.copyfile(wal, copy + "-wal")
                db = self._connect(copy)
            else:
                db = self._connect(f"file:{_uri_path(self.path)}?mode=ro&immutable=1", uri=True)
            self._db = db
            self._check_is_journal(allow_empty=False)
            self._index_damaged = not self._index_agrees()
            return db
        except JournalError:
            self._drop_copy()
            raise
        except (sqlite3.Error, OSError, UnicodeDecodeError) as exc:
            self._drop_copy()
            raise JournalError(f"{self.path}: cannot read the journal: {exc} (then: {first})") from None

    def _index_agrees(self) -> bool:
        """True unless the index of entries by session (``entries_by_session``) holds another
        number of rows than the entries table: a damaged page of the index drops its rows from
        every query by session, which would hide entries from a resume or a replay. Two counts,
        each a walk of one b-tree (about 0.1 s for 500,000 entries here). A file too damaged to
        count is left to :mod:`companion.journal_check`."""
        try:
            table = self._db.execute("SELECT count(*) FROM entries NOT INDEXED").fetchone()[0]
        except _DAMAGE:  # the table itself: left to the check, row by row
            return True
        try:
            index = self._db.execute("SELECT count(*) FROM entries INDEXED BY entries_by_session").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "no such index" in str(exc):  # a journal without that index: no query uses it
                return True
            return False
        except _DAMAGE:  # a page of the index SQLite cannot walk
            return False
        return bool(table == index)

    def rebuild_index(self, why: str) -> None:
        """Rebuild the index of entries by session from the entries table (``REINDEX``): an
        index is derived from the table, so nothing is lost; the line saying so is logged and
        kept in :attr:`index_rebuilt`. On a read-only journal, or when SQLite cannot rebuild it
        (a page of it too damaged to free), the entries are read without the index instead
        (:meth:`entries`, a scan in id order), and an error line says so.

        Args:
            why: what was found wrong with the index (for the line).

        Raises:
            sqlite3.OperationalError: the disk refused the rebuild (full, read-only); at open
                this stops the start with the journal's one line (:class:`JournalError`).
        """
        if self.readonly:
            self._index_damaged = True
            return
        try:
            self._db.execute("REINDEX entries_by_session")
        except sqlite3.OperationalError:
            raise
        except _DAMAGE as exc:
            self._index_damaged = True
            log.error("%s: the index of entries by session is damaged (%s) and cannot be rebuilt (%s); "
                      "entries are read without it", self.path, why, exc)
            return
        self._index_damaged = False
        self.index_rebuilt = (f"{self.path}: the index of entries by session was damaged ({why}); rebuilt "
                              "from the entries themselves, nothing lost (a damaged file: the storage may be failing)")
        log.warning("%s", self.index_rebuilt)

    def _drop_copy(self) -> None:
        if self._copy_dir is not None:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            self._copy_dir = None

    def _tables(self) -> dict[str, str]:
        try:
            return {r[0]: r[1] or "" for r in self._db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.OperationalError:
            raise  # cannot open, busy: the caller decides
        except _DAMAGE as exc:
            if "not a database" in str(exc):
                raise JournalError(f"{self.path}: not a journal (not an SQLite database: {exc})") from None
            raise JournalError(self._damaged(exc)) from None

    def _columns(self, table: str) -> set[str]:
        return {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}

    def _check_is_journal(self, allow_empty: bool) -> None:
        """Refuse a database that is something else than a journal (and touch nothing).

        A database holding only some of the journal's tables, with the journal's columns, is
        a half-made journal (an older version killed while creating it): accepted for writing
        (it is finished), refused read-only with a line saying so.
        """
        tables = self._tables()
        if not tables and allow_empty:
            return
        if not tables:
            raise JournalError(f"{self.path}: not a journal (an empty database; `companion run` makes one)")
        if not set(tables) <= _TABLES | {"entries_v2"}:
            raise JournalError(
                f"{self.path}: not a journal (an SQLite database with the tables {', '.join(sorted(tables))})"
            )
        if "sessions" in tables and not _SESSION_COLUMNS <= self._columns("sessions"):
            raise JournalError(f"{self.path}: not a journal (its sessions table has other columns)")
        if "entries" in tables and not _ENTRY_COLUMNS <= self._columns("entries"):
            raise JournalError(f"{self.path}: not a journal (its entries table has other columns)")
        if not _TABLES <= set(tables) and not allow_empty:
            raise JournalError(f"{self.path}: a half-made journal with no game in it "
                               "(the next `companion run` finishes it)")

    def _finish_schema(self) -> None:
        """Create the tables, index and triggers, or finish a half-made or older journal,
        all in one transaction (a kill leaves the journal as it was)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            tables = self._tables()
            db.execute(_SESSIONS)
            if "table_settings" not in self._columns("sessions"):  # a journal written by version 0.1.0
                db.execute("ALTER TABLE sessions ADD COLUMN table_settings TEXT NOT NULL DEFAULT '{}'")
            if "entries" in tables and "'arrival'" not in tables["entries"]:
                # Written before arrivals and checksums: copy into the new table (the old
                # entries keep no checksum: they are counted as unchained, never certified).
                db.execute("DROP TABLE IF EXISTS entries_v2")
                db.execute(_ENTRIES.format(name="entries_v2"))
                db.execute("INSERT INTO entries_v2 (id, session, kind, t, type, body) "
                           "SELECT id, session, kind, t, type, body FROM entries ORDER BY id")
                db.execute("DROP TRIGGER IF EXISTS entries_append_only_update")
                db.execute("DROP TRIGGER IF EXISTS entries_append_only_delete")
                db.execute("DROP INDEX IF EXISTS entries_by_session")
                db.execute("DROP TABLE entries")
                db.execute("ALTER TABLE entries_v2 RENAME TO entries")
            else:
                db.execute("DROP TABLE IF EXISTS entries_v2")
                db.execute(_ENTRIES.format(name="entries"))
            for statement in _INDEX_AND_TRIGGERS:
                db.execute(statement)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _open_tail(self) -> None:
        """Read where the journal ends (database and tail file) and open the tail for writing;
        a tail ahead of the database is a loss, named in :attr:`loss_at_open`."""
        last = self._db.execute("SELECT id, session, chain FROM entries ORDER BY id DESC LIMIT 1").fetchone()
        max_session = self._db.execute("SELECT max(id) FROM sessions").fetchone()[0] or 0
        last_id, last_session = (last[0], last[1]) if last else (0, 0)
        self._prev_chain = (last[2] or "") if last else ""
        tail = None
        if self.path != ":memory:":
            tail = read_tail(self.path)
            self._tail_fd = os.open(self.path + ".tail", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                                    0o600)
        if tail is not None and tail.seq > last_id:
            self.loss_at_open = (
                f"{self.path}: entries {last_id + 1} to {tail.seq} are lost (the end of the journal, "
                f"sessions {max(last_session, 1)} to {tail.session}: its write-ahead log was deleted or damaged; or "
                f"{self.path}.tail is another journal's, beside a copy restored without its own); "
                f"they stay counted as lost"
            )
            log.error("%s", self.loss_at_open)
        self._next_seq = max(last_id, tail.seq if tail else 0) + 1
        self._next_session = max(max_session, tail.session if tail else 0) + 1

    def _take_lock(self) -> None:
        """One service a journal: an exclusive lock on ``PATH.lock`` (released at exit, even
        a SIGKILL, by the kernel). The file is opened with O_NOFOLLOW: a symbolic link there
        is refused, never written through."""
        import errno
        import fcntl

        lock_path = self.path + ".lock"
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise JournalError(f"{lock_path}: a symbolic link where the journal's lock file belongs; "
                                   "remove it (the lock is never written through a link)") from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise JournalError(
                f"{self.path}: in use by another `companion run` (process {pid}); stop it first, "
                "or give this one another --journal"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _checkpoint_loop(self, every_s: float) -> None:
        """Sync the write-ahead log and the tail to disk every ``every_s`` seconds (own
        connection)."""
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while not self._closing.wait(every_s):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass  # busy now, or the disk is full: the next round will do it
                self._sync_tail()
        finally:
            db.close()

    def _sync_tail(self) -> None:
        fd = self._tail_fd
        if fd is not None:
            try:
                os.fsync(fd)
            except OSError:
                pass

    def close(self) -> None:
        """Try once more to write the backlog, checkpoint, stop the background sync and close
        (appends after this raise sqlite3.ProgrammingError). Entries still refused by the disk
        are lost and logged as such."""
        self._closing.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
            self._checkpointer = None
        if self._backlog and not self.readonly:
            if not self._commit([]):
                log.error("%s: %d entries could not be written (%s) and are lost", self.path,
                          len(self._backlog), self.problem)
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass
        self._db.close()
        self._sync_tail()
        if self._tail_fd is not None:
            os.close(self._tail_fd)
            self._tail_fd = None
        self._drop_copy()
        self._release_lock()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions ----------------------------------------------------------------------

    def start_session(self, game: str, options: dict[str, Any], table: dict[str, Any] | None = None) -> int:
        """Open a new session with its referee ``options`` and the ``table`` settings (players,
        simulation seed) in one transaction, and return its id.

        Raises:
            JournalError: the disk refuses it (full) or the journal is damaged.
        """
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        session = self._next_session
        try:
            self._db.execute(
                "INSERT INTO sessions (id, game, started_at, options, table_settings) VALUES (?, ?, ?, ?, ?)",
                (session, game, now, json.dumps(options), json.dumps(table or {})),
            )
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot start a session: {exc}"
                               + ("; free some space on its disk" if _is_full(exc) else "")) from None
        self._next_session = session + 1
        return session

    def set_table(self, session: int, table: dict[str, Any]) -> None:
        """Replace the table's settings of a session (prefer ``start_session(..., table)``)."""
        self._db.execute("UPDATE sessions SET table_settings = ? WHERE id = ?", (json.dumps(table), session))

    def discard_session(self, session: int) -> bool:
        """Delete a session that holds no entry at all (a start refused before anything was
        observed: a part missing), so that it is neither listed nor resumed. A session with
        entries (in the database or waiting in memory), or a finished one, is kept: the
        journal's entries stay append-only.

        Returns:
            True when the session was deleted, False when it was kept (or is not there).

        Raises:
            JournalError: the disk refuses it or the journal is damaged.
        """
        if any(row[1] == session for row in self._backlog):
            return False
        try:
            cur = self._db.execute(
                "DELETE FROM sessions WHERE id = ? AND finished = 0 "
                "AND NOT EXISTS (SELECT 1 FROM entries WHERE entries.session = sessions.id)", (session,))
        except _DAMAGE as exc:
            raise JournalError(f"{self.path}: cannot discard session {session}: {exc}") from None
        if cur.rowcount != 1:
            return False
        if session == self._next_session - 1:
            self._next_session = session  # its number is given to the next session again
        return True

    def finish_session(self, session: int, result: Any) -> None:
        """Mark a session as ended, with a JSON-able result.

        Raises:
            JournalError: the disk refuses it (full) or the journal is damaged.
        """
        self._flush()
        try:
            self._db.execute("UPDATE sessions SET finished = 1, result = ? WHERE id = ?",
                             (json.dumps(result), session))
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot mark session {session} finished: {exc}") from None

    def sessions(self) -> list[Session]:
        """All sessions, oldest first.

        Raises:
            JournalError: the sessions table is damaged (naming the session when it can).
        """
        try:
            rows = self._db.execute(
                "SELECT id, game, started_at, options, finished, result, table_settings FROM sessions ORDER BY id"
            ).fetchall()
        except _DAMAGE as exc:
            raise JournalError(self._damaged(exc)) from None
        out = []
        for r in rows:
            try:
                out.append(Session(r[0], r[1], r[2], json.loads(r[3]), bool(r[4]),
                                   json.loads(r[5]) if r[5] else None, json.loads(r[6])))
            except (ValueError, TypeError, RecursionError) as exc:
                raise JournalError(f"{self.path}: session {r[0]} is damaged ({exc}); "
                                   + DAMAGED_HINT.format(path=self.path)) from None
        return out

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

    @property
    def backlog(self) -> int:
        """How many entries wait in memory for the disk to take them."""
        return len(self._backlog)

    def _row(self, session: int, kind: str, event: Event, arrival: int | None = None) -> tuple[Any, ...]:
        """The next entry's row, numbered and chained (in memory only)."""
        seq = self._next_seq
        body = event.to_line()
        chain = entry_chain(self._prev_chain, seq, session, kind, event.t, event.TYPE, body, arrival)
        self._next_seq = seq + 1
        self._prev_chain = chain
        return (seq, session, kind, float(event.t), event.TYPE, body, arrival, chain)

    def _commit(self, rows: list[tuple[Any, ...]]) -> bool:
        """Write the backlog then ``rows`` in one transaction; on a write error keep them all
        in the backlog. Returns True when everything is written."""
        pending = self._backlog + rows
        if not pending:
            return True
        db = self._db
        try:
            if self._backlog:
                # A commit that failed late may have reached the disk after all.
                top = db.execute("SELECT max(id) FROM entries").fetchone()[0] or 0
                pending = [r for r in pending if r[0] > top]
            db.execute("BEGIN IMMEDIATE")
            db.executemany(_INSERT, pending)
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                if db.in_transaction:
                    db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if not self._backlog:
                log.error("%s: cannot write (%s); the game goes on from memory", self.path, exc)
            self._backlog = pending
            self.problem = str(exc)
            return False
        if self._backlog:
            log.warning("%s: writing again; %d entries kept in memory are written", self.path, len(self._backlog))
        self._backlog = []
        self.problem = None
        self._write_tail(pending[-1])
        return True

    def _flush(self) -> bool:
        return self._commit([]) if self._backlog else True

    def _write_tail(self, row: tuple[Any, ...]) -> None:
        if self._tail_fd is None:
            return
        line = f"{row[0]} {row[1]} {row[7]}".encode("ascii").ljust(_TAIL_BYTES - 1) + b"\n"
        try:
            os.pwrite(self._tail_fd, line, 0)
            if self.sync == "full":
                os.fsync(self._tail_fd)
        except OSError as exc:  # the entry is written; only the end marker lags behind
            log.warning("%s.tail: cannot write (%s)", self.path, exc)

    def append(self, session: int, kind: Literal["observation", "call"], event: Event) -> bool:
        """Append one message in its own transaction (durable when this returns True; kept in
        memory, to be written later, when False)."""
        return self._commit([self._row(session, kind, event)])

    def append_step(self, session: int, observation: Event, calls: list[Event], arrival: int | None = None) -> bool:
        """Append an observation and the calls it caused in one transaction: after a crash
        the journal holds both or neither, so a replay always matches it.

        Args:
            arrival: the id of the observation's ``arrival`` entry when it was buffered.

        Returns:
            True when written; False when the disk refused it (it is kept in :attr:`backlog`
            and written, in order, by the next append that succeeds).
        """
        rows = [self._row(session, "observation", observation, arrival)]
        rows += [self._row(session, "call", c) for c in calls]
        return self._commit(rows)

    def append_arrival(self, session: int, observation: Event) -> int:
        """Journal an observation as it arrives in the jitter buffer (not yet applied).

        Returns:
            The arrival's id, to pass to :meth:`append_step` when it is applied. Written at
            once, or kept in the backlog when the disk refuses it.
        """
        row = self._row(session, "arrival", observation)
        self._commit([row])
        return int(row[0])

    def append_many(
        self, session: int, kind: Literal["observation", "call"], events: list[Event]
    ) -> bool:
        """Append several messages in one transaction (True when written, see :meth:`append_step`)."""
        if not events:
            return True
        return self._commit([self._row(session, kind, e) for e in events])

    def entries(self, session: int, arrivals: bool = False) -> Iterator[Entry]:
        """The session's messages in the order they were appended.

        Args:
            arrivals: include the ``arrival`` entries (default: only observations and calls,
                which are what a replay re-applies and compares).

        Raises:
            JournalError: an entry whose text is not JSON (naming the entry), or a damaged file.
        """
        try:
            # Without the index when it is damaged (a table scan in id order).
            where = "entries NOT INDEXED" if self._index_damaged else "entries"
            cur = self._db.execute(
                f"SELECT id, kind, t, type, body, arrival FROM {where} WHERE session = ? ORDER BY id", (session,)
            )
            for r in cur:
                if r[1] == "arrival" and not arrivals:
                    continue
                try:
                    body = json.loads(r[4])
                except (ValueError, TypeError, RecursionError) as exc:
                    raise JournalError(f"{self.path}: entry {r[0]} of session {session} is not JSON: {exc}; "
                                       + DAMAGED_HINT.format(path=self.path)) from None
                yield Entry(r[0], r[1], r[2], r[3], body, r[5])
        except _DAMAGE as exc:
            raise JournalError(self._damaged(exc)) from None

    def pending(self, session: int) -> list[Entry]:
        """The session's arrivals that no journaled observation applied yet (the jitter
        buffer's content when the service stopped), oldest first."""
        applied = set()
        waiting = []
        for e in self.entries(session, arrivals=True):
            if e.kind == "arrival":
                waiting.append(e)
            elif e.kind == "observation" and e.arrival is not None:
                applied.add(e.arrival)
        return [e for e in waiting if e.id not in applied]

    def losses(self, session: int | None = None) -> list[str]:
        """Lines naming what is lost or damaged in the journal (touching ``session`` when
        given); empty when every entry is there and intact. See :mod:`companion.journal_check`."""
        from companion.journal_check import check_connection

        report = check_connection(self._db, self.path, read_tail(self.path) if self.path != ":memory:" else None)
        if report.index_problems and not self._index_damaged:  # derived data: rebuilt (or done
            self.rebuild_index(report.index_problems[0])  # without), never a loss of entries
        last = max(report.sessions) if report.sessions else None
        #: the tail file's disagreement (another checksum than the entry it names) when ``session``
        #: is the journal's last one, whose end it would vouch for; None otherwise (see
        #: :attr:`companion.journal_check.CheckReport.tail_problem`)
        self.end_unchecked = report.tail_problem if session is not None and session == last else None
        return report.lines(session)

    def observation(self, entry: Entry, vocabulary: Any) -> Any:
        """Parse a journaled observation with a game's vocabulary (the players' ``pause`` and
        ``resume``, the service's own, with :func:`companion.pause.service_observation`).

        Raises:
            JournalError: the entry is not a valid observation of that game (naming it).
        """
        from companion.events import EventError
        from companion.pause import service_observation

        try:
            return service_observation(entry.body) or vocabulary.observation(entry.body)
        except EventError as exc:
            raise JournalError(f"{self.path}: entry {entry.id} is not a valid observation: {exc}") from None


def _is_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "full" in text or "disk i/o" in text


def _uri_path(path: str) -> str:
    """A file path quoted for an SQLite ``file:`` URI."""
    from urllib.parse import quote

    return quote(os.path.abspath(path))
