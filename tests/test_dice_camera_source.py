"""The dice camera: frames of the tray -> Carnival ``roll`` observations for the active player.

Videos are made at test time from a real photo (tests/dice_video.py: the photo's dice at rest,
cut out and tumbling before) and read back through ``opencv:FILE``. Time comes from a
ManualClock: the source's thread waits one frame period per frame and the clock jumps.
"""

from __future__ import annotations

import argparse
import threading

import numpy as np
import pytest

from companion.clock import ManualClock
from companion.config import load
from companion.games.carnival import Assign, CarnivalReferee, GameStart, Roll
from companion.readers.dice import DiceReader, DieReading
from companion.sources.dice_camera import (
    DiceCameraSource,
    dice_source_from_config,
    dice_status,
    load_tray,
    tray_toml,
)
from companion.vision.frames import CameraLost, Frame
from tests.dice_video import PHOTO, TRAY, roll_video

FPS = 15.0
READER = DiceReader(tray=TRAY)
DISCARD = ("carousel:seats", "swings:lights")


class Table:
    """The real Carnival referee between the source and the test: observations in, calls out,
    each call (with the summary) told to the source as the service does."""

    def __init__(self, source, players=("Ana", "Ben")):
        self.ref = CarnivalReferee()
        self.source = source
        self.state = self.ref.initial_state()
        self.calls = []
        self.lock = threading.Lock()
        self.apply(GameStart(t=0.0, players=players, discard=DISCARD))

    def apply(self, obs):
        with self.lock:
            self.state, calls = self.ref.apply(self.state, obs)
            for call in calls:
                self.calls.append(call)
                self.source.announce(call, self.ref.summary(self.state))

    def types(self):
        return [c.type for c in self.calls]


def run_thread(source, emit, clock):
    source.start(emit, clock)
    source.join(timeout=60)
    assert source._thread is not None and not source._thread.is_alive(), "the source did not end"
    source.stop()


def video_source(path, **kw):
    return DiceCameraSource(f"opencv:{path}", {"settle_s": 0.5}, reader=READER, frame_period_s=1 / FPS, **kw)


def test_a_roll_on_video_is_read_for_the_active_player_and_ends_once(tmp_path):
    """Empty tray, dice tumbling, dice at rest for 1 s, read through opencv:FILE: exactly one
    roll, with the photo's true values, for the player whose turn it is; the referee calls
    ``rolled``; at the end of the file, on_end once with the summary."""
    video = roll_video(tmp_path / "dice.avi", rolls=1, fps=FPS)
    ends, statuses = [], []
    source = video_source(video.path, on_end=ends.append, on_status=statuses.append)
    table = Table(source)
    assert source.expected() == ("Ana", True)
    emitted = []

    def emit(obs):
        emitted.append(obs)
        table.apply(obs)

    clock = ManualClock()
    run_thread(source, emit, clock)
    assert [type(o) for o in emitted] == [Roll]
    roll = emitted[0]
    assert roll.player == "Ana" and roll.dice == video.values == (3, 1, 5)
    # The roll comes once the dice have been still settle_s: after the first frame at rest.
    rest_t = video.rest_starts[0] / FPS
    assert rest_t + 0.5 <= roll.t <= rest_t + 0.5 + 3 / FPS
    rolled = [c for c in table.calls if c.type == "rolled"]
    assert len(rolled) == 1 and rolled[0].player == "Ana" and rolled[0].dice == (3, 1, 5)
    assert ends == [f"dice.avi: {video.frames} frames, 1 roll"]
    assert statuses == []
    # Still frames are not all read: a reading when the tray is still, one after settle_s.
    assert source.readings_made <= 6


def test_no_roll_while_none_is_expected(tmp_path):
    """The same video before the game and after the roll was assigned: nothing is emitted."""
    video = roll_video(tmp_path / "dice.avi", rolls=2, fps=FPS)
    ends = []
    source = video_source(video.path, on_end=ends.append)
    assert source.expected() == ("", False)  # no game yet
    emitted = []
    run_thread(source, emitted.append, ManualClock())
    assert emitted == [] and ends == [f"dice.avi: {video.frames} frames, 0 rolls"]

    source = video_source(video.path)
    table = Table(source)
    table.apply(Roll(t=1.0, player="Ana", dice=(2, 4, 6)))
    table.apply(Assign(t=2.0, player="Ana", dice=(2, 4)))
    assert table.state.step == "actions" and source.expected() == ("Ana", False)
    emitted = []
    run_thread(source, emitted.append, ManualClock(3.0))
    assert emitted == []


def test_a_re_read_before_assigning_is_a_roll_again(tmp_path):
    """Two throws in one turn before the dice are assigned: two rolls (the second replaces the
    first, docs/carnival.md ruling 6)."""
    video = roll_video(tmp_path / "dice.avi", rolls=2, fps=FPS)
    source = video_source(video.path)
    table = Table(source)
    emitted = []

    def emit(obs):
        emitted.append(obs)
        table.apply(obs)

    run_thread(source, emit, ManualClock())
    assert [o.dice for o in emitted] == [(3, 1, 5), (3, 1, 5)]
    assert table.types().count("rolled") == 2 and "invalid_observation" not in table.types()


def test_four_dice_are_said_and_not_rolled(tmp_path):
    video = roll_video(tmp_path / "four.avi", rolls=1, fps=FPS, four=True)
    statuses = []
    source = video_source(video.path, on_status=statuses.append)
    Table(source)
    emitted = []
    run_thread(source, emitted.append, ManualClock())
    assert emitted == []
    assert statuses == ["I see four dice: roll three dice"]


class ScriptedFrames:
    """Frames from a list; an item that is an exception is raised instead."""

    name = "scripted"

    def __init__(self, items):
        self.items, self.i, self.closed = list(items), 0, False

    def read(self):
        if self.i >= len(self.items):
            return None
        item = self.items[self.i]
        self.i += 1
        if isinstance(item, Exception):
            raise item
        return Frame(item, 0.0, self.i - 1)

    def close(self):
        self.closed = True


class FakeReader:
    """Stands in for the dice reader in the source's own logic tests: the frame's first pixel
    says which readings it shows."""

    tray = None

    def __init__(self, scenes):
        self.scenes = scenes
        self.reads = 0

    def read(self, image):
        self.reads += 1
        return self.scenes[int(image[0, 0, 0])]


def scene(code, size=64):
    img = np.full((size, size, 3), 128, np.uint8)
    img[0, 0] = code
    img[10:20, 10 + 3 * code: 20 + 3 * code] = 20 * code  # the dice move with the scene
    return img


def dice(*values):
    return [DieReading((10.0 * i, 0.0, 10.0 * i + 8, 8.0), v) for i, v in enumerate(values)]


def test_a_frame_source_that_raises_is_lost_then_back():
    parts, ends = [], []
    frames = [scene(0)] * 3 + [CameraLost("camera lost: opencv:0 gave no frame 5 times in a row"),
                               CameraLost("camera lost: still nothing")] + [scene(0)] * 2
    source = DiceCameraSource(ScriptedFrames(frames), reader=FakeReader({0: []}), frame_period_s=0.1,
                              retry_s=0.5, on_part=lambda ok, d: parts.append((ok, d)), on_end=ends.append)
    run_thread(source, lambda o: None, ManualClock())
    assert parts == [(False, "camera lost: opencv:0 gave no frame 5 times in a row"), (True, "camera back: scripted")]
    assert ends == ["scripted: 5 frames, 0 rolls"]


def test_a_reader_error_stops_the_source_and_is_a_part_lost():
    class Broken(FakeReader):
        def read(self, image):
            raise RuntimeError("boom")

    parts = []
    source = DiceCameraSource(ScriptedFrames([scene(0)] * 5), reader=Broken({}), frame_period_s=0.1,
                              on_part=lambda ok, d: parts.append((ok, d)))
    run_thread(source, lambda o: None, ManualClock())
    assert parts == [(False, "dice reader error: boom")]


def steps(source, images, t0=0.0, dt=0.1):
    out = []
    for k, img in enumerate(images):
        out += source.step(t0 + k * dt, img)
    return out


def playing(source, step="choose", player="Ben"):
    from companion.events import Call

    source.announce(Call(t=0.0), {"phase": "playing", "player": player, "step": step})


def test_an_unreadable_die_is_sent_as_unknown_and_said():
    """Three dice, one unknown: the roll goes to the referee (which answers dice_unreadable)
    and the table is told why."""
    statuses = []
    reader = FakeReader({0: [], 1: dice(4, "unknown", 2)})
    source = DiceCameraSource(ScriptedFrames([]), {"settle_s": 0.3}, reader=reader, on_status=statuses.append)
    playing(source)
    out = steps(source, [scene(0)] * 3 + [scene(1)] * 6)
    # Scene 1 first at 0.3 s, still from then on: settled 0.3 s later.
    assert out == [Roll(t=pytest.approx(0.6), player="Ben", dice=(4, "unknown", 2))]
    assert statuses == ["a die cannot be read: roll it again"]
    ref = CarnivalReferee()
    state, _ = ref.apply(ref.initial_state(), GameStart(t=0.0, players=("Ana", "Ben"), discard=DISCARD))
    _, calls = ref.apply(state, Roll(t=1.0, player="Ana", dice=(4, "unknown", 2)))
    assert [c.type for c in calls] == ["dice_unreadable"]


def test_the_settle_time_counts_from_the_first_still_frame_and_moving_frames_are_not_read():
    reader = FakeReader({0: [], 1: dice(1, 2, 3), 2: dice(6, 6, 6)})
    source = DiceCameraSource(ScriptedFrames([]), {"settle_s": 0.5}, reader=reader)
    playing(source)
    tumbling = [scene(1), scene(2)] * 3
    out = steps(source, tumbling + [scene(1)] * 8)
    assert reader.reads == 2  # once when still (stamped with the first still frame), once 0.5 s on
    assert out == [Roll(t=pytest.approx(1.1), player="Ben", dice=(1, 2, 3))]
    # Dice that lie still stay one roll; a new throw (motion) of the same dice is a new one.
    assert steps(source, [scene(1)] * 10, t0=1.5) == []
    again = steps(source, [scene(2), scene(1)] + [scene(1)] * 6, t0=3.0)
    assert [o.dice for o in again] == [(1, 2, 3)]


def test_the_calls_alone_say_when_a_roll_is_expected():
    """Without a summary, the source follows the calls: a turn in step choose, a roll that was
    not a triple (assign: re-reads), the dice assigned (no roll), the next turn."""
    from companion.games.carnival import DiceAssigned, Rolled, TurnStarted, WildExchanged, Winner

    source = DiceCameraSource(ScriptedFrames([]), reader=FakeReader({}))
    assert source.expected() == ("", False)
    source.announce(TurnStarted(t=0, player="Ana", turn=1, step="choose", hand=6), {})
    assert source.expected() == ("Ana", True)
    source.announce(Rolled(t=1, player="Ana", dice=(1, 2, 3)), {})
    assert source.expected() == ("Ana", True)
    source.announce(DiceAssigned(t=2, player="Ana", dice=(1, 2)), {})
    assert source.expected() == ("Ana", False)
    source.announce(TurnStarted(t=3, player="Ben", turn=2, step="choose", hand=3), {})
    assert source.expected() == ("Ben", True)
    source.announce(WildExchanged(t=4, player="Ben"), {})
    assert source.expected() == ("Ben", False)
    source.announce(TurnStarted(t=5, player="Ana", turn=3, step="choose", hand=3), {})
    source.announce(Rolled(t=6, player="Ana", dice=(4, 4, 4), triple=True), {})
    assert source.expected() == ("Ana", False)
    source.announce(Winner(t=7, player="Ana"), {})
    assert source.expected() == ("Ana", False)


def test_dice_status_words():
    assert dice_status([]) == ""
    assert dice_status(dice(1, 2, 3)) == ""
    assert dice_status(dice(1, 2)) == "I see two dice: roll three dice"
    assert dice_status(dice(1)) == "I see one die: roll three dice"
    assert dice_status(dice(1, "unknown", "unknown")) == "two dice cannot be read: roll them again"


# ---------------------------------------------------------------- configuration and the tray


def config_with(tmp_path, camera_source, tray=None):
    text = f'[camera]\nsource = "{camera_source}"\nframe_period_s = 0.0\n'
    if tray is not None:
        text += f"[dice]\ntray = {list(tray)}\n"
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load(path)


def test_a_tray_outside_the_frame_is_one_line(tmp_path):
    video = roll_video(tmp_path / "dice.avi", rolls=1, fps=FPS, empty_s=0.2, tumble_s=0.2, rest_s=0.2)
    config = config_with(tmp_path, f"opencv:{video.path}", tray=(90, 140, 700, 495))
    with pytest.raises(ValueError) as err:
        dice_source_from_config(config, tray_file=tmp_path / "none.toml")
    msg = str(err.value)
    assert "\n" not in msg
    assert "[90, 140, 700, 495] ([dice] tray) lies outside the 640 x 640 px camera frame" in msg
    assert "companion calibrate tray" in msg


def test_the_tray_calibration_file_is_used_and_checked(tmp_path):
    video = roll_video(tmp_path / "dice.avi", rolls=1, fps=FPS, empty_s=0.2, tumble_s=0.2, rest_s=0.2)
    config = config_with(tmp_path, f"opencv:{video.path}")
    cal = tmp_path / "dice-tray.toml"
    cal.write_text(tray_toml(TRAY, (640, 640), "tray.jpg"))
    source = dice_source_from_config(config, tray_file=cal)
    try:
        assert source.reader.tray == TRAY and source.tray_from == str(cal)
        assert source._pending is not None  # the first frame, read to check the tray, is kept
    finally:
        source.stop()
    cal.write_text(tray_toml(TRAY, (1280, 720), "tray.jpg"))
    with pytest.raises(ValueError, match=r"drawn on 1280 x 720 px frames but the camera gives 640 x 640"):
        dice_source_from_config(config, tray_file=cal)
    cal.write_text("box = [1, 2, 3]\n")
    with pytest.raises(ValueError, match=r"dice-tray.toml: box: expected \[x0, y0, x1, y1\]"):
        dice_source_from_config(config, tray_file=cal)


def test_the_simulated_camera_is_refused_for_dice(tmp_path):
    with pytest.raises(ValueError, match="renders the Carrousel table, not a dice tray"):
        dice_source_from_config(config_with(tmp_path, "sim"))


def test_calibrate_tray_writes_the_file_the_source_reads(tmp_path, capsys):
    from companion.commands import calibrate_tray

    out = tmp_path / "cal" / "dice-tray.toml"
    args = argparse.Namespace(image=str(PHOTO), box="90,140,545,495", out=str(out), overlay=None)
    assert calibrate_tray.run(args) == 0
    assert load_tray(out) == (TRAY, (640, 640))
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out)
    assert "3 dice seen in the tray: [3, 1, 5]" in captured.err
    with pytest.raises(ValueError, match=r"outside the 640 x 640 px photo"):
        calibrate_tray.run(argparse.Namespace(image=str(PHOTO), box="90,140,545,700", out=str(out), overlay=None))
