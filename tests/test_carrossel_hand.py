"""A pale hand over a Carrossel cell is never read ``"empty"``: an empty cell's corners are the
paper's neutral white print, a hand's skin is warm (CarrosselReader.EMPTY_MAX_CHROMA)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrossel import CarrosselReader
from companion.vision.sim_carrossel import SKIN

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "carrossel-table"
pytestmark = pytest.mark.skipif(not (DATA / "truth.json").exists(), reason="the Carrossel photographs are not here")
PALEST_SKIN_BGR = SKIN[0]


def read_photo(name: str):
    """The photograph ``name`` (``carrossel_036.jpg``...), its cells' truth, the reader that read
    it (with its pose) and the reading: ``(frame, cells, reader, reading)``."""
    im = next(i for i in json.loads((DATA / "truth.json").read_text())["images"] if i["image"] == name)
    frame = cv2.imread(str(DATA / "images" / im["image"]))
    reader = CarrosselReader()
    reading = reader.read(frame)
    assert reading.status == "ok"
    cells = {f"{c['sector_label']}{c['slot']}": c["tile"] for c in im["cells"]}
    return frame, cells, reader, reading


@pytest.fixture(scope="module")
def photo():
    """carrossel_036 (a calibration photograph), its truth, and the reader with its pose."""
    return read_photo("carrossel_036.jpg")


def _painted(frame, reader, reading, name, bgr):
    """The frame with cell ``name`` wholly under a flat patch of colour ``bgr`` (1.3 x the
    cell's square, at the tile's top), as a smooth hand held low over it would hide it."""
    g = reader.geometry
    view, angle = reader._pose
    i = g.cell_names.index(name)
    c, up = g.cell_centres_mm(angle)[i], g.cell_ups(angle)[i]
    right = np.array([up[1], -up[0]])
    h = 0.65 * g.cell_size_mm
    sq = np.array([c + sx * h * right + sy * h * up for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    px = view.to_image(sq, g.tile_top_z_mm).astype(np.int32)
    out = frame.copy()
    cv2.fillConvexPoly(out, px, tuple(int(v) for v in bgr), cv2.LINE_AA)
    return out


def test_a_tile_under_the_palest_skin_is_not_read_empty(photo):
    frame, cells, reader, reading = photo
    tiles = [n for n, t in cells.items() if t is not None and t["standee"] is None][:2]
    empties = [n for n, t in cells.items() if t is None][:2]
    assert len(tiles) == 2 and len(empties) == 2
    for name in tiles + empties:
        got = reader.read(_painted(frame, reader, reading, name, PALEST_SKIN_BGR)).slots[name]
        assert got.label == "unknown", (name, got)
        # and a patch of the print's own white over it reads an empty cell: the rule is the colour
        white = (int(reader.geometry.paper_white),) * 3
        assert reader.read(_painted(frame, reader, reading, name, white)).slots[name].label == "empty", name


def test_the_cells_print_is_well_within_the_limit(photo):
    """The empty cells of the calibration photograph read empty, their corners' chroma far
    below the limit (the skin's is above it)."""
    frame, cells, reader, reading = photo
    empties = [n for n, t in cells.items() if t is None]
    assert sum(reading.slots[n].label == "empty" for n in empties) >= len(empties) - 1
    reader.EMPTY_MAX_CHROMA = CarrosselReader.EMPTY_MAX_CHROMA / 2
    try:
        again = CarrosselReader.read(reader, frame)
        assert sum(again.slots[n].label == "empty" for n in empties) == sum(reading.slots[n].label == "empty" for n in empties)
    finally:
        del reader.EMPTY_MAX_CHROMA
