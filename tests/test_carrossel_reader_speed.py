"""The Carrossel reader's faster steps give what the plain computations give: the full marker
detection for the fixed markers only (Registrar layout_only) registers as the full one; the letter
match as matrix products, the centre marker's turned matches as one product, the quartile and
medians from one partition equal NumPy's and OpenCV's results (bench/carrossel_photos.py times
them; docs/BENCHMARKS.md, "Carrossel reader on the 20 photographs")."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import carrossel
from companion.vision.carrossel import CarrosselReader
from companion.vision.colour import white_of
from companion.vision.registration import Registrar

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "carrossel-table"
needs_photos = pytest.mark.skipif(not (DATA / "truth.json").exists(), reason="the Carrossel photographs are not here")


@pytest.fixture(scope="module")
def reader():
    return CarrosselReader()


def _photo(i):
    truth = json.loads((DATA / "truth.json").read_text())
    return cv2.imread(str(DATA / "images" / truth["images"][i]["image"]))


@needs_photos
@pytest.mark.parametrize("i", [0, 3, 9, 14, 17])
def test_layout_only_detection_registers_as_the_full_one(reader, i):
    frame = _photo(i)
    g = reader.geometry
    full = Registrar(g.markers, g.dictionary).register(frame)
    only = Registrar(g.markers, g.dictionary, layout_only=True).register(frame)
    assert reader.registrar._detector.layout_only
    assert full is not None and only is not None
    assert full.marker_ids == only.marker_ids
    for mid in full.marker_ids:
        np.testing.assert_allclose(only.image_corners[mid], full.image_corners[mid], atol=1e-3)
    np.testing.assert_allclose(only.board_to_image, full.board_to_image, rtol=1e-6, atol=1e-6)


def _letter_scores_plain(reader, region):
    """The letter match by sliding windows (what _letter_region_scores computes)."""
    w = reader.LETTER_HALF
    q, m = 2 * w + 1, len(region)
    win = np.lib.stride_tricks.sliding_window_view(region, (q, q), axis=(1, 2)).reshape(m, -1, q * q).astype(np.float64)
    win = win - win.mean(axis=2, keepdims=True)
    tpl = reader._letter_windows.astype(np.float64)
    r = (win @ tpl.T) / np.maximum(np.linalg.norm(win, axis=2, keepdims=True), 1e-9)
    return r.max(axis=1), r.argmax(axis=1)


def test_letter_matrix_match_equals_sliding_windows(reader):
    rng = np.random.default_rng(3)
    side = 2 * (reader.LETTER_HALF + reader.LETTER_SHIFT) + 1
    n = carrossel._grid_n()
    c = n // 2
    # each letter's own template, shifted by a sample or two, on cream with noise; and noise
    letters = reader.letters.images[:, c - side // 2:c + side // 2 + 1, c - side // 2:c + side // 2 + 1]
    regions = np.concatenate([np.roll(letters, (1, -2), axis=(1, 2)) + rng.normal(0, 0.03, letters.shape),
                              rng.random((6, side, side))]).astype(np.float32)
    best, at = reader._letter_region_scores(regions)
    want_best, want_at = _letter_scores_plain(reader, regions)
    np.testing.assert_allclose(best, want_best, atol=2e-5)
    assert (best[:5].argmax(axis=1) == np.arange(5)).all()  # each letter reads as itself
    strong = want_best > 0.5
    assert (at[strong] == want_at[strong]).all()


def test_turned_matches_equal_opencv_template_matching(reader):
    rng = np.random.default_rng(5)
    t = reader._tpl_n
    patch = cv2.GaussianBlur(rng.integers(0, 255, (t + 20, t + 20)).astype(np.float32), (0, 0), 1.5)
    patch[8:8 + t, 9:9 + t] = reader._tpl + rng.normal(0, 4, (t, t)).astype(np.float32)
    templates = []
    for deg in (-3.0, 0.0, 1.5, 7.0):
        rot = cv2.getRotationMatrix2D(((t - 1) / 2, (t - 1) / 2), deg, 1.0)
        templates.append(cv2.warpAffine(reader._tpl, rot, (t, t), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_CONSTANT, borderValue=236.0))
    win = (5, 4, 5 + t + 7, 4 + t + 8)
    got = reader._turned_matches(patch, templates, win)
    for (hi, at, res), tpl in zip(got, templates):
        want = cv2.matchTemplate(patch[win[1]:win[3], win[0]:win[2]], tpl, cv2.TM_CCOEFF_NORMED)
        np.testing.assert_allclose(res, want, atol=2e-5)
        _lo, want_hi, _lo_at, want_at = cv2.minMaxLoc(want)
        assert abs(hi - want_hi) < 2e-5 and at == (want_at[0] + win[0], want_at[1] + win[1])
    assert got[1][1] == (9, 8)  # the print found where it was put


def test_partition_quantiles_equal_numpys():
    rng = np.random.default_rng(7)
    for shape in ((48, 200), (5, 48), (3, 47), (30, 121)):
        x = (rng.random(shape) ** 3).astype(np.float32)
        x[0, : shape[1] // 2] = x[0, 0]  # ties
        assert np.array_equal(carrossel._row_upper_quartile(x), np.percentile(x, 75, axis=1))
        assert np.array_equal(carrossel._row_median(x), np.median(x, axis=1))
    px = rng.integers(0, 256, (301, 3), dtype=np.uint8)
    assert np.array_equal(carrossel._row_median(np.ascontiguousarray(px.T)), np.median(px, axis=0))
    assert np.array_equal(carrossel._white_of(px), white_of(px))
    assert carrossel._white_of(px[:9]) is None and white_of(px[:9]) is None


def test_relative_light_table_equals_the_division():
    rng = np.random.default_rng(11)
    px = rng.integers(0, 256, (500, 3), dtype=np.uint8)
    white = np.array([0.61, 0.7, 0.93], np.float32)
    table = CarrosselReader._relative_table(white)
    lin = carrossel.srgb_to_linear(px)
    assert np.array_equal(carrossel._relative(table, px), np.clip(lin / np.maximum(white, 1e-4), 0.0, 1.0))


@needs_photos
@pytest.mark.parametrize(("i", "axis", "shift"), [(12, 0, 0), (12, 0, 60), (0, 1, 150), (6, 0, -100)])
def test_roofs_sampled_in_one_pass_give_each_roofs_samples(reader, i, axis, shift):
    """The colour check samples the four booth roofs in one pass and splits them by roof: the
    same fault (or none) as each roof sampled on its own, also when the frame cuts off a booth
    or part of one (the photo shifted, a black band where it left the frame: the points
    outside dropped roof by roof)."""
    frame = np.roll(_photo(i), shift, axis=axis)
    band = [slice(None), slice(None)]
    band[axis] = slice(0, shift) if shift > 0 else slice(shift, None)
    if shift:
        frame[tuple(band)] = 0
    rd = CarrosselReader(reader.geometry, reader.letters)
    reg = rd.registrar.register(frame)
    assert reg is not None, rd.registrar.status
    flat = frame.reshape(-1, 3)
    paper = carrossel._sample(flat, frame.shape, reg.to_image(rd._paper))
    white = carrossel._white_of(paper)
    found = rd.centre_marker_match(frame, reg)
    assert not isinstance(found, str), found
    _angle, view = rd.pose_from(reg, found[0], found[1])
    code = carrossel._row_median(np.ascontiguousarray(paper.T))
    roof_px = view.to_image(rd._roof_points, 55.0)
    ends = rd._roof_ends
    roofs = [carrossel._sample(flat, frame.shape, roof_px[a:b]) for a, b in zip([0] + ends[:-1], ends)]
    if shift:
        assert min(len(r) for r in roofs) < max(len(r) for r in roofs)  # a roof cut off, or part of one
    px = np.concatenate(roofs)
    lab = carrossel.linear_to_lab(carrossel.srgb_to_linear(px), white)
    measured = np.full((len(rd.print_check.names), 3), np.nan)
    roof = dict(zip(rd._booth_roofs, roofs))
    for k, name in enumerate(rd.print_check.names):
        p = roof[name]
        p = p[(p < carrossel.CLIPPED).any(axis=1)]
        if len(p) >= 0.5 * len(rd._booth_roofs[name]) and len(p) >= 10:
            measured[k] = np.median(carrossel.srgb_to_linear(p), axis=0) / np.maximum(white, 1e-4)
    # what the reader hands to the two checks: the roofs' Lab and each roof's measured colour
    seen = {}

    class Recorder:
        def __init__(self, check, key):
            self.check, self.key = check, key
            self.names = getattr(check, "names", None)

        def problem(self, *a):
            seen[self.key] = a[-1]
            return "" if self.key == "colour" else self.check.problem(*a)

    rd.colour_check, rd.print_check = Recorder(rd.colour_check, "colour"), Recorder(rd.print_check, "print")
    rd._colour_fault(flat, frame.shape, view, white, code)
    np.testing.assert_array_equal(seen["colour"], lab)
    np.testing.assert_allclose(seen["print"], measured, rtol=1e-6)
