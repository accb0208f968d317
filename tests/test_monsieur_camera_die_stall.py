"""A roll the camera cannot finish never leaves the Monsieur Carrousel table waiting in silence
(companion/sources/monsieur_camera.py):

* a die that tumbles in sight (its top colour changing from frame to frame, never out of sight
  for two frames) has left its rest: where it comes to rest is the roll;
* a die that keeps moving (picked up, played with, never at rest in view), a die never seen
  again after one ``unknown`` roll (off the table, under the roof), or a die that lies where it
  was: ``die_stall_s`` of session time after the roll was asked with no roll read, the table is
  told once (``die_unseen``: put the die on the board where the camera sees it, press the die
  button, or enter the colour) and the game goes on when the die is read or entered;
* the simulated table enters the colour by hand when told, and a game stopped in that stall
  resumes: its question said again, the tell once more, the game on.

Scripted readers and rendered frames (:mod:`companion.vision.sim_monsieur`), session time
given with each frame; nothing sleeps."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest

from companion.assembly import assemble
from companion.clock import ManualClock
from companion.config import validate
from companion.games.monsieur_carrousel import RollAgain, SeatKid, Turn
from companion.journal import Journal
from companion.sources.monsieur_camera import MonsieurCameraSource
from companion.vision.monsieur import MonsieurReader
from companion.vision.sim_monsieur import MonsieurScene, SimulatedMonsieurCamera, die_place
from tests.test_monsieur_camera import one_board
from tests.test_monsieur_camera_source_still import ROLL, SEAT, Scripted, StillFrames, board, run

COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")


def scripted(script, told):
    """A camera source on a scripted reader (frames every 0.5 s in :func:`run`)."""
    src = MonsieurCameraSource(StillFrames(np.zeros((4, 4, 3), np.uint8)), Scripted(script), settle_s=0.5,
                               die_unread_s=4.0, ask=told.append)
    src.die_stall_s = 15.0  # the default, said here: the tests' times follow from it
    return src


def rolls(out):
    return [o.colour for o in out if o.TYPE == "die_rolled"]


def tells(told):
    return [c for c in told if c.TYPE == "die_unseen"]


def test_a_die_tumbling_in_sight_has_left_its_rest_and_its_rest_is_the_roll():
    """Orange at rest when the turn is asked; the die tumbles across the board read with a new
    top colour on every frame (never out of sight), then rests blue: the roll is blue."""
    die = ["orange"]
    told: list = []
    src = scripted(lambda t: board(die=die[0]), told)
    run(src, 0.0, 3.0)  # orange at rest
    src.announce(Turn(t=3.0, player="Ana", number=1, kids_left=12), ROLL)
    out = run(src, 3.0, 5.0)
    for k, t in enumerate(np.arange(5.0, 7.0, 0.5)):  # four frames, four faces, none orange
        die[0] = ("red", "green", "yellow", "purple")[k]
        out += run(src, float(t), float(t) + 0.5)
    die[0] = "blue"
    out += run(src, 7.0, 9.0)
    assert rolls(out) == ["blue"]
    assert tells(told) == []


def test_a_die_that_never_comes_to_rest_in_view_is_told_once():
    """Picked up, then held and turned over above the board: a colour on most frames, never the
    same one for the settle time, never out of sight for ``die_unread_s``. Told once,
    ``die_stall_s`` after the ask; then it is put down red: the roll is red."""
    held = [True]

    def script(t):
        if not held[0]:
            return board(die="red")
        if 2.0 <= t < 3.0:
            return board(die="unknown")  # the hand takes it
        k = round(t * 2)
        return board(die="unknown" if k % 3 == 0 else COLOURS[k % 6])

    told: list = []
    src = scripted(script, told)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    out = run(src, 0.0, 14.5)
    assert tells(told) == []  # not before die_stall_s
    out += run(src, 14.5, 60.0)
    assert rolls(out) == []
    said = tells(told)
    assert len(said) == 1 and 15.0 <= said[0].t <= 15.5  # once, not every frame
    assert said[0].player == "Ana" and said[0].reason == "moving"
    held[0] = False
    out += run(src, 60.0, 62.0)
    assert rolls(out) == ["red"] and len(tells(told)) == 1


def test_a_die_never_seen_again_after_an_unknown_roll_is_told_once_and_the_game_goes_on():
    """The die rolled off the table: ``unknown`` once (the referee asks for another roll), then
    the die is never seen. Told once ``die_stall_s`` after the roll asked again; the die put
    back on the board is read."""
    die = ["orange"]
    told: list = []
    src = scripted(lambda t: board(die=die[0]), told)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    run(src, 0.0, 1.0)
    die[0] = "unknown"
    out = run(src, 1.0, 5.5)
    assert rolls(out) == ["unknown"]
    asked = out[-1].t  # 5.0: 4 s after it left
    src.announce(RollAgain(t=asked, player="Ana"), ROLL)  # "I could not see the die. Roll it again!"
    out = run(src, 5.5, 120.0)
    assert rolls(out) == []  # not a loop of "roll again"
    said = tells(told)
    assert len(said) == 1 and asked + 15.0 <= said[0].t <= asked + 16.0
    assert said[0].reason == "unseen" and said[0].player == "Ana"
    die[0] = "green"  # back on the board where the camera sees it
    assert rolls(run(src, 120.0, 122.0)) == ["green"]


def test_a_colour_entered_by_hand_ends_the_wait_and_each_roll_asked_is_told_once():
    told: list = []
    src = scripted(lambda t: board(die="unknown"), told)  # the die is gone for good
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    out = run(src, 0.0, 10.0)
    assert rolls(out) == ["unknown"]
    src.announce(RollAgain(t=10.0, player="Ana"), ROLL)
    run(src, 10.0, 30.0)
    assert len(tells(told)) == 1
    # a grown-up enters the colour (the game page, companion enter, the die button): the referee
    # asks for the kid's seat; the camera watches no roll any more
    src.announce(SeatKid(t=30.0, player="Ana", kid="Nelson", colour="red", seats=(2, 8), seat=2), SEAT)
    run(src, 30.0, 90.0)
    assert len(tells(told)) == 1
    # Ben's turn, the die still gone: his own stall, told once
    src.announce(Turn(t=90.0, player="Ben", number=2, kids_left=11), ROLL)
    run(src, 90.0, 150.0)
    said = tells(told)
    assert len(said) == 2 and said[1].player == "Ben" and 105.0 <= said[1].t <= 105.5


def test_a_die_that_lies_where_it_was_is_told_once_then_its_roll_is_read():
    """Nobody rolls (or a roll that landed on the colour it had, never out of sight): the
    table hears once that no roll was seen; the roll after it is read."""
    die = ["orange"]
    told: list = []
    src = scripted(lambda t: board(die=die[0]), told)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    out = run(src, 0.0, 40.0)
    assert rolls(out) == []
    said = tells(told)
    assert len(said) == 1 and said[0].reason == "still" and 15.0 <= said[0].t <= 15.5
    die[0] = "unknown"
    out = run(src, 40.0, 41.0)
    die[0] = "yellow"
    out += run(src, 41.0, 43.0)
    assert rolls(out) == ["yellow"] and len(tells(told)) == 1


def test_a_frozen_camera_holds_the_wait():
    """The camera lost (frozen) is told by the kit; the die's tell waits for frames again."""
    frozen = [True]
    told: list = []

    def script(t):
        from companion.vision.monsieur import MonsieurReading

        return MonsieurReading("camera frozen: the same frame for 3.0 s") if frozen[0] else board(die="unknown")

    src = scripted(script, told)
    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12), ROLL)
    run(src, 0.0, 60.0)
    assert tells(told) == []
    frozen[0] = False
    out = run(src, 60.0, 100.0)
    assert rolls(out) == ["unknown"]  # from the frames that move, as before the freeze
    assert tells(told) == []  # a new roll is asked after "unknown": the referee's roll_again


# ---------------------------------------------------------------------------- rendered frames


def test_rendered_a_die_moved_without_a_hand_is_read_again_in_a_stream():
    """The reader keeps the die's reading in a stream while the die area is unchanged: a die
    moved to a new place with a new top (no hand over the board) is a change, never the colour
    of a frame before (it was on about half of these frames)."""
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=5, clock=lambda: now[0],
                                  scene=MonsieurScene(angle_deg=85.0, die="orange", die_xy_mm=(150.0, -100.0)))
    reader = MonsieurReader()
    rng = np.random.default_rng(5)
    for i in range(3):
        now[0] = 0.25 * i
        assert reader.read(cam.read().image, stream=True, t=now[0]).die == "orange"
    wrong, right = [], 0
    for k in range(1, 17):
        now[0] = 0.5 + 0.25 * k
        top = ("red", "yellow", "purple", "blue")[k % 4]
        cam.set_scene(die=top, die_xy_mm=die_place(rng, cam.renderer.geometry), die_yaw_deg=37.0 * k)
        die = reader.read(cam.read().image, stream=True, t=now[0]).die
        right += die == top
        if die not in (top, "unknown"):
            wrong.append((k, top, die))
    assert wrong == [] and right >= 12


def test_rendered_a_die_tumbling_for_ever_is_told_once_and_its_rest_read():
    """The simulated camera: the die tumbles about the board (a new face up and a new place on
    every frame) for 20 s, then lies still, green: told once, then the roll is green."""
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=5, clock=lambda: now[0],
                                  scene=MonsieurScene(angle_deg=85.0, die="orange", die_xy_mm=(150.0, -100.0)))
    told: list = []
    src = MonsieurCameraSource(cam, MonsieurReader(), settle_s=0.5, die_unread_s=4.0, ask=told.append)
    src.die_stall_s = 10.0
    out: list = []
    rng = np.random.default_rng(5)

    def frames(t0, t1, tumble):
        t = t0
        k = 0
        while t < t1 - 1e-9:
            now[0] = round(t, 3)
            if tumble:
                k += 1
                cam.set_scene(die=("red", "yellow", "purple", "blue")[k % 4],
                              die_xy_mm=die_place(rng, cam.renderer.geometry), die_yaw_deg=37.0 * k)
            out.extend(src.step(now[0]))
            t += 0.25

    frames(0.0, 1.5, False)
    assert src.latest[2].die == "orange"  # the scene this test needs: the die read at rest
    src.announce(Turn(t=1.5, player="Ana", number=1, kids_left=12), ROLL)
    frames(1.5, 21.5, True)
    assert rolls(out) == []
    said = tells(told)
    assert len(said) == 1 and 11.5 <= said[0].t <= 12.0 and said[0].reason == "moving"
    cam.set_scene(die="green", die_xy_mm=(-140.0, 100.0), die_yaw_deg=10.0)
    frames(21.5, 23.5, False)
    assert rolls(out) == ["green"] and len(tells(told)) == 1


# ---------------------------------------------------------------------------- the service


class _DieBlind:
    """The real reader with the die never read (a die the camera cannot see)."""

    def __init__(self, reader):
        self.reader = reader
        self.geometry = reader.geometry

    def read(self, frame, *args, **kwargs):
        reading = self.reader.read(frame, *args, **kwargs)
        return dataclasses.replace(reading, die="unknown", die_status="no die top found")


def camera_game(tmp_path, new=True, journal=None):
    """A ``--camera sim`` service whose camera never reads the die (frames every 0.2 s, the
    die's tell after 5 s); its journal, and the calls it makes."""
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console"]}, "sim": {"seed": 1},
                       "monsieur_carrousel": {"table_file": str(one_board(tmp_path))},
                       "monsieur_carrousel_sim": {"think_s": 0.5, "unreadable_die_rate": 0.0},
                       "camera": {"frame_period_s": 0.2}})
    journal = journal or Journal(tmp_path / "j.db")
    service = assemble("monsieur-carrousel", config, journal, ManualClock, "sim",
                       players=["Ana", "Ben"], new=new, stream=io.StringIO(), options={"camera": "sim"})
    source = service.scheduled[1].source
    source.die_stall_s = 5.0
    source.reader = _DieBlind(source.reader)
    calls: list = []
    service.announcers.append(type("Tap", (), {"announce": lambda self, c, s=None: calls.append(c),
                                               "close": lambda self: None})())
    return service, calls, journal


def test_a_game_whose_die_the_camera_never_reads_goes_on_with_the_colour_entered(tmp_path):
    service, calls, journal = camera_game(tmp_path)
    seen = service.scheduled[1]
    service.run(until=20.0)
    service.close()
    journal.close()
    kinds = [c.TYPE for c in calls]
    assert kinds[:2] == ["game_started", "turn"] and "roll_again" in kinds  # the first roll: unknown
    assert kinds.count("die_unseen") == 1
    told = next(c for c in calls if c.TYPE == "die_unseen")
    entered = [o for o in seen.fallbacks if o.TYPE == "die_rolled"]
    assert len(entered) == 1 and entered[0].t >= told.t and entered[0].colour in COLOURS
    after = kinds[kinds.index("die_unseen"):]
    assert "seat_kid" in after and "invalid_observation" not in kinds


def test_a_game_stopped_in_the_die_stall_resumes_says_its_question_and_goes_on(tmp_path):
    first, calls, journal = camera_game(tmp_path)
    first.run(until=7.0)  # the first roll read unknown, the roll asked again; nobody sees the die
    first.close()
    kinds = [c.TYPE for c in calls]
    assert "roll_again" in kinds and "die_unseen" not in kinds and "seat_kid" not in kinds
    asked = [c for c in calls if c.TYPE == "roll_again"][-1]
    again, calls2, _ = camera_game(tmp_path, new=False, journal=journal)
    assert again.state.phase == "roll"
    start = again.clock.now()
    again.run(until=start + 25.0)
    again.close()
    journal.close()
    kinds2 = [c.TYPE for c in calls2]
    assert calls2[0] == asked  # the question said again first: "I could not see the die. Roll it again!"
    assert "seat_kid" in kinds2 and "invalid_observation" not in kinds2  # the colour entered: the game goes on
    stalled = kinds2[:kinds2.index("seat_kid")]
    assert stalled.count("die_unseen") == 1  # the stall told once (a later roll has its own)


# ---------------------------------------------------------------------------- the words


@pytest.mark.parametrize("lang", ["en", "fr", "pt-BR"])
@pytest.mark.parametrize("reason", ["unseen", "moving", "still"])
def test_the_tell_says_what_to_do(lang, reason):
    from companion.announcers.speech import Catalogue
    from companion.sources.monsieur_camera import DieUnseen

    catalogue = Catalogue(lang)
    call = DieUnseen(t=20.0, player="Ana", reason=reason)
    spoken = catalogue.text(call, "monsieur-carrousel")  # the voice, to the kids
    assert spoken and "Ana" in spoken and "{" not in spoken and "companion" not in spoken and "colour=" not in spoken
    text = catalogue.text(call, "monsieur-carrousel", console=True)  # the screen: the command
    assert text and "companion enter monsieur-carrousel die_rolled colour=" in text and "{" not in text
    others = {catalogue.text(DieUnseen(t=20.0, player="Ana", reason=r), "monsieur-carrousel")
              for r in ("unseen", "moving", "still")}
    assert len(others) == 3  # each stall says its own thing
