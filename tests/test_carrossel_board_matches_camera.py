"""The game data's 4-player board is the physical table the camera reads.

The rules engine takes its board from ``calibration/carrossel.toml`` ([board.four], [seats]); the
camera reader takes the table's geometry from ``calibration/carrossel-board.toml`` (fitted to
shared/data/carrossel-table/README.md), and the camera source hands a tile read at ``A5`` to the
engine as slot 5 of sector A. These tests tie the two files: the same cells by name, the same
neighbours (the engine's sequences and objective shapes), the grid drawn as seen from above,
the same bearings, and the same sector in front of each booth at every quarter turn, the turns
going the way the table turns.
"""

from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest

from companion.calibration_dir import shipped_path
from companion.games.carrossel import DEFAULT_DATA, load_game_data, sectors_facing
from companion.sim.carrossel_camera import CameraCarrosselTable
from companion.vision.carrossel import CarrosselGeometry

DATA = load_game_data(DEFAULT_DATA)
SIDE = DATA.boards["four"]
GEO = CarrosselGeometry.load(shipped_path("carrossel-board.toml"))
CENTRES = dict(zip(GEO.cell_names, GEO.cell_centres_board_mm))
# The camera's board angle (degrees counter-clockwise) of the board at setup: the simulated
# camera's table lays sector A before the south booth, as the game data's seats say.
SETUP_CCW_DEG = inspect.signature(CameraCarrosselTable).parameters["setup_ccw_deg"].default


def _pitch() -> float:
    """The cells' pitch (mm): the smallest distance between two cell centres."""
    return min(float(np.hypot(*(CENTRES[a] - CENTRES[b]))) for a, b in itertools.combinations(CENTRES, 2))


def _pairs(test) -> set[frozenset[str]]:
    return {frozenset((a, b)) for a, b in itertools.combinations(SIDE.cell_names, 2) if test(a, b)}


def test_every_cell_the_camera_knows_is_the_same_slot_of_the_game():
    """Each of the reader's 48 cells is a slot of the game's 4-player side with the same
    sector letter and slot number, and the game has no other cell."""
    assert len(GEO.cell_names) == 48 and set(GEO.cell_names) == set(SIDE.cell_names)
    for name in GEO.cell_names:
        cell = SIDE.cell(name)
        assert (cell.sector, cell.slot) == (name[0], int(name[1:]))
        assert SIDE.slot_cell[(name[0], int(name[1:]))] == cell.index
    assert set(SIDE.sectors) == set(GEO.labels)


def test_neighbours_on_the_table_are_the_games_and_no_others():
    """Two cells one pitch apart on the table are neighbours in the game's grid (same row or
    column, next to each other), and no other two are; two cells one pitch apart along both
    axes (a diagonal step) are the grid's diagonal neighbours, and no others. The pitch is the
    table's (32 mm)."""
    pitch = _pitch()
    assert pitch == pytest.approx(32.0)

    def dist(a: str, b: str) -> float:
        return float(np.hypot(*(CENTRES[a] - CENTRES[b])))

    def grid_step(a: str, b: str) -> tuple[int, int]:
        ca, cb = SIDE.cell(a), SIDE.cell(b)
        return abs(ca.row - cb.row), abs(ca.col - cb.col)

    table_adjacent = _pairs(lambda a, b: abs(dist(a, b) - pitch) < 0.5)
    game_adjacent = _pairs(lambda a, b: grid_step(a, b) in ((0, 1), (1, 0)))
    assert table_adjacent == game_adjacent
    # A 4 x 3 grid has 17 neighbour pairs; four sectors, none across.
    assert len(game_adjacent) == 4 * 17
    table_diagonal = _pairs(lambda a, b: abs(dist(a, b) - pitch * math.sqrt(2)) < 0.5)
    game_diagonal = _pairs(lambda a, b: grid_step(a, b) == (1, 1))
    assert table_diagonal == game_diagonal and len(game_diagonal) == 4 * 12


def test_the_grid_is_the_table_seen_from_above_zero_mark_up():
    """Within a sector, a step in the game's grid (a column right, a row down) is the same step
    on the table seen from above with the zero mark (board frame +x) turned to the top: the grid
    is drawn as the table stands, not mirrored."""
    pitch = _pitch()
    for a, b in itertools.combinations(SIDE.cell_names, 2):
        if a[0] != b[0]:
            continue
        dx, dy = (CENTRES[b] - CENTRES[a]) / pitch
        up_x, up_y = -dy, dx  # the board frame turned 90 deg counter-clockwise: +x to the top
        ca, cb = SIDE.cell(a), SIDE.cell(b)
        assert (cb.col - ca.col, ca.row - cb.row) == (pytest.approx(up_x), pytest.approx(up_y)), (a, b)


def test_sector_bearings_and_clockwise_order_are_the_tables():
    """The game's bearings (clockwise from the zero mark) are the table's sector middles
    (counter-clockwise from the zero mark) negated; the game lists its sectors clockwise."""
    middle = dict(zip(GEO.labels, GEO.middle_deg))
    for s in SIDE.sectors:
        assert SIDE.bearing_deg[s] % 360.0 == pytest.approx((-middle[s]) % 360.0)
    assert list(SIDE.sectors) == sorted(SIDE.sectors, key=lambda s: SIDE.bearing_deg[s] % 360.0)
    assert SIDE.sectors[0] == "A" and middle["A"] == 0.0  # the zero mark's sector


def _seat_booths() -> list[str]:
    """The booth of each 4-player seat: the booth whose bearing from the zero mark at setup
    (clockwise) is the seat's."""
    out = []
    for seat in DATA.seats[4]:
        booths = [b for b, (_c, ccw) in GEO.booths.items()
                  if abs(((SETUP_CCW_DEG - ccw) - seat + 180.0) % 360.0 - 180.0) < 1e-6]
        assert len(booths) == 1, (seat, booths)
        out.append(booths[0])
    return out


@pytest.mark.parametrize("error_deg", [0.0, -12.0, 12.0])
@pytest.mark.parametrize("quarters", [0, 1, 2, 3, -1, -2])
def test_the_sector_before_each_seat_is_the_one_the_camera_reads_at_its_booth(quarters, error_deg):
    """At every quarter turn clockwise from setup (within the table's +-12 deg), the sector the
    engine puts before each seat is the sector the camera reads facing that seat's booth; the
    engine's clockwise angle is the camera's counter-clockwise one negated."""
    booths = _seat_booths()
    assert booths == ["south", "west", "north", "east"]  # clockwise seen from above
    angle_cw = 90.0 * quarters + error_deg
    facing = sectors_facing(SIDE, DATA.seats[4], angle_cw)
    camera = GEO.facing(SETUP_CCW_DEG - angle_cw)
    by_seat = {k: s for s, k in facing.items()}
    for k, booth in enumerate(booths):
        assert by_seat[k] == camera[booth][0], (quarters, booth)


def test_a_clockwise_quarter_turn_brings_the_next_letter_to_each_booth():
    """Phase 3 - Rotate, the roof's arrows clockwise (Setup 2): turning the table's board 90 deg
    clockwise seen from above brings A, B, C, D in turn before any one booth; counter-clockwise
    (after the Dragon) D, C, B, A."""
    for booth in ("south", "west", "north", "east"):
        seq = [GEO.facing(SETUP_CCW_DEG - 90.0 * k)[booth][0] for k in range(5)]
        start = seq[0]
        order = "ABCD"
        assert seq == [order[(order.index(start) + k) % 4] for k in range(5)]
        back = [GEO.facing(SETUP_CCW_DEG + 90.0 * k)[booth][0] for k in range(5)]
        assert back == [order[(order.index(start) - k) % 4] for k in range(5)]
    # The engine says the same of its seats.
    seat0 = [next(s for s, k in sectors_facing(SIDE, DATA.seats[4], 90.0 * q).items() if k == 0)
             for q in range(4)]
    assert seat0 == ["A", "B", "C", "D"]
