"""`companion run --game carrossel --camera sim`: the referee learns the board's turns and the plays
from rendered frames alone, and its calls match the simulated table's ground truth; at a real table
with a camera (a video file here) the board's angle comes from the camera."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest

from companion.assembly import assemble
from companion.clock import ManualClock, MonotonicClock
from companion.config import validate
from companion.games.carrossel import CarrosselReferee, GameStart
from companion.journal import Journal
from companion.vision.sim_carrossel import CarrosselConditions, SimulatedCarrosselCamera

KEY_CALLS = ("round_started", "revealed", "turn_board", "board_turned_ok", "wrong_turn", "scored", "game_over")


class Recorder:
    def __init__(self):
        self.calls = []

    def announce(self, call, summary=None):
        self.calls.append(call)

    def close(self):
        pass


def _key(call):
    d = call.to_json()
    d.pop("t", None)
    if call.TYPE == "board_turned_ok":
        d.pop("angle_deg", None)  # read from the frames: within a degree of the stream's
    return d


def test_camera_sim_calls_match_the_ground_truth(tmp_path):
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console"]}, "sim": {"seed": 3, "move_time_s": 0.3},
                       "camera": {"frame_period_s": 0.5, "settle_s": 0.5}})
    journal = Journal(tmp_path / "j.db")
    service = assemble("carrossel", config, journal, ManualClock, "sim", players=["Ana", "Ben"], new=True,
                       stream=io.StringIO(), options={"camera": "sim"})
    table = service.scheduled[0]
    rec = Recorder()
    service.announcers.append(rec)
    seen = []
    emit = service.emit

    def tap(obs):
        seen.append(obs)
        emit(obs)

    service.emit = tap
    service.run(until=18.0)
    service.close()
    # what reached the referee: the entries of the table (game_start), the rest from the camera
    from_camera = [o for o in seen if o.TYPE in ("play", "board_turned")]
    assert table.fallbacks == [], "the players had to enter what the camera did not read"
    assert sum(o.TYPE == "play" for o in from_camera) >= 4 and sum(o.TYPE == "board_turned" for o in from_camera) >= 2
    assert not [o for o in seen if o.TYPE == "play" and o in table.truth]  # none of the stream's plays was sent
    # the same calls as the stream applied directly (the truth), up to where the camera game got
    ref = CarrosselReferee()
    state, truth_calls = ref.initial_state(), []
    for obs in table.truth[: table._i]:
        state, calls = ref.apply(state, obs)
        truth_calls += [c for c in calls if c.TYPE in KEY_CALLS]
    got = [c for c in rec.calls if c.TYPE in KEY_CALLS]
    assert len(got) >= 6
    assert [_key(c) for c in got] == [_key(c) for c in truth_calls][: len(got)]
    assert not [c for c in rec.calls if c.TYPE in ("invalid_observation", "illegal_play", "play_disagrees",
                                                   "board_disagrees")]
    # the camera keeps the shared contract: the last frame read and its reading
    camera = service.scheduled[1].source
    t_s, frame, reading = camera.latest
    assert frame.shape == (480, 640, 3) and reading.status == "ok"


def _video(path, angles_ccw, frames_each=8):
    cam = SimulatedCarrosselCamera(seed=2, conditions=CarrosselConditions(tilt_deg=8.0))
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (640, 480))
    assert out.isOpened()
    for a in angles_ccw:
        cam.set_table(board_angle_deg=a)
        for _ in range(frames_each):
            out.write(cam.read().image)
    out.release()


def test_at_a_real_table_the_board_angle_comes_from_the_camera(tmp_path, mock_factory):
    video = tmp_path / "table.avi"
    _video(video, [270.0, 180.0, 180.0])  # setup, then a quarter turn clockwise (seen from above), kept
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console"]},
                       "camera": {"frame_period_s": 0.1, "settle_s": 0.3}, "encoder": {"backend": "sim"}})
    journal = Journal(tmp_path / "j.db")
    service = assemble("carrossel", config, journal, MonotonicClock, "hardware", players=["Ana", "Ben", "Cleo", "Dev"],
                       new=True, stream=io.StringIO(), options={"camera": f"opencv:{video}"})
    rec = Recorder()
    service.announcers.append(rec)
    seen = []
    emit = service.emit

    def tap(obs):
        seen.append(obs)
        emit(obs)

    service.emit = tap
    service.emit(GameStart(t=0.0, players=("Ana", "Ben", "Cleo", "Dev"), seed=5))
    service.run(until=30.0)  # ends with the video's frames
    service.close()
    turns = [o for o in seen if o.TYPE == "board_turned"]
    assert len(turns) == 1 and turns[0].angle_deg == pytest.approx(90.0, abs=2.0), turns
    # the referee judged it (a turn during the play phase is not allowed now)
    assert any(c.TYPE == "wrong_turn" for c in rec.calls), [c.TYPE for c in rec.calls]


class _Camera:
    """Records what the simulated table lays out."""

    def __init__(self):
        self.tiles: dict = {}
        self.angle = None

    def set_table(self, board_angle_deg=None, tiles=None, hands=None, moving=None):
        if board_angle_deg is not None:
            self.angle = board_angle_deg
        if tiles is not None:
            self.tiles = dict(tiles)


def test_a_restarted_camera_game_carries_on_where_the_journal_stopped():
    from companion.sim.carrossel_camera import CameraCarrosselTable

    table = CameraCarrosselTable(_Camera(), seed=4, players=("Ana", "Ben"))
    ref = CarrosselReferee()
    state = ref.initial_state()
    n = next(i for i, s in enumerate(table.steps) if s.obs.TYPE == "board_turned") + 1  # after the first turn
    for step in table.steps[:n]:
        state, _ = ref.apply(state, step.obs)
    camera = _Camera()
    again = CameraCarrosselTable(camera, seed=4, players=("Ana", "Ben"))
    again.resume(state, 50.0)
    assert again._i == n and again.next_time() == 50.0 + again.wait_s  # waits for the camera to see the board
    again.camera_at_rest(50.0, camera.angle)
    assert again.next_time() == 50.0
    names = ref.data.boards[state.side].cell_names
    assert set(camera.tiles) == {names[i] for i, tile in enumerate(state.tiles) if tile is not None} != set()
    assert camera.angle == pytest.approx(270.0 - state.angle_deg)
    with pytest.raises(ValueError, match="not this seed"):
        CameraCarrosselTable(_Camera(), seed=5, players=("Ana", "Ben")).resume(state, 50.0)
