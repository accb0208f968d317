"""A flat die's pips fit its top face's square on the floor plane seen through the camera
(dice_tray.pips_fit_flat_face): some of a flat face's pips are no tilt; a foreshortened face is."""

from __future__ import annotations

import numpy as np
import pytest

from companion.readers.dice import DiceReader
from companion.readers.dice_tray import TrayGeometry, pips_fit_flat_face

U = 4.3  # mm: the pips' grid on a 16 mm die


@pytest.fixture(scope="module")
def geometry():
    # 450 mm straight above the tray's centre, 500 px focal length: a die's face about 18 px
    K = [[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]]
    R = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]
    floor = np.array([[-110.0, -80.0], [110.0, -80.0], [110.0, 80.0], [-110.0, 80.0]])
    return TrayGeometry.from_camera(K, R, [0.0, 0.0, 450.0], (640, 480), floor)


def _pips_px(geometry, places, at=(30.0, -20.0), yaw_deg=20.0, tilt_deg=0.0):
    """Frame px of pip places (grid units) on a die's top face at ``at`` (mm), turned by
    ``yaw_deg``, the face tilted by ``tilt_deg`` about its own y axis."""
    p = np.asarray(places, float) * U
    t = np.deg2rad(tilt_deg)
    local = np.column_stack([p[:, 0] * np.cos(t), p[:, 1], p[:, 0] * np.sin(t)])
    y = np.deg2rad(yaw_deg)
    rot = np.array([[np.cos(y), -np.sin(y), 0.0], [np.sin(y), np.cos(y), 0.0], [0.0, 0.0, 1.0]])
    world = local @ rot.T + [at[0], at[1], geometry.die_mm]
    return geometry.project(world)


FIVE = [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)]
R2 = float(np.sqrt(2.0))
#: a three turned 45 degrees: its diagonal along the face's x axis, the tilt's direction
THREE = [(-R2, 0.0), (0.0, 0.0), (R2, 0.0)]


def test_a_flat_face_and_some_of_its_pips_fit(geometry):
    assert pips_fit_flat_face(geometry, [_pips_px(geometry, FIVE)])
    # two of a five's pips (the others unseen), a one and a glint on its face's edge pip place
    assert pips_fit_flat_face(geometry, [_pips_px(geometry, [(0, 0), (1, 1)])])
    assert pips_fit_flat_face(geometry, [_pips_px(geometry, [(0, 0), (1, -1)], yaw_deg=65.0)])
    # the pip readers' centres within half a px
    rng = np.random.default_rng(3)
    for _ in range(20):
        assert pips_fit_flat_face(geometry, [_pips_px(geometry, FIVE) + rng.uniform(-0.5, 0.5, (5, 2))])


def test_a_foreshortened_or_oversized_face_does_not_fit(geometry):
    tilted = _pips_px(geometry, THREE, yaw_deg=0.0, tilt_deg=35.0)
    assert not pips_fit_flat_face(geometry, [tilted])
    wide = _pips_px(geometry, [(-1.3, -1.3), (1.3, 1.3)])  # two pips 16 mm apart: more than a face
    assert not pips_fit_flat_face(geometry, [wide])
    # one crop that fits does not excuse another that does not
    assert not pips_fit_flat_face(geometry, [_pips_px(geometry, FIVE), tilted])


def test_the_reader_calls_cocked_only_pips_off_every_flat_face(geometry):
    reader = DiceReader(geometry=geometry, model=None)
    two_of_five = [_pips_px(geometry, [(0, 0), (1, 1)])]
    assert reader.flatness(two_of_five) > 0.12  # not a two's spread: the old test called it cocked
    assert reader._cocked(None, [2], two_of_five) is None
    tilted = [_pips_px(geometry, THREE, yaw_deg=0.0, tilt_deg=35.0)]
    assert reader._cocked(3, [3], tilted) is not None
