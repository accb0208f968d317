"""The fast dice reader reads as the reader did before it was made fast (tests/dice_reference.py),
with the same face model: whichever companion/data/dice_faces.onnx is there, run by the same
OpenCV engine (issue 15). The whole photos of tests/data/dice, with a pixel tray, the whole
frame, the pips alone and a tray geometry; then each fast part against the code it replaces
(the pip fitter's subsets, the finder's foreground, the classifier's first look and the third
crop read only when needed: the readings of each case given by the decision rule)."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import cv2
import dice_reference as ref
import numpy as np
import pytest

from companion.readers import dice
from companion.readers.dice_tray import TrayGeometry

DATA = Path(__file__).parent / "data" / "dice"
PHOTOS = sorted(DATA.glob("*.jpg"))


def _reference(**kwargs) -> ref.ReferenceDiceReader:
    """The old reader, its model's network loaded as the fast reader loads it (same weights,
    same OpenCV engine), so that only the pipelines differ."""
    reader = ref.ReferenceDiceReader(**kwargs)
    if reader.model is not None:
        reader.model._net = dice._load_net(reader.model.path)
    return reader


def _key(readings) -> list:
    return [(r.box, r.value, r.reason) for r in readings]


def _labelled() -> list[tuple[str, tuple[float, float, float, float]]]:
    with open(DATA / "labels.csv", newline="") as fh:
        return [(r["filename"], tuple(float(r[k]) * 640 for k in ("xmin", "ymin", "xmax", "ymax")))
                for r in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def frames():
    return {p.name: cv2.imread(str(p)) for p in PHOTOS}


@pytest.mark.parametrize("name,kwargs", [
    ("IMG_20191208_112847.jpg", {"tray": (0, 70, 640, 555)}),  # Carnival's three dice
    ("IMG_20191208_112942.jpg", {"tray": (0, 70, 640, 555)}),  # touching dice: the search
    ("IMG_20191208_112710.jpg", {}),  # the whole frame: the floor found
    ("IMG_20191209_095604.jpg", {}),
])
def test_the_photos_read_the_same_with_a_tray_and_the_whole_frame(frames, name, kwargs):
    got = _key(dice.DiceReader(**kwargs).read(frames[name]))
    assert got == _key(_reference(**kwargs).read(frames[name]))
    assert any(isinstance(v, int) for _, v, _ in got)  # dice read, not only unknowns


def test_the_photos_read_the_same_by_the_pips_alone(frames):
    new, old = dice.DiceReader(model=None), _reference(model=None)
    for name in ("IMG_20191208_112847.jpg", "IMG_20191208_112942.jpg"):
        assert _key(new.read(frames[name])) == _key(old.read(frames[name])), name


def test_the_photos_read_the_same_with_a_tray_geometry(frames):
    """A geometry from four corners around the photos' tray (a camera looking straight down,
    its field of view given): the floor test, the face squares, the flatness, the cocked test."""
    corners = np.array([[20.0, 90.0], [620.0, 90.0], [620.0, 540.0], [20.0, 540.0]])
    geometry = TrayGeometry.from_corners(corners, (300.0, 225.0), (640, 640), hfov_deg=62.0)
    new, old = dice.DiceReader(geometry=geometry), _reference(geometry=geometry)
    read = 0
    for name in ("IMG_20191208_112847.jpg",):
        got = _key(new.read(frames[name]))
        assert got == _key(old.read(frames[name])), name
        read += len(got)
    assert read > 0


def test_each_labelled_die_reads_the_same_box_given(frames):
    new, old = dice.DiceReader(), _reference()
    for name, box in _labelled()[:8]:
        assert new.read_die(frames[name], box) == old.read_die(frames[name], box), (name, box)


def test_the_pip_fitter_gives_the_same_value_reason_and_pips_on_every_crop(frames):
    crops = 0
    for name, box in _labelled():
        if name not in ("IMG_20191208_112847.jpg", "IMG_20191208_112942.jpg", "IMG_20191209_095604.jpg"):
            continue
        for margin, size in dice._VARIANTS:
            for grow in ((0.0, 0.25) if name == "IMG_20191208_112942.jpg" else (0.0,)):
                # the labelled box, and (touching dice) one holding a neighbour's side
                b = (box[0] - grow * 20, box[1] - grow * 20, box[2] + grow * 20, box[3] + grow * 20)
                patch = dice._resample(frames[name], b, margin, size)
                v1, r1, p1 = dice.read_patch_pips(patch)
                v0, r0, p0 = ref.read_patch_pips(patch)
                assert (v1, r1) == (v0, r0) and np.array_equal(p1, p0), (name, b, margin)
                crops += 1
    assert crops >= 30


def test_the_vectorised_geometry_never_rules_out_a_subset_that_fits_a_face():
    """Random pip layouts near every face (turned, scaled, jittered, with extra spots): every
    subset :func:`_fits_face` accepts is kept by :func:`_geometry_may_fit`, and it rules many out."""
    rng = np.random.default_rng(15)
    kept = fits = ruled_out = 0
    for trial in range(100):
        n = int(rng.integers(1, 7))
        width = 72
        angle, unit = rng.uniform(0, np.pi), rng.uniform(0.08, 0.24) * width
        rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        face = np.array(dice._FACES[n], float) @ rot.T * unit + width / 2 + rng.normal(0, 2.0, 2)
        extra = rng.uniform(5, width - 5, (int(rng.integers(0, 5)), 2))
        pts = np.vstack([face + rng.normal(0, rng.choice([0.3, 1.5, 4.0]), face.shape), extra])
        cands = [(p, float(rng.uniform(4, 9))) for p in pts]
        for k in range(1, min(6, len(cands)) + 1):
            subsets = dice._subsets(len(cands), k)
            maybe = dice._geometry_may_fit(np.array([c[0] for c in cands]), np.array([c[1] for c in cands]),
                                           subsets, width)
            for j, subset in enumerate(itertools.combinations(range(len(cands)), k)):
                assert tuple(subsets[j]) == subset
                ok = dice._fits_face(np.array([cands[i][0] for i in subset]), [cands[i][1] for i in subset], width)
                fits += ok
                assert maybe[j] or not ok, (trial, subset)
                kept += bool(maybe[j])
                ruled_out += not maybe[j]
    assert fits > 30 and ruled_out > kept


def test_every_size_at_once_keeps_the_subsets_each_size_alone_keeps_and_every_face():
    """:func:`_geometry_may_fit_all` (the centre and size tests of all subset sizes in one go)
    keeps, size by size and in the same order, the subsets :func:`_geometry_may_fit` keeps, so
    never one that fits a face; and :func:`_fits_face` given the crop's pairwise distances
    (:func:`_pair_distances`) decides as it does without them."""
    rng = np.random.default_rng(16)
    fits = 0
    for trial in range(150):
        n = int(rng.integers(1, 7))
        width = int(rng.choice([64, 72]))
        angle, unit = rng.uniform(0, np.pi), rng.uniform(0.08, 0.24) * width
        rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        face = np.array(dice._FACES[n], float) @ rot.T * unit + width / 2 + rng.normal(0, 2.0, 2)
        extra = rng.uniform(5, width - 5, (int(rng.integers(0, 6)), 2))
        xy = np.vstack([face + rng.normal(0, rng.choice([0.3, 1.5, 4.0]), face.shape), extra])
        size = rng.uniform(4, 9, len(xy))
        alone = [(k, dice._subsets(len(xy), k)[dice._geometry_may_fit(xy, size, dice._subsets(len(xy), k), width)])
                 for k in range(min(6, len(xy)), 0, -1)]
        together = dice._geometry_may_fit_all(xy, size, width)
        assert [(k, s.tolist()) for k, s in alone if len(s)] == [(k, s.tolist()) for k, s in together], trial
        known: dict = {}
        for k, kept in together:
            for subset in map(tuple, kept.tolist()):
                pts, sizes = xy[list(subset)], [float(size[i]) for i in subset]
                ok = dice._fits_face(pts, sizes, width)
                assert dice._fits_face(pts, sizes, width, dice._pair_distances(xy, subset, known)) == ok
                assert ok == ref._fits_face(np.array([xy[i] for i in subset]), sizes, width), (trial, subset)
                fits += ok
    assert fits > 30


@pytest.mark.parametrize("shape", [(72, 72), (81, 72), (56, 64), (9, 7), (3, 5)])
def test_the_pip_and_face_maps_are_the_float32_norms_bit_for_bit(shape):
    """The maps from a table of squares (:data:`_SQUARES`) are the float32 norms the reader
    took before (tests/dice_reference.py), bit for bit: noise, and a smooth face with dark and
    light pips (differences up to the whole 8-bit range; face medians half-way between codes)."""
    rng = np.random.default_rng(sum(shape))
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    smooth = np.stack([(xx * 3 + yy) % 256, (yy * 5) % 256, np.full((h, w), 200)], axis=2).astype(np.uint8)
    smooth[(xx % 9 < 3) & (yy % 11 < 4)] = (0, 0, 0)
    smooth[(xx % 13 < 2) & (yy % 7 < 2)] = (255, 255, 255)
    for patch in (rng.integers(0, 256, (h, w, 3), dtype=np.uint8), smooth,
                  np.where(rng.random((h, w, 1)) < 0.5, 0, 255).astype(np.uint8).repeat(3, axis=2)):
        for new, old in ((dice.pip_map(patch), ref.pip_map(patch)), (dice.face_map(patch), ref.face_map(patch))):
            assert new.dtype == np.float32 and new.shape == (h, w)
            assert np.array_equal(new.view(np.uint32), old.view(np.uint32))


@pytest.mark.parametrize("weight,level", [(0.5, 28.0), (0.5, 28.3), (0.5, 0.0), (0.37, 28.0)])
def test_the_foreground_is_the_float32_distance_test(weight, level):
    rng = np.random.default_rng(3)
    lab = rng.integers(0, 256, (200, 300, 3), dtype=np.uint8)
    floor = np.clip(lab.astype(int) + rng.integers(-40, 41, lab.shape), 0, 255).astype(np.uint8)
    floor[:50] = rng.integers(0, 256, (50, 300, 3), dtype=np.uint8)  # far from it too
    reader = dice.DiceReader(model=None, lightness_weight=weight, foreground_lab=level)
    diff = lab.astype(np.float32) - floor.astype(np.float32)
    diff[..., 0] *= weight
    want = (np.linalg.norm(diff, axis=2) > level).astype(np.uint8)
    got = reader._foreground(lab, floor)
    assert got.dtype == np.uint8 and np.array_equal(got, want)
    assert 0 < want.sum() < want.size or level == 0.0


def test_a_row_of_the_classifier_does_not_depend_on_its_batch():
    model = dice.FaceModel()
    rng = np.random.default_rng(5)
    patches = rng.integers(0, 256, (6, 48, 48, 3), dtype=np.uint8)
    every = model.view_probabilities(patches, range(8))  # 8 x 6 x 7, one batch of 48
    for i in (0, 4):
        for v in (0, 3, 5, 7):
            alone = model.view_rows(patches[i:i + 1], [v])[0]
            assert np.array_equal(alone, every[v, i])
    mixed = model.view_rows(patches[[2, 1, 2]], [6, 0, 1])
    assert np.array_equal(mixed, np.stack([every[6, 2], every[0, 1], every[1, 2]]))
    old = _reference().model  # the old code, the same network
    assert np.array_equal(model.probabilities(patches), old.probabilities(patches))
    assert np.array_equal(model.probabilities(patches, views=1), old.probabilities(patches, views=1))
    with pytest.raises(ValueError, match="view numbers 0-7"):
        model.view_rows(patches[:2], [0, 8])


class _RandomViews:
    """A stand-in classifier: each (patch, view) a fixed random distribution, often peaked and
    often near the thresholds (0.4, 0.6, two classes close), so that early decisions are tried
    at their edges."""

    CLASSES = dice.FaceModel.CLASSES

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.table: dict[tuple[int, int], np.ndarray] = {}

    def view_rows(self, patches, views):
        out = []
        for patch, v in zip(patches, views):
            key = (int(patch[0, 0, 0]), int(v))
            if key not in self.table:
                kind = self.rng.integers(0, 4)
                if kind == 0:
                    p = self.rng.dirichlet(np.full(7, 0.2))
                elif kind == 1:
                    p = np.full(7, 0.01)
                    p[int(patch[0, 0, 1]) % 7] = 1.0
                else:
                    p = self.rng.dirichlet(np.full(7, 3.0))
                    p[int(patch[0, 0, 1]) % 7] += self.rng.uniform(0.5, 6.0)
                self.table[key] = p / p.sum()
            out.append(self.table[key])
        return np.array(out)


def test_a_die_decided_from_its_first_look_is_decided_on_it_and_any_other_from_all_eight():
    """The first look (views 0 and 5) decides alone only when both views give one class at
    VIEWS_AGREE or more, on their mean; any other die is decided as from all eight views."""
    model = _RandomViews(7)
    early = 0
    for case in range(1000):
        patch = np.zeros((1, 48, 48, 3), np.uint8)
        patch[0, 0, 0], patch[0, 0, 1] = case % 251, case // 251 + case % 7
        pip_value = [None, 1, 2, 3, 4, 5, 6][case % 7]
        seen = [(), (pip_value,) if pip_value else (), (3,), (2, 5)][case % 4]
        votes = dice._Votes(model, patch)
        votes.take({0: dice.FIRST_VIEWS})
        assert sorted(votes.views[0]) == sorted(dice.VIEW_ORDER[:dice.FIRST_VIEWS]) == [0, 5]
        first = np.stack([model.view_rows(patch, [v])[0] for v in (0, 5)])
        agree = first.argmax(1)[0] == first.argmax(1)[1] and first.max(1).min() >= dice.VIEWS_AGREE
        quick = dice._decide_votes(votes, 0, pip_value, "no face fits the pips", seen, True)
        quick_die = dice._not_a_die(votes, 0, True)
        full = dice._Votes(model, patch)
        full.take({0: 8})
        p = full.full(0)
        assert np.array_equal(p, np.mean(np.stack([model.view_rows(patch, [v])[0] for v in range(8)]), axis=0)
                              .astype(np.float32))
        want = dice.decide(p, pip_value, "no face fits the pips", seen)
        if agree:
            early += 1
            mean = first.mean(0).astype(np.float32)
            assert np.array_equal(votes.agreed(0), mean)
            assert quick == dice.decide(mean, pip_value, "no face fits the pips", seen), case
            assert quick_die == (int(np.argmax(mean)) == 0), case
            continue
        assert votes.agreed(0) is None
        if quick is not dice._UNDECIDED:
            assert quick == want, case  # (crops that disagree: the classifier not looked at)
        assert dice._decide_votes(votes, 0, pip_value, "no face fits the pips", seen, False) == want
        assert dice._not_a_die(votes, 0, False) == (int(np.argmax(p)) == 0)
    assert 50 < early < 950


class _FixedViews:
    """A stand-in classifier whose every view of every patch gives class ``best`` at 0.97."""

    CLASSES = dice.FaceModel.CLASSES

    def __init__(self, best: int):
        self.best = best
        self.rows = 0

    def view_rows(self, patches, views):
        p = np.full((len(views), 7), 0.005)
        p[:, self.best] = 0.97
        self.rows += len(views)
        return p


@pytest.mark.parametrize("third,classifier,want", [
    (1, 2, (2, "")),  # the first two crops and the classifier read 2: the third crop not read
    (None, 2, (2, "")),
    (1, 1, ("unknown", "the pips' crops disagree (1, 2)")),  # no value: the third crop read, it vetoes
    (None, 1, ("unknown", "pips read 2, the face looks like 1")),
    (1, 0, None),  # the crops disagree and the classifier sees no die: no die there
])
def test_the_third_crop_is_read_only_when_the_first_two_agree_on_no_reading(monkeypatch, third, classifier, want):
    """Crops 1 and 2 read a 2; the third is read only when the die then reads no value, and the
    reading is then the three crops' (a third crop's other value: the crops disagree)."""
    calls = []

    def fake_pips(patch):
        calls.append(patch.shape[1])
        v = (2, 2, third)[len(calls) - 1]
        return (v, "" if v else "no face fits the pips", np.array([[36.0, 36.0]]) if v else np.zeros((0, 2)))

    monkeypatch.setattr(dice, "read_patch_pips", fake_pips)
    model = _FixedViews(classifier)
    reader = dice.DiceReader(model=model)
    frame = np.full((120, 120, 3), 128, np.uint8)
    raw_at = (np.zeros((120, 120), np.uint8), 0, 0)  # no foreground: the box holds a whole die
    got = reader._read_singles(frame, [(40.0, 40.0, 80.0, 80.0)], raw_at)
    assert [(r.value, r.reason) for r in got] == ([want] if want else [])
    assert len(calls) == (2 if want and want[0] == 2 else 3)
    assert model.rows == dice.FIRST_VIEWS  # the first look decided (its two views agree)
