"""The players' pause (companion/pause.py): the session clock is held, so Carrousel's dead end
waits with the seconds it had left; the pause and the resume are journaled observations of their
own, so a game paused when the service stopped is paused again when it resumes, and a replay
gives the same calls. Time is injected (ManualClock); nothing sleeps."""

from __future__ import annotations

import threading
import time

import pytest

from companion.clock import ManualClock, MonotonicClock, PacedClock
from companion.commands.replay import replay_session
from companion.games import referee_for
from companion.games.carrousel import GameStart, Position
from companion.journal import Journal
from companion.pause import Pause, Resume
from companion.service import Service, open_session, restore_paused
from companion.sources.entries import EntryServer
from tests.doubles import Recorder

START = Position.from_text(".gbyrk.").spaces


def _service(tmp_path, clock=None, **kwargs):
    referee = referee_for("carrousel")
    journal = Journal(str(tmp_path / "journal.db"))
    opened = open_session(referee, journal, {}, {"players": ["Ana", "Ben"]}, kwargs.pop("new", True))
    recorder = Recorder()
    clock = clock or ManualClock(opened.origin)
    service = Service(referee, clock, journal=journal, session=opened.session, announcers=[recorder],
                      state=opened.state, last_t=opened.last_t,
                      paused_at=clock.now() if opened.paused else None, **kwargs)  # as assemble does
    return service, recorder, journal, opened


def _types(recorder):
    return [(c.TYPE, c.t) for c in recorder.calls]


def test_the_dead_end_waits_while_paused_and_comes_with_the_seconds_it_had_left(tmp_path):
    service, rec, journal, _ = _service(tmp_path)
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=START, seed=1, dead_end_s=20.0))
    service.run(until=5.0, stop_when_over=False)
    assert service.referee.next_deadline(service.state) == 20.0
    service.emit(Pause(t=5.0, by="test"))
    service.run(until=60.0, stop_when_over=False)  # held: returns at once, nothing is called
    assert service.clock.now() == 5.0 and service.paused_at == 5.0
    service.clock.advance(100.0)  # real time passes; the held session clock does not move
    service.run(until=60.0, stop_when_over=False)
    assert "dead_end" not in [kind for kind, _ in _types(rec)]
    assert _types(rec)[-1] == ("paused", 5.0)
    service.emit(Resume(t=5.0))
    service.run(until=60.0, stop_when_over=False)
    assert ("resumed", 5.0) in _types(rec)
    dead_end = [t for kind, t in _types(rec) if kind == "dead_end"]
    assert dead_end == [20.0]  # the 15 s left at the pause, counted after the resume
    kinds = [e.type for e in journal.entries(service.session) if e.kind == "observation"]
    assert kinds[:3] == ["game_start", "pause", "resume"]
    journal.close()


def test_a_second_pause_or_a_resume_while_playing_is_refused_to_its_sender_only(tmp_path):
    service, rec, journal, _ = _service(tmp_path)

    class Observer:
        def __init__(self):
            self.replies = []

        def applied(self, obs, calls):
            self.replies.append((obs.TYPE, [c.TYPE for c in calls], [getattr(c, "reason", "") for c in calls]))

    observer = Observer()
    service.observers.append(observer)
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=START, seed=1))
    service.emit(Resume(t=0.0))
    service.emit(Pause(t=0.0))
    service.emit(Pause(t=0.0))
    service.run(until=1.0, stop_when_over=False)
    assert observer.replies[1:] == [("resume", ["invalid_observation"], ["the game is not paused"]),
                                    ("pause", ["paused"], [""]),
                                    ("pause", ["invalid_observation"], ["the game is already paused"])]
    assert [c.TYPE for c in rec.calls].count("invalid_observation") == 0  # the table hears only the pause
    kinds = [e.type for e in journal.entries(service.session) if e.kind == "observation"]
    assert kinds == ["game_start", "pause"]  # refusals change nothing and are not journaled
    journal.close()


def test_a_game_paused_when_the_service_stopped_resumes_paused_and_replays_the_same(tmp_path):
    service, rec, journal, _ = _service(tmp_path)
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=START, seed=1, dead_end_s=20.0))
    service.run(until=4.0, stop_when_over=False)
    service.emit(Pause(t=4.0))
    service.run(until=60.0, stop_when_over=False)
    journal.close()  # the power goes

    state, last_t, n, paused = restore_paused(referee_for("carrousel"), Journal(str(tmp_path / "journal.db")),
                                              service.session)
    assert paused and n == 1 and last_t == 4.0
    again, rec2, journal2, opened = _service(tmp_path, new=False)
    assert opened.resumed and opened.paused and again.paused_at == opened.origin
    again.clock.advance(50.0)
    again.run(until=100.0, stop_when_over=False)
    assert [(c.TYPE, c.t) for c in rec2.calls] == [("paused", opened.origin)]  # said again; no dead end
    again.emit(Resume(t=opened.origin))
    again.run(until=100.0, stop_when_over=False)
    assert [(c.TYPE, c.t) for c in rec2.calls][1:3] == [("resumed", opened.origin), ("dead_end", 20.0)]
    result = replay_session(journal2, journal2.session(opened.session))
    assert result.identical and result.calls  # the pause and the resume journal no game call
    journal2.close()


@pytest.mark.parametrize("make", [lambda: MonotonicClock(10.0, speed=50.0), lambda: PacedClock(10.0, speed=50.0)])
def test_a_held_clock_stands_still_and_goes_on_from_where_it_stood(make):
    clock = make()
    event = threading.Event()
    clock.hold()
    held = clock.now()
    assert clock.wait(event, held + 1.0) is False  # waits the real 1/50 s, the clock stays
    assert clock.now() == held
    clock.release()
    assert clock.wait(event, held + 0.5) is False
    assert held + 0.5 <= clock.now() < held + 5.0  # from where it stood, not from the real elapsed time


def test_the_entry_socket_pauses_and_resumes_the_game_it_referees(tmp_path):
    service, rec, journal, _ = _service(tmp_path, clock=MonotonicClock())
    server = EntryServer(tmp_path / "journal.sock")
    source = server.source("carrousel", service.referee.vocabulary)
    service.sources.append(source)
    service.observers.append(source)
    thread = threading.Thread(target=service.run, kwargs={"stop_when_over": False}, daemon=True)
    thread.start()
    try:
        assert server.bound.wait(5)
        start = server.handle('{"type": "game_start", "players": ["Ana", "Ben"], "spaces": %s, "seed": 1}'
                              % str(list(START)).replace("'", '"'))
        assert start["ok"], start
        reply = server.handle('{"control": "pause", "by": "Ana"}')
        assert reply["ok"] and [c["type"] for c in reply["calls"]] == ["paused"] and reply["calls"][0]["by"] == "Ana"
        t = service.clock.now()
        assert service.clock.now() == t  # held
        again = server.handle('{"control": "pause"}')
        assert again["calls"][0]["reason"] == "the game is already paused"
        resumed = server.handle('{"control": "resume"}')
        assert [c["type"] for c in resumed["calls"]] == ["resumed"]
        deadline = time.monotonic() + 5
        while service.clock.now() == t and time.monotonic() < deadline:
            time.sleep(0.001)  # the real clock goes on once released
        assert service.clock.now() > t
        assert server.handle('{"control": "pause", "by": 5}')["error"].startswith("pause: 'by'")
    finally:
        service.stop()
        thread.join(5)
        server.close()
        journal.close()
    server.unbind()
    assert server.handle('{"control": "resume"}')["error"] == "resume: no game is being refereed now"


def test_companion_enter_pauses_and_resumes_in_words(tmp_path, capsys):
    from companion.cli import main
    from companion.sources.entries import socket_path_for
    from tests.real_table import write_config

    config = write_config(tmp_path)
    service, rec, journal, _ = _service(tmp_path, clock=MonotonicClock())
    server = EntryServer(socket_path_for(tmp_path / "journal.db"))
    server.open()
    source = server.source("carrousel", service.referee.vocabulary)
    service.sources.append(source)
    service.observers.append(source)
    thread = threading.Thread(target=service.run, kwargs={"stop_when_over": False}, daemon=True)
    thread.start()
    try:
        assert server.bound.wait(5)
        service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=START, seed=1))
        assert main(["enter", "--config", str(config), "--pause"]) == 0
        assert "The game is paused: the clock waits." in capsys.readouterr().out
        assert main(["enter", "--config", str(config), "--pause"]) == 1
        assert "the game is already paused" in capsys.readouterr().out
        assert main(["enter", "--config", str(config), "--resume"]) == 0
        assert "The game goes on." in capsys.readouterr().out
        assert main(["enter", "--config", str(config), "--pause", "--resume"]) != 0
    finally:
        service.stop()
        thread.join(5)
        server.close()
        journal.close()
    assert [c.TYPE for c in rec.calls if c.TYPE in ("paused", "resumed")] == ["paused", "resumed"]
