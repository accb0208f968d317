"""The per-registration plan of the Carrousel reader places every sample where it was placed
before the plan was split into a layout kept per board and a projection per registration.

``OldPlan`` below is a frozen copy of ``companion.vision.carrousel._Plan.__init__`` as it was
(every segment filtered and concatenated for each registration). On the 20 photographs, on
rendered frames (tilt, roll, blur, hands; each registered by the reader) and on registrations
that put part of the board out of the frame or add a lens's distortion, every attribute of the
new plan (the gathered pixels' indices, the remap map, the colour check's and the outlines'
indices, the histogram and Lab offsets, the counts and flags) equals the old one, value and
dtype.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.carrousel import _GRID_SHIFT, OFFSET, CarrouselReader, _Plan
from companion.vision.registration import Registration
from companion.vision.sim import COLOURS, Conditions, TableRenderer

ROOT = Path(__file__).parent / "data" / "carrousel-table"


class OldPlan:
    """Where every sample point of the reader falls in the image, for one registration,
    computed once (one projection of all points) so that reading a frame is a few array
    operations on one gather of pixels.

    The gathered pixels are, in order: the histogram part (``n_hist`` pixels: the board's
    reference patch, each space's ring, each card's white patch; the board's white is the
    patch with the spaces' rings, so its histogram is theirs added), of which the cards'
    white patches also begin the Lab part (``n_lab`` pixels from ``lab_start``: the cards'
    white patches, the spaces' discs, the cards' discs, the colour check's pixels, each with
    the row of the white it is seen against), then the spaces' outlines (``n_spaces x 5 x
    48``, from ``outline_start``).
    """

    def __init__(self, reader: CarrouselReader, reg: Registration, shape: tuple[int, ...]):
        self.reg, self.shape = reg, shape
        h, w = shape[:2]
        pts, segs = reader._all_points()
        p = np.rint(reg.to_image(pts)).astype(np.int64)
        inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
        flat = np.clip(p[:, 1], 0, h - 1) * w + np.clip(p[:, 0], 0, w - 1)

        def part(name: str, clip: bool = False) -> list[np.ndarray]:
            return [flat[a:b] if clip else flat[a:b][inside[a:b]] for a, b in segs[name]]

        (board,) = part("board")
        rings = part("rings")
        card_white = part("card_white")
        self.n_spaces = n = len(rings)
        self.n_cards = m = len(card_white)
        # --- the histogram part: one median per segment and channel, from one bincount
        ring_px = sum(len(r) for r in rings)
        patch = board[:len(board) - ring_px]
        # the board's points are the patch's then the rings' (projected in one batch): when
        # their pixels are the rings' own, the board's histogram is the patch's plus the rings'
        self._board_sum = n > 0 and np.array_equal(board[len(patch):], np.concatenate(rings))
        hist_segs = ([patch] if self._board_sum else [board]) + rings + card_white
        gathered = np.array([len(s) for s in hist_segs])
        self.n_hist = int(gathered.sum())
        seg_of = np.repeat(np.arange(len(hist_segs)), gathered)
        self._hist_offset = (seg_of[:, None] * 768 + np.arange(3)[None, :] * 256).astype(np.intp)
        self._n_segs = len(hist_segs)
        # the order statistics of each segment and channel (the median's two middle values,
        # lower then upper) as positions in the cumulative sum of all the histograms
        sizes = np.array([len(board)] + [len(s) for s in hist_segs[1:]])
        before = np.concatenate([[0], np.cumsum(3 * sizes)[:-1]])
        base = before[:, None] + np.arange(3)[None, :] * sizes[:, None]  # counts before (segment, channel)
        self._rank = np.stack([base + ((sizes - 1) // 2)[:, None], base + (sizes // 2)[:, None]]).ravel()
        self._rank_start = np.tile(np.arange(self._n_segs * 3) * 256, 2)
        board_planned = segs["board"][0][1] - segs["board"][0][0]
        self.board_ok = len(board) >= 0.3 * board_planned and len(board) >= 10
        self.ring_ok = np.array([len(r) >= 0.5 * len(reader._space_ring) and len(r) >= 10 for r in rings], dtype=bool)
        self.ring_missing = ~self.ring_ok
        self.card_ok = np.array([len(c) >= 10 and len(c) >= 0.9 * (b - a)
                                 for c, (a, b) in zip(card_white, segs["card_white"])], dtype=bool)
        self.card_missing = ~self.card_ok
        self.any_ring_missing, self.any_card_missing = bool(self.ring_missing.any()), bool(self.card_missing.any())
        # --- the Lab part
        discs = part("discs")
        disc_idx = np.concatenate(discs)
        disc_seg = np.repeat(np.arange(n), [len(d) for d in discs])
        self.n_disc_px = len(disc_idx)
        self.disc_short = np.array([len(d) < 0.8 * len(reader._space_disc) for d in discs], dtype=bool)
        cd = part("card_discs")
        card_disc_idx = np.concatenate(cd) if cd else np.zeros(0, np.int64)
        card_disc_seg = np.repeat(np.arange(len(cd)), [len(d) for d in cd]) if cd else np.zeros(0, np.int64)
        # the colour check's pixels (against the board's white): a quarter of them is converted
        # with the rest, all of them only when that quarter does not settle the check
        self.check_index = np.concatenate([disc_idx[::2], card_disc_idx[::2]])
        check_idx = self.check_index[::4]
        cw_idx = np.concatenate(card_white) if card_white else np.zeros(0, np.int64)
        self.card_white_seg = np.repeat(np.arange(m), [len(c) for c in card_white]) if m else np.zeros(0, np.int64)
        self.card_white_size = np.maximum(np.bincount(self.card_white_seg, minlength=m), 1)
        lab_parts = [cw_idx, disc_idx, card_disc_idx, check_idx]
        # white rows: 0 the board, 1..n the spaces (board x local gain), n+1.. the cards
        white_index = np.concatenate([1 + n + self.card_white_seg, 1 + disc_seg, 1 + n + card_disc_seg // 3,
                                      np.zeros(len(check_idx), np.int64)])
        #: each Lab-part byte's place in the table of linear light over the whites (row, channel, level)
        self.rel_offset = ((white_index[:, None] * 3 + np.arange(3)[None, :]) * 256).astype(np.intp)
        bounds = np.cumsum([len(x) for x in lab_parts])
        self.lab_bounds = tuple(int(v) for v in bounds)
        self.n_lab = int(bounds[-1])
        self.lab_start = self.n_hist - len(cw_idx)
        self.outline_start = self.lab_start + self.n_lab
        # --- the votes: one bincount of (region, class) over the spaces' then the cards' discs,
        # from the grids' entries (class + _GRID_SHIFT; the counts' columns are class + OFFSET)
        self.space_width = len(reader.space_classifier.references.names) + OFFSET
        card_width = len(reader.card_classifier.references.names) + OFFSET
        self.vote_base = np.concatenate([disc_seg * self.space_width,
                                         n * self.space_width + card_disc_seg * card_width]).astype(np.intp)
        self.vote_base += OFFSET - _GRID_SHIFT
        self.n_votes = n * self.space_width + len(cd) * card_width
        self.outline = np.stack(part("outline", clip=True)).reshape(n, 5, -1)
        self.outline_end = self.outline_start + self.outline.size
        self.index = np.concatenate(hist_segs + lab_parts[1:] + [self.outline.ravel()])
        #: those pixels' (x, y) as OpenCV's remap takes them (``rows x 64 x 2 int16``, the last
        #: row padded with the first pixel; a frame is narrower and lower than 32,767 pixels)
        rows = -(-len(self.index) // 64)
        xy = np.zeros((rows * 64, 2), dtype=np.int16)
        xy[:len(self.index), 0] = self.index % w
        xy[:len(self.index), 1] = self.index // w
        xy[len(self.index):] = xy[0]
        self.gather_map = xy.reshape(rows, 64, 2)


def assert_same_plan(new: _Plan, old: OldPlan, where: str) -> None:
    names = set(vars(old)) - {"reg", "shape"}
    assert names <= set(vars(new)), f"{where}: missing {sorted(names - set(vars(new)))}"
    for name in sorted(names):
        a, b = getattr(new, name), getattr(old, name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {name} {a.dtype}{a.shape} / {b.dtype}{b.shape}"
            assert np.array_equal(a, b), f"{where}: {name} differs"
        else:
            assert a == b and type(a) is type(b), f"{where}: {name} {a!r} / {b!r}"


def _shifted(reg: Registration, dx: float, dy: float) -> Registration:
    t = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])
    h = t @ reg.board_to_image
    return Registration(h, np.linalg.inv(h), reg.marker_ids, reg.residual_px, reg.image_corners, reg.frame_index)


def _with_lens(reg: Registration, k1: float) -> Registration:
    k = np.array([[600.0, 0.0, 320.0], [0.0, 600.0, 240.0], [0.0, 0.0, 1.0]])
    return Registration(reg.board_to_image, reg.image_to_board, reg.marker_ids, reg.residual_px,
                        reg.image_corners, reg.frame_index, lens=(k, np.array([k1, 0.01, 0.0, 0.0, 0.0])))


def _registrations(reader: CarrouselReader, reg: Registration) -> list[Registration]:
    return [reg, _shifted(reg, 300.0, 40.0), _shifted(reg, -300.0, -60.0), _shifted(reg, 0.0, 250.0),
            _with_lens(reg, -0.12), _shifted(reg, 0.37, -0.21)]


@pytest.fixture(scope="module")
def reader():
    return CarrouselReader()


def test_the_photographs_plans_are_the_old_ones(reader):
    photos = sorted((ROOT / "images").glob("*.jpg"))
    assert len(photos) == 20
    for path in photos:
        frame = cv2.imread(str(path))
        reg = reader.registrar.register(frame)
        assert reg is not None, path.name
        for k, r in enumerate(_registrations(reader, reg)):
            assert_same_plan(_Plan(reader, r, frame.shape), OldPlan(reader, r, frame.shape), f"{path.name} #{k}")


def test_rendered_frames_plans_are_the_old_ones(reader):
    renderer, rng = TableRenderer(), np.random.default_rng(5)
    seen_outside = 0
    for i, cond in enumerate((Conditions(), Conditions(tilt_deg=25, azimuth_deg=40, roll_deg=30),
                              Conditions(tilt_deg=15, azimuth_deg=200, roll_deg=-70, blur_px=1.5),
                              Conditions(tilt_deg=30, azimuth_deg=120, roll_deg=150, hands=(2,)))):
        spaces = [str(c) for c in rng.permutation(list(COLOURS) + ["empty", "empty"])[:7]]
        frame, _ = renderer.render(spaces, {"south": ("red", "blue", "green")}, cond, rng)
        reg = reader.registrar.register(frame)
        assert reg is not None, f"rendered {i}"
        for k, r in enumerate(_registrations(reader, reg)):
            new, old = _Plan(reader, r, frame.shape), OldPlan(reader, r, frame.shape)
            assert_same_plan(new, old, f"rendered {i} #{k}")
            seen_outside += int(len(old.index) < 12000)
    assert seen_outside >= 4  # the general path (part of the board out of the frame) was taken
