"""Carrossel's camera source (companion/sources/carrossel_camera.py): the board's turns from the
angles at rest, the plays read from the board, and the checks of a play read against a play
entered by hand and of the board as read against the referee's (told, never taken silently)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.games.carrossel import CarrosselReferee, GameStart, PlayObserved
from companion.sources.carrossel_camera import (
    AngleSettle,
    BoardDisagrees,
    CarrosselCameraSource,
    CarrosselWatch,
    PlayDisagrees,
)
from companion.vision.carrossel import CarrosselGeometry, CarrosselReading, SlotReading
from companion.vision.frames import Frame

# Colours red, blue, yellow, green; at setup (the physical table's sectors, A, D, C, B clockwise)
# sectors A, D, C, B.
PLAYERS = ("Ana", "Ben", "Cleo", "Dev")


class Table:
    """The service's part: applies an observation to the referee and tells the watch."""

    def __init__(self, players=PLAYERS):
        self.ref = CarrosselReferee()
        self.told: list = []
        self.watch = CarrosselWatch(CarrosselReferee(), tell=self.told.append, check_s=2.0)
        self.state = self.ref.initial_state()
        self.calls: list = []
        self.apply(GameStart(t=0.0, players=players, seed=5))

    def apply(self, obs):
        self.state, calls = self.ref.apply(self.state, obs)
        self.calls += calls
        self.watch.applied(obs, calls)
        return calls


def test_a_tile_on_the_board_is_the_players_play():
    table = Table()
    plays = table.watch.board(3.0, {"A4": ("red", "tiger"), "A5": "empty"})
    assert [(p.player, p.slot, p.animals, p.ability) for p in plays] == [("Ana", 4, ("tiger",), None)]
    table.apply(plays[0])
    assert [p.player for p in table.state.plays] == ["Ana"]
    # the same board again gives no second play
    assert table.watch.board(3.5, {"A4": ("red", "tiger")}) == []


def test_a_tile_outside_the_players_sector_is_no_play():
    table = Table()
    assert table.watch.board(3.0, {"B4": ("red", "tiger")}) == []  # Ana plays on A only
    assert table.watch.board(3.0, {"A4": ("red", "tiger"), "A9": ("red", "fish")}) == []  # two tiles: wait


def test_every_play_read_reveals():
    table = Table()
    seen = {"A4": ("red", "tiger"), "D5": ("blue", "fish"), "C9": ("yellow", "swan"), "B10": ("green", "horse")}
    for p in table.watch.board(4.0, seen):
        table.apply(p)
    revealed = [c for c in table.calls if c.TYPE == "revealed"]
    assert len(revealed) == 1 and table.told == []


def test_two_players_read_two_tiles_in_sector_order():
    table = Table(("Ana", "Ben"))
    sectors = table.calls[1].sectors  # round_started
    a, b = sectors["Ana"]
    plays = table.watch.board(2.0, {f"{b}4": ("red", "fish"), f"{a}4": ("red", "swan")})
    assert [(p.player, p.slot, p.animals) for p in plays] == [("Ana", 4, ("swan", "fish"))]


def test_a_play_entered_by_hand_that_disagrees_with_the_one_read_is_told():
    table = Table()
    read = table.watch.board(3.0, {"A4": ("red", "tiger")})
    table.apply(read[0])
    calls = table.apply(PlayObserved(t=3.5, player="Ana", slot=9, animals=("fish",)))
    assert calls[0].TYPE in ("invalid_observation", "illegal_play")  # the referee keeps the first
    assert len(table.told) == 1 and isinstance(table.told[0], PlayDisagrees)
    told = table.told[0]
    assert (told.player, told.entered_slot, told.entered_animals, told.read_slot, told.read_animals, told.kept) == (
        "Ana", 9, ("fish",), 4, ("tiger",), "read")


def test_a_play_entered_by_hand_that_agrees_is_not_told():
    table = Table()
    table.apply(table.watch.board(3.0, {"A4": ("red", "tiger")})[0])
    table.apply(PlayObserved(t=3.5, player="Ana", slot=4, animals=("tiger",)))
    assert table.told == []


def test_a_board_that_disagrees_with_the_plays_entered_is_told_once():
    table = Table()
    for name, slot, animal in (("Ana", 4, "tiger"), ("Ben", 5, "fish"), ("Cleo", 9, "swan"), ("Dev", 10, "horse")):
        table.apply(PlayObserved(t=1.0, player=name, slot=slot, animals=(animal,)))
    assert any(c.TYPE == "revealed" for c in table.calls)
    wrong = {"A4": ("red", "fish"), "D5": ("blue", "fish"), "C9": ("yellow", "swan"), "B10": ("green", "horse")}
    assert table.watch.board(5.0, wrong) == []
    assert table.told == []  # not yet: the check waits check_s
    table.watch.board(6.0, wrong)
    table.watch.board(7.5, wrong)
    table.watch.board(9.0, wrong)
    assert len(table.told) == 1 and isinstance(table.told[0], BoardDisagrees)
    told = table.told[0]
    assert (told.cell, told.seen_tile, told.seen_animal, told.expected_tile, told.expected_animal) == (
        "A4", True, "fish", True, "tiger")


def test_angle_settles_only_when_still():
    s = AngleSettle(0.5, still_deg=1.5)
    assert s.update(0.0, 10.0) is None
    assert s.update(0.3, 30.0) is None  # moving
    assert s.update(0.6, 30.4) is None
    assert s.update(0.9, 29.8) == pytest.approx(30.07, abs=0.01)
    assert s.update(1.2, 30.0) is None  # once


class _Frames:
    def __init__(self):
        self.n = 0

    def read(self):
        self.n += 1
        return Frame(np.zeros((8, 8, 3), np.uint8), 0.0, self.n)

    def close(self):
        pass


class _Reader:
    """Stands for the Carrossel reader: returns the readings it is given."""

    def __init__(self):
        self.geometry = CarrosselGeometry.load()
        self.angle: float | None = 270.0
        self.slots: dict = {}

    def read(self, image, stream=False, t=None):
        if self.angle is None:
            return CarrosselReading("centre marker not seen: covered")
        return CarrosselReading("ok", self.angle, slots=dict(self.slots))


def test_the_board_turns_are_the_angles_at_rest_clockwise_from_setup():
    reader = _Reader()
    statuses: list[str] = []
    src = CarrosselCameraSource(_Frames(), reader=reader, settle_s=0.5, on_status=statuses.append)
    out = []
    t = 0.0
    for angle in [270.0] * 8 + [None] * 3 + [240.0, 200.0] + [180.2] * 8 + [179.0] * 2:
        reader.angle = angle
        out += src.step(t)
        t = round(t + 0.1, 3)
    turns = [o for o in out if o.TYPE == "board_turned"]
    # counter-clockwise 270 -> 180 seen from above is a quarter turn clockwise: 90 from setup
    assert len(turns) == 1 and turns[0].angle_deg == pytest.approx(90.0, abs=0.5)
    assert "centre marker not seen: covered" in statuses and statuses[-1] == "board visible"
    assert src.latest is not None and src.latest[2].board_angle_deg == 179.0


def test_slots_go_to_the_watch_once_stable():
    table = Table()
    reader = _Reader()
    src = CarrosselCameraSource(_Frames(), reader=reader, watch=table.watch, settle_s=0.5)
    out = []
    for k in range(12):
        reader.slots = {"A4": SlotReading("tile", "tiger", "red") if k >= 2 else SlotReading("unknown")}
        out += src.step(k * 0.1)
    plays = [o for o in out if o.TYPE == "play"]
    assert [(p.player, p.slot) for p in plays] == [("Ana", 4)]
    assert plays[0].t >= 0.7  # stable for settle_s after the board and the tile were seen


def test_bad_figures_are_refused():
    with pytest.raises(ValueError, match="turn_min_deg"):
        CarrosselCameraSource(_Frames(), reader=_Reader(), still_deg=5.0, turn_min_deg=4.0)
    with pytest.raises(ValueError):
        AngleSettle(-1.0)


def test_a_play_with_two_slot_numbers_is_not_guessed():
    table = Table(("Ana", "Ben"))
    a, b = table.calls[1].sectors["Ana"]
    assert table.watch.board(2.0, {f"{a}4": ("red", "swan"), f"{b}5": ("red", "fish")}) == []


def test_the_watch_follows_a_resumed_state():
    table = Table()
    table.apply(PlayObserved(t=1.0, player="Ana", slot=4, animals=("tiger",)))
    watch = CarrosselWatch(CarrosselReferee(), state=table.state)
    assert watch.board(2.0, {"A4": ("red", "tiger")}) == []  # Ana has played: waiting for the others
    assert dataclasses.replace(table.state) == watch.state


def test_the_camera_gives_the_encoder_its_zero_and_a_slipped_board_is_called():
    """Camera and encoder together, wired as the Carrossel kit wires them at a real table: the
    camera's first angle at rest zeroes the encoder (no index magnet); an encoder stop that
    agrees with the camera is the turn; one that does not is called (the board slipped) and goes
    on uncertain, with the camera's angle."""
    from companion.kits.carrossel import BoardAngle
    from companion.rotation.angle import AngleModel
    from companion.rotation.camera_zero import CameraZero
    from companion.rotation.samples import CountSample
    from companion.rotation.spin import SpinDetector
    from companion.rotation.tracker import RotationTracker

    tracker = RotationTracker(AngleModel(1200, has_index=False), SpinDetector(settle_s=0.25))
    told: list = []
    angle = BoardAngle(0.0, follow_encoder=False)
    zero = CameraZero(tracker, tolerance_deg=5.0, hold_s=2.0, tell=told.append, part="board", convert=angle.convert)
    out: list = []
    encoder_emit = zero.wrap(lambda o: out.append(o) if o is not None else None)

    def on_rest(t_s, ccw):
        angle.reference(ccw)
        zero.at_rest(t_s, ccw)

    reader = _Reader()
    camera = CarrosselCameraSource(_Frames(), reader=reader, settle_s=0.3, on_rest=on_rest, report_turns=False,
                                   on_frame=zero.frame)
    t = 0.0
    count = 0

    def run(seconds, camera_ccw, counts_to):
        nonlocal t, count
        for _ in range(int(seconds * 10)):
            count += int((counts_to - count) / 2) if abs(counts_to - count) > 1 else counts_to - count
            for obs in tracker.feed(CountSample(t, count)):
                encoder_emit(obs)
            reader.angle = camera_ccw
            assert camera.step(t) == []  # the camera reports no turn itself: the encoder does
            t = round(t + 0.1, 3)

    run(1.0, 270.0, 0)  # at rest at setup: the camera sees 270 (CCW)
    assert zero.zeroed and tracker.angle_deg() == pytest.approx(270.0)
    run(1.5, None, -300)  # a quarter turn clockwise (a hand over the marker meanwhile)
    run(1.0, 180.0, -300)
    turns = [o for o in out if o is not None and o.TYPE == "board_turned"]
    assert len(turns) == 1 and turns[0].angle_deg == pytest.approx(90.0, abs=1.0) and not turns[0].uncertain
    assert told == []
    run(1.5, None, -600)  # another quarter turn on the encoder...
    run(1.0, 60.0, -600)  # ...but the board slipped: the camera sees it 30 degrees further
    turns = [o for o in out if o is not None and o.TYPE == "board_turned"]
    assert len(turns) == 2 and turns[1].uncertain and turns[1].angle_deg == pytest.approx(210.0, abs=1.0)
    assert len(told) == 1 and told[0].TYPE == "carousel_slipped" and told[0].part == "board"
    assert tracker.angle_deg() == pytest.approx(60.0, abs=0.5)  # re-zeroed on the camera


@pytest.mark.parametrize("lang", ["en", "fr", "pt-BR"])
def test_the_camera_s_calls_have_a_sentence_and_a_signal(lang):
    """The calls the camera's checks tell the table are worded in every catalogue, with no field
    left unfilled, and have a light and buzzer entry."""
    from companion.announcers.signals import Signals
    from companion.announcers.speech import Catalogue

    cat = Catalogue(lang)
    keys = {k.split(".")[0] for k in cat.messages("carrossel")}
    assert {"play_disagrees", "board_disagrees", "carousel_slipped"} <= keys
    assert {"play_disagrees", "board_disagrees", "carousel_slipped"} <= Signals().types("carrossel")
    import io

    from companion.announcers.console import ConsoleAnnouncer

    out = io.StringIO()
    console = ConsoleAnnouncer(stream=out, game="carrossel", language=lang)
    for call in (PlayDisagrees(t=1.0, player="Ana", entered_slot=9, entered_animals=("fish",), read_slot=4,
                               read_animals=("tiger",), kept="read"),
                 BoardDisagrees(t=2.0, cell="A4", seen_tile=True, seen_colour="red", seen_animal="fish",
                                expected_tile=True, expected_colour="red", expected_animal="tiger"),
                 BoardDisagrees(t=2.0, cell="A5", seen_tile=True, seen_colour="blue", seen_animal="swan"),
                 BoardDisagrees(t=2.0, cell="A6", expected_tile=True, expected_colour="green", expected_animal="horse")):
        console.announce(call, {})
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and not [ln for ln in lines if "{" in ln or "fish" in ln and lang != "en"], lines
    assert "A4" in lines[1] and "A5" in lines[2] and "A6" in lines[3]
