"""Carrossel's camera sends each player's play at most once a round
(companion/sources/carrossel_camera.py ``CarrosselWatch``; the service's ``arrived`` feed in
companion/service.py; the simulated table's fallback in companion/sim/carrossel_camera.py).

The wrong call this guards against: a play already journaled this round sent again, which the
referee must refuse as "already played this round" and the table hears as an illegal play."""

from __future__ import annotations

from companion.clock import ManualClock
from companion.games.carrossel import CarrosselReferee, GameStart, PlayObserved, PlayReceived
from companion.journal import Journal
from companion.service import Service
from companion.sources.carrossel_camera import CarrosselWatch

PLAYERS = ("Ana", "Ben", "Cleo", "Dev")  # sectors at setup: Ana A, Ben D, Cleo C, Dev B


class Table:
    """The service's part: takes an observation in (``arrived``), later applies it and tells
    the watch (``applied``), as the service does with its jitter buffer."""

    def __init__(self):
        self.ref = CarrosselReferee()
        self.watch = CarrosselWatch(CarrosselReferee(), check_s=2.0)
        self.state = self.ref.initial_state()
        self.calls: list = []
        self.apply(GameStart(t=0.0, players=PLAYERS, seed=5))

    def apply(self, obs):
        self.state, calls = self.ref.apply(self.state, obs)
        self.calls += calls
        self.watch.applied(obs, calls)
        return calls


def _illegal(calls):
    return [c for c in calls if c.TYPE in ("illegal_play", "invalid_observation")]


def test_a_tile_read_otherwise_later_is_not_a_second_play():
    table = Table()
    first = table.watch.board(3.0, {"A4": ("red", "tiger")})
    assert [(p.player, p.animals) for p in first] == [("Ana", ("tiger",))]
    table.apply(first[0])
    # the reader now settles on another animal for the same tile: the referee holds Ana's play
    assert table.watch.board(4.0, {"A4": ("red", "horse")}) == []
    # before it is applied (on its way through the jitter buffer) the camera sends nothing more either
    table2 = Table()
    sent = table2.watch.board(3.0, {"A4": ("red", "tiger")})
    table2.watch.arrived(sent[0])
    assert table2.watch.board(3.2, {"A4": ("red", "horse")}) == []
    assert table2.watch.board(3.4, {"A4": ("red", "tiger")}) == []
    assert _illegal(table2.apply(sent[0])) == []


def test_a_play_entered_while_the_camera_reads_is_not_sent_again():
    table = Table()
    entered = PlayObserved(t=2.0, player="Ben", slot=5, animals=("fish",))
    table.watch.arrived(entered)  # taken in by the service, waiting in the jitter buffer
    assert table.watch.board(2.5, {"D5": ("blue", "fish")}) == []
    assert _illegal(table.apply(entered)) == []
    assert table.watch.board(3.0, {"D5": ("blue", "fish")}) == []


def test_the_reveal_after_the_players_told_the_missing_play_has_no_refusal():
    """The tester's game: three plays read, the fourth told by the players; the camera then
    reads the fourth tile and the board again: nothing more is sent, nothing is refused."""
    table = Table()
    seen = {"A4": ("red", "tiger"), "C9": ("yellow", "swan"), "B10": ("green", "horse")}
    for p in table.watch.board(4.0, seen):
        table.watch.arrived(p)
        table.apply(p)
    told = PlayObserved(t=24.0, player="Ben", slot=5, animals=("fish",))
    table.watch.arrived(told)
    assert table.watch.board(24.1, {**seen, "D5": ("blue", "fish")}) == []
    table.apply(told)
    assert [c.TYPE for c in table.calls].count("revealed") == 1
    assert table.watch.board(24.5, {**seen, "D5": ("blue", "fish")}) == []
    assert _illegal(table.calls) == []


def test_a_refused_play_lets_a_different_reading_go_but_never_the_same():
    table = Table()
    # slot 4 on a board whose cell A4 the referee holds taken would be refused; here the referee
    # refuses because the play comes when it is not Ana's to make: simulate with a refusal call
    sent = table.watch.board(3.0, {"A4": ("red", "tiger")})
    from companion.events import InvalidObservation

    table.watch.applied(sent[0], [InvalidObservation.rejecting(sent[0], "test refusal", at=3.0)])
    table.watch.state = table.ref.apply(table.ref.initial_state(), GameStart(t=0.0, players=PLAYERS, seed=5))[0]
    assert table.watch.board(3.5, {"A4": ("red", "tiger")}) == []  # the same play: never again
    again = table.watch.board(4.0, {"A4": ("red", "horse")})
    assert [(p.player, p.animals) for p in again] == [("Ana", ("horse",))]


def test_the_service_tells_the_watch_what_arrives_before_the_jitter_buffer(tmp_path):
    """Through the service with a jitter buffer: the camera's frames come every 0.1 s; a play
    arrives, the camera keeps seeing the tile (its stable reading turns to another animal half
    a second later) until it is applied 1 s later: one play, no refusal."""
    ref = CarrosselReferee()
    journal = Journal(tmp_path / "j.db")
    session = journal.start_session("carrossel", {})
    clock = ManualClock()
    watch = CarrosselWatch(ref)
    service = Service(ref, clock, journal=journal, session=session, delay_s=1.0, observers=[watch])
    service.emit(GameStart(t=0.0, players=PLAYERS, seed=5))
    service._drain()
    clock.advance(1.0)
    service._release()
    sent = []
    for k in range(20):  # 2 s of frames with Ana's tile on A4
        t = 2.0 + 0.1 * k
        clock.advance(t - clock.now())
        for obs in watch.board(t, {"A4": ("red", "tiger" if k < 5 else "horse")}):
            sent.append(obs)
            service.emit(obs)
        service._drain()
        service._release()
    assert len(sent) == 1
    calls = [e for e in journal.entries(session) if e.kind == "call"]
    assert [c.type for c in calls if c.type in ("illegal_play", "invalid_observation")] == []
    assert [c.type for c in calls].count("play_received") == 1
    journal.close()


def test_a_restarted_camera_does_not_send_a_play_pending_in_the_journal(tmp_path):
    """A kill while Ana's play waited in the jitter buffer: the restarted service applies it
    from the journal; the new watch (from the restored state, without it) reads the same tile
    and must not send it again."""
    from companion.service import restore

    ref = CarrosselReferee()
    path = tmp_path / "j.db"
    journal = Journal(path)
    session = journal.start_session("carrossel", {})
    clock = ManualClock()
    service = Service(ref, clock, journal=journal, session=session, delay_s=1.0)
    service.emit(GameStart(t=0.0, players=PLAYERS, seed=5))
    service._drain()
    clock.advance(1.0)
    service._release()
    service.emit(PlayObserved(t=2.0, player="Ana", slot=4, animals=("tiger",)))
    service._drain()  # journaled on arrival, not applied: the kill comes now
    journal.close()

    journal = Journal(path)
    state, last_t, _ = restore(ref, journal, session)
    assert state.plays == ()  # the play is pending, not in the restored state
    watch = CarrosselWatch(ref, state)
    clock2 = ManualClock(origin=last_t + 0.5)
    service = Service(ref, clock2, journal=journal, session=session, state=state, last_t=last_t, delay_s=1.0,
                      observers=[watch])
    service._resume_pending()
    assert watch.board(last_t + 0.6, {"A4": ("red", "tiger")}) == []
    journal.close()


def test_the_simulated_players_tell_only_the_plays_the_referee_did_not_receive():
    from companion.sim.carrossel_camera import CameraCarrosselTable

    class Camera:
        tiles: dict = {}

        def set_table(self, **kwargs):
            if "tiles" in kwargs:
                self.tiles = kwargs["tiles"]

    table = CameraCarrosselTable(Camera(), seed=1, wait_s=20.0)
    emitted: list = []
    table._emit = emitted.append
    plays = [PlayObserved(t=5.0, player=p, slot=k + 1, animals=("fish",)) for k, p in enumerate(PLAYERS)]
    table._pending = list(plays)
    table._gate, table._gate_deadline = ("revealed",), 25.0
    for p in plays[:3]:  # the camera read three; the referee received them
        table.announce(PlayReceived(t=5.0, player=p.player, waiting_for=()))
    table.advance(25.0)
    assert [o.player for o in emitted] == ["Dev"]
    assert [o.player for o in table.fallbacks] == ["Dev"]
