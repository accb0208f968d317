"""After a restart (a power blip, a crash), a resumed game says again what it was waiting for:
the newest call of a type in its referee's ``prompts`` (Monsieur Carrousel's seat to fill,
Carnival's turn, Carrossel's board to turn), once, before anything new, and not journaled again;
a game that was paused says ``paused``. Real SQLite journal, injected clock, nothing sleeps."""

from __future__ import annotations

from companion.clock import ManualClock
from companion.games import GAMES, referee_for
from companion.games.monsieur_carrousel import DieRolled, GameStart
from companion.journal import Journal
from companion.service import Service, open_session
from tests.doubles import Recorder


def _serve(journal, referee, new):
    opened = open_session(referee, journal, {}, {"players": ["Ana", "Ben"]}, new)
    recorder = Recorder()
    service = Service(referee, ManualClock(opened.last_t), journal=journal, session=opened.session,
                      announcers=[recorder], state=opened.state, last_t=opened.last_t,
                      paused_at=opened.last_t if opened.paused else None, restate=opened.asked)
    return service, recorder, opened


def _monsieur_after_the_die(journal, referee):
    """A new Monsieur Carrousel game whose first die read red: the service, its recorder and
    the last prompt (the kid to seat)."""
    service, recorder, _ = _serve(journal, referee, new=True)
    service.emit(GameStart(t=0.0, players=("Ana", "Ben")))
    service.emit(DieRolled(t=3.0, colour="red"))
    service.run(until=3.0, stop_when_over=False)
    return service, recorder, [c for c in recorder.calls if c.TYPE in referee.prompts][-1]


def test_a_monsieur_game_resumed_after_the_die_asks_again_for_the_kid_to_seat(tmp_path):
    path = str(tmp_path / "journal.db")
    referee = referee_for("monsieur-carrousel")
    with Journal(path) as journal:
        service, recorder, asked = _monsieur_after_the_die(journal, referee)
        assert asked.TYPE == "seat_kid"  # put the kid on a red seat
        steps = len(list(journal.entries(service.session)))
    with Journal(path) as journal:  # the power came back
        again, recorder2, opened = _serve(journal, referee_for("monsieur-carrousel"), new=False)
        assert opened.resumed and opened.asked == (asked,)
        again.run(until=3.0, stop_when_over=False)
        assert recorder2.calls == [asked]  # said once again, nothing else happened
        again.run(until=3.0, stop_when_over=False)
        assert recorder2.calls == [asked]  # not twice
        assert len(list(journal.entries(again.session))) == steps  # not journaled again


def test_a_game_that_asked_nothing_yet_says_nothing_again(tmp_path):
    """Carrousel has no prompts: a resumed game is quiet until the next move."""
    from companion.games.carrousel import GameStart as CarrouselStart, Position

    path = str(tmp_path / "journal.db")
    with Journal(path) as journal:
        service, _, _ = _serve(journal, referee_for("carrousel"), new=True)
        service.emit(CarrouselStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces,
                                    seed=1, dead_end_s=20.0))
        service.run(until=1.0, stop_when_over=False)
    with Journal(path) as journal:
        again, recorder, opened = _serve(journal, referee_for("carrousel"), new=False)
        assert opened.resumed and opened.asked == ()
        again.run(until=1.0, stop_when_over=False)
        assert recorder.calls == []


def test_every_game_declares_its_prompts_as_call_types_it_makes():
    """A prompt that names no call type of the game would never be said again."""
    import importlib

    from companion.events import Call

    for name in GAMES:
        referee = referee_for(name)
        module = importlib.import_module(type(referee).__module__)
        call_types = {v.TYPE for v in vars(module).values() if isinstance(v, type) and issubclass(v, Call)
                      and hasattr(v, "TYPE")}
        assert isinstance(referee.prompts, frozenset)
        assert referee.prompts <= call_types, (name, referee.prompts - call_types)


def test_a_carnival_turn_under_way_asks_nothing_again_and_one_not_begun_asks_for_its_turn(tmp_path):
    """The tester's restart after Ana had rolled: her turn's start ("exchange a wild or roll the
    dice") is not said again; a restart before she did anything says it."""
    from companion.games.carnival import Assign, GameStart as CarnivalStart, Roll

    path = str(tmp_path / "journal.db")
    with Journal(path) as journal:
        service, recorder, _ = _serve(journal, referee_for("carnival"), new=True)
        service.emit(CarnivalStart(t=0.0, players=("Ana", "Ben"), discard=("swings:lights", "swings:seats")))
        service.run(until=0.0, stop_when_over=False)
        turn = [c for c in recorder.calls if c.TYPE == "turn"][-1]
    with Journal(path) as journal:
        again, recorder2, opened = _serve(journal, referee_for("carnival"), new=False)
        assert opened.asked == (turn,)
        again.run(until=0.0, stop_when_over=False)
        assert recorder2.calls == [turn]
        again.emit(Roll(t=1.0, player="Ana", dice=(2, 5, 6)))
        again.run(until=1.0, stop_when_over=False)
        assert recorder2.calls[-1].TYPE == "rolled"
        rolled = recorder2.calls[-1]
    with Journal(path) as journal:
        again, recorder3, opened = _serve(journal, referee_for("carnival"), new=False)
        assert opened.asked == (rolled,)  # "Ana rolls 2, 5 and 6 ... Choose two dice", not "roll the dice"
        again.emit(Assign(t=2.0, player="Ana", dice=(2, 5)))
        again.run(until=2.0, stop_when_over=False)
        assert recorder3.calls[-1].TYPE == "dice_assigned"
    with Journal(path) as journal:
        _, _, opened = _serve(journal, referee_for("carnival"), new=False)
        assert opened.asked == ()  # the turn is under way: no stale "choose two dice"


def test_a_refused_entry_after_a_question_keeps_the_question_said_again(tmp_path):
    """The tester's restart after a refused entry: the game still waits for the seat to fill,
    and the table hears it again (the refusal is not the game's question)."""
    path = str(tmp_path / "journal.db")
    referee = referee_for("monsieur-carrousel")
    with Journal(path) as journal:
        service, recorder, asked = _monsieur_after_the_die(journal, referee)
        service.emit(GameStart(t=4.0, players=("Ana", "Ben")))  # refused: the game is under way
        service.run(until=4.0, stop_when_over=False)
        assert recorder.calls[-1].TYPE == "invalid_observation"
    with Journal(path) as journal:
        _, _, opened = _serve(journal, referee_for("monsieur-carrousel"), new=False)
        assert opened.asked == (asked,) and asked.TYPE == "seat_kid"
