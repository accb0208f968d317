"""The vectorised Carrousel reader reads exactly what the per-region reader read.

The per-region reader is kept in tests/carrousel_reference.py (a frozen copy of the steady
read before it was vectorised). Both read the 20 path-traced photographs (full registration),
and a few hundred frames made from rendered tables (tests/carrousel_reference.py's reader with
the same registration as the new one): gains and casts, sensor noise, a hand, glare, shadow,
grayscale, a dark frame, the board moved under a kept registration, the board partly out of
the frame. Every field must be equal: status, each region's label, confidence, reason and
fractions, each card, the white level. The full 5,000-frame stress set is compared by
``bench/vision_equal.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest
from carrousel_reference import ReferenceCarrouselReader

from companion.vision.carrousel import CarrouselReader
from companion.vision.colour import RegionClassifier
from companion.vision.registration import Registration
from companion.vision.sim import COLOURS, TableRenderer, random_conditions

ROOT = Path(__file__).parent / "data" / "carrousel-table"
KINDS = ("normal", "dim", "bright", "warm", "cool", "tilted", "blur", "hands", "any", "normal", "hands", "any")


def same(a, b) -> bool:
    return (a.status, a.spaces, a.cards, a.white_level) == (b.status, b.spaces, b.cards, b.white_level)


def explain(a, b) -> str:
    lines = [f"status {a.status!r} / {b.status!r}, white {a.white_level!r} / {b.white_level!r}"]
    lines += [f"space {k}: {x} / {y}" for k, (x, y) in enumerate(zip(a.spaces, b.spaces)) if x != y]
    lines += [f"card {s}: {a.cards[s]} / {b.cards.get(s)}" for s in a.cards if a.cards[s] != b.cards.get(s)]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def readers():
    return CarrouselReader(), ReferenceCarrouselReader()


def test_the_photographs_read_the_same(readers):
    new, old = readers
    photos = sorted((ROOT / "images").glob("*.jpg"))
    assert len(photos) == 20
    for path in photos:
        frame = cv2.imread(str(path))
        a, b = new.read(frame), old.read(frame)
        assert a.status == "ok"
        assert same(a, b), f"{path.name}:\n{explain(a, b)}"


def _shifted(reg: Registration, dx: float, dy: float) -> Registration:
    t = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])
    h = t @ reg.board_to_image
    return Registration(h, np.linalg.inv(h), reg.marker_ids, reg.residual_px, reg.image_corners, reg.frame_index)


def _variants(frame: np.ndarray, rng: np.random.Generator):
    """About 20 frames made from one rendered frame: what the camera and the table can do to it."""
    h, w = frame.shape[:2]
    f32 = frame.astype(np.float32)
    for _ in range(6):  # light level and colour of the lamp, sensor noise
        gain = rng.uniform(0.5, 1.5) * rng.uniform(0.85, 1.15, 3)
        noisy = f32 * gain + rng.normal(0, rng.uniform(0.5, 6.0), frame.shape)
        yield np.clip(np.rint(noisy), 0, 255).astype(np.uint8)
    for _ in range(4):  # a hand or a sleeve over part of the board
        out = frame.copy()
        x, y = int(rng.integers(0, w - 60)), int(rng.integers(0, h - 60))
        colour = rng.integers(40, 230, 3)
        cv2.ellipse(out, (x, y), (int(rng.integers(20, 90)), int(rng.integers(15, 60))), float(rng.uniform(0, 180)),
                    0, 360, tuple(int(c) for c in colour), -1)
        yield out
    for _ in range(3):  # glare: a clipped spot
        out = frame.copy()
        cv2.circle(out, (int(rng.integers(0, w)), int(rng.integers(0, h))), int(rng.integers(15, 70)), (255, 255, 255), -1)
        yield out
    for _ in range(3):  # a shadow across part of the board
        out = f32.copy()
        x0 = int(rng.integers(0, w - 100))
        out[:, x0:x0 + int(rng.integers(60, 300))] *= rng.uniform(0.2, 0.7)
        yield out.astype(np.uint8)
    yield np.repeat(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)[:, :, None], 3, axis=2)  # colour lost
    yield (f32 * 0.15).astype(np.uint8)  # too dark
    yield np.roll(frame, (int(rng.integers(-8, 9)), int(rng.integers(-8, 9))), axis=(0, 1))  # the board moved
    half = frame.copy()
    half[:, : w // 2] = 0
    yield half


def test_rendered_frames_read_the_same(readers):
    new, old = readers
    renderer = TableRenderer()
    rng = np.random.default_rng(15)
    statuses: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    compared = 0
    for i, kind in enumerate(KINDS):
        spaces = ["empty"] * 7
        start = int(rng.integers(7))
        for j, colour in enumerate(rng.permutation(COLOURS)):
            spaces[(start + j) % 7] = str(colour)
        cards = {seat: tuple(str(c) for c in rng.permutation(COLOURS)[:3]) for seat in ("south", "east", "north", "west")}
        frame, _ = renderer.render(spaces, cards, random_conditions(rng, kind), rng)
        a, b = new.read(frame), old.read(frame)  # each registers the frame itself
        assert same(a, b), f"rendered {i} ({kind}):\n{explain(a, b)}"
        reg = new.registrar.register(frame)
        if reg is None:
            continue
        regs = [reg, _shifted(reg, 300.0 * (-1) ** i, 40.0)]  # the second: part of the board out of the frame
        for v, variant in enumerate(_variants(frame, rng)):
            for r in regs if v % 4 == 0 else regs[:1]:
                a, b = new.read(variant, registration=r), old.read(variant, registration=r)
                assert same(a, b), f"rendered {i} ({kind}), variant {v}:\n{explain(a, b)}"
                compared += 1
                statuses[a.status.split(":")[0]] += 1
                reasons.update(s.reason.split(":")[0].split(" (")[0] for s in a.spaces)
                reasons.update(c.reason.split(" (")[0] for c in a.cards.values())
    assert compared >= 250
    # the frames reach the reader's every outcome: the comparison is not of trivial readings
    assert statuses["ok"] > 150 and statuses["colour lost"] >= 10, statuses
    for reason in ("", "covered", "the space's surroundings are out of the frame", "uneven",
                   "the card is out of the frame", "a disc is unclear"):
        assert reasons[reason] > 0, (reason, reasons)


def test_pixel_classes_are_those_of_the_per_region_reader(readers):
    """The pixel rule, faster, gives the same class to every pixel (the Carrossel and Monsieur
    Carrousel readers use it too)."""
    from carrousel_reference import _RefClassifier

    new, _ = readers
    rng = np.random.default_rng(3)
    for classifier in (new.space_classifier, new.card_classifier,
                       RegionClassifier(new.space_classifier.references, near=30.0, ratio=0.8)):
        lab = np.column_stack([rng.uniform(0, 100, 20000), rng.normal(0, 40, 20000),
                               rng.normal(0, 40, 20000)]).astype(np.float32)
        k = rng.integers(0, len(classifier.references.names), 10000)
        lab[:10000] = classifier.references.lab[k] + rng.normal(0, 12, (10000, 3)).astype(np.float32)
        lab[-5:] = classifier.references.lab[:1]  # exactly on a reference
        got, want = classifier.pixel_classes(lab), _RefClassifier(classifier).pixel_classes(lab)
        assert got.dtype == want.dtype
        assert np.array_equal(got, want), int((got != want).sum())
        assert len(set(got.tolist())) == len(classifier.references.names) + 3


def test_marker_cells_read_from_the_frame_are_those_of_its_grey_image(readers):
    """The stream check converts only the markers' cells to grey: the same levels as the
    whole frame converted; a moved board is seen; re-detection near the last places finds the
    markers a full detection finds."""
    new, _ = readers
    registrar = new.registrar
    for path in sorted((ROOT / "images").glob("*.jpg"))[::4]:
        frame = cv2.imread(str(path))
        reg = registrar.register(frame)
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        a, b = registrar._cells_grey(frame, reg), registrar._cells_grey(grey, reg)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        assert registrar.cell_mismatch(frame) == 0.0
        assert registrar.cell_mismatch(np.roll(frame, 25, axis=1)) > registrar.max_cell_mismatch
        near = registrar.register_near(frame, reg)
        assert near is not None and near.marker_ids == reg.marker_ids
        assert np.allclose(near.board_to_image, reg.board_to_image, rtol=1e-4, atol=1e-6)


def test_the_cheaper_full_detector_finds_the_same_corners():
    """Skipping small candidates (minMarkerPerimeterRate 0.05) changes no detection on the
    photographs: the same markers, the same corners as OpenCV's default setting."""
    from companion.vision.registration import _detector, detect_markers

    default = _detector("DICT_4X4_50")
    params = default.getDetectorParameters()
    params.minMarkerPerimeterRate = cv2.aruco.DetectorParameters().minMarkerPerimeterRate
    assert params.minMarkerPerimeterRate < 0.05
    wide = cv2.aruco.ArucoDetector(default.getDictionary(), params)
    for path in sorted((ROOT / "images").glob("*.jpg")):
        grey = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2GRAY)
        a, b = detect_markers(grey, detector=default), detect_markers(grey, detector=wide)
        assert a.keys() == b.keys() and len(a) >= 3, path.name
        assert all(np.array_equal(a[k], b[k]) for k in a), path.name


def test_the_colour_checks_cast_distance_is_unchanged(readers):
    """The lamp locus's segments are kept between frames; every distance is the same."""
    from carrousel_reference import _RefColourCheck

    new, _ = readers
    check = new.colour_check
    before = _RefColourCheck(check.references)
    rng = np.random.default_rng(5)
    whites = rng.uniform(0.001, 1.0, (3000, 3)).astype(np.float32)
    assert all(check.cast_distance(w) == before.cast_distance(w) for w in whites)
    assert check.problem(whites[0], np.array([200.0, 200.0, 200.0]), np.zeros((0, 3), np.float32)) == \
        before.problem(whites[0], np.array([200.0, 200.0, 200.0]), np.zeros((0, 3), np.float32))


def _linear_pixels(rng: np.random.Generator, n: int) -> np.ndarray:
    """White-relative linear pixels as the reader makes them: uniform, dark, near the white."""
    return np.concatenate([rng.random((n, 3)), rng.random((n, 3)) ** 3, rng.random((n, 3)) * 0.02,
                           0.85 + 0.15 * rng.random((n, 3))]).astype(np.float32)


def test_the_fast_lab_conversion_is_within_its_bound():
    """One vectorised conversion differs from the one-pixel-a-row one by less than
    LAB_FAST_ERROR per component (with room: the bound is about three times the difference)."""
    from companion.vision.colour import LAB_FAST_ERROR, lab_exact, lab_fast, linear_to_lab

    rel = _linear_pixels(np.random.default_rng(7), 50000)
    exact = lab_exact(rel)
    assert np.array_equal(exact, linear_to_lab(rel, np.ones(3, np.float32)))
    assert np.abs(lab_fast(rel) - exact).max() < LAB_FAST_ERROR / 2


def test_classes_from_the_fast_lab_are_the_exact_classes(readers):
    """Looked up on the grid from the fast Lab, with the unsure pixels classified from their
    exact Lab: every pixel's class is the per-region reader's on the exact Lab, on a fresh grid
    and on one already filled."""
    from carrousel_reference import _RefClassifier

    from companion.vision.colour import lab_exact, lab_fast

    new, _ = readers
    rng = np.random.default_rng(11)
    for classifier in (new.space_classifier, new.card_classifier,
                       RegionClassifier(new.space_classifier.references, near=30.0, ratio=0.8)):
        for _ in range(2):
            rel = _linear_pixels(rng, 20000)
            exact = lab_exact(rel)
            asked: list[int] = []

            def exact_of(i: np.ndarray) -> np.ndarray:
                asked.append(len(i))
                return exact[i]

            got = classifier.pixel_classes_near(lab_fast(rel), exact_of)
            want = _RefClassifier(classifier).pixel_classes(exact)
            assert np.array_equal(got, want), int((got != want).sum())
            assert 0 < sum(asked) < 0.5 * len(rel)  # the grid settles most pixels


def test_the_unsure_pixels_are_all_that_an_error_can_move(readers):
    """Lab values moved by up to the error: a pixel not reported unsure keeps its class."""
    new, _ = readers
    rng = np.random.default_rng(13)
    for classifier in (new.space_classifier, new.card_classifier):
        refs = classifier.references.lab
        lab = np.concatenate([rng.uniform([0, -100, -100], [100, 100, 100], (100000, 3)),
                              refs[rng.integers(0, len(refs), 50000)] + rng.normal(0, 10, (50000, 3))]).astype(np.float32)
        for error in (0.1, 0.6):
            cls, unsure = classifier.pixel_classes_unsure(lab, error)
            assert np.array_equal(cls, classifier.pixel_classes(lab))
            for _ in range(3):
                moved = lab + rng.choice([-error, error], lab.shape).astype(np.float32) * rng.uniform(0.5, 1.0, (len(lab), 1)).astype(np.float32)
                changed = classifier.pixel_classes(moved) != cls
                assert changed.any() and not (changed & ~unsure).any()


def test_the_region_rule_on_many_rows_is_the_rule_on_each(readers):
    """decide_many gives each row decide's reading (kept rows again as the same object), on
    random vote counts that reach every branch of the rule."""
    new, _ = readers
    rng = np.random.default_rng(17)
    for classifier in (new.space_classifier, new.card_classifier,
                       RegionClassifier(new.space_classifier.references, shadow_like=()),
                       RegionClassifier(new.space_classifier.references, shadow_like=("black", "blue"), background_label=None)):
        width = len(classifier.references.names) + 3
        counts = rng.integers(0, 40, (4000, width)) * (rng.random((4000, width)) < 0.4)
        counts[:1000, 2] += rng.integers(0, 600, 1000)  # mostly background
        counts[1000:2000, 3 + rng.integers(0, width - 3, 1000)] += rng.integers(0, 300, 1000)  # a colour
        counts[2000:2100] = 0  # too few pixels
        got = classifier.decide_many(counts)
        want = [classifier.decide(row) for row in counts]
        assert got == want
        assert len({r.reason.split(":")[0].split(" (")[0] for r in got}) >= 6
        again = classifier.decide_many(counts[-50:])  # the last rows are kept (at most DECIDE_KEPT)
        assert all(a is b for a, b in zip(again, got[-50:]))


def test_the_table_classes_are_the_pixel_rules_classes(readers):
    """pixel_classes_table (the unsure pixels' classes from one look-up of the rule's nine
    tests) gives pixel_classes' classes: on random Lab, on values close to the references, on
    points within a grid cell's reach of its centre (where the unsure pixels are) and on a few
    pixels or one, for both classifiers and one with other thresholds."""
    new, _ = readers
    rng = np.random.default_rng(19)
    for classifier in (new.space_classifier, new.card_classifier,
                       RegionClassifier(new.space_classifier.references, near=30.0, ratio=0.8, tint_a=6.5)):
        refs = classifier.references.lab
        lab = np.concatenate([rng.uniform([0, -100, -100], [100, 100, 100], (60000, 3)),
                              refs[rng.integers(0, len(refs), 60000)] + rng.normal(0, 12, (60000, 3))])
        near_cells = np.rint(lab) + rng.uniform(-0.6, 0.6, lab.shape)
        for x in (lab, near_cells, lab[:7], lab[:1]):
            x = x.astype(np.float32)
            got, want = classifier.pixel_classes_table(x), classifier.pixel_classes(x)
            assert got.dtype == want.dtype and np.array_equal(got, want), int((got != want).sum())


def test_the_test_grids_are_sure_only_where_the_test_is(readers):
    """A cell of the cards' white test's grid (Delta E from the white above 15) or of the colour
    check's (chroma above its bound) that is not unsure has the test's answer at every exact Lab
    its pixels can have (within 0.5 + LAB_FAST_ERROR of its centre in each component)."""
    from companion.vision.carrousel import _chroma, _fill_test_cells, _white_distance
    from companion.vision.colour import _GRID_SHIFT, _GRID_UNSURE, LAB_FAST_ERROR, grid_cells, new_grid

    new, _ = readers
    rng = np.random.default_rng(23)
    bound = new.colour_check.chroma_bound()
    for measure, value, centre in ((_white_distance, 15.0, [100, 0, 0]), (_chroma, bound, [60, 0, 0])):
        lab = np.rint(np.concatenate([rng.uniform([0, -90, -110], [100, 100, 90], (20000, 3)),
                                      centre + rng.normal(0, 12, (40000, 3))])).astype(np.float32)
        grid = new_grid()
        _fill_test_cells(grid, np.unique(grid_cells(lab)), measure, value)
        values = grid[grid_cells(lab)]
        assert set(np.unique(values).tolist()) == {_GRID_SHIFT, _GRID_SHIFT + 1, _GRID_UNSURE}
        sure = values != _GRID_UNSURE
        assert sure.sum() > 0.5 * len(lab)
        reach = 0.5 + LAB_FAST_ERROR
        for _ in range(4):
            moved = lab + rng.choice([-reach, reach], lab.shape).astype(np.float32) * rng.uniform(0.6, 1.0, lab.shape).astype(np.float32)
            above = measure(moved) > value
            assert np.array_equal(above[sure], values[sure] == _GRID_SHIFT + 1)
