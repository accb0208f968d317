"""A Carrossel game on the simulated camera's table, stopped with a turn of the board asked for
(a power blip just after "Turn the board"), goes on when restarted: the players turn the board
only once the camera has seen it at rest (the camera takes its first angle at rest as the angle
the referee expects, so a board turned before would be taken as not turned and the game would
wait for the players' fallback, 20 s later)."""

from __future__ import annotations

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
