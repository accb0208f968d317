"""The set-up page's marker check on Monsieur Carrousel's simulated table: the roof marker (its
``roof_marker_id``) is the board's moving marker, not "not this board's"; the summary names
markers, never reads like a count."""

from __future__ import annotations

import types

import numpy as np
import pytest

from companion.vision.monsieur_geometry import MonsieurGeometry
from companion.vision.sim_monsieur import (
    MonsieurConditions,
    MonsieurRenderer,
    MonsieurScene,
)
from companion.web.camera import CameraView, MarkerState, _summary, marker_check

GEOMETRY = MonsieurGeometry.load()


@pytest.fixture(scope="module")
def frame():
    cond = MonsieurConditions(noise_sigma=0.0, jpeg_quality=0, blur_px=0.0, glare=0.0, hands=())
    img, truth = MonsieurRenderer(GEOMETRY).render(MonsieurScene(die=None), cond, np.random.default_rng(3))
    assert truth.roof_visible
    return img


def test_the_roof_marker_is_the_boards_moving_marker_not_a_foreign_one(frame):
    view = CameraView(types.SimpleNamespace(latest=(1.0, frame, None), reader=types.SimpleNamespace(
        geometry=GEOMETRY, registrar=None)), None)
    layout, dictionary, lens, moving = view.marker_layout()
    assert moving == {GEOMETRY.roof_marker_id: "the roof"} and GEOMETRY.roof_marker_id not in layout
    check, _ = view.markers()
    roof = [m for m in check.markers if m.id == GEOMETRY.roof_marker_id]
    assert [m.state for m in roof] == ["moving"] and "the roof's marker" in roof[0].text
    assert not any(m.state == "foreign" for m in check.markers)
    assert check.summary == f"{len(layout)} of {len(layout)} markers in place"
    # Without the board's moving markers, the same frame names it foreign: the check knows the roof.
    plain = marker_check(frame, layout, dictionary, lens)
    assert [m.state for m in plain.markers if m.id == GEOMETRY.roof_marker_id] == ["foreign"]
    assert f"marker {GEOMETRY.roof_marker_id} not this board's" in plain.summary


def test_the_summary_names_markers_never_a_bare_number():
    states = [MarkerState(0, "in_place", ""), MarkerState(9, "foreign", ""), MarkerState(3, "missing", ""),
              MarkerState(4, "missing", "")]
    assert _summary(states, 4, True) == "1 of 4 markers in place; markers 3, 4 not seen; marker 9 not this board's"
