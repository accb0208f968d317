"""The Monsieur Carrousel camera source at a still or noisy table
(companion/sources/monsieur_camera.py; the kit's camera_status in companion/kits/__init__.py):

* a frozen camera (the same frame over and over) is told to the table once, as the camera lost,
  and no roll is read from it: no "I could not see the die, roll it again!" every few seconds;
* a die never seen is asked for again once, not in a loop;
* a frame of noise is not the die leaving the camera's sight (no roll of its own), a roll
  entered by hand ends the camera's watch of it, and a seat unread on a single frame is not a
  seat the roof hides."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.games.monsieur_carrousel import RollAgain, SeatKid, Turn
from companion.health import Parts
from companion.kits import camera_status
from companion.sources.monsieur_camera import MonsieurCameraSource, SeatUnseen
from companion.vision.frames import Frame
from companion.vision.monsieur import MonsieurReader, MonsieurReading
from companion.vision.sim_monsieur import MonsieurScene, SimulatedMonsieurCamera

ROLL = {"phase": "roll"}  # the referee's summary while it waits for a roll
SEAT = {"phase": "seat"}


class StillFrames:
    """A frame source giving one picture over and over (a video of one photograph)."""

    def __init__(self, image: np.ndarray):
        self.image = image
        self.n = 0

    def read(self) -> Frame:
        self.n += 1
        return Frame(image=self.image, t=0.0, index=self.n)

    def close(self) -> None:
        pass


class Scripted:
    """A reader whose reading at ``t`` is ``script(t)``: the source's rules tested alone."""

    class geometry:  # noqa: N801  (the reader's attribute)
        n_seats = 12

    def __init__(self, script):
        self.script = script

    def read(self, image, stream=False, t=None):
        return self.script(t)


def board(die="orange", seats=("empty",) * 12, angle=85.0):
    return MonsieurReading("ok", carousel_angle_deg=angle, seats=tuple(seats), die=die)


class FakeTable:
    """The kit's side of ``camera_status``: the parts (told through ``told``) and ``on_end``."""

    def __init__(self):
        self.told: list = []
        self.parts = Parts(tell=self.told.append)
        self.ended: list = []

    def on_end(self, line):
        self.ended.append(line)


def run(src, t0, t1, period=0.5):
    out = []
    t = t0
    while t < t1 - 1e-9:
        out += src.step(round(t, 3))
        t += period
    return out


@pytest.fixture(scope="module")
def still_photo():
    cam = SimulatedMonsieurCamera(seed=2, clock=lambda: 0.0, scene=MonsieurScene(angle_deg=85.0, die="orange"))
    return cam.read().image


def test_a_frozen_camera_is_told_once_and_asks_for_no_roll(still_photo):
    table = FakeTable()
    src = MonsieurCameraSource(StillFrames(still_photo), MonsieurReader(), settle_s=0.5, die_unread_s=4.0,
                               on_status=camera_status(table, "opencv:still.mp4", lambda: None))
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    out = run(src, 0.0, 90.0)
    assert src.status.startswith("camera frozen")
    assert [o for o in out if o.TYPE == "die_rolled"] == []  # no roll read from one picture
    assert [o.TYPE for o in out if o.TYPE in ("spin_started", "spin_stopped")] == []
    lost = [c for c in table.told if c.TYPE == "part_lost"]
    assert len(lost) == 1 and lost[0].part == "camera" and "same picture" in lost[0].fix
    assert table.parts.snapshot()["camera"]["state"] == "lost"
    assert table.parts.snapshot()["camera"]["detail"].startswith("camera frozen")
    from companion.announcers.speech import Catalogue

    line = Catalogue("en").text(lost[0], "monsieur-carrousel", console=True)  # the screen says why
    assert "same picture over and over" in line


def test_a_frozen_camera_that_moves_again_is_back():
    table = FakeTable()
    frozen = [True]

    def script(t):
        return MonsieurReading("camera frozen: the same frame for 3.0 s") if frozen[0] else board()

    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(script), settle_s=0.5,
                               on_status=camera_status(table, "opencv:0", lambda: None))
    run(src, 0.0, 5.0)
    frozen[0] = False
    run(src, 5.0, 6.0)
    assert [c.TYPE for c in table.told] == ["part_lost", "part_back"]


def test_a_die_never_seen_is_asked_for_again_once_not_in_a_loop():
    die = ["unknown"]
    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(lambda t: board(die=die[0])),
                               settle_s=0.5, die_unread_s=4.0)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    out = [o for o in run(src, 0.0, 10.0) if o.TYPE == "die_rolled"]
    assert [o.colour for o in out] == ["unknown"]  # the cocked die: one roll unknown
    src.announce(RollAgain(t=out[0].t, player="Ana"), ROLL)
    assert [o for o in run(src, 10.0, 90.0) if o.TYPE == "die_rolled"] == []  # not again every 5 s
    die[0] = "blue"  # the die lands where the camera sees it
    rolled = [o for o in run(src, 90.0, 92.0) if o.TYPE == "die_rolled"]
    assert [o.colour for o in rolled] == ["blue"]


def test_a_die_held_out_of_sight_before_the_turn_is_not_a_roll_read_unknown_at_the_ask():
    """Ben holds the die for 10 s while Ana's turn goes on: when Ben's turn is asked, the camera
    gives him die_unread_s to roll, not an immediate "roll again"."""
    die = ["orange"]
    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(lambda t: board(die=die[0])),
                               settle_s=0.5, die_unread_s=4.0)
    run(src, 0.0, 3.0)
    die[0] = "unknown"  # picked up at 3 s, while nobody is asked to roll
    run(src, 3.0, 13.0)
    src.announce(Turn(t=13.0, player="Ben", number=2, kids_left=11), ROLL)
    early = [o for o in run(src, 13.0, 16.5) if o.TYPE == "die_rolled"]
    assert early == []  # within die_unread_s of the ask: Ben is rolling
    late = [o for o in run(src, 16.5, 18.0) if o.TYPE == "die_rolled"]
    assert [o.colour for o in late] == ["unknown"] and late[0].t >= 13.0 + 4.0


def test_a_frame_of_noise_is_not_a_roll():
    """The die stays in sight; one frame in ten reads no colour (noise): no roll of the camera's."""
    def script(t):
        return board(die="unknown" if round(t * 2) % 10 == 3 else "orange")

    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(script), settle_s=0.5)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    assert [o for o in run(src, 0.0, 60.0) if o.TYPE == "die_rolled"] == []
    # a real roll: the die out of sight for a second, then a colour
    def rolled(t):
        return board(die="unknown" if 60.0 <= t < 61.0 else "green")

    src.reader = Scripted(rolled)
    out = [o for o in run(src, 60.0, 63.0) if o.TYPE == "die_rolled"]
    assert [o.colour for o in out] == ["green"]


def test_a_roll_entered_by_hand_ends_the_cameras_watch():
    die = ["orange"]
    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(lambda t: board(die=die[0])),
                               settle_s=0.5)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    run(src, 0.0, 5.0)
    # the roll is entered by hand: the referee asks for the kid's seat
    src.announce(SeatKid(t=5.0, player="Ana", kid="Nelson", colour="orange", seats=(1, 7), seat=1), SEAT)
    die[0] = "unknown"
    run(src, 5.0, 7.0)  # the die picked up ...
    die[0] = "orange"
    out = run(src, 7.0, 20.0)  # ... and put back: not a roll, nobody asked for one
    assert [o for o in out if o.TYPE == "die_rolled"] == []


def test_seats_unread_on_single_frames_are_not_hidden_by_the_roof():
    """No kid put on the seat asked for, every seat read but for a frame of noise now and then:
    the camera sees the seats, it must not say the roof hides them."""
    told: list = []

    def script(t):
        seats = ["empty"] * 12
        k = round(t * 2)
        if k % 7 == 0:
            seats[k % 12] = "unknown"
        return board(seats=seats)

    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(script), settle_s=0.5,
                               ask=told.append, seat_unseen_s=15.0)
    src.announce(SeatKid(t=0.0, player="Ana", kid="Nelson", colour="orange", seats=(1, 7), seat=1), SEAT)
    run(src, 0.0, 60.0)
    assert told == []
    # a seat the roof hides on every frame is told, once
    def hidden(t):
        seats = ["empty"] * 12
        seats[3] = "unknown"
        return board(seats=seats)

    src.reader = Scripted(hidden)
    src.announce(SeatKid(t=60.0, player="Ben", kid="Lulu", colour="purple", seats=(3,), seat=3), SEAT)
    run(src, 60.0, 90.0)
    assert len(told) == 1 and isinstance(told[0], SeatUnseen) and told[0].hidden == "3"
