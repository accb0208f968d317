"""The camera source: frames -> settled ``board`` and ``card_seen`` observations."""

from __future__ import annotations

import itertools
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from companion.clock import ManualClock
from companion.games.carrousel import COLOURS, Board, CardSeen, CarrouselReferee, GameStart, Position, classify
from companion.sources.carrousel_camera import CarrouselCameraSource, default_seats
from companion.vision.frames import CameraLost, Frame
from companion.vision.sim import Conditions, SimulatedCamera

ROOT = Path(__file__).parent / "data" / "carrousel-table"


class ListFrames:
    """Frames from a list, then an error or the end."""

    name = "list"

    def __init__(self, images, then=None):
        self.images, self.then, self.i = list(images), then, 0
        self.closed = False

    def read(self):
        if self.i >= len(self.images):
            if self.then is not None:
                raise self.then
            return None
        img = self.images[self.i]
        self.i += 1
        return Frame(img, 0.0, self.i - 1)

    def close(self):
        self.closed = True


def run_steps(src, clock, n, dt):
    out = []
    for _ in range(n):
        obs = src.step(clock.now())
        if obs is None:
            break
        out += obs
        clock.advance(dt)
    return out


def test_default_seats():
    assert default_seats(2) == ("south", "north")
    assert default_seats(4) == ("south", "east", "north", "west")


def test_referee_from_rendered_frames_alone_matches_the_true_positions():
    """A game played on the simulated table: the calls made from the camera's observations
    equal the calls made from the true positions."""
    ref = CarrouselReferee()
    start = GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=11)
    state, started = ref.apply(ref.initial_state(), start)
    cards = started[0].cards
    rng = np.random.default_rng(4)
    positions = [start.spaces]
    pos = Position.from_spaces(start.spaces)
    for _ in range(4):
        moves = pos.legal_moves()
        pos = pos.apply(moves[int(rng.integers(len(moves)))])
        positions.append(pos.spaces)
    for perm in itertools.permutations(COLOURS):  # an illegal change: no single move makes it
        spaces = list(pos.spaces)
        slots = [i for i, x in enumerate(spaces) if x != "empty"]
        for i, c in zip(slots, perm):
            spaces[i] = c
        if classify(pos, Position.from_spaces(spaces)) is None:
            positions.append(tuple(spaces))
            break

    cam = SimulatedCamera(seed=2, conditions=Conditions(tilt_deg=15, azimuth_deg=30, roll_deg=70, kelvin=3500))
    cam.set_table(cards={"south": cards["Ana"], "north": cards["Ben"]})
    clock = ManualClock()
    statuses = []
    src = CarrouselCameraSource(cam, players=("Ana", "Ben"), settle_s=0.2, on_status=statuses.append)
    seen = []
    for spaces in positions:
        cam.set_table(spaces=spaces)
        seen += run_steps(src, clock, 4, 0.1)
    boards = [o for o in seen if isinstance(o, Board)]
    assert [b.spaces for b in boards] == positions
    assert {(o.player, o.card) for o in seen if isinstance(o, CardSeen)} == {("Ana", cards["Ana"]), ("Ben", cards["Ben"])}
    assert statuses == ["board visible"]

    def calls(observations):
        st, out = state, []
        for o in observations:
            st, c = ref.apply(st, o)
            out += [(type(x).__name__, getattr(x, "spaces", None)) for x in c]
        return out

    truth = [Board(t=b.t, spaces=p) for b, p in zip(boards, positions)]
    camera_calls = calls(seen)
    assert camera_calls == calls(truth)
    assert [c[0] for c in camera_calls] == ["MoveMade"] * 4 + ["IllegalMove"]


def test_a_hand_over_the_board_delays_the_reading_it_never_changes_it():
    cam = SimulatedCamera(seed=5, conditions=Conditions(tilt_deg=5))
    clock = ManualClock()
    src = CarrouselCameraSource(cam, settle_s=0.2)
    first = run_steps(src, clock, 4, 0.1)
    assert [o.spaces for o in first] == [cam.spaces]
    cam.set_table(spaces=Position.from_text("k..gbyr").spaces, hands=(1, 2))
    during = run_steps(src, clock, 3, 0.1)
    assert all(UNKNOWN_FREE(o) for o in during), "no partial readings are reported"
    cam.set_table(hands=())
    after = run_steps(src, clock, 4, 0.1)
    assert [o.spaces for o in during + after][-1] == Position.from_text("k..gbyr").spaces


def UNKNOWN_FREE(obs):
    return "unknown" not in obs.spaces


def test_folder_of_photos_gives_the_true_boards(tmp_path):
    names = ["carrousel_024", "carrousel_027", "carrousel_039"]  # no hands
    for n in names:
        shutil.copy(ROOT / "images" / f"{n}.jpg", tmp_path / f"{n}.jpg")
    clock = ManualClock()
    src = CarrouselCameraSource(f"folder:{tmp_path}?repeat=4", settle_s=0.2)
    seen = run_steps(src, clock, 20, 0.1)
    truth = [tuple(json.loads((ROOT / "truth" / f"{n}.json").read_text())["space_list"]) for n in names]
    assert [o.spaces for o in seen if isinstance(o, Board)] == truth
    assert src.status == "camera: end of frames"


def test_board_not_visible_then_visible_is_reported_once_each():
    import cv2

    photo = cv2.imread(str(ROOT / "images" / "carrousel_027.jpg"))
    blank = np.full_like(photo, 90)
    statuses = []
    src = CarrouselCameraSource(ListFrames([blank, blank, photo, photo]), on_status=statuses.append, settle_s=0)
    clock = ManualClock()
    run_steps(src, clock, 10, 0.1)
    assert [s.split(":")[0] for s in statuses] == ["board not visible", "board visible", "camera"]


def test_camera_lost_is_reported_and_the_thread_ends():
    import cv2

    photo = cv2.imread(str(ROOT / "images" / "carrousel_027.jpg"))
    statuses = []
    done = threading.Event()

    def status(text):
        statuses.append(text)
        if text.startswith("camera lost"):
            done.set()

    frames = ListFrames([photo], then=CameraLost("camera lost: unplugged"))
    src = CarrouselCameraSource(frames, on_status=status, settle_s=0)
    emitted = []
    src.start(emitted.append, ManualClock())
    assert done.wait(10)
    src.join(5)
    src.stop()
    assert statuses[-1] == "camera lost: unplugged"
    assert frames.closed
    assert [type(o).__name__ for o in emitted] == ["Board"]


def test_more_players_than_seats_is_an_error():
    with pytest.raises(ValueError, match="seats"):
        CarrouselCameraSource(ListFrames([]), players=("a", "b", "c"), seats=("south", "north"))


def test_built_from_the_camera_configuration(tmp_path):
    from companion.config import load
    from companion.sources.carrousel_camera import camera_source_from_config

    shutil.copy(ROOT / "images" / "carrousel_027.jpg", tmp_path / "a.jpg")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[camera]\nsource = "folder:{tmp_path}?repeat=4"\nsettle_s = 0.2\nseats = ["north", "south"]\n')
    src = camera_source_from_config(load(str(cfg)), players=("Ana", "Ben"))
    assert src.seats == ("north", "south")
    seen = run_steps(src, ManualClock(), 6, 0.1)
    truth = json.loads((ROOT / "truth" / "carrousel_027.json").read_text())
    north = next(c["triple"] for c in truth["cards"] if c["position"] == "north")
    assert [o.spaces for o in seen if isinstance(o, Board)] == [tuple(truth["space_list"])]
    assert ("Ana", tuple(north)) in {(o.player, o.card) for o in seen if isinstance(o, CardSeen)}


def test_bad_camera_setting_names_the_key(tmp_path):
    from companion.config import ConfigError, load

    cfg = tmp_path / "config.toml"
    cfg.write_text('[camera]\nsource = "webcam"\n')
    with pytest.raises(ConfigError, match="camera.*source"):
        load(str(cfg))


def test_a_lasting_change_of_light_relocks_the_exposure():
    """A lamp switched on: the board gets 2.5x brighter; after the settle time the camera is
    asked to lock its exposure again (and flush), once."""
    import cv2

    photo = cv2.imread(str(ROOT / "images" / "carrousel_027.jpg"))
    bright = np.clip(photo.astype(np.float32) * 2.0, 0, 255).astype(np.uint8)

    class Lockable(ListFrames):
        def __init__(self, images):
            super().__init__(images)
            self.relocked = 0

        def relock(self):
            self.relocked += 1

    frames = Lockable([photo] * 3 + [bright] * 6)
    statuses = []
    src = CarrouselCameraSource(frames, settle_s=0.2, on_status=statuses.append)
    run_steps(src, ManualClock(), 20, 0.1)
    assert frames.relocked == 1
    assert "light changed: exposure locked again" in statuses
