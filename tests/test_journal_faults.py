"""The journal against what a power strip and an SD card do (issue 14, item 5): kills in the
first milliseconds of a start, a full disk mid-game, a deleted or damaged write-ahead log,
truncated and bit-flipped files, a read-only folder, a symbolic link as the lock, and a kill
while observations wait in the jitter buffer."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from companion.cli import main
from companion.clock import ManualClock
from companion.commands.replay import replay_session
from companion.games.carrousel import CARDS, Board, CarrouselReferee, Claim, GameStart, Position
from companion.journal import Journal, JournalError
from companion.journal_check import check, salvage
from companion.service import Service, open_session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Recorder:
    def __init__(self):
        self.calls = []

    def announce(self, call, summary):
        self.calls.append(call)

    def close(self):
        pass


def _game(journal, n_claims=40):
    """A short Carrousel game journaled by a real Service; returns the session id."""
    referee = CarrouselReferee()
    opened = open_session(referee, journal, {}, {"players": ["Ana", "Ben"], "seed": 3})
    clock = ManualClock()
    service = Service(referee, clock, journal=journal, session=opened.session, announcers=[Recorder()])
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbykr.").spaces, seed=3))
    for i in range(n_claims):
        service.emit(Claim(t=1.0 + i, player="Ana" if i % 2 else "Ben"))
        service.run(until=1.5 + i, stop_when_over=False)
    return opened.session


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- starting ---------------------------------------------------------------------------------


def test_kills_in_the_first_milliseconds_of_a_start_never_leave_a_journal_that_is_refused(tmp_path):
    """SIGKILL at random instants of the very first start (creating the file, the schema, the
    session): every later start opens the journal (never "not a journal")."""
    rng = random.Random(14)
    env = {**os.environ, "PYTHONPATH": ROOT}
    for attempt in range(20):
        path = tmp_path / f"j{attempt}.db"
        child = subprocess.Popen([sys.executable, "-m", "tests.journal_faults", "start", str(path)],
                                 stdout=subprocess.PIPE, cwd=ROOT, env=env)
        assert child.stdout.readline() == b"opening\n"
        time.sleep(rng.uniform(0.0, 0.004))  # the kill lands inside the first milliseconds
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        with Journal(path, lock=True, checkpoint_s=None) as journal:  # finishes what was half made
            s = journal.start_session("carrousel", {}, {"players": ["Ana"]})
            assert journal.session(s).table == {"players": ["Ana"]}
        assert check(path).ok


def test_a_journal_half_made_by_an_older_version_is_finished_not_refused(tmp_path):
    """The old start created its tables one statement at a time: a kill could leave only the
    sessions table. That journal is finished (every table, index and trigger) on open."""
    path = tmp_path / "j.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, game TEXT NOT NULL, started_at TEXT NOT NULL, "
               "options TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0, result TEXT, "
               "table_settings TEXT NOT NULL DEFAULT '{}')")
    db.close()
    with pytest.raises(JournalError, match="half-made journal"):
        Journal(path, readonly=True)
    with Journal(path) as journal:
        s = journal.start_session("carrousel", {})
        assert journal.append(s, "observation", Claim(t=1.0, player="Ana"))
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM entries")


def test_a_journal_of_the_previous_version_is_upgraded_and_its_entries_counted_unchained(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE sessions (id INTEGER PRIMARY KEY, game TEXT NOT NULL, started_at TEXT NOT NULL,
            options TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0, result TEXT);
        CREATE TABLE entries (id INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(id),
            kind TEXT NOT NULL CHECK (kind IN ('observation', 'call')), t REAL NOT NULL, type TEXT NOT NULL,
            body TEXT NOT NULL);
        INSERT INTO sessions (game, started_at, options) VALUES ('carrousel', '2026-01-01', '{}');
        INSERT INTO entries (session, kind, t, type, body) VALUES (1, 'observation', 1, 'claim',
            '{"type":"claim","t":1.0,"player":"Ana"}');
    """)
    db.close()
    with Journal(path) as journal:
        assert journal.append(1, "observation", Claim(t=2.0, player="Ben"))
        assert [e.id for e in journal.entries(1)] == [1, 2]
    report = check(path)
    assert report.ok and report.unchained == 1 and len(report.intact) == 2


def test_the_session_row_and_its_settings_are_one_transaction(tmp_path, monkeypatch):
    """A failure after the session row must not leave it without its settings (a resume with
    the default seed): open_session writes both in one INSERT."""
    with Journal(tmp_path / "j.db") as journal:
        monkeypatch.setattr(journal, "set_table", lambda *a: pytest.fail("a second transaction"))
        opened = open_session(CarrouselReferee(), journal, {"dead_end_s": 20.0}, {"players": ["Ana"], "seed": 9})
        s = journal.session(opened.session)
    assert s.table == {"players": ["Ana"], "seed": 9} and s.options == {"dead_end_s": 20.0}


# -- a full disk ------------------------------------------------------------------------------


def test_a_full_disk_mid_game_keeps_refereeing_tells_the_table_once_and_writes_the_backlog(tmp_path):
    """RLIMIT_FSIZE set just above the journal's size in a child process (the writes fail
    with EFBIG, as on a full SD card), then lifted: the game goes on, `part_lost` (journal)
    once, `part_back` once, and afterwards the journal holds every call announced."""
    path = tmp_path / "full.db"
    child = subprocess.run([sys.executable, "-m", "tests.journal_faults", "full-disk", str(path)],
                           capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                           timeout=60)
    assert child.returncode == 0, child.stderr
    result = json.loads(child.stdout)
    announced = result["calls"]
    assert result["backlog_while_full"] > 10  # the refused entries were kept in memory
    told = [c for c in announced if c["type"] in ("part_lost", "part_back")]
    assert [(c["type"], c["part"]) for c in told] == [("part_lost", "journal"), ("part_back", "journal")]
    game_calls = [c for c in announced if c["type"] not in ("part_lost", "part_back")]
    assert len(game_calls) >= 12  # every claim while the disk was full was judged
    with Journal(path, readonly=True) as journal:
        journaled = [e.body for e in journal.entries(1) if e.kind == "call"]
        assert journaled == game_calls  # nothing announced is lost
        assert replay_session(journal, journal.session(1)).identical
    assert check(path).ok


# -- a deleted or damaged write-ahead log -----------------------------------------------------


def _killed_copy(tmp_path, name="k"):
    """A journal as a SIGKILL leaves it: part checkpointed into the file, the rest in the WAL."""
    path = tmp_path / "live.db"
    journal = Journal(path, checkpoint_s=None)
    journal._db.execute("PRAGMA wal_autocheckpoint=0")
    s = _game(journal, 20)
    journal._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    referee = CarrouselReferee()
    clock = ManualClock(30.0)
    from companion.service import restore

    state, last_t, _ = restore(referee, journal, s)
    service = Service(referee, clock, journal=journal, session=s, state=state, last_t=last_t)
    for i in range(20):
        service.emit(Claim(t=30.0 + i, player="Ana"))
        service.run(until=30.5 + i, stop_when_over=False)
    copy = tmp_path / f"{name}.db"
    for suffix in ("", "-wal", ".tail"):
        shutil.copyfile(str(path) + suffix, str(copy) + suffix)
    journal.close()
    return copy


def test_a_deleted_wal_is_detected_and_named_by_check_replay_and_a_resume(tmp_path, capsys):
    copy = _killed_copy(tmp_path)
    total = check(copy).intact
    os.remove(str(copy) + "-wal")
    report = check(copy)
    assert [(loss.first, loss.last, loss.at_end) for loss in report.losses] == [
        (len(report.intact) + 1, len(total), True)]
    code, out, err = _cli(capsys, "replay", "-q", str(copy))
    assert code == 1 and "NOT whole" in out and f"{len(total) - len(report.intact)} entries lost" in out
    assert "reproduced exactly" not in out.split("NOT whole")[0]
    code, out, err = _cli(capsys, "journal", "check", str(copy))
    assert code == 1 and "lost" in out and "write-ahead log" in out
    with Journal(copy) as journal:  # a service opening it goes on numbering after the loss
        assert journal.loss_at_open is not None
        with pytest.raises(JournalError, match="cannot be resumed exactly.*--new"):
            open_session(CarrouselReferee(), journal, {}, {})
        s = journal.start_session("carrousel", {})
        journal.append(s, "observation", Claim(t=1.0, player="Ana"))
    loss = check(copy).losses
    assert len(loss) == 1 and not loss[0].at_end and loss[0].last == len(total)  # a gap for good


def test_a_damaged_wal_is_detected_and_named(tmp_path, capsys):
    copy = _killed_copy(tmp_path)
    whole = len(check(copy).intact)
    wal = str(copy) + "-wal"
    data = bytearray(open(wal, "rb").read())
    data[len(data) // 2] ^= 0x10  # SQLite drops the frames from the damaged one on
    open(wal, "wb").write(bytes(data))
    report = check(copy)
    assert len(report.intact) < whole
    assert sum(loss.count for loss in report.losses) + len(report.damaged) == whole - len(report.intact)
    code, out, _ = _cli(capsys, "replay", "-q", str(copy))
    assert code == 1 and "lost" in out


# -- truncated and bit-flipped files ----------------------------------------------------------


@pytest.fixture(scope="module")
def closed_journal(tmp_path_factory):
    """A closed journal of 150 claims (everything in the database file): its bytes, its entries."""
    path = tmp_path_factory.mktemp("journal") / "j.db"
    with Journal(path, checkpoint_s=None) as journal:
        _game(journal, 150)
    original = {r[0]: r for r in check(path).intact}
    return path.read_bytes(), (path.parent / "j.db.tail").read_bytes(), original


@pytest.mark.parametrize("case", range(24))
def test_a_truncated_or_bit_flipped_journal_gives_one_line_and_salvage_keeps_every_intact_entry(
        tmp_path, capsys, case, closed_journal):
    pristine, tail, original = closed_journal
    path = tmp_path / "j.db"
    (tmp_path / "j.db.tail").write_bytes(tail)
    data = bytearray(pristine)
    rng = random.Random(case)
    if case < 8:
        cut = [100, 4096, 4096 * 2 + 17, len(data) // 3, len(data) // 2, len(data) - 4096, len(data) - 1,
               rng.randrange(len(data))][case]
        data = data[:cut]
    else:
        for _ in range(1 + case % 4):  # 1 to 4 flipped bits, anywhere in the file
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    for argv in (["replay", "-q", str(path)], ["journal", "check", str(path)], ["replay", "--list", str(path)]):
        code, out, err = _cli(capsys, *argv)  # a traceback would fail the test here
        assert code in (0, 1, 2)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("companion: error: ") and str(path) in err
    try:
        report = salvage(path, tmp_path / "new.db")
    except JournalError as exc:
        assert "not readable as SQLite" in str(exc) or "not a journal" in str(exc)
        return
    kept = check(tmp_path / "new.db")
    assert len(kept.intact) == len(report.intact)
    for row in kept.intact:  # every kept entry is the original one, unaltered
        assert row[:7] == original[row[0]][:7]
    # every entry is accounted for: kept, or named damaged or lost
    named = {d.entry for d in report.damaged} | {i for loss in report.losses for i in range(loss.first, loss.last + 1)}
    missing = set(original) - {r[0] for r in report.intact}
    assert missing <= named or report.unreadable


# -- read-only folder, symbolic link as the lock ---------------------------------------------


def test_replay_in_a_read_only_folder_reads_the_wal_for_real(tmp_path):
    """A journal left by a kill (database + WAL, no -shm) in a folder this user cannot write:
    replay opens it read-only and reproduces every call, the WAL's included."""
    copy = _killed_copy(tmp_path)
    os.remove(str(copy) + "-shm") if os.path.exists(str(copy) + "-shm") else None
    folder = os.path.join("/tmp", f"companion-ro-{os.getpid()}")
    os.makedirs(folder, exist_ok=True)
    try:
        for suffix in ("", "-wal", ".tail"):
            shutil.copyfile(str(copy) + suffix, os.path.join(folder, "j.db" + suffix))
            os.chmod(os.path.join(folder, "j.db" + suffix), 0o644)
        os.chmod(folder, 0o555)
        replay = [sys.executable, "-m", "companion", "replay", "-q", os.path.join(folder, "j.db")]
        if os.geteuid() == 0:  # root writes anywhere: a read-only bind mount in its own namespace
            replay = ["unshare", "-m", "sh", "-c", f"mount --bind {folder} {folder} && "
                      f"mount -o remount,bind,ro {folder} && touch {folder}/x 2>/dev/null; exec \"$@\"", "-",
                      *replay]
        done = subprocess.run(replay, capture_output=True, text=True, cwd=ROOT, timeout=60,
                              env={**os.environ, "PYTHONPATH": ROOT})
        assert done.returncode == 0, done.stderr
        n = sum(1 for r in check(copy).intact if r[2] == "call")
        assert f"all {n} calls reproduced exactly" in done.stdout
        assert sorted(os.listdir(folder)) == ["j.db", "j.db-wal", "j.db.tail"]  # nothing written there
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)


def test_the_lock_file_never_follows_a_symbolic_link(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    os.symlink(target, tmp_path / "j.db.lock")
    with pytest.raises(JournalError, match=r"j\.db\.lock: a symbolic link.*remove it"):
        Journal(tmp_path / "j.db", lock=True)
    assert target.read_text() == "keep me"


# -- the jitter buffer ------------------------------------------------------------------------


def test_observations_in_the_jitter_buffer_are_journaled_on_arrival_and_applied_once_after_a_kill(tmp_path):
    """Camera mode (delay 0.7 s): a board and a claim arrive and wait in the buffer; the
    service is killed before they are applied. The restart applies each of them once, in
    time order (the claim is judged on the board the camera saw: a point), and the replay
    reproduces every call."""
    start = Position.from_text(".gbykr.")
    ben_card = ("black", "red", "yellow")
    others = [c for c in CARDS if c not in (ben_card, start.first_three)]
    deck = tuple(others[:9] + [ben_card] + others[9:] + [start.first_three])
    path = tmp_path / "j.db"
    journal = Journal(path, checkpoint_s=None)
    referee = CarrouselReferee()
    opened = open_session(referee, journal, {}, {})
    service = Service(referee, ManualClock(), journal=journal, session=opened.session, delay_s=0.7,
                      sources=[_Idle()])
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=start.spaces, deck=deck))
    service.run(until=1.1, stop_when_over=False)
    service.emit(Claim(t=1.1, player="Ben"))
    service.emit(Board(t=1.0, spaces=Position.from_text(".gbyrk.").spaces))
    service.run(until=1.2, stop_when_over=False)  # both wait in the buffer now
    assert [e.type for e in journal.pending(opened.session)] == ["claim", "board"]
    journal.close()  # the kill: nothing more is written

    journal = Journal(path, checkpoint_s=None)
    referee = CarrouselReferee()
    opened = open_session(referee, journal, {}, {})
    assert opened.resumed
    rec = Recorder()
    service = Service(referee, ManualClock(opened.origin), journal=journal, session=opened.session,
                      state=opened.state, last_t=opened.last_t, delay_s=0.7, announcers=[rec], sources=[_Idle()])
    service.run(until=1.75, stop_when_over=False)  # the board applied, the claim still waiting
    service.run(until=3.0, stop_when_over=False)  # a second run does not take it up again
    assert [c.TYPE for c in rec.calls if c.TYPE in ("point", "penalty")] == ["point"]
    observed = [e.type for e in journal.entries(opened.session) if e.kind == "observation"]
    assert observed == ["game_start", "board", "claim"]  # each once, in time order
    assert journal.pending(opened.session) == []
    assert replay_session(journal, journal.session(opened.session)).identical
    journal.close()
    assert check(path).ok


class _Idle:
    def start(self, emit, clock):
        pass

    def stop(self):
        pass
