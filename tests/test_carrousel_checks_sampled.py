"""The space checks run on the pixels the steady read gathers (``SpaceChecks.apply_sampled``)
give the answers of the checks that gather their own (``SpaceChecks.apply``, as the per-region
reader of tests/carrousel_reference.py runs them), bit for bit: the same pixels (the plan's
projection of every point in one batch against the checks' own projections), the same print
measures, order statistics, medians and rim light, the same reading of a black horse against
its own light; and whole readings on frames where the checks fire: small hands over empty
spaces and horses, soft shadows over black and coloured horses, noise, brighter exposures.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from test_carrousel_checks import LIGHT, PALE, photo, shadow, small_hand
from test_carrousel_plan import _with_lens

from companion.vision.carrousel import CarrouselReader, _Plan
from companion.vision.carrousel_checks import (
    _exact_reader,
    _kth,
    _median_rows,
    _quantile_part,
    _quantile_sorted,
    measure_rows,
    print_measures,
)
from companion.vision.colour import UNKNOWN
from companion.vision.registration import Registration
from companion.vision.sim import COLOURS, TableRenderer, random_conditions

ROOT = Path(__file__).parent / "data" / "carrousel-table"


@pytest.fixture(scope="module")
def reader():
    return CarrouselReader()


def _moved(reg: Registration, dx: float, dy: float, scale: float = 1.0) -> Registration:
    t = np.array([[scale, 0.0, dx], [0.0, scale, dy], [0.0, 0.0, 1.0]])
    h = t @ reg.board_to_image
    return Registration(h, np.linalg.inv(h), reg.marker_ids, reg.residual_px, reg.image_corners, reg.frame_index)


def _flat(plan: _Plan, start: int, end: int, w: int) -> np.ndarray:
    xy = plan.full_map.reshape(-1, 2)[start:end].astype(np.int64)
    return xy[:, 1] * w + xy[:, 0]


def test_the_plan_gathers_the_checks_own_pixels(reader):
    """The rims, centres, discs and white patch the plan gathers are the pixels the checks find
    with their own projections, point for point, on the 20 photographs, each under its own
    registration, two sub-pixel shifts, a smaller scale and a lens's distortion."""
    checks = reader.checks
    sampled = 0
    for path in sorted((ROOT / "images").glob("*.jpg")):
        frame = cv2.imread(str(path))
        reg = reader.registrar.register(frame)
        assert reg is not None, path.name
        w = frame.shape[1]
        for r in (reg, _moved(reg, 0.37, -0.21), _moved(reg, -0.5, 0.5), _moved(reg, 20.0, 10.0, 0.9),
                  _with_lens(reg, -0.12)):
            plan = _Plan(reader, r, frame.shape)
            if not plan.checks_sampled:
                continue
            sampled += 1
            n, nr, nc = len(checks.centres), len(checks.rim), len(checks.centre)
            got = _flat(plan, plan.check_start, plan.check_end, w).reshape(n, nr + nc)
            checks._pixels(frame, r, "patch")  # the checks' own indices for this registration
            for k in range(n):
                for part, mine in (("rim", got[k, :nr]), ("centre", got[k, nr:])):
                    checks._pixels(frame, r, part, k)
                    assert np.array_equal(mine, checks._index[part][k]), f"{path.name}: {part} {k}"
                checks._pixels(frame, r, "disc", k)
                lab0 = plan.lab_start + plan.lab_bounds[0]
                disc = _flat(plan, lab0 + k * plan.n_disc_px // n, lab0 + (k + 1) * plan.n_disc_px // n, w)
                assert np.array_equal(disc, checks._index["disc"][k]), f"{path.name}: disc {k}"
            assert np.array_equal(_flat(plan, 0, plan.n_patch, w), checks._index["patch"][0]), path.name
    assert sampled >= 80


def test_the_measures_and_order_statistics_are_the_same():
    rng = np.random.default_rng(3)
    for n in (2, 3, 57, 438, 1600):
        px = rng.integers(0, 256, (n, 3), dtype=np.uint8)
        px[: n // 3] = rng.integers(0, 4, (n // 3, 3))  # dark codes: the 1e-4 floor
        assert np.array_equal(measure_rows(px).T, print_measures(px))
    for n in (1, 2, 3, 4, 5, 197, 355, 380):
        x = np.round(rng.normal(size=(3, 4, n)), 2)  # ties
        shift = rng.normal(size=(3, 4))
        part = x.copy()
        part.partition(_kth(n, 0.25, 0.5, 0.75), axis=2)
        srt = np.sort(x, axis=2)
        for q in (0.25, 0.5, 0.75):
            want = np.stack([[_quantile_sorted(srt[c, e][:, None], q)[0] for e in range(4)] for c in range(3)])
            assert np.array_equal(_quantile_part(part, q, n), want)
            diff = np.sort(x - shift[..., None], axis=2)
            want = np.stack([[_quantile_sorted(diff[c, e][:, None], q)[0] for e in range(4)] for c in range(3)])
            assert np.array_equal(_quantile_part(part, q, n, shift), want)
        y = x[0].copy()
        assert np.array_equal(_median_rows(y), np.median(x[0], axis=1))


def test_the_black_horse_is_read_again_as_the_checks_read_it(reader):
    """The reader's grid reading of a disc against its own light is the exact reading, on the
    photographs' discs against whites from dark to bright (clipped pixels among them)."""
    exact = _exact_reader(reader.space_classifier)
    rng = np.random.default_rng(4)
    labels = set()
    for name in ("carrousel_000", "carrousel_015", "carrousel_039", "carrousel_054"):
        frame, _ = photo(name)
        reg = reader.read(frame).registration
        for k in range(7):
            reader.checks._pixels(frame, reg, "disc", k)
            px = frame.reshape(-1, 3)[reader.checks._index["disc"][k]].copy()
            if k == 0:
                px[:40] = 250  # clipped
            for _ in range(4):
                white = (rng.uniform(0.05, 1.0) * rng.uniform(0.8, 1.2, 3)).astype(np.float32)
                a, b = reader._read_again(px, white), exact(k, px, white)
                assert a == b, (name, k, white, a, b)
                labels.add(a.label)
    assert {"black", UNKNOWN} <= labels and len(labels) >= 4, labels


def _compare(new: CarrouselReader, old, frame: np.ndarray, reg: Registration, where: str, seen: dict) -> None:
    a, b = new.read(frame, registration=reg), old.read(frame, registration=reg)
    assert a.status == b.status and a.spaces == b.spaces and a.cards == b.cards and a.white_level == b.white_level, (
        f"{where}:\n" + "\n".join(f"space {k}: {x} / {y}" for k, (x, y) in enumerate(zip(a.spaces, b.spaces)) if x != y))
    for s in a.spaces:
        key = s.reason.split(" (")[0].split(":")[0]
        seen[key] = seen.get(key, 0) + 1


def test_readings_where_the_checks_fire_are_the_per_region_readers():
    """Whole readings against the per-region reader (tests/carrousel_reference.py, which runs the
    checks on the pixels they gather themselves), on frames where every check has work: small
    hands over empty spaces and horses, shadows over black and coloured horses, noise, brighter
    exposures (the photographs), rendered ``covers`` and ``hands`` frames."""
    from carrousel_reference import ReferenceCarrouselReader

    new, old = CarrouselReader(), ReferenceCarrouselReader()
    seen: dict[str, int] = {}
    again: list[str] = []
    read_again = new._read_again_at

    def noted(k, px, white):
        rd = read_again(k, px, white)
        again.append(rd.label)
        return rd
    new._read_again_at = noted
    rng = np.random.default_rng(8)
    for name in ("carrousel_000", "carrousel_009", "carrousel_015", "carrousel_030", "carrousel_039", "carrousel_054"):
        frame, truth = photo(name)
        reg = new.registrar.register(frame)
        centres = truth["projections_px"]["space_centres_board_top"]
        frames = [frame]
        for k in range(7):
            frames.append(small_hand(frame, centres[k], int(rng.choice([10, 14, 18])), PALE if k % 2 else LIGHT, seed=k))
            frames.append(shadow(frame, centres[k], int(rng.integers(24, 40)), float(rng.uniform(0.3, 0.9))))
            if truth["space_list"][k] not in ("empty", "black"):  # a coloured horse in a deep shadow reads black
                frames.append(shadow(frame, centres[k], 30, 0.85))
        for sigma in (4, 8, 12):
            frames.append(np.clip(frame + rng.normal(0, sigma, frame.shape), 0, 255).astype(np.uint8))
        for gain in (1.3, 1.6):
            frames.append(np.clip(frame.astype(np.float64) * gain + 0.5, 0, 255).astype(np.uint8))
        for i, f in enumerate(frames):
            _compare(new, old, f, reg, f"{name} variant {i}", seen)
    renderer = TableRenderer()
    for i in range(16):
        spaces = ["empty"] * 7
        start = int(rng.integers(7))
        for j, colour in enumerate(rng.permutation(COLOURS)):
            spaces[(start + j) % 7] = str(colour)
        cards = {seat: ("black", "yellow", "blue") for seat in ("south", "east", "north", "west")}
        frame, _ = renderer.render(spaces, cards, random_conditions(rng, ("covers", "hands")[i % 2]), rng, layout_seed=i)
        reg = new.registrar.register(frame)
        if reg is not None:
            _compare(new, old, frame, reg, f"rendered {i}", seen)
    for reason in ("", "the space's print is not seen where a horse stands", "a shadow over the space"):
        assert seen.get(reason, 0) > 0, (reason, seen)
    assert "black" in again and len(set(again)) >= 2, again  # read again: black stands, and black fails


def test_the_white_medians_are_numpys(reader):
    """The steady read's medians (one histogram, its cumulative sum by OpenCV's integral image)
    are ``white_of``'s and ``np.median``'s of each segment's pixels, on the photographs."""
    from companion.vision.colour import white_of

    for path in sorted((ROOT / "images").glob("*.jpg"))[:8]:
        frame = cv2.imread(str(path))
        reader.read(frame)
        plan = reader._plan
        px = cv2.remap(frame, plan.full_map, None, cv2.INTER_NEAREST).reshape(-1, 3)[:plan.n_hist]
        whites, codes = plan.medians(px)
        seg = plan._hist_offset[:, 0] // 768
        board = px[seg <= plan.n_spaces] if plan._board_sum else px[seg == 0]
        assert np.array_equal(whites[0], white_of(board)), path.name
        assert codes == np.median(board, axis=0).tolist(), path.name
        for s in range(1, plan._n_segs):
            assert np.array_equal(whites[s], white_of(px[seg == s])), (path.name, s)
