"""A damaged index, a tail of another journal, a folder for a journal: named, never a loss.

The entries table holds the journal; its index of entries by session (``entries_by_session``)
is derived from it. One flipped bit in an index page made queries by session miss half a game
while every entry was whole: a resume restored the game as it was 20 entries earlier, a replay
blamed the referee, and ``journal check`` said the journal was whole.
"""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from companion.cli import main
from companion.clock import ManualClock
from companion.games.carrousel import CarrouselReferee, Claim, GameStart, Position
from companion.journal import Journal, JournalError, read_tail
from companion.journal_check import check
from companion.service import Service, open_session


class _Recorder:
    def announce(self, call, summary):
        pass

    def close(self):
        pass


def _journal_with_a_game(path, n_claims=30):
    """A Carrousel game journaled by a real Service, closed (checkpointed into the file)."""
    with Journal(path, checkpoint_s=None) as journal:
        referee = CarrouselReferee()
        opened = open_session(referee, journal, {}, {"players": ["Ana", "Ben"], "seed": 3})
        service = Service(referee, ManualClock(), journal=journal, session=opened.session, announcers=[_Recorder()])
        service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbykr.").spaces, seed=3))
        for i in range(n_claims):
            service.emit(Claim(t=1.0 + i, player="Ana" if i % 2 else "Ben"))
            service.run(until=1.5 + i, stop_when_over=False)
        return opened.session, len(list(journal.entries(opened.session)))


def _index_page(path):
    db = sqlite3.connect(path)
    root, = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries_by_session'").fetchone()
    size, = db.execute("PRAGMA page_size").fetchone()
    db.close()
    return (root - 1) * size, size


def _by_session_through_the_index(path, session):
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT count(*) FROM entries INDEXED BY entries_by_session WHERE session = ?",
                          (session,)).fetchone()[0]
    finally:
        db.close()


def _damage_the_index(path, session, n):
    """Flip one bit in a cell of the index's root page (a key of an index entry), the first of
    its last 64 bytes whose flip makes a query by session miss entries, as the attacker's did;
    the entries table is untouched."""
    start, size = _index_page(path)
    whole = open(path, "rb").read()
    for offset in range(start + size - 1, start + size - 65, -1):
        data = bytearray(whole)
        data[offset] ^= 0x40
        open(path, "wb").write(bytes(data))
        try:
            if _by_session_through_the_index(path, session) < n:
                return
        except sqlite3.DatabaseError:
            pass
    raise AssertionError("no flip of the index's last cells drops an entry from its session")


@pytest.fixture()
def damaged(tmp_path):
    path = str(tmp_path / "j.db")
    session, n = _journal_with_a_game(path)
    whole = tmp_path / "whole.db"
    shutil.copyfile(path, whole)
    shutil.copyfile(path + ".tail", str(whole) + ".tail")
    _damage_the_index(path, session, n)
    return path, session, n, str(whole)


def test_check_names_a_damaged_index_and_fails_though_every_entry_is_intact(damaged, capsys):
    path, session, n, _ = damaged
    report = check(path)
    assert len(report.intact) == len(check(damaged[3]).intact) and not report.losses and not report.damaged
    assert report.index_problems and not report.ok
    assert main(["journal", "check", path]) == 1
    out = capsys.readouterr().out
    assert "index damaged" in out.splitlines()[0] and "every entry is still in the table" in out


def test_a_replay_of_a_journal_with_a_damaged_index_reads_every_entry(damaged, capsys):
    path, _, _, whole = damaged
    assert main(["replay", "-q", whole]) == 0
    expected = capsys.readouterr().out
    assert main(["replay", "-q", path]) == 0
    assert capsys.readouterr().out == expected  # "all N calls reproduced exactly", the same N


def test_a_resume_rebuilds_the_index_and_restores_the_whole_game(damaged):
    path, session, n, whole = damaged
    with Journal(whole) as journal:
        expected = open_session(CarrouselReferee(), journal, {}, {})
    with Journal(path) as journal:
        opened = open_session(CarrouselReferee(), journal, {}, {})
        assert journal.index_rebuilt is not None and "nothing lost" in journal.index_rebuilt
        assert len(list(journal.entries(session))) == n
    assert opened.resumed and (opened.n, opened.last_t, opened.state) == (expected.n, expected.last_t, expected.state)
    assert check(path).ok


def test_an_index_page_sqlite_cannot_read_is_named_and_the_game_resumes_whole(tmp_path, capsys):
    path = str(tmp_path / "j.db")
    session, n = _journal_with_a_game(path)
    whole = str(tmp_path / "whole.db")
    shutil.copyfile(path, whole)
    start, size = _index_page(path)
    data = bytearray(open(path, "rb").read())
    data[start:start + size // 2] = bytes([0xA5]) * (size // 2)  # its header and cell pointers gone
    open(path, "wb").write(bytes(data))
    with pytest.raises(sqlite3.DatabaseError):
        _by_session_through_the_index(path, session)
    report = check(path)
    assert report.index_problems and not report.ok and not report.losses and not report.damaged
    assert main(["journal", "check", path]) == 1
    assert "index damaged" in capsys.readouterr().out
    with Journal(whole) as journal:
        expected = open_session(CarrouselReferee(), journal, {}, {})
    with Journal(path) as journal:  # rebuilt, or read around when SQLite cannot free its page
        opened = open_session(CarrouselReferee(), journal, {}, {})
        assert len(list(journal.entries(session))) == n
    assert opened.resumed and (opened.n, opened.state) == (expected.n, expected.state)


def test_a_tail_that_names_an_entry_with_another_checksum_is_named(tmp_path, capsys):
    path = str(tmp_path / "j.db")
    _journal_with_a_game(path, 5)
    tail = read_tail(path)
    assert check(path).ok
    forged = f"{tail.seq - 1} {tail.session} {'0' * 32}".encode().ljust(79) + b"\n"
    open(path + ".tail", "wb").write(forged)
    report = check(path)
    assert not report.ok and "another checksum" in report.tail_problem
    assert main(["journal", "check", path]) == 1
    assert f"names entry {tail.seq - 1}" in capsys.readouterr().out


def test_a_replay_without_the_tail_file_says_the_end_cannot_be_checked(tmp_path, capsys):
    path = str(tmp_path / "j.db")
    _journal_with_a_game(path, 5)
    assert main(["replay", "-q", path]) == 0
    assert "cannot be checked" not in capsys.readouterr().out
    (tmp_path / "j.db.tail").unlink()
    assert main(["replay", "-q", path]) == 0
    assert "no " + path + ".tail: whether entries were lost at the journal's end cannot be checked" in \
        capsys.readouterr().out


@pytest.mark.parametrize("readonly", [False, True])
def test_a_folder_given_as_the_journal_is_named_as_a_folder(tmp_path, readonly):
    with pytest.raises(JournalError, match=r"a folder, not a journal file \(expected a file such as .*journal\.db\)"):
        Journal(tmp_path, readonly=readonly)


def test_journal_check_of_a_folder_is_one_line(tmp_path, capsys):
    code = main(["journal", "check", str(tmp_path)])
    err = capsys.readouterr().err
    assert code != 0 and "a folder, not a journal file" in err and "Traceback" not in err


def test_a_replay_whose_tail_names_another_checksum_says_the_end_cannot_be_checked(tmp_path, capsys):
    """The tail file of another journal (or a damaged one) beside this one: the replay of the
    last session reproduces its calls but says its end cannot be checked for lost entries."""
    path = str(tmp_path / "j.db")
    _journal_with_a_game(path, 5)
    tail = read_tail(path)
    forged = f"{tail.seq - 1} {tail.session} {'0' * 32}".encode().ljust(79) + b"\n"
    open(path + ".tail", "wb").write(forged)
    assert main(["replay", "-q", path]) == 0
    out = capsys.readouterr().out
    assert "reproduced exactly" in out and f"names entry {tail.seq - 1} with another checksum" in out
    assert "the end of the journal cannot be checked" in out


def test_another_journals_tail_beyond_the_end_is_named_as_a_possibility(tmp_path, capsys):
    """A backup restored beside the tail file of the journal it replaces: the tail names entries
    beyond its end. Lost entries and a foreign tail cannot be told apart; the line says both."""
    path, other = str(tmp_path / "j.db"), str(tmp_path / "other.db")
    _journal_with_a_game(path, 3)
    _journal_with_a_game(other, 9)
    open(path + ".tail", "wb").write(open(other + ".tail", "rb").read())
    assert main(["journal", "check", path]) == 1
    out = capsys.readouterr().out
    assert "lost" in out and f"{path}.tail is another journal's" in out


def test_journal_check_of_an_empty_file_is_one_line(tmp_path, capsys):
    """A 0-byte file (touched, or a new SD card's placeholder) with no tail beside it: not a
    journal, in one line, not a damaged index and two unreadable tables."""
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    assert main(["journal", "check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == f"companion: error: {path}: not a journal (an empty database; `companion run` makes one)"
