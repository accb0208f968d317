"""A Carrossel game on the simulated camera's table, stopped with a turn of the board asked for
(a power blip just after "Turn the board"), goes on when restarted: the players turn the board
only once the camera has seen it at rest (the camera takes its first angle at rest as the angle
the referee expects, so a board turned before would be taken as not turned and the game would
wait for the players' fallback, 20 s later)."""

from __future__ import annotations

import dataclasses

import pytest

from companion.games.carrossel import CarrosselReferee
from companion.sim.carrossel_camera import CameraCarrosselTable


class _Camera:
    """The simulated camera's table as the sim table lays it out (what it was shown, in order)."""

    def __init__(self):
        self.tiles: dict = {}
        self.angle = None
        self.shown: list[dict] = []

    def set_table(self, board_angle_deg=None, tiles=None, hands=None, moving=None):
        self.shown.append({"angle": board_angle_deg, "moving": moving})
        if board_angle_deg is not None:
            self.angle = board_angle_deg
        if tiles is not None:
            self.tiles = dict(tiles)


class _Clock:
    def __init__(self, t):
        self.t = t

    def now(self):
        return self.t


def _resumed_at_the_first_turn():
    """seed 3, four players: the game as journaled after round 1's reveal ("Turn the board")."""
    table = CameraCarrosselTable(_Camera(), seed=3)
    ref = CarrosselReferee()
    state = ref.initial_state()
    n = next(i for i, s in enumerate(table.steps) if s.obs.TYPE == "board_turned")
    for step in table.steps[:n]:
        state, _ = ref.apply(state, step.obs)
    assert state.phase == "rotate"
    camera = _Camera()
    again = CameraCarrosselTable(camera, seed=3)
    again.resume(state, 7.3)
    emitted = []
    again.start(emitted.append, _Clock(7.3))
    return again, camera, emitted


def _run_until(table, t_end):
    while (t := table.next_time()) is not None and t <= t_end:
        table.advance(t)


def test_a_resumed_table_turns_the_board_only_once_the_camera_has_seen_it_at_rest():
    table, camera, _ = _resumed_at_the_first_turn()
    shown = len(camera.shown)
    _run_until(table, 9.0)  # the camera is still finding the board's markers
    assert camera.shown[shown:] == [] and camera.angle == pytest.approx(270.0)
    table.camera_at_rest(9.0, 270.0)
    _run_until(table, 11.0)
    moved = [s for s in camera.shown[shown:] if s["angle"] is not None]
    assert moved and moved[0]["moving"] and all(s["angle"] != 270.0 for s in moved)
    assert camera.angle == pytest.approx(180.0, abs=5.0)  # a quarter turn clockwise from setup


def test_a_camera_that_never_settles_does_not_stall_the_resumed_table():
    table, camera, _ = _resumed_at_the_first_turn()
    shown = len(camera.shown)
    _run_until(table, 7.3 + table.wait_s - 0.1)
    assert camera.shown[shown:] == []
    _run_until(table, 7.3 + table.wait_s + 2.0)  # the players go on after their wait
    assert camera.angle == pytest.approx(180.0, abs=5.0)


def test_a_reveal_read_only_in_part_resumes_and_the_players_tell_the_rest():
    """The tester's power cut: the camera had read three plays of a round's reveal, in another
    order than the stream's (the fourth tile not read yet), the game was paused and killed. The
    restart finds the round (it was refused before: "not this seed's simulated game"), lays
    the revealed tiles out, and the missing play is told after the players' wait."""
    table = CameraCarrosselTable(_Camera(), seed=3)
    ref = CarrosselReferee()
    state = ref.initial_state()
    first = next(i for i, s in enumerate(table.steps) if s.obs.TYPE == "play" and s.kind == "camera_play")
    for step in table.steps[:first]:
        state, _ = ref.apply(state, step.obs)
    block = []
    for step in table.steps[first:]:
        block.append(step)
        if step.revealed:
            break
    assert len(block) == 4 and all(s.kind == "camera_play" for s in block)
    for step in reversed(block[1:]):  # three of the four, the camera's order, not the stream's
        state, calls = ref.apply(state, dataclasses.replace(step.obs, t=max(step.obs.t, state.last_t)))
        assert [c.TYPE for c in calls] == ["play_received"]
    camera = _Camera()
    again = CameraCarrosselTable(camera, seed=3)
    again.resume(state, 30.0)
    assert camera.tiles == block[-1].tiles  # the round's tiles lie revealed
    emitted = []
    again.start(emitted.append, _Clock(30.0))
    again.camera_at_rest(31.0, camera.angle)
    _run_until(again, 30.0 + 2 * again.wait_s + 1.0)
    told = [o for o in emitted if o.TYPE == "play"]
    assert [o.player for o in told] == [block[0].obs.player]  # the missing play, by the players
    state, calls = ref.apply(state, told[0])
    assert "revealed" in [c.TYPE for c in calls]
