"""The service loop on the simulated table, with gpiozero's mock pins and an injected clock."""

from __future__ import annotations

import io
import threading

import pytest

from companion.announcers.lights import LightsAndBuzzer
from companion.clock import ManualClock
from companion.config import validate
from companion.commands.replay import replay_session
from companion.assembly import assemble
from companion.games.carrousel import CARDS, Board, CarrouselReferee, Claim, GameStart, Position
from companion.journal import Journal
from companion.service import Service
from companion.sources.buttons import ClaimButtons
from tests.doubles import Recorder


@pytest.fixture
def factory(mock_factory):
    return mock_factory


def sim_service(tmp_path, seed=1, players="Ana,Ben,Cleo,Dev", extra=None, journal=None, new=True):
    data = {"service": {"pin_factory": "mock", "announcers": ["console", "lights"]}, "sim": {"seed": seed},
            "buttons": {"bounce_s": 0.001}}
    for k, v in (extra or {}).items():
        data.setdefault(k, {}).update(v)
    config = validate(data)
    journal = journal or Journal(tmp_path / "j.db", sync="normal")
    out = io.StringIO()
    clocks = []

    def make_clock(origin):
        clocks.append(ManualClock(origin))
        return clocks[-1]

    service = assemble("carrousel", config, journal, make_clock, "sim", players=players.split(","), new=new,
                       stream=out)
    recorder = Recorder()
    service.announcers.append(recorder)
    return service, recorder, out, journal


def test_simulated_game_plays_to_a_winner_with_every_kind_of_call(tmp_path):
    """`companion run` on the simulated table: a whole game to a winner, with claims,
    penalties, a dead end and an illegal move, all on the console."""
    service, rec, out, journal = sim_service(tmp_path, seed=1)
    state = service.run()
    service.close()
    kinds = [c.TYPE for c in rec.calls]
    assert kinds[0] == "game_started" and kinds[-1] == "winner"
    for needed in ("point", "penalty", "dead_end", "illegal_move", "move"):
        assert needed in kinds, needed
    winner = rec.calls[-1]
    assert state.winner == winner.player and winner.scores[winner.player] == 10
    text = out.getvalue()
    for words in ("scores with", "PENALTY", "DEAD END", "ILLEGAL MOVE", "WINNER"):
        assert words in text


def test_same_seed_same_game(tmp_path):
    """The simulated table is seeded: the same seed plays the same game."""
    a, rec_a, _, _ = sim_service(tmp_path / "a", seed=5)
    b, rec_b, _, _ = sim_service(tmp_path / "b", seed=5)
    c, rec_c, _, _ = sim_service(tmp_path / "c", seed=6)
    for s in (a, b, c):
        s.run()
        s.close()
    assert [x.to_json() for x in rec_a.calls] == [x.to_json() for x in rec_b.calls]
    assert [x.to_json() for x in rec_a.calls] != [x.to_json() for x in rec_c.calls]


def test_dead_end_is_called_at_its_due_time_by_a_tick(tmp_path):
    """The loop wakes at the referee's deadline: the dead end comes at exactly 20.0 s even
    when nothing else happens."""
    referee = CarrouselReferee()
    clock = ManualClock()
    rec = Recorder()
    service = Service(referee, clock, announcers=[rec], scheduled=[])
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=4))
    # Nothing more will ever come: the loop runs until the dead end, then stops (no sources).
    service.run()
    dead = [c for c in rec.calls if c.TYPE == "dead_end"]
    assert len(dead) == 1 and dead[0].t == 20.0 and clock.now() == 20.0


def test_claims_in_one_batch_are_applied_earliest_first(factory):
    """ruling (docs/vocabulary.md): simultaneous claims are resolved by the earliest time, whatever the order in
    which the threads delivered them."""
    referee = CarrouselReferee(advanced=True)
    rec = Recorder()
    service = Service(referee, ManualClock(), announcers=[rec])
    start = Position.from_text(".gbykr.")
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=start.spaces, seed=9, advanced=True))
    service._drain()
    # One legal move (no lucky bird) to an order shown by one of the face-up cards.
    face_up = [c for p in service.state.players for c in p.face_up]
    target = next(
        after
        for m in start.legal_moves()
        if (after := start.apply(m)).first_three in face_up
    )
    service.emit(Board(t=1.0, spaces=target.spaces))
    service.emit(Claim(t=1.31, player="Ana"))
    service.emit(Claim(t=1.30, player="Ben"))  # pressed first, delivered second
    service._drain()
    scored = [c for c in rec.calls if c.TYPE in ("point", "claim_too_late")]
    assert [(c.TYPE, c.player) for c in scored] == [("point", "Ben"), ("claim_too_late", "Ana")]


def test_claim_button_press_lights_the_led_and_sounds_the_buzzer(factory):
    """A claim button (gpiozero Button on a mock pin) -> referee -> the scorer's LED and the
    buzzer (TonalBuzzer on a MockPWMPin)."""
    referee = CarrouselReferee()
    clock = ManualClock()
    buttons = ClaimButtons(["Ana", "Ben"], [5, 6, 13, 19], bounce_s=None, pin_factory=factory)
    lights = LightsAndBuzzer(["Ana", "Ben"], [16, 20, 21, 26], 12, factory)
    service = Service(referee, clock, sources=[buttons], announcers=[lights])
    for s in service.sources:
        s.start(service.emit, clock)
    start = Position.from_text(".gbykr.")  # first three: red black yellow
    ben_card = ("black", "red", "yellow")  # one swap away
    others = [c for c in CARDS if c not in (ben_card, start.first_three)]
    deck = others[:9] + [ben_card] + others[9:] + [start.first_three]
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=start.spaces, deck=tuple(deck)))
    service._drain()
    service.emit(Board(t=1.0, spaces=Position.from_text(".gbyrk.").spaces))
    service._drain()
    assert service.state.player("Ben").score == 0
    clock.set(1.5)
    led_ana, led_ben = factory.pin(16), factory.pin(20)
    buzzer = factory.pin(12)
    # (the game's start flashes every LED and plays its notes; the point's pattern replaces them)
    factory.pin(6).drive_low()  # Ben presses
    factory.pin(6).drive_high()
    service._drain()
    assert service.state.player("Ben").score == 1
    assert led_ben.state and not led_ana.state
    assert buzzer.frequency == pytest.approx(523.25, abs=0.1)  # C5, the first note of a point
    # A wrong claim by Ana: her LED blinks, the buzzer plays the low A3.
    factory.pin(5).drive_low()
    factory.pin(5).drive_high()
    service._drain()
    assert service.state.player("Ana").score == 0
    assert buzzer.frequency == pytest.approx(220.0, abs=0.1)
    buttons.stop()
    lights.close()


def test_a_failing_announcer_does_not_stop_the_referee(tmp_path):
    """the rulings in docs/vocabulary.md (Announcers): one that fails degrades; the loop and the journal go on."""

    class Broken:
        def announce(self, call, summary):
            raise OSError("no audio device")

        def close(self):
            pass

    referee = CarrouselReferee()
    rec = Recorder()
    journal = Journal(tmp_path / "j.db")
    session = journal.start_session("carrousel", {})
    service = Service(referee, ManualClock(), journal=journal, session=session, announcers=[Broken(), rec])
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=4))
    service.emit(Claim(t=1.0, player="Ben"))
    service._drain()
    assert [c.TYPE for c in rec.calls][:1] == ["game_started"]
    assert len([e for e in journal.entries(session) if e.kind == "call"]) == len(rec.calls)


def test_a_failing_simulated_source_stops_the_run_with_one_line_and_keeps_the_journal(tmp_path):
    """A scheduled (simulated) source that raises is a bug of the simulation, not a table's
    part: the loop stops with a one-line ``failure`` naming it, instead of waiting forever for a
    table that will never move again; what was journaled stays."""

    class Breaks:
        def __init__(self):
            self.t = 1.0

        def start(self, emit, clock):
            self.emit = emit

        def stop(self):
            pass

        def next_time(self):
            return self.t

        def advance(self, now):
            self.emit(GameStart(t=now, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=4))
            self.t = None
            raise RuntimeError("simulated table made an illegal observation: test")

    class Forever:  # an entry source: alive as long as the process is
        def start(self, emit, clock):
            pass

        def stop(self):
            pass

    referee = CarrouselReferee()
    journal = Journal(tmp_path / "j.db")
    session = journal.start_session("carrousel", {})
    table = Breaks()
    service = Service(referee, ManualClock(), journal=journal, session=session, sources=[table, Forever()],
                      scheduled=[table])
    state = service.run()
    assert not referee.is_over(state)
    assert service.failure is not None and "Breaks failed" in service.failure and "illegal observation" in service.failure
    assert [e.kind for e in journal.entries(session)][:1] == ["observation"]


def test_journal_replay_reproduces_every_call(tmp_path):
    """`companion replay`: the journaled observations give exactly the journaled calls."""
    service, rec, _, journal = sim_service(tmp_path, seed=3)
    service.run()
    service.close()
    session = journal.sessions()[-1]
    result = replay_session(journal, session)
    assert result.identical
    assert result.calls == [c.to_json() for c in rec.calls]


def test_restart_resumes_the_unfinished_game_with_the_same_scores(tmp_path):
    """A service stopped mid-game resumes from the journal with the same scores."""
    service, rec, _, journal = sim_service(tmp_path, seed=2)
    service.run(until=40.0)
    service.close()
    scores = service.referee.summary(service.state)["scores"]
    assert sum(scores.values()) > 0 and not service.referee.is_over(service.state)
    again, rec2, out, _ = sim_service(tmp_path, seed=2, journal=journal, new=False)
    assert again.session == service.session
    assert again.referee.summary(again.state)["scores"] == scores
    assert "resumed session" in out.getvalue()
    final = again.run()
    again.close()
    assert again.referee.is_over(final)
    assert replay_session(journal, journal.session(service.session)).identical


def test_emit_is_thread_safe_and_wakes_the_loop():
    """Sources emit from their own threads; the loop wakes for each observation."""
    referee = CarrouselReferee()
    rec = Recorder()
    from companion.clock import MonotonicClock

    service = Service(referee, MonotonicClock(), announcers=[rec], sources=[_Idle()])
    loop = threading.Thread(target=service.run, kwargs={"stop_when_over": False})
    loop.start()
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=4))
    done = threading.Event()

    class Waker:
        def announce(self, call, summary):
            done.set()

        def close(self):
            pass

    service.announcers.append(Waker())
    service.emit(Claim(t=0.001, player="Ana"))
    assert done.wait(5.0)
    service.stop()
    loop.join(5.0)
    assert not loop.is_alive()
    assert "penalty" in [c.TYPE for c in rec.calls] or "lucky_bird" in [c.TYPE for c in rec.calls]


class _Idle:
    def start(self, emit, clock):
        pass

    def stop(self):
        pass


def test_paced_clock_plays_the_same_game_at_any_speed(tmp_path):
    """The simulated table on simulated time paced by the real clock: --speed 1000 plays
    exactly the game the manual clock plays (same seed, same calls, same times)."""
    from companion.clock import PacedClock

    manual, rec_manual, _, _ = sim_service(tmp_path / "m", seed=8)
    manual.run()
    manual.close()
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console", "lights"]}, "sim": {"seed": 8},
                       "buttons": {"bounce_s": 0.001}})
    journal = Journal(tmp_path / "p.db", sync="normal")
    paced = assemble("carrousel", config, journal, lambda o: PacedClock(o, 1000.0), "sim", new=True,
                     stream=io.StringIO())
    rec = Recorder()
    paced.announcers.append(rec)
    paced.run()
    paced.close()
    assert [c.to_json() for c in rec.calls] == [c.to_json() for c in rec_manual.calls]


def test_until_stops_exactly_there_and_the_game_stays_resumable(tmp_path):
    from companion.clock import PacedClock

    clock = PacedClock(0.0, 1000.0)
    referee = CarrouselReferee()
    service = Service(referee, clock, scheduled=[])
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=4))
    service.run(until=12.5)
    assert clock.now() == 12.5 and not referee.is_over(service.state)


def test_the_jitter_buffer_judges_a_quick_claim_on_the_board_the_camera_reports_later():
    """With a camera a board is reported only once stable (its time: when it first appeared);
    a claim pressed meanwhile must be judged on that board. The service's jitter buffer
    applies everything delay_s late, in time order."""
    start = Position.from_text(".gbykr.")  # first three: red black yellow
    ben_card = ("black", "red", "yellow")  # one swap away
    others = [c for c in CARDS if c not in (ben_card, start.first_three)]
    deck = tuple(others[:9] + [ben_card] + others[9:] + [start.first_three])
    results = {}
    for delay_s in (0.0, 0.7):
        rec = Recorder()
        clock = ManualClock()
        service = Service(CarrouselReferee(), clock, announcers=[rec], delay_s=delay_s, sources=[_Idle()])
        service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=start.spaces, deck=deck))
        service.run(until=1.1, stop_when_over=False)
        service.emit(Claim(t=1.1, player="Ben"))  # the horses were swapped at 1.0; Ben presses at 1.1
        service.run(until=1.6, stop_when_over=False)
        # the camera's reading has settled: it reports the board as first seen at 1.0
        service.emit(Board(t=1.0, spaces=Position.from_text(".gbyrk.").spaces))
        service.run(until=3.0, stop_when_over=False)
        results[delay_s] = [c.TYPE for c in rec.calls if c.TYPE in ("point", "penalty")]
        assert [c.TYPE for c in rec.calls][0] == "game_started"
    assert results[0.0] == ["penalty"]  # judged at once, on the reading before the move
    assert results[0.7] == ["point"]


def test_the_jitter_buffer_delays_the_dead_end_tick_too():
    """A buffered service calls the dead end at its due time (the call's t), once every
    observation stamped before it has been applied."""
    clock = ManualClock()
    rec = Recorder()
    service = Service(CarrouselReferee(dead_end_s=2.0), clock, announcers=[rec], delay_s=0.5)
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=4))
    service.run(until=3.0, stop_when_over=False)
    dead = [c for c in rec.calls if c.TYPE == "dead_end"]
    assert len(dead) == 1 and dead[0].t == 2.0
