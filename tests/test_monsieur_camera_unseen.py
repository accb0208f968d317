"""A kid put on a seat the camera cannot read (a token the reader cannot tell from the seat,
the roof over it): the camera source tells the table once, after ``seat_unseen_s`` of session
time, how to enter the seat; the simulated table then enters it by hand (a fallback), so
``--camera sim`` games play to their end on every seed."""

from __future__ import annotations

import io
import os
import time

import pytest

from companion.assembly import assemble
from companion.clock import ManualClock
from companion.config import validate
from companion.games.monsieur_carrousel import SeatKid
from companion.journal import Journal
from companion.sources.monsieur_camera import MonsieurCameraSource, SeatUnseen
from companion.vision.monsieur import MonsieurReader
from companion.vision.sim_monsieur import MonsieurScene, SimulatedMonsieurCamera
from tests.test_monsieur_camera import one_board

#: seat 1 with the natural-wood token, the carousel at 85 degrees and a hand hovering over the
#: board slot 4 next to it (board angle 135)
HIDDEN_SEAT, ANGLE, HAND = 1, 85.0, "seat:4"


class _SeatHidden(MonsieurReader):
    """The real reader, with seat :data:`HIDDEN_SEAT` unseen on every frame (as behind the roof
    or under a hand): the reader got good enough to read this scene's token on some frames, and
    what is tested here is the source's telling, not the reader."""

    def read(self, frame, *args, **kwargs):
        import dataclasses

        reading = super().read(frame, *args, **kwargs)
        seats = list(reading.seats)
        seats[HIDDEN_SEAT] = "unknown"
        return dataclasses.replace(reading, seats=tuple(seats))


@pytest.fixture(scope="module")
def reader():
    return _SeatHidden()


def play(src, cam, now, t0, t1, period=0.5):
    out = []
    t = t0
    while t < t1 - 1e-9:
        now[0] = round(t, 3)
        out += src.step(now[0])
        t += period
    return out


def test_a_seat_the_camera_cannot_read_is_told_once_per_seat_asked(reader):
    now = [0.0]
    kids = [None] * 12
    kids[HIDDEN_SEAT] = "natural_wood"
    cam = SimulatedMonsieurCamera(seed=4, clock=lambda: now[0], scene=MonsieurScene(angle_deg=ANGLE, kids=tuple(kids)))
    cam.set_hands((HAND,))
    told: list = []
    src = MonsieurCameraSource(cam, reader, settle_s=0.3, ask=told.append, seat_unseen_s=15.0)
    out = play(src, cam, now, 0.0, 2.0)
    assert src.latest[2].seats[HIDDEN_SEAT] == "unknown"  # the scene this test needs
    src.announce(SeatKid(t=2.0, player="Cleo", kid="Lulu", colour="purple", seats=(HIDDEN_SEAT, 7), seat=HIDDEN_SEAT))
    out += play(src, cam, now, 2.0, 16.5)
    assert told == []  # not before 15 s of waiting
    out += play(src, cam, now, 16.5, 40.0)
    assert len(told) == 1 and isinstance(told[0], SeatUnseen)
    assert 17.0 <= told[0].t <= 18.0 and str(HIDDEN_SEAT) in told[0].hidden.split(", ")
    assert not [o for o in out if o.TYPE == "kid_seated"]
    # the next kid asked for: told again once, after its own wait
    src.announce(SeatKid(t=40.0, player="Ana", kid="Paul", colour="purple", seats=(HIDDEN_SEAT,), seat=HIDDEN_SEAT))
    play(src, cam, now, 40.0, 70.0)
    assert len(told) == 2 and 55.0 <= told[1].t <= 56.0


def test_a_seat_the_camera_reads_is_not_told():
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=4, clock=lambda: now[0], scene=MonsieurScene(angle_deg=ANGLE))
    told: list = []
    # a reader of its own: a stream's kept plan from another test's frames (the angle read a
    # tenth of a degree off) may leave seat 2, at the roof's edge from this camera, unseen
    src = MonsieurCameraSource(cam, MonsieurReader(), settle_s=0.3, ask=told.append, seat_unseen_s=5.0)
    play(src, cam, now, 0.0, 1.0)
    assert "unknown" not in src.latest[2].seats
    src.announce(SeatKid(t=1.0, player="Ana", kid="Paul", colour="red", seats=(3,), seat=3))
    play(src, cam, now, 1.0, 12.0)  # nobody seats the kid: the camera sees every seat, nothing to tell
    assert told == []


def camera_game(tmp_path, seed, camera):
    """A ``--camera sim`` service (frames every 0.2 s, the camera's tell after 5 s) and the
    calls it makes."""
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console"]}, "sim": {"seed": seed},
                       "monsieur_carrousel": {"table_file": str(one_board(tmp_path))},
                       "monsieur_carrousel_sim": {"think_s": 0.5},
                       "camera": {"frame_period_s": 0.2}})
    service = assemble("monsieur-carrousel", config, Journal(tmp_path / "j.db"), ManualClock, "sim",
                       players=["Ana", "Ben"], new=True, stream=io.StringIO(), options={"camera": camera})
    service.scheduled[1].source.seat_unseen_s = 5.0
    calls: list = []
    service.announcers.append(type("Tap", (), {"announce": lambda self, c, s=None: calls.append(c),
                                               "close": lambda self: None})())
    return service, calls


def test_a_game_goes_past_the_seat_the_camera_cannot_read(tmp_path):
    """Seed 4 put Nelson on a seat the camera read unknown at 3.8 s and waited for ever (the
    reader now reads that seat); seed 1 puts a kid on a seat the camera cannot read at 8.4 s:
    the table is told once, enters the seat by hand, and the next turn comes."""
    service, calls = camera_game(tmp_path, 1, "sim")
    seen = service.scheduled[1]
    service.run(until=22.0)
    state = service.state
    service.close()
    kinds = [c.TYPE for c in calls]
    # a game that stood still says where and why (a part that failed, the camera's state)
    assert service.failure is None, service.failure
    where = f"{kinds} by {service.clock.now():.1f} s; camera: {seen.source.status!r}, {seen.source.frames_read} frames"
    assert kinds.count("seat_unseen") == 1 and len(seen.fallbacks) == 1, where
    told = next(c for c in calls if c.TYPE == "seat_unseen")
    entered = seen.fallbacks[0]
    assert entered.TYPE == "kid_seated" and entered.t >= told.t and str(entered.seat) in told.hidden.split(", ")
    assert state.seated >= 1 and state.seats[entered.seat] is not None
    after = kinds[kinds.index("seat_unseen"):]
    assert "kid_seated" in after and "invalid_observation" not in kinds


#: (sim seed, camera spec): the default seed, seed 4, the camera's own seed 7
GAMES = [(1, "sim"), (4, "sim"), (1, "sim:7")]


@pytest.mark.skipif(not os.environ.get("COMPANION_LONG_TESTS"),
                    reason="a whole game through rendered frames takes minutes; set COMPANION_LONG_TESTS=1")
@pytest.mark.parametrize(("seed", "camera"), GAMES)
def test_camera_sim_games_play_to_their_end(tmp_path, seed, camera):
    service, calls = camera_game(tmp_path, seed, camera)
    seen = service.scheduled[1]
    wall = time.perf_counter()
    service.run(until=1500.0)
    wall = time.perf_counter() - wall
    state = service.state
    service.close()
    kinds = [c.TYPE for c in calls]
    assert state.phase == "over", f"stuck in {state.phase} at {service.clock.now():.0f} s: {kinds[-5:]}"
    assert "invalid_observation" not in kinds
    # every seat entered by hand followed the camera's one tell for that seat, every colour
    # entered by hand a roll the camera did not read (die_unseen); a tell may find the camera
    # has read it meanwhile (seed 4's seat at 14 s): nothing is entered then
    assert kinds.count("seat_unseen") >= len([o for o in seen.fallbacks if o.TYPE == "kid_seated"])
    assert kinds.count("die_unseen") >= len([o for o in seen.fallbacks if o.TYPE == "die_rolled"])
    assert all(o.TYPE in ("kid_seated", "die_rolled") for o in seen.fallbacks)
    print(f"seed {seed} {camera}: over at {service.clock.now():.0f} s session, {wall:.1f} s wall, "
          f"{len(seen.fallbacks)} fallbacks")


@pytest.mark.parametrize("lang", ["en", "fr", "pt-BR"])
def test_the_tell_says_how_to_enter_the_seat(lang):
    from companion.announcers.speech import Catalogue

    catalogue = Catalogue(lang)
    call = SeatUnseen(t=20.0, hidden="1, 2")
    text = catalogue.text(call, "monsieur-carrousel", console=True)  # the screen: the command
    assert text and "companion enter monsieur-carrousel kid_seated seat=N" in text and "{" not in text
    spoken = catalogue.text(call, "monsieur-carrousel")  # the voice, to the kids: no command line
    assert spoken and "companion" not in spoken and "seat=" not in spoken and "{" not in spoken
