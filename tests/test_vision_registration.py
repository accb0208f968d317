"""Registration: ArUco detection on real photographs and the homography to board mm."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.registration import Registrar, RegistrationError, detect_markers

DATA = Path(__file__).parent / "data"

# Expected corners: OpenCV's test modules/objdetect/test/test_aruco_tutorial.cpp.
SINGLE = {
    40: [359, 310, 404, 310, 410, 350, 362, 350], 98: [427, 255, 469, 256, 477, 289, 434, 288],
    62: [233, 273, 190, 273, 196, 241, 237, 241], 23: [298, 185, 334, 186, 335, 212, 297, 211],
    124: [425, 163, 430, 186, 394, 186, 390, 162], 203: [195, 155, 230, 155, 227, 178, 190, 178],
}
CHARUCO = [
    [268, 77, 290, 80, 286, 97, 263, 94], [360, 90, 382, 93, 379, 111, 357, 108],
    [211, 106, 233, 109, 228, 127, 205, 123], [306, 120, 328, 124, 325, 142, 302, 138],
    [402, 135, 425, 139, 423, 157, 400, 154], [247, 152, 271, 155, 267, 174, 242, 171],
    [347, 167, 371, 171, 369, 191, 344, 187], [185, 185, 209, 189, 203, 210, 178, 206],
    [288, 201, 313, 206, 309, 227, 284, 223], [393, 218, 418, 222, 416, 245, 391, 241],
    [223, 240, 250, 244, 244, 268, 217, 263], [333, 258, 359, 262, 356, 286, 329, 282],
    [152, 281, 179, 285, 171, 312, 143, 307], [267, 300, 294, 305, 289, 331, 261, 327],
    [383, 319, 410, 324, 408, 351, 380, 347], [194, 347, 223, 352, 216, 382, 186, 377],
    [315, 368, 345, 373, 341, 403, 310, 398],
]


@pytest.mark.parametrize("name, gold", [
    ("singlemarkersoriginal.jpg", SINGLE),
    ("choriginal.jpg", dict(enumerate(CHARUCO))),
])
def test_real_photo_markers_match_opencv_published_corners(name, gold):
    """The product's detector finds exactly OpenCV's ids, every corner within 1 px."""
    image = cv2.imread(str(DATA / "aruco" / name))
    found = detect_markers(image, "DICT_6X6_250")
    assert sorted(found) == sorted(gold)
    for mid, corners in gold.items():
        np.testing.assert_allclose(found[mid], np.array(corners, float).reshape(4, 2), atol=1.0)


def test_wrong_dictionary_finds_nothing_and_board_not_visible():
    """A photo of 6x6 markers read with the 4x4 layout: no registration, a clear status."""
    image = cv2.imread(str(DATA / "aruco" / "singlemarkersoriginal.jpg"))
    layout = {i: np.array([[0, 10], [10, 10], [10, 0], [0, 0]], float) + 20 * i for i in range(4)}
    reg = Registrar(layout, "DICT_4X4_50")
    assert reg.register(image) is None
    assert reg.status.startswith("board not visible")


def test_unknown_dictionary_is_an_error_naming_it():
    with pytest.raises(RegistrationError, match="DICT_9X9"):
        Registrar({0: np.zeros((4, 2))}, "DICT_9X9")


def _synthetic_board(size=(480, 640), ids=(0, 1, 2, 3), cover=()):
    """Four DICT_4X4_50 markers drawn through a known homography; returns image, H, layout."""
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    layout = {
        0: [[-200, 200], [-160, 200], [-160, 160], [-200, 160]],
        1: [[160, 200], [200, 200], [200, 160], [160, 160]],
        2: [[160, -160], [200, -160], [200, -200], [160, -200]],
        3: [[-200, -160], [-160, -160], [-160, -200], [-200, -200]],
    }
    layout = {k: np.array(v, float) for k, v in layout.items()}
    # board mm -> px: a mild perspective
    src = np.array([[-210, 210], [210, 210], [210, -210], [-210, -210]], np.float32)
    dst = np.array([[130, 40], [520, 60], [560, 450], [90, 430]], np.float32)
    H = cv2.getPerspectiveTransform(src, dst)
    img = np.full((*size, 3), 200, np.uint8)
    for mid in ids:
        marker = cv2.aruco.generateImageMarker(d, mid, 60)
        quiet = cv2.copyMakeBorder(marker, 10, 10, 10, 10, cv2.BORDER_CONSTANT, value=255)
        tl, tr, br, bl = layout[mid]
        s = 60 / 40.0
        # marker image px -> board mm (marker cells start 10 px in)
        A = np.array([[1 / s, 0, tl[0] - 10 / s], [0, -1 / s, tl[1] + 10 / s], [0, 0, 1]])
        M = H @ A
        warped = cv2.warpPerspective(cv2.cvtColor(quiet, cv2.COLOR_GRAY2BGR), M, (size[1], size[0]),
                                     borderValue=(1, 2, 3))
        mask = (warped != (1, 2, 3)).any(axis=2)
        img[mask] = warped[mask]
    for mid in cover:
        c = cv2.perspectiveTransform(layout[mid].reshape(-1, 1, 2), H).reshape(-1, 2)
        cv2.fillConvexPoly(img, c.astype(np.int32), (60, 90, 140))
    return img, H, layout


def test_homography_from_all_visible_corners_maps_board_mm_to_pixels():
    img, H, layout = _synthetic_board()
    reg = Registrar(layout).register(img)
    assert reg is not None and reg.marker_ids == (0, 1, 2, 3)
    pts = np.array([[0, 0], [100, 0], [-97.5, -22.3]])
    truth = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), H).reshape(-1, 2)
    np.testing.assert_allclose(reg.to_image(pts), truth, atol=1.0)
    np.testing.assert_allclose(reg.to_board(truth), pts, atol=1.5)


def test_registers_with_two_markers_covered_and_not_with_three():
    img, H, layout = _synthetic_board(cover=(0, 2))
    r = Registrar(layout)
    reg = r.register(img)
    assert reg is not None and reg.marker_ids == (1, 3)
    img3, _, _ = _synthetic_board(cover=(0, 1, 2))
    assert r.register(img3) is None
    assert "1 of 4 markers" in r.status


def test_update_keeps_homography_until_markers_change_then_redetects():
    img, H, layout = _synthetic_board()
    r = Registrar(layout, redetect_every=100)
    assert r.update(img) is not None
    assert r.detections == 1
    for _ in range(5):
        r.update(img)
    assert r.detections == 1, "a still scene is not detected again"
    moved = np.roll(img, 12, axis=1)  # the camera moved
    reg = r.update(moved)
    assert r.detections == 2 and reg is not None
    truth = cv2.perspectiveTransform(np.array([[[0.0, 0.0]]]), H).reshape(2) + [12, 0]
    np.testing.assert_allclose(reg.to_image(np.array([[0.0, 0.0]]))[0], truth, atol=1.0)


def test_update_redetects_after_redetect_every_frames():
    img, _, layout = _synthetic_board()
    r = Registrar(layout, redetect_every=3)
    for _ in range(7):
        r.update(img)
    assert r.detections == 3


def test_path_traced_table_registration_matches_truth():
    """On a path-traced photo the 7 space centres land within 1.5 px of the true projections."""
    root = Path(__file__).parent / "data" / "carrousel-table"
    geo = json.loads((Path(__file__).parents[1] / "companion" / "data" / "calibration" / "carrousel-board.json").read_text())
    layout = {int(k): np.array(v["corners_mm"]) for k, v in geo["markers"].items()}
    for name in ("carrousel_009", "carrousel_024"):  # a covered marker; a marker cut off
        truth = json.loads((root / "truth" / f"{name}.json").read_text())
        reg = Registrar(layout).register(cv2.imread(str(root / "images" / f"{name}.jpg")))
        assert reg is not None and sorted(reg.marker_ids) == truth["markers"]["visible"]
        got = reg.to_image(np.array([s["centre_mm"] for s in geo["spaces"]]))
        np.testing.assert_allclose(got, truth["projections_px"]["space_centres_board_top"], atol=1.5)


def test_big_camera_move_falls_back_to_detecting_in_the_whole_frame():
    img, H, layout = _synthetic_board(size=(600, 800))
    r = Registrar(layout, redetect_every=100)
    r.update(img)
    moved = np.zeros_like(img)
    moved[:, :] = 200
    moved[60:, 80:] = img[:-60, :-80]  # 100 px: beyond the windows around the last places
    reg = r.update(moved)
    assert reg is not None
    truth = cv2.perspectiveTransform(np.array([[[0.0, 0.0]]]), H).reshape(2) + [80, 60]
    np.testing.assert_allclose(reg.to_image(np.array([[0.0, 0.0]]))[0], truth, atol=1.0)
    assert r.detections == 3, "first the windows, then the whole frame"


def test_two_markers_on_one_edge_do_not_register_the_board():
    """They fit their own corners and extrapolate badly to the far side: board not visible."""
    img, _, layout = _synthetic_board(cover=(2, 3))
    r = Registrar(layout)
    assert r.register(img) is None
    assert "one edge" in r.status


def test_a_calibrated_lens_distortion_is_taken_into_account():
    """Corners seen through a barrel-distorting lens: with the intrinsics the board points
    land where the lens puts them; without, they are off by pixels."""
    from companion.vision.registration import distort

    _img, H, layout = _synthetic_board()
    K = np.array([[550.0, 0, 319.5], [0, 550.0, 239.5], [0, 0, 1]])
    dist = np.array([-0.25, 0.08, 0.0, 0.0, 0.0])
    corners = {i: distort(cv2.perspectiveTransform(c.reshape(-1, 1, 2), H).reshape(-1, 2), K, dist)
               for i, c in layout.items()}
    pts = np.array([[0.0, 100.0], [-97.5, -22.3], [140.0, 0.0]])
    truth = distort(cv2.perspectiveTransform(pts.reshape(-1, 1, 2), H).reshape(-1, 2), K, dist)
    with_lens = Registrar(layout, lens=(K, dist))._fit(corners)
    np.testing.assert_allclose(with_lens.to_image(pts), truth, atol=0.05)
    np.testing.assert_allclose(with_lens.to_board(truth), pts, atol=0.1)
    assert with_lens.residual_px < 0.01
    np.testing.assert_allclose(with_lens.image_corners[0], corners[0])
    without = Registrar(layout)._fit(corners)
    assert without.residual_px > 1.0 or np.abs(without.to_image(pts) - truth).max() > 1.0
