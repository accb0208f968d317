"""The Monsieur Carrousel die beside the board's own print (companion/vision/monsieur_die.py):
a faint blob of a near hue beside the top is not a second face up, and a printed sun near a
die seen from above does not hide one by its distance alone; a die cocked on its edge still
reads no colour."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.colour import UNKNOWN
from companion.vision.monsieur_die import _faint
from tests.monsieur_fixtures import reader, renderer  # noqa: F401  (pytest fixtures)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/monsieur-table")
photos = pytest.mark.skipif(not (DATA / "truth.json").is_file(), reason="monsieur-table photographs not present")


@photos
@pytest.mark.parametrize("name", ["monsieur_054.jpg", "monsieur_051.jpg"])
def test_die_beside_the_boards_print_is_read(reader, name):  # noqa: F811
    # monsieur_054: the rain half labelled green (C*ab 16) beside a blue top (60) passed for a
    # second face ("on its edge"); monsieur_051: a sun 5 mm from a green top seen from above
    truth = next(t for t in json.loads((DATA / "truth.json").read_text())["images"] if t["image"] == name)
    got = reader.read(cv2.imread(str(DATA / "images" / name)))
    assert got.die == truth["die"]["top_colour"], got.die_status


def test_a_faint_blob_is_no_face():
    assert _faint(np.array([16.0, 15.0, 18.0, np.nan]), 60.0)
    assert not _faint(np.array([35.0, 31.0, 40.0]), 60.0)
    assert _faint(np.array([np.nan, np.nan]), 10.0)


def test_cocked_dice_read_no_colour(reader, renderer):  # noqa: F811
    from companion.vision.sim_monsieur import MonsieurConditions, random_scene

    rng = np.random.default_rng(8)
    for i in range(6):
        scene = dataclasses.replace(random_scene(rng, renderer.geometry), die="edge")
        cond = MonsieurConditions(tilt_deg=[3.0, 12.0, 25.0][i % 3], azimuth_deg=60.0 * i)
        image, _ = renderer.render(scene, cond, rng)
        assert reader.read(image).die == UNKNOWN
