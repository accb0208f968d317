"""The full marker detection (registration.MarkerFinder): a half-size pass, then OpenCV's
full-resolution detector in windows. It must find every marker the one-pass detector finds in
the whole frame (registration._detector: three threshold windows, sub-pixel corners), at the
same corners, on every photograph of the three camera tables and on rendered frames (tilt,
blur, dim light, noise, hands), and the Carrousel readings must not change.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrossel import CarrosselGeometry
from companion.vision.carrousel import CarrouselGeometry, CarrouselReader
from companion.vision.monsieur_geometry import MonsieurGeometry
from companion.vision.registration import (
    MarkerFinder,
    Registrar,
    _detector,
    detect_markers,
)

HERE = Path(__file__).resolve().parent
SHARED = next((p for p in (HERE.parents[1] / "shared" / "data", Path("/work/shared/data")) if p.is_dir()), None)
TABLES = {
    "carrousel-table": CarrouselGeometry.load,
    "monsieur-table": MonsieurGeometry.load,
    "carrossel-table": CarrosselGeometry.load,
}


def _photos(table: str) -> list[Path]:
    folder = HERE / "data" / table / "images"
    if not folder.is_dir() and SHARED is not None:
        folder = SHARED / table / "images"
    return sorted(folder.glob("*.jpg"))


def _same_markers(finder: MarkerFinder, grey: np.ndarray, tol_px: float) -> tuple[dict, dict]:
    whole = detect_markers(grey, detector=_detector("DICT_4X4_50"))
    found = finder.find(grey)
    assert sorted(found) == sorted(whole)
    for i, corners in whole.items():
        assert np.abs(found[i] - corners).max() <= tol_px, i
    return found, whole


@pytest.mark.parametrize("table", list(TABLES))
def test_every_marker_of_every_photograph_is_found_at_the_same_corners(table):
    """All 20 photographs of each table: the same markers as the one-pass detector (layout,
    roof and centre markers alike), every corner within 0.002 px, without searching the whole
    frame (the half-size pass and the windows found them)."""
    photos = _photos(table)
    if len(photos) < 20:
        pytest.skip(f"{table} photographs not present")
    g = TABLES[table]()
    finder = MarkerFinder(g.dictionary, g.markers)
    seen = 0
    for path in photos:
        grey = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2GRAY)
        found, _ = _same_markers(finder, grey, 0.002)
        assert finder.last == "windows", path.name
        seen += len(found)
    assert seen >= 70  # 4-5 markers on most photographs, some covered or cut off


def test_rendered_frames_tilted_blurred_dim_noisy_find_the_same_markers():
    """Rendered Carrousel frames of every kind of the stress set: the board's markers the same as
    the one-pass detector's, at the same corners but for a blurred border's other candidate."""
    from companion.vision.sim import Conditions, TableRenderer

    renderer = TableRenderer()
    spaces = ("empty", "empty", "black", "yellow", "blue", "green", "red")
    cards = {"south": ("red", "blue", "green"), "north": ("black", "yellow", "red")}
    g = CarrouselGeometry.load()
    finder = MarkerFinder(g.dictionary, g.markers)
    kinds = [
        Conditions(tilt_deg=35, azimuth_deg=a, roll_deg=r, height_mm=h)
        for a, r, h in ((0, 0, 700), (120, 45, 520), (250, -100, 600))
    ] + [
        Conditions(blur_px=5, jpeg_quality=45), Conditions(light=0.3, noise_sigma=5),
        Conditions(noise_sigma=6, vignetting=0.8, gradient=0.4), Conditions(hands=(0, 1), tilt_deg=25),
        Conditions(kelvin=2700, light=1.5),
    ]
    rng = np.random.default_rng(3)
    moved = []
    for cond in kinds:
        frame, _truth = renderer.render(spaces, cards, cond, rng)
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        found, whole = _same_markers(finder, grey, 1.0)
        assert len(whole) >= 2
        moved += [float(np.abs(found[i] - whole[i]).max()) for i in whole]
    assert sum(m > 0.002 for m in moved) <= 1


def test_the_carrousel_readings_are_the_same_as_with_the_one_pass_detector():
    """The 20 photographs read with the finder and with the one-pass detector in the whole frame:
    every field equal (status, each region's label, confidence, reason and fractions, each card,
    the white level). Corners that agree to 1e-4 px leave every sampled pixel in place."""
    photos = _photos("carrousel-table")
    assert len(photos) == 20
    fast, whole = CarrouselReader(), CarrouselReader()
    whole.registrar._detector = _detector(whole.registrar.dictionary_name)
    for path in photos:
        frame = cv2.imread(str(path))
        a, b = fast.read(frame), whole.read(frame)
        assert a.status == "ok", path.name
        assert (a.status, a.spaces, a.cards, a.white_level) == (b.status, b.spaces, b.cards, b.white_level), path.name
        grid = np.stack(np.meshgrid(np.linspace(-210, 210, 15), np.linspace(-210, 210, 15)), -1).reshape(-1, 2)
        assert np.abs(a.registration.to_image(grid) - b.registration.to_image(grid)).max() < 1e-3, path.name


def test_markers_the_half_size_pass_misses_are_found_by_the_whole_frame_search():
    """When the half-size pass sees no candidate at all (here: told to keep none), fewer than
    ``min_markers`` of the layout are found in windows and the whole frame is searched: the
    photograph's markers are all found, at the one-pass detector's corners exactly."""
    g = CarrouselGeometry.load()
    finder = MarkerFinder(g.dictionary, g.markers)
    params = cv2.aruco.DetectorParameters()
    params.minMarkerPerimeterRate = 3.9  # no candidate of a 320 x 240 frame is that long
    finder._coarse = cv2.aruco.ArucoDetector(finder.getDictionary(), params)
    grey = cv2.cvtColor(cv2.imread(str(_photos("carrousel-table")[0])), cv2.COLOR_BGR2GRAY)
    whole = detect_markers(grey, detector=_detector("DICT_4X4_50"))
    found = finder.find(grey)
    assert finder.last == "whole frame" and len(whole) >= 3
    assert sorted(found) == sorted(whole) and all(np.array_equal(found[i], whole[i]) for i in whole)


def test_a_marker_the_half_size_pass_does_not_decode_is_placed_from_the_others():
    """Layout markers the half-size pass neither decodes nor outlines are placed through the
    homography of those it decoded, and found at full resolution in their windows."""
    g = CarrouselGeometry.load()
    grey = cv2.cvtColor(cv2.imread(str(_photos("carrousel-table")[0])), cv2.COLOR_BGR2GRAY)
    whole = detect_markers(grey, detector=_detector("DICT_4X4_50"))
    finder = MarkerFinder(g.dictionary, g.markers)
    coarse = finder._coarse
    hide = sorted(whole)[:2]

    class Forgetful:  # the half-size pass with two of the markers taken out of its output
        def detectMarkers(self, image):
            corners, ids, _rejected = coarse.detectMarkers(image)
            keep = [k for k, i in enumerate(ids.reshape(-1)) if int(i) not in hide]
            return tuple(corners[k] for k in keep), ids[keep], ()

    finder._coarse = Forgetful()
    found = finder.find(grey)
    assert finder.last == "windows"
    assert sorted(found) == sorted(whole)
    assert all(np.abs(found[i] - whole[i]).max() < 0.002 for i in whole)


def test_no_markers_is_an_empty_detection_and_a_clear_status():
    """A frame without any marker: nothing found (after the whole-frame search), and the
    registrar says the board is not visible."""
    g = CarrouselGeometry.load()
    frame = np.random.default_rng(0).integers(90, 160, (480, 640, 3), dtype=np.uint8)
    registrar = Registrar(g.markers, g.dictionary)
    assert registrar._detector.find(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)) == {}
    assert registrar._detector.last == "whole frame"
    assert registrar.register(frame) is None
    assert registrar.status.startswith("board not visible: 0 of 4 markers found")


def test_the_finder_works_as_an_opencv_detector_and_refuses_a_colour_frame():
    """detect_markers takes the finder as its detector (the readers pass the registrar's); the
    finder itself takes grey frames only and says so."""
    photo = _photos("carrousel-table")[0]
    frame = cv2.imread(str(photo))
    g = CarrouselGeometry.load()
    finder = MarkerFinder(g.dictionary, g.markers)
    assert sorted(detect_markers(frame, detector=finder)) == sorted(detect_markers(frame))
    assert finder.getDictionary().markerSize == 4
    with pytest.raises(ValueError, match="grey"):
        finder.find(frame)


def test_windows_are_merged_only_when_that_costs_no_more_pixels():
    """Two windows overlapping by most of their area become one; two far apart stay two."""
    quads = np.array([[[100, 100], [130, 100], [130, 130], [100, 130]],
                      [[104, 104], [134, 104], [134, 134], [104, 134]],
                      [[400, 300], [430, 300], [430, 330], [400, 330]]], float)
    boxes = MarkerFinder._boxes(quads, np.full(3, 14.0), 640, 480)
    assert len(boxes) == 2
    assert boxes[0].tolist() == [86, 86, 149, 149]


def test_markers_found_in_windows_that_do_not_register_are_looked_for_in_the_whole_frame():
    """The windows found two markers on one edge only (a third missed, as a smeared border can
    be): the registrar then detects in the whole frame and registers with every marker, as the
    one-pass detector would have."""
    g = CarrouselGeometry.load()
    frame = cv2.imread(str(_photos("carrousel-table")[0]))
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    whole = detect_markers(grey, detector=_detector("DICT_4X4_50"))
    assert {0, 1} <= set(whole) and len(whole) >= 3  # 0 and 1 lie along the top edge
    registrar = Registrar(g.markers, g.dictionary)
    finder = registrar._detector
    coarse = finder._coarse

    class TopEdgeOnly:  # the half-size pass seeing only markers 0 and 1
        def detectMarkers(self, image):
            corners, ids, _rejected = coarse.detectMarkers(image)
            keep = [k for k, i in enumerate(ids.reshape(-1)) if int(i) in (0, 1)]
            return tuple(corners[k] for k in keep), ids[keep], ()

    finder._coarse = TopEdgeOnly()
    finder.layout = {i: c for i, c in finder.layout.items() if i in (0, 1)}  # nothing else placed
    assert sorted(finder.find(grey)) == [0, 1] and finder.from_windows(finder.find(grey))
    reg = registrar.register(frame)
    assert reg is not None and reg.marker_ids == tuple(sorted(whole))
    assert finder.last == "whole frame"
