"""Checking and salvaging a journal: what is intact, what is damaged, what is lost.

:func:`check` reads a journal read-only, row by row, so that a damaged page costs only the
rows on it, and verifies each entry against the journal's promises (:mod:`companion.journal`):

* its JSON parses and its columns have their types;
* its checksum: ``chain == entry_chain(chain of the entry before, its fields)``. An entry is
  intact when its checksum matches with the entry before's stored *or* recomputed chain, or
  when its own chain field alone is damaged (the entry after it matches its recomputed chain);
  entries written before checksums existed are counted as unchained (never certified);
* its sequence: ids run 1, 2, 3...; a gap is a loss (entries that were written and are gone);
* the end: the tail file ``PATH.tail`` names the last entry committed; entries after the
  database's last one are lost (a write-ahead log deleted or damaged).

:func:`salvage` writes every intact entry (and every readable session) into a new journal,
keeping their numbers, so that what is missing stays visible as gaps there too.

Used by ``companion journal check|salvage``, ``companion replay`` and a resume.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.journal import _DAMAGE, DAMAGED_HINT, JournalError, Tail, entry_chain, read_tail

__all__ = ["Report", "Loss", "Damage", "check", "check_connection", "salvage"]

_COLUMNS = "id, session, kind, t, type, body, arrival, chain"
_BATCH = 256


@dataclass(frozen=True)
class Loss:
    """Entries ``first`` to ``last`` (inclusive) are gone; they may belong to ``sessions``
    (the sessions of the entries around the gap, and every one in between)."""

    first: int
    last: int
    sessions: tuple[int, int]
    at_end: bool

    @property
    def count(self) -> int:
        """How many entries are gone."""
        return self.last - self.first + 1


@dataclass(frozen=True)
class Damage:
    """Entry ``entry`` (of ``session`` when readable) is there but cannot be trusted."""

    entry: int
    session: int | None
    reason: str


@dataclass
class Report:
    """What :func:`check` found.

    Attributes:
        path: the journal file.
        sessions: readable sessions (id -> game).
        intact: intact entries, as rows ``(id, session, kind, t, type, body, arrival, chain)``.
        unchained: how many of the intact ones were written before checksums existed.
        damaged: entries present but not intact.
        losses: runs of entries that are gone.
        unreadable: problems SQLite reported on pages (rows on them could not be read).
        damaged_sessions: session id -> why its row cannot be read as a session (its options,
            result or table settings not JSON, its game or start not text): ``companion run``
            and ``replay`` refuse such a journal (:meth:`~companion.journal.Journal.sessions`).
        tail: the tail file's content, or None when there is none.
        from_pages: how many of the entries (intact or damaged) were read from the file's
            leaf pages directly, SQLite unable to reach them past a damaged page of the table
            (:mod:`companion.journal_pages`); they are certified by their checksums like the rest.
        index_problems: what SQLite's integrity check finds wrong with the index of entries by
            session (``row 37 missing from index entries_by_session``...): no entry is lost (an
            index is derived from the table), but queries by session would miss entries;
            :meth:`~companion.journal.Journal.losses` rebuilds it, a salvage writes a clean copy.
        tail_problem: the tail file disagrees with the entry it names (another checksum), or None.
    """

    path: str
    sessions: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    intact: list[tuple[Any, ...]] = field(default_factory=list)
    unchained: int = 0
    damaged: list[Damage] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    damaged_sessions: dict[int, str] = field(default_factory=dict)
    tail: Tail | None = None
    from_pages: int = 0
    index_problems: list[str] = field(default_factory=list)
    tail_problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when nothing is damaged, lost or unreadable."""
        return not (self.damaged or self.losses or self.unreadable or self.damaged_sessions
                    or self.index_problems or self.tail_problem)

    def lines(self, session: int | None = None) -> list[str]:
        """One line per problem (touching ``session`` when given); empty when :attr:`ok`."""
        out = []
        for sid, reason in sorted(self.damaged_sessions.items()):
            if session is None or session == sid:
                out.append(f"session {sid} is damaged ({reason}): `companion run` and `replay` refuse this "
                           f"journal; `companion journal salvage {self.path} NEW.db` copies it without that "
                           "session's settings")
        for loss in self.losses:
            lo, hi = loss.sessions
            if session is not None and not lo <= session <= hi:
                continue
            where = ("at the end of the journal (its write-ahead log was deleted or damaged; or the tail file "
                     f"{self.path}.tail is another journal's, beside a copy restored without its own)") if loss.at_end \
                else f"between entries {loss.first - 1} and {loss.last + 1}"
            whose = f"session {lo}" if lo == hi else f"sessions {lo} to {hi}"
            out.append(f"{loss.count} entr{'y' if loss.count == 1 else 'ies'} lost ({loss.first} to {loss.last}, "
                       f"{whose}) {where}")
        for d in self.damaged:
            if session is not None and d.session is not None and d.session != session:
                continue
            out.append(f"entry {d.entry}{f' of session {d.session}' if d.session is not None else ''} "
                       f"is damaged: {d.reason}")
        for u in self.unreadable:
            out.append(f"unreadable: {u}")
        if self.tail_problem and session is None:
            out.append(self.tail_problem)
        if self.index_problems and session is None:  # the entries are whole: no session lost any
            more = len(self.index_problems) - 1
            out.append(f"the index of entries by session is damaged ({self.index_problems[0]}"
                       f"{f', and {more} more' if more else ''}): every entry is still in the table; "
                       f"`companion run` rebuilds the index, `companion journal salvage {self.path} NEW.db` "
                       "writes a clean copy (a damaged file: the storage may be failing)")
        if self.from_pages and session is None:
            out.append(f"{self.from_pages} entr{'y' if self.from_pages == 1 else 'ies'} read from the file's pages "
                       "themselves, SQL unable to reach them (each certified by its checksum)")
        return out

    def summary(self) -> str:
        """One line: counts of sessions and intact, damaged and lost entries."""
        lost = sum(loss.count for loss in self.losses)
        text = (f"{self.path}: {_count(len(self.sessions), 'session')}, {_count(len(self.intact), 'intact entry')}"
                f"{f' ({self.unchained} without checksum, written by an older version)' if self.unchained else ''}, "
                f"{len(self.damaged)} damaged, {lost} lost")
        if self.damaged_sessions:
            n = len(self.damaged_sessions)
            text += f", {n} damaged session{'s' if n > 1 else ''}"
        text += "" if not self.index_problems else ", its index damaged"
        return text + ("" if not self.unreadable else f", {_count(len(self.unreadable), 'unreadable part')}")


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun`` agreeing with it: "1 session", "2 sessions", "1 intact entry", "0 intact entries"."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def _read_rows(db: sqlite3.Connection, table: str, columns: str, hi: int | None,
               problems: list[str]) -> list[tuple[Any, ...]]:
    """Every readable row of ``table`` by id: range reads, and one id at a time over a damaged
    stretch (up to ``hi``, or until 4096 ids in a row are missing)."""
    rows: list[tuple[Any, ...]] = []
    i = 1
    misses = 0
    while hi is None or i <= hi:
        try:
            batch = db.execute(f"SELECT {columns} FROM {table} WHERE id >= ? ORDER BY id LIMIT {_BATCH}",
                               (i,)).fetchall()
        except _DAMAGE as exc:
            if not problems or not problems[-1].startswith(f"{table}: {exc}"):
                problems.append(f"{table}: {exc} (from row {i})")
            for j in range(i, i + _BATCH):
                try:
                    row = db.execute(f"SELECT {columns} FROM {table} WHERE id = ?", (j,)).fetchone()
                except _DAMAGE:
                    row = None
                if row is not None:
                    rows.append(row)
                    misses = 0
                else:
                    misses += 1
            i += _BATCH
            if hi is None and misses >= 4096:
                break
            continue
        if not batch:
            break
        rows.extend(batch)
        i = int(batch[-1][0]) + 1
        misses = 0
    return rows


def _rows_from_pages(path: str, have: set[int], tail: Tail | None = None,
                     scanned: dict[int, tuple[Any, ...]] | None = None) -> list[tuple[Any, ...]]:
    """The ``entries`` rows of the file's own leaf pages (:mod:`companion.journal_pages`) that
    SQL could not reach, with their columns' types as SQL gives them (``t`` a float: SQLite
    may store a whole REAL as an integer). Not yet certified: the checksums decide. A row
    numbered past the tail's last entry is no entry of this journal (a damaged rowid, or
    garbage that parses) and is left out, so it never counts entries that never were as lost.
    ``scanned``: the entries' records already read from the pages (else they are read here)."""
    from companion.journal_pages import scan_table_rows

    if scanned is None:
        try:
            scanned = scan_table_rows(path, 8)
        except OSError:
            return []
    rows = []
    for id_, row in scanned.items():
        if id_ in have or id_ < 1 or (tail is not None and id_ > tail.seq):
            continue
        t = row[3]
        if isinstance(t, int) and not isinstance(t, bool):
            row = (*row[:3], float(t), *row[4:])
        rows.append(row)
    return rows


def _max_id(db: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(db.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0)
    except (*_DAMAGE, TypeError, ValueError):
        return None


def _session_problem(row: tuple[Any, ...]) -> str | None:
    """Why a sessions row ``(id, game, started_at, options, finished, result, table_settings)``
    cannot be read as a :class:`~companion.journal.Session` (what ``Journal.sessions`` parses), or None."""
    if not isinstance(row[1], str) or not isinstance(row[2], str):
        return "its game or start time is not text"
    for value in row[1:]:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "its text is not UTF-8"
    for name, value, optional in (("options", row[3], False), ("result", row[5], True),
                                  ("table settings", row[6], False)):
        if optional and not value:
            continue
        try:
            json.loads(value)
        except (ValueError, TypeError, RecursionError) as exc:
            return f"its {name} are not JSON: {exc}" if name != "result" else f"its result is not JSON: {exc}"
    return None


def _valid(row: tuple[Any, ...]) -> str | None:
    """Why a row's columns are not an entry's, or None."""
    id_, session, kind, t, type_, body, arrival, chain = row
    if not isinstance(session, int):
        return "its session is not a number"
    if kind not in ("observation", "call", "arrival"):
        return f"its kind is {kind!r}"
    if not isinstance(t, (int, float)) or isinstance(t, bool):
        return "its time is not a number"
    if not isinstance(type_, str) or not isinstance(body, str):
        return "its text is not text"
    if arrival is not None and not isinstance(arrival, int):
        return "its arrival is not a number"
    if chain is not None and not isinstance(chain, str):
        return "its checksum is not text"
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError) as exc:
        return f"its text is not JSON ({exc})"
    if not isinstance(parsed, dict) or parsed.get("type") != type_:
        return "its text does not match its type"
    return None


def _index_problems(db: sqlite3.Connection) -> list[str]:
    """SQLite's integrity check of the entries table, its lines about an index (at most 100;
    the table's own damage is found row by row by :func:`check_connection`). ``PRAGMA
    integrity_check(entries)`` (SQLite 3.33+) walks the table and its index once: about 1.7 s
    for 500,000 entries here."""
    try:
        db.execute("SELECT count(*) FROM entries INDEXED BY entries_by_session").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such index" in str(exc):
            return []
        return [f"SQLite cannot read it: {exc}"]
    except _DAMAGE as exc:  # a page of the index SQLite cannot walk
        return [f"SQLite cannot read it: {exc}"]
    try:
        found = db.execute("PRAGMA integrity_check(entries)").fetchall()
    except sqlite3.OperationalError:  # an SQLite before 3.33: the whole file's check
        try:
            found = db.execute("PRAGMA integrity_check").fetchall()
        except _DAMAGE:
            return []
    except _DAMAGE:
        return []
    lines = [str(r[0]) for r in found if r and r[0] != "ok"]
    return [line for line in lines if "entries_by_session" in line][:100]


def check_connection(db: sqlite3.Connection, path: str, tail: Tail | None) -> Report:
    """Check an open journal connection (see the module text); never writes."""
    report = Report(path=path, tail=tail)
    report.index_problems = _index_problems(db)
    problems: list[str] = []
    for r in _read_rows(db, "sessions", "id, game, started_at, options, finished, result, table_settings",
                        _max_id(db, "sessions"), problems):
        report.sessions[int(r[0])] = r
        problem = _session_problem(r)
        if problem is not None:
            report.damaged_sessions[int(r[0])] = problem
    hi = _max_id(db, "entries")
    if hi is None and tail is not None:
        hi = tail.seq
    rows = _read_rows(db, "entries", _COLUMNS, hi, problems)
    if any(p.startswith("entries:") for p in problems) and os.path.isfile(path):
        found = _rows_from_pages(path, {int(r[0]) for r in rows}, tail)
        if found:  # below a damaged interior or root page: read from the leaf pages themselves
            rows = rows + found  # (put in id order by _judge)
            report.from_pages = len(found)
    return _judge(report, rows, problems)


def _judge(report: Report, rows: list[tuple[Any, ...]], problems: list[str]) -> Report:
    """Fill ``report`` from the entries' ``rows`` (as read, any order) and the read's
    ``problems``: checksums, the sequence, the tail (see the module text)."""
    tail = report.tail
    report.unreadable = problems
    # In id order, each id once: a page copied over another (a misdirected write) gives its rows
    # twice, two pages swapped give them out of order; the first copy read is kept (a damaged
    # copy fails its checksum below and is named).
    seen_ids: set[int] = set()
    ordered = []
    for row in sorted(rows, key=lambda r: int(r[0])):
        if int(row[0]) not in seen_ids:
            seen_ids.add(int(row[0]))
            ordered.append(row)
    rows = ordered
    # Checksums: verify each row with the chain of the row before (stored or recomputed).
    verdicts: list[str | None] = []
    recomputed: list[str | None] = []
    prev_stored, prev_recomputed = "", ""
    for row in rows:
        reason = _valid(row)
        mine = None
        if reason is None and row[7] is not None:
            mine_s = entry_chain(prev_stored, *row[:7])
            mine_r = entry_chain(prev_recomputed, *row[:7]) if prev_recomputed != prev_stored else mine_s
            if row[7] not in (mine_s, mine_r):
                reason = "its checksum does not match"
            mine = row[7] if reason is None else (mine_r if prev_recomputed else mine_s)
        verdicts.append(reason)
        recomputed.append(mine)
        if reason is None and row[7] is None:
            prev_stored = prev_recomputed = ""
        else:
            prev_stored = row[7] if isinstance(row[7], str) else ""
            prev_recomputed = mine or prev_stored
    for k, row in enumerate(rows):
        reason = verdicts[k]
        if reason == "its checksum does not match" and k + 1 < len(rows) and verdicts[k + 1] is None \
                and rows[k + 1][0] == row[0] + 1 and rows[k + 1][7] is not None:
            # Only this entry's checksum field may be hit: its content checks if the entry
            # after it was chained to the checksum recomputed from the content.
            before = rows[k - 1][7] if k else ""
            prev = entry_chain(before if isinstance(before, str) else "", *row[:7])
            if entry_chain(prev, *rows[k + 1][:7]) == rows[k + 1][7]:
                reason = None
        if reason is None:
            report.intact.append(row)
            if row[7] is None:
                report.unchained += 1
        else:
            session = row[1] if isinstance(row[1], int) else None
            report.damaged.append(Damage(int(row[0]), session, reason))
    # Sequence: gaps between the rows present, and after the last one (the tail).
    present = [(int(r[0]), r[1] if isinstance(r[1], int) else None) for r in rows]
    last_id, last_session = 0, min(report.sessions) if report.sessions else 1
    for id_, session in present:
        if id_ > last_id + 1:
            lo = last_session
            hi_s = session if session is not None else lo
            report.losses.append(Loss(last_id + 1, id_ - 1, (min(lo, hi_s), max(lo, hi_s)), False))
        last_id = id_
        if session is not None:
            last_session = session
    if tail is not None and tail.seq > last_id:
        report.losses.append(Loss(last_id + 1, tail.seq, (min(last_session, tail.session),
                                                          max(last_session, tail.session)), True))
    elif tail is not None:
        named = next((r for r in rows if int(r[0]) == tail.seq), None)
        if named is not None and isinstance(named[7], str) and named[7] != tail.chain:
            report.tail_problem = (f"the tail file names entry {tail.seq} with another checksum than the "
                                   f"journal's entry {tail.seq}: it belongs to another journal or is damaged, so "
                                   "the end of the journal cannot be checked")
    return report


class _NotSQLite(JournalError):
    """SQLite cannot open the journal at all; ``reason`` is SQLite's own words."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: not readable as SQLite ({reason}): nothing in it can be kept")
        self.reason = reason


def _open_for_check(path: str) -> tuple[sqlite3.Connection, Any]:
    """A read-only connection to ``path`` (through :class:`~companion.journal.Journal`'s
    read-only open when the file is readable as a journal, else a plain read-only one)."""
    from companion.journal import Journal

    try:
        journal = Journal(path, readonly=True)
        return journal._db, journal
    except JournalError as exc:
        if "no such journal file" in str(exc) or "a folder, not a journal file" in str(exc):
            raise
        if "not a journal (an SQLite database with the tables" in str(exc) or \
                "its sessions table has other columns" in str(exc):
            raise
        if "not a journal (an empty database" in str(exc) and read_tail(path) is None:
            raise  # an empty file, never written: no tail says a journal was there

        db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro&immutable=1", uri=True, isolation_level=None)
        db.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except _DAMAGE as exc2:
            db.close()
            raise _NotSQLite(path, str(exc2)) from None
        return db, None


def _check_pages(path: str, tail: Tail | None, why: str) -> Report | None:
    """The report of a journal SQLite cannot open (a page cut off its end, its header's page
    count or schema damaged): its sessions (7-field records) and entries (8-field records) read
    from its leaf pages (:mod:`companion.journal_pages`), the entries certified by their
    checksums as always; None when the pages hold neither."""
    from companion.journal_pages import scan_tables

    try:
        tables = scan_tables(path, (8, 7))  # the entries' and the sessions' records, one read
    except OSError:
        return None
    sessions = tables[7]
    rows = _rows_from_pages(path, set(), tail, tables[8])
    if not rows and not sessions:
        return None
    report = Report(path=path, tail=tail)
    for sid, r in sorted(sessions.items()):
        if sid < 1 or not isinstance(r[4], int):
            continue
        report.sessions[sid] = r
        problem = _session_problem(r)
        if problem is not None:
            report.damaged_sessions[sid] = problem
    report.from_pages = len(rows)
    return _judge(report, rows, [f"the file: {why}; its sessions and entries read from its pages"])


def check(path: str | os.PathLike[str]) -> Report:
    """Check the journal at ``path`` (read-only). A file SQLite cannot open is read from its
    pages (:func:`_check_pages`) when they hold sessions or entries.

    Raises:
        JournalError: no such file, or nothing of it readable (its header is gone and no page
            holds a session or an entry).
    """
    path = str(Path(path).expanduser())
    try:
        db, journal = _open_for_check(path)
    except _NotSQLite as exc:
        report = _check_pages(path, read_tail(path), f"SQLite cannot open it ({exc.reason})")
        if report is None:
            raise
        return report
    try:
        return check_connection(db, path, read_tail(path))
    finally:
        if journal is not None:
            journal.close()
        else:
            db.close()


def salvage(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> Report:
    """Copy every readable session and every intact entry of ``source`` into a new journal
    ``target``, with the same numbers (their checksums chained anew over what is kept); its
    tail keeps the source's end, so a loss there stays visible.

    Returns:
        The :class:`Report` of ``source``.

    Raises:
        JournalError: ``target`` exists, or ``source`` cannot be read at all.
    """
    source, target = str(Path(source).expanduser()), str(Path(target).expanduser())
    if os.path.lexists(target):
        raise JournalError(f"{target}: already exists; salvage writes a new journal (give another name)")
    report = check(source)
    # a damaged session row is left out (its entries are kept under a placeholder row)
    ok_sessions = [r for sid, r in sorted(report.sessions.items()) if sid not in report.damaged_sessions]
    try:
        _write_salvage(target, report, ok_sessions)
    except BaseException:
        for suffix in ("", "-wal", "-shm", ".tail", ".lock"):  # no half-written journal left behind
            try:
                os.remove(target + suffix)
            except OSError:
                pass
        raise
    return report


def _write_salvage(target: str, report: Report, ok_sessions: list[tuple[Any, ...]]) -> None:
    """Write :func:`salvage`'s new journal ``target`` from ``report``."""
    from companion.journal import Journal

    with Journal(target, checkpoint_s=None) as out:
        db = out._db
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO sessions (id, game, started_at, options, finished, result, table_settings) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", ok_sessions)
        known = {r[0] for r in ok_sessions}
        for sid in sorted({r[1] for r in report.intact} - known):  # a session row that was lost
            db.execute("INSERT INTO sessions (id, game, started_at, options, finished) VALUES (?, '?', '', '{}', 0)",
                       (sid,))
        prev = ""
        rows = []
        for r in report.intact:
            prev = entry_chain(prev, *r[:7])
            rows.append((*r[:7], prev))
        db.executemany("INSERT INTO entries (id, session, kind, t, type, body, arrival, chain) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.execute("COMMIT")
        end = report.tail.seq if report.tail is not None else 0
        last = rows[-1] if rows else None
        if last is not None and last[0] >= end:
            out._write_tail(last)
        elif report.tail is not None:
            out._write_tail((report.tail.seq, report.tail.session, None, 0, "", "", None, report.tail.chain))


def damaged_line(path: str) -> str:
    """The hint appended to a message about a damaged journal."""
    return DAMAGED_HINT.format(path=path)
