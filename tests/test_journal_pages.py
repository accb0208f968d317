"""`companion journal check` and `salvage` keep every intact entry even when the entries
table's root or interior page is damaged: SQL then reaches none of the rows below it, so they are
read from the file's leaf pages themselves (companion/journal_pages.py) and kept only when their
checksums certify them. Real SQLite files; the damage is written into the bytes."""

from __future__ import annotations

import sqlite3

import pytest

from companion.commands.replay import replay_session
from companion.journal import Journal
from companion.journal_check import check, salvage
from companion.journal_pages import scan_table_rows
from companion.pause import Pause
from tests.test_journal_faults import _game, _killed_copy


def _pages(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").fetchall())
        return roots, db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()


def _damage_page(path, number, size, fill=b"\xff"):
    with open(path, "r+b") as f:
        f.seek((number - 1) * size)
        f.write(fill * size)


@pytest.fixture()
def journal_of_300(tmp_path):
    """A closed journal of a Carrousel game with 300 claims and one observation larger than a
    page (its body on overflow pages): the entries' b-tree has a root above its leaves."""
    path = tmp_path / "j.db"
    with Journal(path, checkpoint_s=None) as journal:
        session = _game(journal, 300)
        journal.append_step(session, Pause(t=400.0, by="x" * 9000), [])
    return path, {r[0]: r for r in check(path).intact}


def test_a_damaged_root_page_of_the_entries_loses_no_entry(tmp_path, journal_of_300):
    path, original = journal_of_300
    roots, size = _pages(path)
    _damage_page(path, roots["entries"], size)
    report = check(path)
    assert report.unreadable  # the damage is named
    assert {r[0]: r for r in report.intact} == original  # and nothing is lost, the large one included
    assert report.from_pages == len(original) and not report.losses and not report.damaged
    kept = salvage(path, tmp_path / "new.db")
    assert len(kept.intact) == len(original)
    with Journal(tmp_path / "new.db", readonly=True) as again:
        assert check(tmp_path / "new.db").ok
        assert replay_session(again, again.sessions()[0]).identical


def test_a_leaf_page_damaged_too_loses_only_its_entries_and_never_certifies_garbage(tmp_path, journal_of_300):
    path, original = journal_of_300
    roots, size = _pages(path)
    _damage_page(path, roots["entries"], size)
    data = path.read_bytes()
    leaves = [n for n in range(2, len(data) // size + 1)  # table leaf pages (type 13) but the sessions'
              if data[(n - 1) * size] == 13 and n != roots["sessions"]]
    leaf = leaves[len(leaves) // 2]
    with open(path, "r+b") as f:  # scramble the second half of a leaf page: its records' text
        f.seek((leaf - 1) * size + size // 2)
        f.write(bytes((i * 37) % 251 for i in range(size // 2)))
    report = check(path)
    intact = {r[0]: r for r in report.intact}
    assert intact and all(original[i] == row for i, row in intact.items())  # what is kept is the original
    gone = set(original) - set(intact)
    assert gone  # the scrambled leaf's entries
    named = {d.entry for d in report.damaged} | {i for loss in report.losses for i in range(loss.first, loss.last + 1)}
    assert gone <= named  # every one of them named: damaged or lost


def test_rows_in_the_write_ahead_log_are_read_too(tmp_path):
    """A journal as a kill leaves it (part in the WAL): its root page damaged in the file, the
    entries only in the log's frames are found there."""
    copy = _killed_copy(tmp_path)
    with Journal(copy, readonly=True) as journal:
        before = {r[0]: r for r in check(copy).intact}
        assert before
    scanned = scan_table_rows(copy, 8)
    assert set(before) <= set(scanned)
    for id_, row in before.items():
        assert scanned[id_][:3] == row[:3] and scanned[id_][4:] == row[4:] and float(scanned[id_][3]) == row[3]


def test_a_file_that_is_not_sqlite_scans_to_nothing(tmp_path):
    path = tmp_path / "x.db"
    path.write_bytes(b"not a database" * 1000)
    assert scan_table_rows(path, 8) == {}


def _copy_page(path, src, dst, size):
    data = bytearray(path.read_bytes())
    data[(dst - 1) * size:dst * size] = data[(src - 1) * size:src * size]
    path.write_bytes(bytes(data))


def test_a_page_written_over_another_is_named_and_salvage_keeps_the_rest(tmp_path, journal_of_300):
    """A misdirected write: one leaf of the entries copied over the next. Its rows come twice
    through SQL; each id is kept once, the overwritten page's entries are named lost, and
    salvage writes the rest (it raised a UNIQUE constraint and left a broken file)."""
    path, original = journal_of_300
    roots, size = _pages(path)
    data = path.read_bytes()
    leaves = [n for n in range(2, len(data) // size + 1) if data[(n - 1) * size] == 13 and n != roots["sessions"]]
    _copy_page(path, leaves[2], leaves[3], size)
    report = check(path)
    intact = {r[0]: r for r in report.intact}
    assert len(intact) == len(report.intact) and all(original[i] == row for i, row in intact.items())
    named = {d.entry for d in report.damaged} | {i for loss in report.losses for i in range(loss.first, loss.last + 1)}
    assert set(original) - set(intact) <= named and set(original) - set(intact)
    assert sum(loss.count for loss in report.losses) <= len(original)
    kept = salvage(path, tmp_path / "new.db")
    assert len(check(tmp_path / "new.db").intact) == len(kept.intact)


def test_two_pages_swapped_lose_nothing(tmp_path, journal_of_300):
    """Rows read out of id order (two leaves swapped) were counted as gaps: more entries "lost"
    than the journal held."""
    path, original = journal_of_300
    roots, size = _pages(path)
    data = bytearray(path.read_bytes())
    leaves = [n for n in range(2, len(data) // size + 1) if data[(n - 1) * size] == 13 and n != roots["sessions"]]
    a, b = leaves[1], leaves[-2]
    pa, pb = data[(a - 1) * size:a * size], data[(b - 1) * size:b * size]
    data[(a - 1) * size:a * size], data[(b - 1) * size:b * size] = pb, pa
    path.write_bytes(bytes(data))
    report = check(path)
    lost = sum(loss.count for loss in report.losses)
    assert lost + len(report.intact) + len(report.damaged) <= len(original)
    assert {r[0]: r for r in report.intact}.items() <= original.items()


def test_a_salvaged_session_without_its_row_is_not_replayed_with_a_traceback(tmp_path, journal_of_300, capsys):
    from companion.cli import main

    path, _ = journal_of_300
    roots, size = _pages(path)
    _damage_page(path, roots["sessions"], size, fill=b"\x00")
    salvage(path, tmp_path / "new.db")
    assert main(["replay", "-q", str(tmp_path / "new.db"), "--session", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "session 1's game is '?'" in err and "Traceback" not in err


def test_a_file_sqlite_cannot_open_is_read_from_its_pages(tmp_path, journal_of_300):
    """The file's last page cut off (a copy that stopped short) or its header's page count
    damaged: SQLite refuses the file; its sessions and entries are read from the pages, the
    entries kept only as their checksums certify them, and salvage writes them."""
    path, original = journal_of_300
    _, size = _pages(path)
    data = path.read_bytes()
    for name, damaged in (("cut", data[:-size]), ("count", data[:28] + b"\x00\x00\xff\xff" + data[32:])):
        bad = tmp_path / f"{name}.db"
        bad.write_bytes(damaged)
        (tmp_path / f"{name}.db.tail").write_bytes((path.parent / "j.db.tail").read_bytes())
        report = check(bad)
        intact = {r[0]: r for r in report.intact}
        assert report.sessions and len(intact) >= len(original) - 40, name
        assert all(original[i] == row for i, row in intact.items()), name
        assert report.unreadable and "SQLite cannot open it" in report.unreadable[0]
        salvage(bad, tmp_path / f"{name}-new.db")
        assert len(check(tmp_path / f"{name}-new.db").intact) == len(intact)
